//! A program that `dlopen`s an instrumented library (which brings libpomptrace in), `dlclose`s it,
//! then forks and exits: libpomptrace stays mapped (it is marked never to be unloaded), so its
//! exit, fork and signal handlers still have their code, and the trace is written at exit.

mod support;

use std::process::Command;

use support::pomp2::*;
use support::{repo_root, run, Scratch};

#[test]
fn dlclose_of_the_instrumented_library_then_fork_and_exit() {
    let scratch = Scratch::new("dlclose");
    let dir = &scratch.path;
    let lib = library_dir();

    let dynamic = String::from_utf8(
        run(Command::new("readelf")
            .arg("-d")
            .arg(lib.join("libpomptrace.so")))
        .stdout,
    )
    .unwrap();
    assert!(
        dynamic
            .lines()
            .any(|l| l.contains("FLAGS_1") && l.contains("NODELETE")),
        "{dynamic}"
    );

    let kernel = instrument("dlclose_kernel.c", dir, &[]);
    let object = dir.join("kernel.o");
    run(Command::new("cc")
        .args(["-fopenmp", "-fPIC", "-O1"])
        .arg("-I")
        .arg(include_dir())
        .arg("-c")
        .arg(&kernel)
        .arg("-o")
        .arg(&object));
    let shared = dir.join("libkernel.so");
    run(Command::new("cc")
        .args(["-shared", "-fopenmp"])
        .arg(&object)
        .arg(format!("-L{}", lib.display()))
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-lpomptrace")
        .arg("-o")
        .arg(&shared));
    let host = dir.join("host");
    run(Command::new("cc")
        .arg(repo_root().join("c-tests/dlclose_host.c"))
        .arg("-ldl")
        .arg("-o")
        .arg(&host));

    for round in 0..3 {
        let experiment = dir.join(format!("trace{round}"));
        let out = program(&host)
            .arg(&shared)
            .env("OMP_NUM_THREADS", "2")
            .env("POMPTRACE_EXPERIMENT_DIRECTORY", &experiment)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "kernel 299995\nchild 0\n",
            "{out:?}"
        );
        let view = View::read(&experiment.join("traces.otf2"));
        view.assert_well_formed();
        assert!(view.kind_counts()["ThreadFork"] >= 1);
    }
}
