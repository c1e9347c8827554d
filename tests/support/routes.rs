//! The two ways a C program gets its POMP2 calls, which every test of how threads find their
//! place covers both of: through the `pomptrace` compiler wrapper, whose `opari2 --omp-tpd`
//! hands each team the forking thread's node in `pomp_tpd`, and the classic `opari2 file.c`
//! with an init file, whose teams receive nothing and are placed by inference.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::pomp2::{include_dir, instrument, library_dir, pomptrace_command};
use crate::support::{repo_root, run};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// `pomptrace cc -fopenmp ...`: opari2 with `--omp-tpd`.
    Wrapper,
    /// `opari2 file.c`, compiled and linked by hand (`support::pomp2::Build`).
    Classic,
}

pub const ROUTES: [Route; 2] = [Route::Wrapper, Route::Classic];

impl Route {
    pub fn label(self) -> &'static str {
        match self {
            Route::Wrapper => "wrapper",
            Route::Classic => "classic",
        }
    }
}

/// `c-tests/<file>` built into `dir` along `route` with the extra compiler flags `flags`;
/// returns the executable (named after the file's stem and the route). Checks that the program
/// uses `pomp_tpd` exactly when the route says so.
pub fn build(route: Route, dir: &Path, file: &str, flags: &[&str]) -> PathBuf {
    let stem = file.rsplit_once('.').map_or(file, |(stem, _)| stem);
    let exe = dir.join(format!("{stem}-{}", route.label()));
    match route {
        Route::Wrapper => {
            let source = dir.join(file);
            std::fs::copy(repo_root().join("c-tests").join(file), &source)
                .unwrap_or_else(|e| panic!("copy {file}: {e}"));
            let mut command = Command::new(pomptrace_command());
            for v in pomptrace::settings::VARIABLES {
                command.env_remove(v.name);
            }
            run(command
                .args(["cc", "-fopenmp", "-O1"])
                .args(flags)
                .arg(&source)
                .arg("-o")
                .arg(&exe)
                .current_dir(dir));
        }
        Route::Classic => {
            // As `support::pomp2::Build` does, with the extra flags.
            let route_dir = dir.join("classic");
            std::fs::create_dir_all(&route_dir).unwrap();
            let source = instrument(file, &route_dir, &[]);
            let object = source.with_extension("o");
            run(Command::new("cc")
                .args(["-fopenmp", "-O1", "-I"])
                .arg(include_dir())
                .args(flags)
                .arg("-c")
                .arg(&source)
                .arg("-o")
                .arg(&object));
            let init = route_dir.join("pomp2_init.c");
            run(Command::new(pomptrace_command())
                .arg("init-regions")
                .arg("-o")
                .arg(&init)
                .arg(&object));
            let init_object = init.with_extension("o");
            run(Command::new("cc")
                .arg("-c")
                .arg(&init)
                .arg("-o")
                .arg(&init_object));
            let lib = library_dir();
            run(Command::new("cc")
                .arg("-fopenmp")
                .arg(&object)
                .arg(&init_object)
                .arg("-L")
                .arg(&lib)
                .arg("-lpomptrace")
                .arg(format!("-Wl,-rpath,{}", lib.display()))
                .arg("-o")
                .arg(&exe));
        }
    }
    let symbols = run(Command::new("nm").arg(&exe));
    let uses_tpd = String::from_utf8_lossy(&symbols.stdout)
        .lines()
        .any(|l| l.ends_with(" pomp_tpd_") || l.ends_with(" pomp_tpd"));
    assert_eq!(
        uses_tpd,
        route == Route::Wrapper,
        "{}: the program's use of pomp_tpd does not match its route",
        exe.display()
    );
    exe
}

/// `c-tests/<file>` built without instrumentation (`cc -fopenmp -O1 <flags>`), as `<stem>-plain`.
pub fn build_plain(dir: &Path, file: &str, flags: &[&str]) -> PathBuf {
    let stem = file.rsplit_once('.').map_or(file, |(stem, _)| stem);
    let exe = dir.join(format!("{stem}-plain"));
    run(Command::new("cc")
        .args(["-fopenmp", "-O1"])
        .args(flags)
        .arg(repo_root().join("c-tests").join(file))
        .arg("-o")
        .arg(&exe));
    exe
}
