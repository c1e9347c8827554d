//! Compiles the small C shim through which the library reaches the OpenMP runtime and the
//! init-file functions with weak references (Rust cannot declare weak symbols on stable), and
//! exports the shim's thread-local `pomp_tpd` variables from the shared library (rustc's own
//! export list only names Rust items); marks the shared library never to be unloaded.
//!
//! Where an MPI compiler wrapper is found (`$MPICC`, default `mpicc`), it also builds the MPI
//! wrapper library (`src/mpi/*.c`) as `libpomptrace_mpi.so` and `libpomptrace_mpi.a`, and puts
//! them next to `libpomptrace.so` (`target/<profile>/` and its `deps/`, where the `pomptrace`
//! command looks for its libraries). See `mpi_library` for how it links.
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=src/openmp_shim.c");
    cc::Build::new()
        .file("src/openmp_shim.c")
        .warnings(true)
        .extra_warnings(true)
        .compile("pomptrace_openmp_shim");

    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let map = out.join("pomp_tpd.map");
    std::fs::write(&map, "{ global: pomp_tpd_; pomp_tpd; };\n").expect("write version script");
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
        map.display()
    );
    // Never unloaded: the exit, fork and signal handlers and any helper thread point into the
    // library, so a dlclose of the last instrumented library that needed it must leave it mapped.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");

    mpi_library(&out);
}

/// The MPI wrapper library's sources.
const MPI_SOURCES: [&str; 2] = ["src/mpi/pomptrace_mpi.c", "src/mpi/pomptrace_mpi_fortran.c"];
const MPI_HEADER: &str = "include/pomptrace/pomptrace_mpi.h";

/// Builds `libpomptrace_mpi.{so,a}` with the MPI compiler wrapper, if there is one.
///
/// The shared library must name `libpomptrace.so` as a dependency (so that it also works
/// preloaded into a program that was not linked with libpomptrace), but this script runs
/// before `libpomptrace.so` exists. It links against a stub of the same name instead: a
/// library defining the functions of `pomptrace_mpi.h` and nothing else. The stub only
/// satisfies the link; the dependency it records is the name `libpomptrace.so`, found at run
/// time next to `libpomptrace_mpi.so` (`$ORIGIN`) or wherever the program's own run path
/// finds libpomptrace, and one process never loads two copies of it. Linking without any
/// libpomptrace (undefined symbols left to the program) would break preloading and
/// `-Wl,--no-undefined` builds; compiling the wrappers into libpomptrace would make it depend
/// on one MPI implementation.
fn mpi_library(out: &Path) {
    for source in MPI_SOURCES {
        println!("cargo:rerun-if-changed={source}");
    }
    println!("cargo:rerun-if-changed={MPI_HEADER}");
    println!("cargo:rerun-if-env-changed=MPICC");
    let mpicc = std::env::var("MPICC").unwrap_or_else(|_| "mpicc".into());
    let found = Command::new(&mpicc)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        // No MPI here: nothing to build, and nothing to complain about.
        return;
    }
    if let Err(e) = build_mpi_library(&mpicc, out) {
        println!("cargo:warning=the MPI wrapper library was not built: {e}");
    }
}

fn run(command: &mut Command) -> Result<(), String> {
    let shown = format!("{command:?}");
    let output = command
        .output()
        .map_err(|e| format!("cannot run {shown}: {e}"))?;
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "{shown} failed: {}",
        String::from_utf8_lossy(&output.stderr).trim()
    ))
}

fn build_mpi_library(mpicc: &str, out: &Path) -> Result<(), String> {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("manifest dir"));
    let header = std::fs::read_to_string(root.join(MPI_HEADER))
        .map_err(|e| format!("cannot read {MPI_HEADER}: {e}"))?;
    let stub_dir = out.join("libpomptrace-stub");
    std::fs::create_dir_all(&stub_dir).map_err(|e| e.to_string())?;
    let stub_source = stub_dir.join("stub.c");
    std::fs::write(&stub_source, stub_definitions(&header)).map_err(|e| e.to_string())?;
    run(Command::new(mpicc)
        .args(["-shared", "-fPIC", "-o"])
        .arg(stub_dir.join("libpomptrace.so"))
        .arg(&stub_source))?;

    let flags = ["-fPIC", "-O2", "-g", "-Wall", "-Wextra"];
    let include = format!("-I{}", root.join("include").display());
    let mut objects = Vec::new();
    for source in MPI_SOURCES {
        let object = out.join(
            Path::new(source)
                .with_extension("o")
                .file_name()
                .expect("file name"),
        );
        run(Command::new(mpicc)
            .args(flags)
            .arg(&include)
            .arg("-c")
            .arg(root.join(source))
            .arg("-o")
            .arg(&object))?;
        objects.push(object);
    }
    let shared = out.join("libpomptrace_mpi.so");
    run(Command::new(mpicc)
        .args(["-shared", "-Wl,-soname,libpomptrace_mpi.so"])
        .args(&objects)
        .arg(format!("-L{}", stub_dir.display()))
        .args(["-lpomptrace", "-Wl,-rpath,$ORIGIN", "-o"])
        .arg(&shared))?;
    let archive = out.join("libpomptrace_mpi.a");
    let _ = std::fs::remove_file(&archive);
    run(
        Command::new(std::env::var("AR").unwrap_or_else(|_| "ar".into()))
            .arg("crs")
            .arg(&archive)
            .args(&objects),
    )?;

    // OUT_DIR is target/<profile>/build/pomptrace-<hash>/out.
    let Some(profile_dir) = out.ancestors().nth(3).filter(|d| d.join("build").is_dir()) else {
        return Err(format!(
            "{} is not in a cargo profile directory",
            out.display()
        ));
    };
    for dir in [profile_dir.to_path_buf(), profile_dir.join("deps")] {
        for file in [&shared, &archive] {
            install(file, &dir)?;
        }
    }
    Ok(())
}

/// Copies `file` into `dir` by a rename, so that a program running the old copy keeps it.
fn install(file: &Path, dir: &Path) -> Result<(), String> {
    let name = file.file_name().expect("file name");
    let partial = dir.join(format!(".{}.partial", name.to_string_lossy()));
    std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::copy(file, &partial))
        .and_then(|_| std::fs::rename(&partial, dir.join(name)))
        .map_err(|e| format!("cannot copy {} into {}: {e}", file.display(), dir.display()))
}

/// A C file defining every function the header declares (empty bodies: only their names
/// matter to the linker).
fn stub_definitions(header: &str) -> String {
    let mut names: Vec<&str> = header
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|word| word.starts_with("pomptrace_mpi_"))
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut text =
        String::from("/* Generated by build.rs: link-time stand-in for libpomptrace. */\n");
    for name in names {
        text.push_str(&format!("void {name}(void) {{}}\n"));
    }
    text
}
