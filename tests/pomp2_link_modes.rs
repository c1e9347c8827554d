//! The ways a build gets pomptrace, beyond the harness's own link lines (tests/pomp2_linking/
//! covers shared, static and LD_PRELOAD with the build tree's library): `make install
//! PREFIX=...` and the installed files through pkg-config and `pomptrace config`, including the
//! static archive with only the libraries `pomptrace config --libs --static` names and
//! LD_PRELOAD of the installed library; a Makefile written for OPARI2 with `pomptrace config` in
//! place of `opari2-config`; and the examples in examples/, built and run the three ways their
//! Makefiles show. Every variant must record the same regions and the same number of records of
//! each kind as the program linked the plain way.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use support::pomp2::*;
use support::{repo_root, run, Scratch};

const THREADS: [u32; 3] = [1, 2, 4];

fn stdout_of(cmd: &mut Command) -> String {
    String::from_utf8(run(cmd).stdout).unwrap()
}

fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(String::from).collect()
}

/// What a run recorded, for comparing variants: its output, the records per kind and the
/// regions defined.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    stdout: String,
    kinds: BTreeMap<String, usize>,
    regions: Vec<String>,
}

/// Runs `exe` traced; it must print nothing but pomptrace's closing line on stderr and write a
/// well-formed trace with one location per thread.
fn outcome(exe: &Path, threads: u32, label: &str, env: &[(&str, &str)]) -> Outcome {
    let r = run_traced(exe, threads, label, env);
    assert_eq!(
        r.stderr().lines().count(),
        1,
        "{label}: stderr:\n{}",
        r.stderr()
    );
    let view = View::read(&r.anchor());
    view.assert_well_formed();
    assert_eq!(view.locations.len(), threads as usize, "{label}");
    let mut kinds = view.kind_counts();
    kinds.remove("BufferFlush");
    Outcome {
        stdout: r.stdout(),
        kinds,
        regions: view.region_names(),
    }
}

/// A way of building the program: what it is, the executable, extra environment for its runs.
type Variant<'a> = (&'a str, PathBuf, Vec<(&'a str, String)>);

/// Runs every variant with 1, 2 and 4 threads; each must record what the first one records.
fn assert_same_outcomes(variants: &[Variant]) {
    for threads in THREADS {
        let mut reference: Option<(&str, Outcome)> = None;
        for (what, exe, env) in variants {
            let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let label = format!("{}-{threads}", exe.file_name().unwrap().to_string_lossy());
            let o = outcome(exe, threads, &label, &env);
            assert!(
                o.kinds.get("Enter").copied().unwrap_or(0) > 0,
                "{what}: {o:?}"
            );
            match &reference {
                None => reference = Some((what, o)),
                Some((first, r)) => assert_eq!(
                    &o, r,
                    "{what} records differently from {first} with {threads} threads"
                ),
            }
        }
    }
}

/// Whether the dynamic section of `file` names libpomptrace (NEEDED).
fn needs_pomptrace(file: &Path) -> bool {
    stdout_of(Command::new("readelf").arg("-d").arg(file))
        .lines()
        .any(|l| l.contains("(NEEDED)") && l.contains("libpomptrace"))
}

/// Compiles `source` with `cflags`, makes the init file with `pomptrace` (the given command),
/// and links with `libs`.
fn build_with_flags(
    dir: &Path,
    pomptrace: &Path,
    source: &Path,
    cflags: &[String],
    libs: &[String],
    name: &str,
) -> PathBuf {
    let object = dir.join(format!("{name}.o"));
    run(Command::new("cc")
        .args(["-fopenmp", "-O1", "-g"])
        .args(cflags)
        .arg("-c")
        .arg(source)
        .arg("-o")
        .arg(&object));
    let init = dir.join(format!("{name}_init.c"));
    run(Command::new(pomptrace)
        .args(["init-regions", "-o"])
        .arg(&init)
        .arg(&object));
    let init_object = init.with_extension("o");
    run(Command::new("cc")
        .arg("-c")
        .arg(&init)
        .arg("-o")
        .arg(&init_object));
    let exe = dir.join(name);
    run(Command::new("cc")
        .arg("-fopenmp")
        .arg(&object)
        .arg(&init_object)
        .args(libs)
        .arg("-o")
        .arg(&exe));
    exe
}

/// The instrumented program as a shared library (not linked with pomptrace, no init file) and
/// the uninstrumented link_main.c using it.
fn build_preload(dir: &Path, source: &Path) -> PathBuf {
    let object = dir.join("preload_pic.o");
    run(Command::new("cc")
        .args([
            "-fopenmp",
            "-fPIC",
            "-O1",
            "-g",
            "-DLINK_PROGRAM_NO_MAIN",
            "-I",
        ])
        .arg(include_dir())
        .arg("-c")
        .arg(source)
        .arg("-o")
        .arg(&object));
    let library = dir.join("libpreloaded.so");
    run(Command::new("cc")
        .args(["-shared", "-fopenmp", "-o"])
        .arg(&library)
        .arg(&object));
    let main = dir.join("link_main.c");
    std::fs::copy(repo_root().join("c-tests/link_main.c"), &main).unwrap();
    let exe = dir.join("preload_main");
    run(Command::new("cc")
        .arg(&main)
        .arg("-o")
        .arg(&exe)
        .arg("-L")
        .arg(dir)
        .arg("-lpreloaded")
        .arg(format!("-Wl,-rpath,{}", dir.display()))
        .arg("-Wl,--allow-shlib-undefined"));
    assert!(!needs_pomptrace(&exe) && !needs_pomptrace(&library));
    exe
}

#[test]
fn installed_with_make_and_linked_through_pkg_config_and_pomptrace_config() {
    let scratch = Scratch::new("link-install");
    let prefix = scratch.join("prefix");
    // CARGO_PROFILE_DIR: install what this test run built, without a nested cargo build.
    let built = scratch.join("built");
    std::fs::create_dir(&built).unwrap();
    std::fs::copy(pomptrace_command(), built.join("pomptrace")).unwrap();
    for lib in [
        "libpomptrace.so",
        "libpomptrace.a",
        "libpomptrace_mpi.so",
        "libpomptrace_mpi.a",
    ] {
        std::fs::copy(library_dir().join(lib), built.join(lib)).unwrap();
    }
    run(Command::new("make")
        .arg("-C")
        .arg(repo_root())
        .arg("--no-print-directory")
        .arg("install")
        .arg(format!("PREFIX={}", prefix.display()))
        .arg(format!("CARGO_PROFILE_DIR={}", built.display())));
    for file in [
        "bin/pomptrace",
        "lib/libpomptrace.so",
        "lib/libpomptrace.a",
        // Built by cargo's build script because scripts/setup.sh installs Open MPI's mpicc.
        "lib/libpomptrace_mpi.so",
        "lib/libpomptrace_mpi.a",
        "lib/pkgconfig/pomptrace.pc",
        "include/opari2/pomp2_lib.h",
        "include/opari2/pomp2_user_lib.h",
    ] {
        assert!(prefix.join(file).is_file(), "make install left out {file}");
    }
    // One-word compiler commands, next to the command they run.
    for compiler in ["gcc", "g++", "gfortran", "mpicc"] {
        let link = prefix.join(format!("bin/pomptrace-{compiler}"));
        assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("pomptrace"));
    }
    let lib = prefix.join("lib");
    let include = prefix.join("include");

    // pkg-config reads the installed .pc file.
    let pkg_config = |args: &[&str]| {
        stdout_of(
            Command::new("pkg-config")
                .args(args)
                .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig")),
        )
    };
    assert_eq!(
        pkg_config(&["--modversion", "pomptrace"]).trim(),
        env!("CARGO_PKG_VERSION")
    );
    let pc_cflags = words(&pkg_config(&["--cflags", "pomptrace"]));
    let pc_libs = words(&pkg_config(&["--libs", "pomptrace"]));
    assert_eq!(pc_cflags, [format!("-I{}", include.display())]);
    assert!(
        pc_libs.contains(&format!("-L{}", lib.display()))
            && pc_libs.contains(&"-lpomptrace".into()),
        "{pc_libs:?}"
    );
    let static_libs = pkg_config(&["--static", "--libs", "pomptrace"]);
    assert!(static_libs.contains("-ldl"), "{static_libs}");

    // The installed command finds the installed files.
    let installed = prefix.join("bin/pomptrace");
    let config = |args: &[&str]| stdout_of(Command::new(&installed).arg("config").args(args));
    assert_eq!(config(&["--cflags"]), format!("-I{}\n", include.display()));
    assert_eq!(
        config(&["--libs"]),
        format!("-L{0} -Wl,-rpath,{0} -lpomptrace\n", lib.display())
    );
    assert_eq!(
        config(&["--libs", "--mpi"]),
        format!(
            "-L{0} -Wl,-rpath,{0} -lpomptrace_mpi -lpomptrace\n",
            lib.display()
        )
    );
    assert_eq!(config(&["--libdir"]), format!("{}\n", lib.display()));
    assert_eq!(
        config(&["--includedir"]),
        format!("{}\n", include.display())
    );
    assert_eq!(
        config(&["--version"]),
        format!("{}\n", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(
        config(&["--cflags", "--libs"]),
        format!(
            "-I{0} -L{1} -Wl,-rpath,{1} -lpomptrace\n",
            include.display(),
            lib.display()
        )
    );
    let config_static = words(&config(&["--libs", "--static"]));
    assert_eq!(
        config_static[0],
        lib.join("libpomptrace.a").display().to_string()
    );

    let dir = scratch.join("build");
    std::fs::create_dir(&dir).unwrap();
    let source = instrument("link_program.c", &dir, &[]);
    let reference = Build::c(&dir).executable(std::slice::from_ref(&source), "reference");
    let pkgconfig = build_with_flags(&dir, &installed, &source, &pc_cflags, &pc_libs, "pkgconfig");
    let shared = build_with_flags(
        &dir,
        &installed,
        &source,
        &words(&config(&["--cflags"])),
        &words(&config(&["--libs"])),
        "config_shared",
    );
    let static_exe = build_with_flags(
        &dir,
        &installed,
        &source,
        &words(&config(&["--cflags"])),
        &config_static,
        "config_static",
    );
    assert!(needs_pomptrace(&pkgconfig) && needs_pomptrace(&shared));
    assert!(
        !needs_pomptrace(&static_exe),
        "the archive must be linked in"
    );
    // The installed programs use the installed library (through the rpath), not the build tree's
    // (cargo puts that on LD_LIBRARY_PATH for tests, which wins over a RUNPATH: the runs below
    // clear it).
    for exe in [&pkgconfig, &shared] {
        let ldd = stdout_of(Command::new("ldd").arg(exe).env_remove("LD_LIBRARY_PATH"));
        let line = ldd
            .lines()
            .find(|l| l.contains("libpomptrace.so"))
            .unwrap_or_else(|| panic!("{ldd}"));
        assert!(
            line.contains(&lib.join("libpomptrace.so").display().to_string()),
            "{line}"
        );
    }
    let preload = build_preload(&dir, &source);
    let preload_lib = format!("{}/libpomptrace.so", config(&["--libdir"]).trim());

    let installed_only = || ("LD_LIBRARY_PATH", String::new());
    assert_same_outcomes(&[
        ("-lpomptrace from the build tree", reference, vec![]),
        (
            "pkg-config --cflags --libs",
            pkgconfig,
            vec![installed_only()],
        ),
        (
            "pomptrace config --cflags --libs",
            shared,
            vec![installed_only()],
        ),
        (
            "pomptrace config --libs --static",
            static_exe,
            vec![installed_only()],
        ),
        (
            "LD_PRELOAD of the installed library",
            preload,
            vec![("LD_PRELOAD", preload_lib), installed_only()],
        ),
    ]);

    // And out again.
    run(Command::new("make")
        .arg("-C")
        .arg(repo_root())
        .arg("--no-print-directory")
        .arg("uninstall")
        .arg(format!("PREFIX={}", prefix.display())));
    let left: Vec<PathBuf> = walk(&prefix).into_iter().filter(|p| p.is_file()).collect();
    assert!(left.is_empty(), "make uninstall left {left:?}");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(walk(&path));
        }
        found.push(path);
    }
    found
}

/// A Makefile as the OPARI2 documentation and Score-P write the link step, for a C and a
/// fixed-form Fortran program. The test sets OPARI2_CONFIG to `pomptrace config` on the make
/// command line; `--libs` is the one line that names the measurement library.
const OPARI2_MAKEFILE: &str = r#"OPARI2        = opari2
OPARI2_CONFIG = opari2-config
CC            = cc
FC            = gfortran
OPENMP        = -fopenmp
CFLAGS        = -O1 -g `$(OPARI2_CONFIG) --cflags`
FFLAGS        = -O1 -g
NM            = `$(OPARI2_CONFIG) --nm`
POMP2_INIT    = `$(OPARI2_CONFIG) --region-initialization`
POMP_LIBS     = `$(OPARI2_CONFIG) --libs`

all: capp fapp

link_program.mod.c: link_program.c
	$(OPARI2) link_program.c link_program.mod.c

link_program.mod.o: link_program.mod.c
	$(CC) $(OPENMP) $(CFLAGS) -c link_program.mod.c -o $@

pomp2_init_c.c: link_program.mod.o
	$(NM) link_program.mod.o | $(POMP2_INIT) > $@

pomp2_init_c.o: pomp2_init_c.c
	$(CC) $(CFLAGS) -c pomp2_init_c.c -o $@

capp: link_program.mod.o pomp2_init_c.o
	$(CC) $(OPENMP) link_program.mod.o pomp2_init_c.o $(POMP_LIBS) -o $@

f_tasks_locks.mod.F: f_tasks_locks.f
	$(OPARI2) f_tasks_locks.f f_tasks_locks.mod.F

f_tasks_locks.mod.o: f_tasks_locks.mod.F
	$(FC) $(OPENMP) $(FFLAGS) `$(OPARI2_CONFIG) --fortran --cflags` -c f_tasks_locks.mod.F -o $@

pomp2_init_f.c: f_tasks_locks.mod.o
	$(NM) f_tasks_locks.mod.o | $(POMP2_INIT) > $@

pomp2_init_f.o: pomp2_init_f.c
	$(CC) -c pomp2_init_f.c -o $@

fapp: f_tasks_locks.mod.o pomp2_init_f.o
	$(FC) $(OPENMP) f_tasks_locks.mod.o pomp2_init_f.o $(POMP_LIBS) -o $@
"#;

/// The names of the functions an init file declares `extern` (the init functions it calls).
fn init_functions(init_file: &str) -> Vec<String> {
    let mut names: Vec<String> = init_file
        .lines()
        .filter_map(|l| l.trim().strip_prefix("extern void "))
        .map(|rest| {
            rest.trim_end_matches(';')
                .trim_end_matches("()")
                .to_string()
        })
        .map(|name| name.trim_end_matches("(void)").to_string())
        .collect();
    names.sort();
    names
}

#[test]
fn an_opari2_makefile_builds_with_pomptrace_config_in_place_of_opari2_config() {
    let scratch = Scratch::new("link-makefile");
    let dir = &scratch.path;
    std::fs::write(dir.join("Makefile"), OPARI2_MAKEFILE).unwrap();
    for file in ["link_program.c", "f_tasks_locks.f"] {
        std::fs::copy(repo_root().join("c-tests").join(file), dir.join(file)).unwrap();
    }
    let config = format!("OPARI2_CONFIG={} config", pomptrace_command().display());
    run(Command::new("make")
        .arg("-C")
        .arg(dir)
        .arg("--no-print-directory")
        .arg(&config));

    // The init files are what `pomptrace init-regions` writes for the same objects, and what
    // `config --create-pomp2-regions` prints.
    for (init, object) in [
        ("pomp2_init_c.c", "link_program.mod.o"),
        ("pomp2_init_f.c", "f_tasks_locks.mod.o"),
    ] {
        let made = std::fs::read_to_string(dir.join(init)).unwrap();
        let direct = stdout_of(
            Command::new(pomptrace_command())
                .arg("init-regions")
                .arg(dir.join(object)),
        );
        assert_eq!(made, direct, "{init}");
        let created = stdout_of(
            Command::new(pomptrace_command())
                .args(["config", "--create-pomp2-regions"])
                .arg(dir.join(object)),
        );
        assert_eq!(created, direct, "{init}");
        assert!(!init_functions(&made).is_empty(), "{made}");
    }

    // The real opari2-config, with the same Makefile, finds the same init functions.
    let real = dir.join("real");
    std::fs::create_dir(&real).unwrap();
    for file in ["Makefile", "link_program.mod.o", "f_tasks_locks.mod.o"] {
        std::fs::copy(dir.join(file), real.join(file)).unwrap();
    }
    run(Command::new("make")
        .arg("-C")
        .arg(&real)
        .arg("--no-print-directory")
        .args(["-o", "link_program.mod.o", "-o", "f_tasks_locks.mod.o"])
        .args(["pomp2_init_c.c", "pomp2_init_f.c"]));
    for init in ["pomp2_init_c.c", "pomp2_init_f.c"] {
        let ours = std::fs::read_to_string(dir.join(init)).unwrap();
        let theirs = std::fs::read_to_string(real.join(init)).unwrap();
        assert_eq!(init_functions(&ours), init_functions(&theirs), "{init}");
    }

    // The C program records what the harness build of the same program records.
    let build = scratch.join("reference");
    std::fs::create_dir(&build).unwrap();
    let source = instrument("link_program.c", &build, &[]);
    let reference = Build::c(&build).executable(&[source], "reference");
    assert_same_outcomes(&[
        ("the harness build", reference, vec![]),
        ("the OPARI2 Makefile", dir.join("capp"), vec![]),
    ]);
    // The Fortran program runs and records its tasks and locks.
    for threads in THREADS {
        let o = outcome(&dir.join("fapp"), threads, &format!("fapp-{threads}"), &[]);
        assert_eq!(
            o.stdout,
            format!("total=15 k={} psum=5050\n", 2 * threads),
            "fapp"
        );
        assert_eq!(o.kinds.get("ThreadTaskCreate"), Some(&5), "{o:?}");
        assert_eq!(o.kinds.get("ThreadTaskComplete"), Some(&5), "{o:?}");
        assert!(
            o.regions
                .iter()
                .any(|r| r.starts_with("!$omp task @f_tasks_locks.f:")),
            "{:?}",
            o.regions
        );
    }
}

#[test]
fn the_examples_build_and_record_the_same_three_ways() {
    let scratch = Scratch::new("link-examples");
    let pomptrace = format!("POMPTRACE={}", pomptrace_command().display());
    let preload = library_dir().join("libpomptrace.so").display().to_string();
    for example in ["c", "cxx", "fortran"] {
        let dir = scratch.join(example);
        std::fs::create_dir(&dir).unwrap();
        let source_dir = repo_root().join("examples").join(example);
        for entry in std::fs::read_dir(&source_dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            // The sources and the Makefile, not what a build in place may have left there.
            let source = name == "Makefile"
                || ([".c", ".cpp", ".f90"].iter().any(|e| name.ends_with(e))
                    && name != "pomp2_init.c");
            if source {
                std::fs::copy(&path, dir.join(&name)).unwrap();
            }
        }
        run(Command::new("make")
            .arg("-C")
            .arg(&dir)
            .arg("--no-print-directory")
            .arg(&pomptrace));
        let static_exe = dir.join("heat_static");
        assert!(!needs_pomptrace(&static_exe), "{example}");
        assert!(needs_pomptrace(&dir.join("heat_shared")), "{example}");
        assert!(!needs_pomptrace(&dir.join("libheat.so")), "{example}");
        assert_same_outcomes(&[
            ("shared", dir.join("heat_shared"), vec![]),
            ("static", static_exe, vec![]),
            (
                "LD_PRELOAD",
                dir.join("heat_preload"),
                vec![("LD_PRELOAD", preload.clone())],
            ),
        ]);
    }
    // `make run` runs all three and summarises each trace.
    let out = stdout_of(
        Command::new("make")
            .arg("-C")
            .arg(scratch.join("c"))
            .arg("--no-print-directory")
            .arg(&pomptrace)
            .args(["run", "THREADS=2"]),
    );
    assert_eq!(out.matches("heat: total 1000.000").count(), 3, "{out}");
    assert_eq!(
        out.matches("!$pomp user(diffusion) @heat.c:").count(),
        3,
        "{out}"
    );
}

/// The `opari2-config` spellings and the usage errors of `pomptrace config`, with the build
/// tree's command (headers in the source tree, libraries next to the command).
#[test]
fn config_spellings_and_errors() {
    let bin = pomptrace_command();
    let config = |args: &[&str]| stdout_of(Command::new(&bin).arg("config").args(args));
    let cflags = format!("-I{}\n", include_dir().display());
    for spelling in [
        "--cflags",
        "--cflags=gnu",
        "--cflags=intel",
        "--cflags=cray",
    ] {
        assert_eq!(config(&[spelling]), cflags, "{spelling}");
    }
    assert_eq!(config(&["--fortran", "--cflags"]), cflags);
    assert_eq!(config(&["--build-check", "--cflags"]), cflags);
    assert_eq!(config(&["--interface-version"]), "3:0:0\n");
    // The build tree's shared library: next to the command, never in deps/ (which later
    // builds replace under the programs linked against it); where cargo test refreshed only
    // deps/, the command copied it up.
    let dir = bin.parent().unwrap();
    assert_eq!(config(&["--libdir"]), format!("{}\n", dir.display()));
    let library = |dir: &Path| std::fs::read(dir.join("libpomptrace.so")).unwrap();
    assert!(library(dir) == library(&library_dir()));

    // `--region-initialization -` always filters; in `...` without input it prints its command.
    let scratch = Scratch::new("link-config");
    let nm_output = scratch.join("nm.txt");
    std::fs::write(&nm_output, "0000000000000000 T POMP2_Init_reg_abc1_3\n").unwrap();
    let filtered = stdout_of(
        Command::new(&bin)
            .args(["config", "--region-initialization", "-"])
            .stdin(std::fs::File::open(&nm_output).unwrap()),
    );
    assert!(filtered.contains("POMP2_Init_reg_abc1_3();"), "{filtered}");
    let script = format!(
        "echo \"`'{0}' config --region-initialization`\"; \
         x=$('{0}' config --region-initialization < '{1}'); echo \"$x\" | grep -c abc1_3",
        bin.display(),
        nm_output.display()
    );
    let out = stdout_of(Command::new("sh").arg("-c").arg(&script));
    let exe = bin.canonicalize().unwrap();
    assert_eq!(
        out,
        format!("{} config --region-initialization -\n2\n", exe.display()),
        "backticks print the filter command; input from a file is filtered"
    );

    for args in [
        &["config", "--static"][..],
        &["config", "--libs", "--bogus"],
        &["config", "--create-pomp2-regions"],
        &["config", "--create-pomp2-regions", "-x", "a.o"],
        &["config", "--cflags", "--nm"],
        &["config", "--region-initialization", "-", "-"],
    ] {
        let out = Command::new(&bin).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("Usage:"),
            "{args:?}"
        );
    }
}
