# Installs pomptrace for use by other builds:
#
#   make install PREFIX=/opt/pomptrace
#
# builds the release library and command with cargo, then installs
#   PREFIX/bin/pomptrace
#   PREFIX/bin/pomptrace-gcc, pomptrace-mpicc, ... (links to pomptrace: $(WRAPPED_COMPILERS))
#   PREFIX/lib/libpomptrace.so, PREFIX/lib/libpomptrace.a
#   PREFIX/include/opari2/pomp2_lib.h, PREFIX/include/opari2/pomp2_user_lib.h
#   PREFIX/lib/pkgconfig/pomptrace.pc   (pkg-config --cflags --libs pomptrace)
# and the MPI wrapper library, which cargo's build script compiles next to libpomptrace.so
# wherever an MPI compiler wrapper is found ($(MPICC), default mpicc)
#   PREFIX/lib/libpomptrace_mpi.so, PREFIX/lib/libpomptrace_mpi.a
#
# CARGO_PROFILE_DIR=DIR installs the files already built in DIR (e.g. target/debug) without
# running cargo; the tests use it from inside `cargo test`, where a nested cargo build would wait
# for the build lock. DESTDIR is prepended to every installed path (staged installs); the
# installed files still refer to PREFIX. `make uninstall PREFIX=...` removes the files again.

PREFIX ?= /usr/local
CARGO ?= cargo
CARGO_PROFILE_DIR ?=
INSTALL ?= install
MPICC ?= mpicc
# One-word compiler commands: pomptrace-gcc runs `pomptrace gcc`.
WRAPPED_COMPILERS ?= cc c++ gcc g++ gfortran clang clang++ mpicc mpicxx mpifort mpif90
MPI_LIBS := libpomptrace_mpi.so libpomptrace_mpi.a

VERSION := $(shell sed -n 's/^version = "\(.*\)"$$/\1/p' Cargo.toml | head -n 1)
HEADERS := include/opari2/pomp2_lib.h include/opari2/pomp2_user_lib.h

ifeq ($(CARGO_PROFILE_DIR),)
BUILT := $(or $(CARGO_TARGET_DIR),target)/release
INSTALL_DEPS := build
else
BUILT := $(CARGO_PROFILE_DIR)
INSTALL_DEPS :=
endif

DEST := $(DESTDIR)$(PREFIX)

.PHONY: all build mpi install uninstall

all: build

build:
	MPICC=$(MPICC) $(CARGO) build --release

# The PMPI wrappers are part of the build (build.rs); kept for the command's old users.
mpi: build

# The MPI wrapper library's files are installed where the build made them (a recipe's
# $(wildcard) is expanded after the build ran).
install: $(INSTALL_DEPS)
	$(INSTALL) -d $(DEST)/bin $(DEST)/lib/pkgconfig $(DEST)/include/opari2
	$(INSTALL) -m 755 $(BUILT)/pomptrace $(DEST)/bin/pomptrace
	for c in $(WRAPPED_COMPILERS); do ln -sfn pomptrace $(DEST)/bin/pomptrace-$$c || exit 1; done
	$(INSTALL) -m 755 $(BUILT)/libpomptrace.so $(DEST)/lib/libpomptrace.so
	$(INSTALL) -m 644 $(BUILT)/libpomptrace.a $(DEST)/lib/libpomptrace.a
	$(foreach lib,$(wildcard $(addprefix $(BUILT)/,$(MPI_LIBS))),\
	    $(INSTALL) -m $(if $(filter %.so,$(lib)),755,644) $(lib) $(DEST)/lib/$(notdir $(lib));)
	$(INSTALL) -m 644 $(HEADERS) $(DEST)/include/opari2/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' pomptrace.pc.in \
	    > $(DEST)/lib/pkgconfig/pomptrace.pc

uninstall:
	rm -f $(DEST)/bin/pomptrace $(addprefix $(DEST)/bin/pomptrace-,$(WRAPPED_COMPILERS)) \
	    $(DEST)/lib/libpomptrace.so $(DEST)/lib/libpomptrace.a \
	    $(addprefix $(DEST)/lib/,$(MPI_LIBS)) \
	    $(DEST)/lib/pkgconfig/pomptrace.pc $(addprefix $(DEST)/,$(HEADERS))
