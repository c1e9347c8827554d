//! One process owns an experiment directory: a second process asking for the same
//! POMPTRACE_EXPERIMENT_DIRECTORY while the first runs gets one clear line and a directory of
//! its own (DIR-<pid>), and both traces are whole and readable.

mod support;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::Stdio;

use support::pomp2::*;
use support::Scratch;

const PER_THREAD: usize = 200_000;

#[test]
fn two_processes_with_one_directory_write_two_readable_traces_and_one_message() {
    let scratch = Scratch::new("two-owners");
    let exe = instrumented_c_program(&scratch.path, "stream_many.c");
    let experiment = scratch.join("exp");
    let gate = scratch.join("gate");
    let start = |gated: bool| {
        let mut command = program(&exe);
        command
            .arg(PER_THREAD.to_string())
            .env("OMP_NUM_THREADS", "2")
            .env("POMPTRACE_EXPERIMENT_DIRECTORY", &experiment)
            .env_remove("POMPTRACE_ENABLE")
            .env_remove("STREAM_MANY_GATE")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if gated {
            command.env("STREAM_MANY_GATE", &gate);
        }
        command.spawn().unwrap()
    };
    // The first process has recorded and waits, still owning the directory, while the second
    // runs whole (a timed head start let a loaded machine finish the first before the second
    // began, and the second then found a finished trace instead).
    let mut first = start(true);
    let mut first_stdout = BufReader::new(first.stdout.take().unwrap());
    let mut line = String::new();
    first_stdout.read_line(&mut line).unwrap();
    assert_eq!(line, "waiting\n");
    let second = start(false);
    let pids = [first.id(), second.id()];
    let second_output = second.wait_with_output().unwrap();
    std::fs::write(&gate, b"").unwrap();
    let mut rest = String::new();
    first_stdout.read_to_string(&mut rest).unwrap();
    assert!(rest.starts_with("total="), "{rest}");
    let outputs = [first.wait_with_output().unwrap(), second_output];

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
