//! One process owns an experiment directory: a second process asking for the same
//! POMPTRACE_EXPERIMENT_DIRECTORY while the first runs gets one clear line and a directory of
//! its own (DIR-<pid>), and both traces are whole and readable.

mod support;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use support::pomp2::*;
use support::Scratch;

const PER_THREAD: usize = 200_000;

#[test]
fn two_processes_with_one_directory_write_two_readable_traces_and_one_message() {
    let scratch = Scratch::new("two-owners");
    let exe = instrumented_c_program(&scratch.path, "stream_many.c");
    let experiment = scratch.join("exp");
    let start = || {
        Command::new(&exe)
            .arg(PER_THREAD.to_string())
            .env("OMP_NUM_THREADS", "2")
            .env("POMPTRACE_EXPERIMENT_DIRECTORY", &experiment)
            .env_remove("POMPTRACE_ENABLE")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let first = start();
    std::thread::sleep(Duration::from_millis(10));
    let second = start();
    let pids = [first.id(), second.id()];
    let outputs = [
        first.wait_with_output().unwrap(),
        second.wait_with_output().unwrap(),
    ];

    let mut archives = BTreeSet::new();
    let mut messages = Vec::new();
    for (out, pid) in outputs.iter().zip(pids) {
        assert!(out.status.success(), "{:?}", out.status);
        let stderr = String::from_utf8_lossy(&out.stderr);
        for line in stderr.lines() {
            if let Some(rest) = line.strip_prefix("pomptrace: trace written to ") {
                let anchor = rest.split(" (").next().unwrap();
                archives.insert(PathBuf::from(anchor));
            } else {
                assert!(line.contains(" is in use by process "), "{line}");
                let own = format!("{}-{pid}", experiment.display());
                assert_eq!(
                    line,
                    format!(
                        "pomptrace: {} is in use by process {}; writing this trace to {own} \
                         instead",
                        experiment.display(),
                        pids.iter().find(|&&p| p != pid).unwrap()
                    )
                );
                messages.push(line.to_string());
            }
        }
    }
    assert_eq!(messages.len(), 1, "one message: {messages:?}");
    assert_eq!(archives.len(), 2, "two traces: {archives:?}");
    assert!(archives.contains(&experiment.join("traces.otf2")));
    for anchor in &archives {
        let view = View::read(anchor);
        view.assert_well_formed();
        assert_eq!(
            view.enters_of("user(step)"),
            2 * PER_THREAD,
            "{}",
            anchor.display()
        );
    }
}
