//! Streaming with bounded memory: 10^8 events on 4 threads with a 1 MiB buffer per thread.
//! Every event must be in the trace, and the peak resident set may grow by at most 64 MiB over
//! the same program run without recording.

mod support;

use pomptrace::otf2::{ArchiveReader, Event};
use support::pomp2::{instrument, Build};
use support::Scratch;

const THREADS: u64 = 4;
/// Loop iterations per thread: two user-region events each, 10^8 in all.
const ITERATIONS: u64 = 12_500_000;

fn field(stdout: &str, key: &str) -> i64 {
    stdout
        .split_whitespace()
        .find_map(|w| w.strip_prefix(key))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {stdout:?}"))
}

#[test]
fn a_hundred_million_events_stream_through_a_one_mebibyte_buffer() {
    let scratch = Scratch::new("streaming");
    let source = instrument("stream_many.c", &scratch.path, &[]);
    let exe = Build::c(&scratch.path).executable(&[source], "stream_many");
    let n = ITERATIONS.to_string();

    let traced = {
        let mut cmd = std::process::Command::new(&exe);
        cmd.arg(&n)
            .env("OMP_NUM_THREADS", THREADS.to_string())
            .env("POMPTRACE_BUFFER_SIZE", "1M")
            .env("POMPTRACE_EXPERIMENT_DIRECTORY", scratch.join("on"));
        support::run(&mut cmd)
    };
    let stdout = String::from_utf8_lossy(&traced.stdout);
    let base_stdout = String::from_utf8_lossy(
        &{
            let mut cmd = std::process::Command::new(&exe);
            cmd.arg(&n)
                .env("OMP_NUM_THREADS", THREADS.to_string())
                .env("POMPTRACE_ENABLE", "0");
            support::run(&mut cmd)
        }
        .stdout,
    )
    .into_owned();
    assert_eq!(
        field(&stdout, "total="),
        field(&base_stdout, "total="),
        "the program's result changed"
    );
    let growth_kib = field(&stdout, "vmhwm_kib=") - field(&base_stdout, "vmhwm_kib=");
    eprintln!("peak RSS: traced {stdout} / untraced {base_stdout}");
    assert!(
        growth_kib < 64 * 1024,
        "peak RSS grew by {growth_kib} KiB with a 1 MiB buffer per thread"
    );

    // Count every event with our reader (streaming; the reference readers are far too slow for
    // 10^8 events): per thread 2 per iteration, plus team begin/end, the parallel region and its
    // implicit barrier (6); the master also has ProgramBegin/End and ThreadFork/Join.
    let reader = ArchiveReader::open(scratch.join("on/traces.otf2")).unwrap();
    let mut user_events = 0u64;
    let mut total = 0u64;
    for location in reader.locations().unwrap() {
        let mut count = 0u64;
        let mut flushes = 0u64;
        for record in reader.events(location).unwrap() {
            let record = record.unwrap();
            count += 1;
            match record.event {
                Event::BufferFlush { .. } => flushes += 1,
                Event::Enter { .. } | Event::Leave { .. } => user_events += 1,
                _ => {}
            }
        }
        let expected = 2 * ITERATIONS + 6 + if location == 0 { 4 } else { 0 };
        assert_eq!(count - flushes, expected, "location {location}");
        total += count - flushes;
    }
    assert_eq!(
        user_events,
        THREADS * (2 * ITERATIONS + 4),
        "Enter/Leave events (user regions, parallel, barrier)"
    );
    assert_eq!(total, 100_000_000 + THREADS * 6 + 4);
}
