//! A fully static executable (`cc -static`): the OpenMP lock calls that OPARI2 turned into POMP2
//! calls must still lock. Linked with `pomptrace config --libs --static`, the runtime's lock
//! functions are in the program and every lock works (an exact count under contention, a test
//! that obtains the lock, nest locks), and the reference reader sees every acquisition. Linked
//! without the lock functions, the program is stopped with one `pomptrace:` line rather than run
//! unlocked, and its trace is still written.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::pomp2::*;
use support::{run, Scratch};

const THREADS: u32 = 4;
const ROUNDS: usize = 20_000;

fn config_words(args: &[&str]) -> Vec<String> {
    let out = run(Command::new(pomptrace_command()).arg("config").args(args));
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// The instrumented `static_locks.c` compiled, with its init file; returns the two objects.
fn objects(dir: &Path) -> [PathBuf; 2] {
    let source = instrument("static_locks.c", dir, &[]);
    let object = dir.join("static_locks.o");
    run(Command::new("cc")
        .args(["-fopenmp", "-O1"])
        .args(config_words(&["--cflags"]))
        .arg("-c")
        .arg(&source)
        .arg("-o")
        .arg(&object));
    let init = dir.join("init.c");
    run(Command::new(pomptrace_command())
        .args(["init-regions", "-o"])
        .arg(&init)
        .arg(&object));
    let init_object = dir.join("init.o");
    run(Command::new("cc")
        .arg("-c")
        .arg(&init)
        .arg("-o")
        .arg(&init_object));
    [object, init_object]
}

fn link_static(dir: &Path, objects: &[PathBuf], libs: &[String], name: &str) -> PathBuf {
    let exe = dir.join(name);
    run(Command::new("cc")
        .args(["-static", "-fopenmp"])
        .args(objects)
        .args(libs)
        .arg("-o")
        .arg(&exe));
    let file = String::from_utf8(run(Command::new("file").arg(&exe)).stdout).unwrap();
    assert!(file.contains("statically linked"), "{file}");
    exe
}

#[test]
fn a_static_executable_locks_for_real_and_refuses_to_run_unlocked() {
    let scratch = Scratch::new("static-executable");
    let dir = &scratch.path;
    let objects = objects(dir);

    let linked = link_static(
        dir,
        &objects,
        &config_words(&["--libs", "--static"]),
        "with_locks",
    );
    let r = run_traced(&linked, THREADS, "with_locks_trace", &[]);
    assert_eq!(
        r.stdout().trim(),
        format!("counter {} obtained 1", THREADS as usize * ROUNDS)
    );
    assert_eq!(r.stderr().lines().count(), 1, "{}", r.stderr());
    let view = View::read(&r.anchor());
    view.assert_well_formed();
    let acquisitions = view.kind_counts()["ThreadAcquireLock"];
    // Every set, the successful tests and both nest acquisitions of each thread (only the
    // outer one of a nest lock is an acquisition).
    assert!(
        acquisitions > THREADS as usize * ROUNDS,
        "{acquisitions} acquisitions"
    );

    // The archive and the system libraries alone: the lock functions are not in the program.
    let archive_only: Vec<String> = config_words(&["--libs", "--static"])
        .into_iter()
        .filter(|w| !w.starts_with("-Wl,--undefined="))
        .collect();
    let unlinked = link_static(dir, &objects, &archive_only, "without_locks");
    let experiment = dir.join("without_locks_trace");
    let out = program(&unlinked)
        .env("OMP_NUM_THREADS", THREADS.to_string())
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", &experiment)
        .output()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(libc::SIGABRT), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let refusal: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("would not lock"))
        .collect();
    assert_eq!(refusal.len(), 1, "{stderr}");
    assert!(
        refusal[0].starts_with("pomptrace: omp_init_lock "),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "the program ran on: {out:?}");
    View::read(&experiment.join("traces.otf2")).assert_well_formed();
}
