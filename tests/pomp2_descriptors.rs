//! pomptrace's files are never confused with the program's, and any number of locations works:
//! no descriptor is kept between chunk writes.

mod support;

use std::process::Command;

use support::pomp2::*;
use support::{run, Scratch};

/// Per thread and parallel region of `closed_fds.c`.
const ITERATIONS: usize = 5000;

#[test]
fn a_program_that_closes_every_descriptor_gets_its_own_file_unchanged() {
    let scratch = Scratch::new("closed-fds");
    let exe = instrumented_c_program(&scratch.path, "closed_fds.c");
    let untraced = scratch.join("untraced.txt");
    let plain = run(program(&exe)
        .arg(&untraced)
        .arg(ITERATIONS.to_string())
        .env("OMP_NUM_THREADS", "2")
        .env("POMPTRACE_ENABLE", "0"));
    let traced = scratch.join("traced.txt");
    let experiment = scratch.join("exp");
    // The smallest chunks: many are written while the program's file is open.
    let r = Run {
        output: run(program(&exe)
            .arg(&traced)
            .arg(ITERATIONS.to_string())
            .env("OMP_NUM_THREADS", "2")
            .env("POMPTRACE_CHUNK_SIZE", "256K")
            .env("POMPTRACE_EXPERIMENT_DIRECTORY", &experiment)
            .env_remove("POMPTRACE_ENABLE")),
        experiment,
    };
    assert_eq!(r.stdout(), String::from_utf8_lossy(&plain.stdout));
    let expected = std::fs::read(&untraced).unwrap();
    assert_eq!(expected.iter().filter(|&&b| b == b'\n').count(), 20);
    assert!(
        std::fs::read(&traced).unwrap() == expected,
        "the program's file differs from the untraced run's"
    );
    let stderr = r.stderr();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("pomptrace: trace written to "),
        "{stderr}"
    );
    let view = View::read(&r.anchor());
    view.assert_well_formed();
    assert_eq!(view.enters_of("user(step)"), 21 * 2 * ITERATIONS);
}

#[test]
fn four_thousand_and_ninety_six_locations_need_no_more_descriptors_than_the_default_limit() {
    let scratch = Scratch::new("many-locations");
    let exe = instrumented_c_program(&scratch.path, "nested_teams.c");
    let experiment = scratch.join("exp");
    let out = run(Command::new("sh")
        .arg("-c")
        .arg("ulimit -n 1024 && exec \"$0\" 64 64")
        .arg(&exe)
        .env("POMPTRACE_CHUNK_SIZE", "256K")
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", &experiment)
        .env_remove("POMPTRACE_ENABLE")
        .env_remove("OMP_NUM_THREADS"));
    let r = Run {
        output: out,
        experiment,
    };
    assert_eq!(r.stdout(), "threads=4096\n");
    let stderr = r.stderr();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("pomptrace: trace written to ") && stderr.contains("(4096 locations,"),
        "{stderr}"
    );
    let view = View::read(&r.anchor());
    view.assert_well_formed();
    assert_eq!(view.locations.len(), 4096);
    // Each inner thread: team begin/end around the inner parallel region and its barrier.
    assert!(
        view.events.len() == 4096,
        "{} locations with events",
        view.events.len()
    );
}
