//! A location has one writer at a time, also where the library has to guess a thread's place:
//! threads first seen inside parallel regions that were not instrumented
//! (`c-tests/second_writer_plain.c`, calling the instrumented orphaned loop of
//! `c-tests/second_writer.c`) are placed by their OpenMP ancestry into the initial thread's
//! tree, onto positions the initial thread and its team members write. The one that comes
//! second records into a location of its own, with one warning, and every location's events
//! stay whole.

#[path = "support/routes.rs"]
mod routes;
mod support;

use std::process::Command;

use routes::{Route, ROUTES};
use support::pomp2::{pomptrace_command, run_traced_with_args, View};
use support::{run, Scratch};

const REGIONS: usize = 300;

/// second_writer.c instrumented along `route`, second_writer_plain.c compiled plain, linked.
fn build(route: Route, scratch: &Scratch) -> std::path::PathBuf {
    let dir = scratch.join(route.label());
    std::fs::create_dir_all(&dir).unwrap();
    for file in ["second_writer.c", "second_writer_plain.c"] {
        std::fs::copy(
            support::repo_root().join("c-tests").join(file),
            dir.join(file),
        )
        .unwrap();
    }
    run(Command::new("cc")
        .args(["-fopenmp", "-O1", "-c", "second_writer_plain.c"])
        .current_dir(&dir));
    let exe = dir.join("second_writer");
    match route {
        Route::Wrapper => {
            let wrapper = pomptrace_command();
            run(Command::new(&wrapper)
                .args(["cc", "-fopenmp", "-O1", "-c", "second_writer.c"])
                .current_dir(&dir));
            run(Command::new(&wrapper)
                .args(["cc", "-fopenmp", "second_writer.o", "second_writer_plain.o"])
                .arg("-o")
                .arg(&exe)
                .current_dir(&dir));
        }
        Route::Classic => {
            let source = support::pomp2::instrument("second_writer.c", &dir, &[]);
            run(Command::new("cc")
                .args(["-fopenmp", "-O1", "-I"])
                .arg(support::pomp2::include_dir())
                .arg("-c")
                .arg(&source)
                .arg("-o")
                .arg("second_writer.o")
                .current_dir(&dir));
            run(Command::new(pomptrace_command())
                .args(["init-regions", "-o", "init.c", "second_writer.o"])
                .current_dir(&dir));
            run(Command::new("cc")
                .args(["-c", "init.c", "-o", "init.o"])
                .current_dir(&dir));
            let lib = support::pomp2::library_dir();
            run(Command::new("cc")
                .args([
                    "-fopenmp",
                    "second_writer.o",
                    "init.o",
                    "second_writer_plain.o",
                ])
                .arg("-L")
                .arg(&lib)
                .arg("-lpomptrace")
                .arg(format!("-Wl,-rpath,{}", lib.display()))
                .arg("-o")
                .arg(&exe)
                .current_dir(&dir));
        }
    }
    exe
}

#[test]
fn threads_placed_onto_a_position_another_thread_writes_record_into_locations_of_their_own() {
    let scratch = Scratch::new("second-writer");
    for route in ROUTES {
        let exe = build(route, &scratch);
        for round in 0..3 {
            let label = format!("{}-{round}", route.label());
            let traced = run_traced_with_args(&exe, &[&REGIONS.to_string()], 2, &label, &[]);
            assert_eq!(
                traced.stdout().trim(),
                format!("teams {} iterations {}", 4 * REGIONS, 16 * REGIONS),
                "{route:?}"
            );
            let stderr = traced.stderr();
            assert!(!stderr.contains("internal error"), "{route:?}:\n{stderr}");
            // The pthread's thread 0 is placed on the initial thread's own position, which the
            // initial thread holds all run long.
            assert_eq!(
                stderr.matches("took the position of location").count(),
                1,
                "{route:?}: one warning for the run:\n{stderr}"
            );
            let view = View::read(&traced.anchor());
            view.assert_well_formed();
            let names: Vec<&str> = view.locations.values().map(|l| l.0.as_str()).collect();
            assert!(
                names
                    .iter()
                    .any(|n| n.starts_with("Master thread (OS thread ")),
                "{route:?}: {names:?}"
            );
            // Every loop and every team of the initial thread is in the trace, whichever
            // location it went to.
            assert_eq!(view.enters_of("!$omp for"), 2 * REGIONS, "{route:?}");
            assert_eq!(view.enters_of("!$omp parallel"), 2 * REGIONS, "{route:?}");
        }
    }
}
