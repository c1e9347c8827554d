//! Processes that fork, threads still running at exit.

use super::*;

/// A command running `exe` under `timeout`, so that a hang fails the test instead of blocking it.
fn with_timeout(seconds: u32, exe: &Path) -> Command {
    let mut cmd = Command::new("timeout");
    cmd.arg("-k").arg("5").arg(seconds.to_string()).arg(exe);
    cmd
}

#[test]
fn a_forked_child_that_exits_neither_hangs_nor_touches_the_parents_trace() {
    let scratch = Scratch::new("robust-fork");
    let source = instrument("robust_fork.c", &scratch.path, &[]);
    let exe = Build::c(&scratch.path).executable(&[source], "robust_fork");
    let experiment = scratch.join("fork");
    let out = with_timeout(60, &exe)
        .env("OMP_NUM_THREADS", "2")
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", &experiment)
        .env_remove("POMPTRACE_ENABLE")
        .env_remove("LD_PRELOAD")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "hung or failed: {out:?}");
    assert_eq!(
        stdout_of(&out),
        "child v=42\nparent before=2 after=2 child=7\n"
    );
    // The parent's summary only: the child writes nothing.
    let stderr = stderr_of(&out);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let view = View::read(&experiment.join("traces.otf2"));
    view.assert_well_formed();
    check_summary(&stderr, &view, &experiment, None);
    assert_eq!(count(&view, "ThreadFork"), 2);
    assert_eq!(count(&view, "ThreadJoin"), 2);
    assert!(
        !text_counts(&view).keys().any(|t| t.contains("user(child)")),
        "the child's events are not in the parent's trace"
    );
}

#[test]
fn exit_inside_a_parallel_region_while_others_record_leaves_a_clean_trace() {
    let scratch = Scratch::new("robust-exit-inside");
    let source = instrument("robust_exit_inside.c", &scratch.path, &[]);
    let exe = Build::c(&scratch.path).executable(&[source], "robust_exit_inside");
    for attempt in 0..20 {
        let experiment = scratch.join(&format!("exit-{attempt}"));
        let out = with_timeout(60, &exe)
            .env("OMP_NUM_THREADS", "8")
            .env("POMPTRACE_EXPERIMENT_DIRECTORY", &experiment)
            .env_remove("POMPTRACE_ENABLE")
            .env_remove("LD_PRELOAD")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "attempt {attempt}: {out:?}");
        let stderr = stderr_of(&out);
        assert_eq!(stderr.lines().count(), 1, "attempt {attempt}: {stderr}");
        // No "; but N timestamps ... went backwards": the summary ends with the byte count.
        let view = View::read(&experiment.join("traces.otf2"));
        view.assert_well_formed();
        check_summary(&stderr, &view, &experiment, None);
        let _ = std::fs::remove_dir_all(&experiment);
    }
}
