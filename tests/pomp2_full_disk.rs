//! A full disk: the master thread's event file is a symbolic link to /dev/full, so every write
//! to it fails with ENOSPC. The program must run on unharmed, pomptrace must say what happened in
//! its one closing line, and everything that could still be written (definitions, the anchor,
//! the other threads' events) must be there and readable.

mod support;

use otf2::{ArchiveReader, Event};
use support::pomp2::*;
use support::Scratch;

#[test]
fn a_full_disk_is_reported_once_and_the_rest_of_the_trace_is_written() {
    let scratch = Scratch::new("full-disk");
    let source = instrument("stream_many.c", &scratch.path, &[]);
    let exe = Build::c(&scratch.path).executable(&[source], "stream_many");
    let experiment = scratch.join("exp");
    std::fs::create_dir_all(experiment.join("traces")).unwrap();
    std::os::unix::fs::symlink("/dev/full", experiment.join("traces/0.evt")).unwrap();

    // 2 x 200 000 user-region events per thread: several 256 KiB chunks each.
    let out = program(&exe)
        .arg("200000")
        .env("OMP_NUM_THREADS", "2")
        .env("POMPTRACE_CHUNK_SIZE", "256K")
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", &experiment)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the program was harmed: {:?}",
        out.status
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("total=200000 "),
        "the program's result changed: {stdout}"
    );

    // One line, saying where the trace is and what went wrong.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "expected one pomptrace line:\n{stderr}");
    assert!(
        lines[0].starts_with("pomptrace: trace written to "),
        "{stderr}"
    );
    assert!(
        lines[0].contains("writing the events of Master thread failed"),
        "{stderr}"
    );
    assert!(lines[0].contains("No space left on device"), "{stderr}");

    // What could be written was: definitions, anchor, and the other thread's events, whole.
    let reader = ArchiveReader::open(experiment.join("traces.otf2")).unwrap();
    assert_eq!(reader.locations().unwrap(), vec![0, 1]);
    let worker: Vec<_> = reader.events(1).unwrap().collect::<Result<_, _>>().unwrap();
    // Per thread: 2 events per iteration, plus team begin/end, the parallel region and its
    // implicit barrier; and a BufferFlush for each chunk the thread stopped to write.
    let flushes = worker
        .iter()
        .filter(|r| matches!(r.event, Event::BufferFlush { .. }))
        .count();
    assert_eq!(worker.len() - flushes, 2 * 200_000 + 6);
}
