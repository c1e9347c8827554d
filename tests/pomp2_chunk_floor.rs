//! No chunk or buffer setting inflates a trace: OTF2 readers take no file chunk below 256 KiB,
//! so a smaller `POMPTRACE_CHUNK_SIZE` (or a `POMPTRACE_BUFFER_SIZE` of less than two such
//! chunks) is raised to that floor, with one line naming the variable, and the trace of 1.2
//! million events stays within 2× of the default run's size (4K chunks once made it 64×).

mod support;

use std::path::Path;

use otf2::ArchiveReader;
use support::pomp2::{event_files, instrument, program, Build, View};
use support::{run, Scratch};

const THREADS: u64 = 2;
/// Loop iterations per thread: two user-region events each, 1.2 million events in all.
const ITERATIONS: u64 = 300_000;

/// Bytes of a trace: the anchor, the global definitions and every file under `traces/`.
fn trace_bytes(experiment: &Path) -> u64 {
    let len = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
    let files: u64 = std::fs::read_dir(experiment.join("traces"))
        .unwrap()
        .flatten()
        .map(|e| len(&e.path()))
        .sum();
    len(&experiment.join("traces.otf2")) + len(&experiment.join("traces.def")) + files
}

/// Events per location, counted with our streaming reader.
fn events(experiment: &Path) -> Vec<u64> {
    let reader = ArchiveReader::open(experiment.join("traces.otf2")).unwrap();
    reader
        .locations()
        .unwrap()
        .into_iter()
        .map(|l| {
            reader.events(l).unwrap().fold(0, |n, record| {
                record.unwrap();
                n + 1
            })
        })
        .collect()
}

struct Traced {
    stderr: String,
    bytes: u64,
    events: Vec<u64>,
}

fn traced(exe: &Path, experiment: &Path, iterations: u64, env: &[(&str, &str)]) -> Traced {
    let out = run(program(exe)
        .arg(iterations.to_string())
        .env("OMP_NUM_THREADS", THREADS.to_string())
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", experiment)
        .env_remove("POMPTRACE_ENABLE")
        .env_remove("POMPTRACE_CHUNK_SIZE")
        .env_remove("POMPTRACE_BUFFER_SIZE")
        .envs(env.iter().copied()));
    assert!(!event_files(experiment).is_empty());
    Traced {
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        bytes: trace_bytes(experiment),
        events: events(experiment),
    }
}

#[test]
fn the_smallest_chunk_and_buffer_settings_keep_a_trace_within_twice_the_default_size() {
    let scratch = Scratch::new("chunk-floor");
    let source = instrument("stream_many.c", &scratch.path, &[]);
    let exe = Build::c(&scratch.path).executable(&[source], "stream_many");
    let default = traced(&exe, &scratch.join("default"), ITERATIONS, &[]);
    assert_eq!(default.stderr.lines().count(), 1, "{}", default.stderr);
    let total: u64 = default.events.iter().sum();
    assert!(total > 2 * THREADS * ITERATIONS, "{total} events");
    for (index, (setting, message)) in [
        (
            ("POMPTRACE_CHUNK_SIZE", "4K"),
            "pomptrace: POMPTRACE_CHUNK_SIZE=4K is below the smallest chunk OTF2 readers take; \
             using 256K\n",
        ),
        (
            ("POMPTRACE_BUFFER_SIZE", "1"),
            "pomptrace: POMPTRACE_BUFFER_SIZE=1 is less than two chunks of the smallest size \
             OTF2 readers take; using 512K\n",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let small = traced(
            &exe,
            &scratch.join(&format!("small-{index}")),
            ITERATIONS,
            &[setting],
        );
        eprintln!(
            "{}={}: {} bytes, default {} bytes ({:.2}x)",
            setting.0,
            setting.1,
            small.bytes,
            default.bytes,
            small.bytes as f64 / default.bytes as f64
        );
        assert!(
            small.stderr.starts_with(message),
            "{}={}: {}",
            setting.0,
            setting.1,
            small.stderr
        );
        assert_eq!(
            small.stderr.matches(setting.0).count(),
            1,
            "said once: {}",
            small.stderr
        );
        assert!(
            small.bytes <= 2 * default.bytes,
            "{}={}: {} bytes against {} by default",
            setting.0,
            setting.1,
            small.bytes,
            default.bytes
        );
        // The same events (waits for a free buffer, BufferFlush, come on top).
        let small_total: u64 = small.events.iter().sum();
        assert!(
            small_total >= total,
            "{small_total} events against {total} by default"
        );
    }
}

/// Both reference readers read a trace written with the raised settings.
#[test]
fn a_trace_written_at_the_floor_reads_in_both_reference_readers() {
    let scratch = Scratch::new("chunk-floor-readers");
    let source = instrument("stream_many.c", &scratch.path, &[]);
    let exe = Build::c(&scratch.path).executable(&[source], "stream_many");
    let experiment = scratch.join("exp");
    let small = traced(
        &exe,
        &experiment,
        100_000,
        &[
            ("POMPTRACE_CHUNK_SIZE", "4K"),
            ("POMPTRACE_BUFFER_SIZE", "1"),
        ],
    );
    assert!(small.stderr.contains("POMPTRACE_CHUNK_SIZE=4K"));
    let view = View::read(&experiment.join("traces.otf2"));
    view.assert_well_formed();
    assert_eq!(view.total_events() as u64, small.events.iter().sum::<u64>());
}
