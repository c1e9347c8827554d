//! fork() while other threads hold the region registry or the lock table: the child must not
//! find them locked by a thread it does not have (it would hang at its first new handle).

mod support;

use std::process::Command;

use support::pomp2::*;
use support::{otf2_print, Scratch};

#[test]
fn children_forked_while_threads_assign_handles_never_hang() {
    let scratch = Scratch::new("fork-registry");
    let exe = build_direct_calls(&scratch.path, "robust_fork_registry.c");
    let experiment = scratch.join("trace");
    // The program kills (and reports) the first child that hangs for 3 s; `timeout` guards the rest.
    let out = Command::new("timeout")
        .args(["300"])
        .arg(&exe)
        .arg("200")
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", &experiment)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{:?}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout, "forks 200 ok\n");
    // The parent's trace is unharmed by its children.
    otf2_print(&[], &experiment.join("traces.otf2"), &[]);
}
