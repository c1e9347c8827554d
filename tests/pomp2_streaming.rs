//! Streaming with bounded memory: 10^8 events on 4 threads with a 1 MiB buffer per thread, and
//! 16 threads (more than cores) within one limit for all of them. Every event must be in the
//! trace, and the peak resident set may grow by at most 64 MiB (96 MiB) over the same program
//! run without recording.

mod support;

use otf2::{ArchiveReader, Event};
use support::pomp2::{event_bytes, event_file_sizes, event_files, instrument, program, Build};
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
    let (scratch, growth_kib) = peak_growth_kib(
        "streaming",
        THREADS,
        ITERATIONS,
        &[("POMPTRACE_BUFFER_SIZE", "1M")],
    );
    assert!(
        growth_kib < 64 * 1024,
        "peak RSS grew by {growth_kib} KiB with a 1 MiB buffer per thread"
    );

    assert_every_event(&scratch.join("on/traces.otf2"), THREADS, ITERATIONS);
    assert_eq!(THREADS * 2 * ITERATIONS, 100_000_000);
}

/// Builds `stream_many` in a new scratch directory and runs it traced with `env` and untraced
/// on `threads` threads; returns the directory and the growth of the peak resident set in KiB,
/// after checking that the program's result is the same.
fn peak_growth_kib(
    label: &str,
    threads: u64,
    iterations: u64,
    env: &[(&str, &str)],
) -> (Scratch, i64) {
    let scratch = Scratch::new(label);
    let source = instrument("stream_many.c", &scratch.path, &[]);
    let exe = Build::c(&scratch.path).executable(&[source], "stream_many");
    let run = |traced: bool| {
        let mut cmd = program(&exe);
        cmd.arg(iterations.to_string())
            .env("OMP_NUM_THREADS", threads.to_string());
        if traced {
            cmd.env("POMPTRACE_EXPERIMENT_DIRECTORY", scratch.join("on"));
            cmd.envs(env.iter().copied());
        } else {
            cmd.env("POMPTRACE_ENABLE", "0");
        }
        String::from_utf8_lossy(&support::run(&mut cmd).stdout).into_owned()
    };
    let (traced, untraced) = (run(true), run(false));
    assert_eq!(
        field(&traced, "total="),
        field(&untraced, "total="),
        "the program's result changed"
    );
    eprintln!("peak RSS: traced {traced} / untraced {untraced}");
    let growth = field(&traced, "vmhwm_kib=") - field(&untraced, "vmhwm_kib=");
    (scratch, growth)
}

/// Counts every event with our reader (streaming; the reference readers are far too slow for
/// 10^8 events): per thread 2 per iteration, plus team begin/end, the parallel region and its
/// implicit barrier (6); the master also has ProgramBegin/End and ThreadFork/Join. Waits for
/// the writer (BufferFlush) come on top.
fn assert_every_event(anchor: &std::path::Path, threads: u64, iterations: u64) {
    let reader = ArchiveReader::open(anchor).unwrap();
    let mut user_events = 0u64;
    let mut locations = 0u64;
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
        let expected = 2 * iterations + 6 + if location == 0 { 4 } else { 0 };
        assert_eq!(count - flushes, expected, "location {location}");
        locations += 1;
    }
    assert_eq!(locations, threads);
    assert_eq!(
        user_events,
        threads * (2 * iterations + 4),
        "Enter/Leave events (user regions, parallel, barrier)"
    );
}

#[test]
fn many_more_threads_than_cores_stay_within_the_total_buffer_size() {
    const MANY: u64 = 16;
    // 2 million events, about 23 MB, per thread: 370 MB in all, which the default 64 MiB per
    // thread would keep.
    const EACH: u64 = 1_000_000;
    let (scratch, growth_kib) = peak_growth_kib(
        "streaming-total",
        MANY,
        EACH,
        &[
            ("POMPTRACE_BUFFER_SIZE", "64M"),
            ("POMPTRACE_TOTAL_BUFFER_SIZE", "16M"),
        ],
    );
    // Two 1 MiB chunks per thread and 16 MiB shared: 48 MiB.
    assert!(
        growth_kib < 96 * 1024,
        "peak RSS grew by {growth_kib} KiB for 16 threads within 16 MiB in all"
    );
    assert_every_event(&scratch.join("on/traces.otf2"), MANY, EACH);
}

/// The figures of the `POMPTRACE_VERBOSE=2` cost line: (recording ms, writer CPU ms, its
/// percentage of the recording time, waits for a free buffer).
fn cost_figures(stderr: &str) -> (f64, f64, f64, u64) {
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("pomptrace: recording took "))
        .unwrap_or_else(|| panic!("no cost line in {stderr:?}"));
    let after = |key: &str| -> &str {
        let (_, rest) = line
            .split_once(key)
            .unwrap_or_else(|| panic!("no `{key}` in {line:?}"));
        rest.split([' ', '%']).next().unwrap_or_default()
    };
    let number = |text: &str| -> f64 {
        text.parse()
            .unwrap_or_else(|_| panic!("bad figure {text:?} in {line:?}"))
    };
    (
        number(line.split(' ').next().unwrap_or_default()),
        number(after("used the CPU for ")),
        number(after(" ms (")),
        number(after("threads waited ")) as u64,
    )
}

#[test]
fn verbose_2_reports_the_cpu_time_of_the_writer_threads() {
    let scratch = Scratch::new("streaming-cost");
    let source = instrument("stream_many.c", &scratch.path, &[]);
    let exe = Build::c(&scratch.path).executable(&[source], "stream_many");
    let run_with = |verbose: &str, dir: &str, writer: &str| {
        let mut cmd = program(&exe);
        // 2 × 10^6 events per thread, about 23 MB: each chunk is written as it fills.
        cmd.arg("1000000")
            .env("OMP_NUM_THREADS", "2")
            .env("POMPTRACE_EXPERIMENT_DIRECTORY", scratch.join(dir))
            .env("POMPTRACE_KEEP_IN_MEMORY", "0")
            .env("POMPTRACE_WRITER", writer)
            .env("POMPTRACE_VERBOSE", verbose);
        String::from_utf8_lossy(&support::run(&mut cmd).stderr).into_owned()
    };
    let run = |verbose: &str, dir: &str| run_with(verbose, dir, "background");

    let stderr = run("2", "v2");
    assert!(
        stderr.starts_with("pomptrace: trace written to "),
        "{stderr}"
    );
    let (recording, writer, percent, waits) = cost_figures(&stderr);
    assert!(recording > 0.0, "{stderr}");
    // Two threads (writer, buffer preparation) that wrote 46 MB: some CPU time, at most both
    // threads busy for the whole run.
    assert!(writer > 0.0 && writer <= 2.0 * recording, "{stderr}");
    assert!(stderr.contains("; 2 helper threads started;"), "{stderr}");
    let expected = 100.0 * writer / recording;
    assert!(
        (percent - expected).abs() <= 0.01 + expected * 0.01,
        "{percent}% against {expected}%: {stderr}"
    );
    assert!(waits < 1_000_000, "{stderr}");
    assert_every_event(&scratch.join("v2/traces.otf2"), 2, 1_000_000);

    assert!(
        stderr.contains("; chunks streamed from the writer thread through the page cache;"),
        "{stderr}"
    );

    // The writer thread, straight to the device while the disk keeps up (the scratch
    // directory is on a disk).
    let stderr = run_with("2", "direct", "direct");
    assert!(stderr.contains("; 2 helper threads started;"), "{stderr}");
    assert!(
        stderr.contains(
            "; chunks streamed from the writer thread straight to the device while the disk kept \
             up;"
        ),
        "{stderr}"
    );
    assert_every_event(&scratch.join("direct/traces.otf2"), 2, 1_000_000);

    // Written by the recording threads: no thread started, each chunk one hold-up of its
    // thread (46 MB in 1 MiB chunks: 22 per thread, the last ones written at the end).
    let stderr = run_with("2", "thread", "thread");
    let (_, writer, _, waits) = cost_figures(&stderr);
    assert!(stderr.contains("; 0 helper threads started;"), "{stderr}");
    assert!(
        stderr.contains("; chunks streamed from the threads that filled them;"),
        "{stderr}"
    );
    assert_eq!(writer, 0.0, "{stderr}");
    assert!((40..=46).contains(&waits), "{stderr}");
    assert_every_event(&scratch.join("thread/traces.otf2"), 2, 1_000_000);

    let stderr = run("1", "v1");
    assert!(
        stderr.starts_with("pomptrace: trace written to ") && !stderr.contains("recording took"),
        "{stderr}"
    );
    assert_eq!(run("0", "v0"), "", "POMPTRACE_VERBOSE=0 prints nothing");
}

#[test]
fn chunks_stream_out_as_they_fill_on_any_file_system_and_stay_in_memory_when_asked() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let scratch = Scratch::new("streaming-direct");
    let source = instrument("stream_many.c", &scratch.path, &[]);
    let exe = Build::c(&scratch.path).executable(&[source], "stream_many");
    let shm = std::path::Path::new("/dev/shm")
        .join(format!("pomptrace-streaming-direct-{}", std::process::id()));
    // (experiment directory, POMPTRACE_KEEP_IN_MEMORY, POMPTRACE_WRITER): the scratch directory
    // is on a disk that takes direct writes, /dev/shm on tmpfs; by default chunks stream on both.
    let runs = [
        (scratch.join("disk"), None, "auto"),
        (scratch.join("direct"), None, "direct"),
        (shm.join("default"), None, "auto"),
        (shm.join("kept"), Some("64M"), "auto"),
    ];
    for (experiment, keep, writer) in runs {
        let gate = scratch.join("gate");
        let _ = std::fs::remove_file(&gate);
        // 2 × 200 000 events per thread, about 2.4 MB: nine 256 KiB chunks each.
        let mut command = program(&exe);
        command
            .arg("200000")
            .env("OMP_NUM_THREADS", "2")
            .env("POMPTRACE_EXPERIMENT_DIRECTORY", &experiment)
            .env("POMPTRACE_CHUNK_SIZE", "256K")
            .env_remove("POMPTRACE_KEEP_IN_MEMORY")
            .env("POMPTRACE_WRITER", writer)
            .env("STREAM_MANY_GATE", &gate)
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        if let Some(keep) = keep {
            command.env("POMPTRACE_KEEP_IN_MEMORY", keep);
        }
        let mut child = command.spawn().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        assert_eq!(lines.next().unwrap().unwrap(), "waiting");
        // The recording is done and the process still runs: what is on disk was written
        // while it ran (the writer thread may still be at the last chunks).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while keep.is_none() && event_bytes(&experiment) < 8 * 256 * 1024 {
            assert!(
                std::time::Instant::now() < deadline,
                "{}: {} bytes written while running",
                experiment.display(),
                event_bytes(&experiment)
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let during = event_bytes(&experiment);
        if writer == "direct" {
            // Once the writer thread is through its queue, its last chunk at least (no chunk
            // waited behind it) went straight to the device, past the page cache.
            let mut sizes = event_file_sizes(&experiment);
            loop {
                std::thread::sleep(std::time::Duration::from_millis(200));
                let now = event_file_sizes(&experiment);
                if now == sizes {
                    break;
                }
                sizes = now;
            }
            let (cached, pages) = event_files(&experiment)
                .iter()
                .map(|(_, path)| {
                    let len = std::fs::metadata(path).unwrap().len() as usize;
                    let cached = support::page_cache_probe::cached_pages(path, len);
                    (cached, len.div_ceil(4096))
                })
                .fold((0, 0), |(c, p), (cached, pages)| (c + cached, p + pages));
            assert!(pages >= 8 * 64, "{pages} pages written while running");
            assert!(
                cached < pages,
                "{cached} of {pages} pages in the page cache"
            );
        }
        std::fs::write(&gate, "").unwrap();
        assert!(child.wait().unwrap().success());
        let after = event_bytes(&experiment);
        let record = std::fs::read_to_string(experiment.join("pomptrace.cfg")).unwrap();
        if keep.is_none() {
            assert!(
                during >= 8 * 256 * 1024,
                "{}: {during}",
                experiment.display()
            );
            assert!(record.contains("POMPTRACE_KEEP_IN_MEMORY=0\n"), "{record}");
        } else {
            assert_eq!(
                during, 0,
                "chunks kept in memory were written while running"
            );
            assert!(after >= 16 * 256 * 1024, "{after}");
            assert!(!record.contains("POMPTRACE_KEEP_IN_MEMORY=0\n"), "{record}");
        }
        assert_every_event(&experiment.join("traces.otf2"), 2, 200_000);
        assert!(
            record.contains(&format!("POMPTRACE_WRITER={writer}\n")),
            "{record}"
        );
        if writer == "direct" {
            // The reference reader too, on the chunks the device took directly.
            let counts = support::budget::reference_counts(&experiment.join("traces.otf2"));
            let locations = counts["counts"].as_object().unwrap();
            assert_eq!(locations.len(), 2, "{counts}");
            for (location, regions) in locations {
                assert_eq!(
                    regions["!$pomp user(step) @stream_many.c:33"],
                    serde_json::json!([200_000, 200_000]),
                    "{location}"
                );
            }
            assert_eq!(counts["nesting_errors"], serde_json::json!([]), "{counts}");
        }
    }
    let _ = std::fs::remove_dir_all(&shm);
}

/// A thread that writes its own chunks (`POMPTRACE_WRITER=thread`) never writes one while it
/// holds a lock other threads wait for: a chunk that fills inside a critical section or
/// between `omp_set_lock` and `omp_unset_lock` is written after the lock is released. The
/// reference reader finds every write's BufferFlush outside the lock sections.
#[test]
fn a_thread_that_writes_its_own_chunks_never_writes_one_holding_a_lock() {
    let scratch = Scratch::new("streaming-locks");
    let source = instrument("locks_and_criticals.c", &scratch.path, &[]);
    let exe = Build::c(&scratch.path).executable(&[source], "locks_and_criticals");
    const ITERATIONS: u64 = 40_000;
    let out = support::run(
        program(&exe)
            .arg(ITERATIONS.to_string())
            .env("OMP_NUM_THREADS", "2")
            .env("POMPTRACE_EXPERIMENT_DIRECTORY", scratch.join("trace"))
            .env("POMPTRACE_WRITER", "thread")
            .env("POMPTRACE_KEEP_IN_MEMORY", "0")
            .env("POMPTRACE_CHUNK_SIZE", "256K"),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.trim(), "critical=80000 lock=80000", "{stdout}");

    let script = support::repo_root().join("tests/support/otf2_lock_flushes.py");
    let counted = support::run(
        std::process::Command::new("/usr/bin/python3")
            .arg(script)
            .arg(scratch.join("trace/traces.otf2")),
    );
    let counts: serde_json::Value = serde_json::from_slice(&counted.stdout).unwrap();
    let locations = counts.as_object().unwrap();
    assert_eq!(locations.len(), 2, "{counts}");
    for (location, c) in locations {
        // Per iteration 12 events (critical: 6; lock: 6), 2 of them ThreadAcquireLock: about
        // 480 000 events of 11 to 13 bytes, some twenty 256 KiB chunks per thread.
        assert_eq!(c["acquires"], 2 * ITERATIONS, "location {location}: {c}");
        assert!(
            c["flushes"].as_u64().unwrap() >= 10,
            "location {location}: each chunk written by its thread is a BufferFlush: {c}"
        );
        assert_eq!(
            c["flushes_holding_a_lock"], 0,
            "location {location}: a chunk was written while its thread held a lock: {c}"
        );
    }
}
