//! OTF2 writer speed: our pure-Rust writer against the OTF2 C library, side by side in one run.
//!
//! Both write the same 10^7 Enter/Leave events (a new timestamp for every event) to one
//! location's event file; the time runs from the first event until the file is closed.
//! `c-tests/otf2_write_bench.c` is the libotf2 side; it is compiled here with `cc` and
//! `pkg-config --cflags --libs otf2`. Each side runs `ROUNDS` times, alternating; the best
//! round of each is reported.
//!
//! Run: `cargo run --release --example otf2_write_bench [EVENTS]`

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use otf2::*;

const ROUNDS: usize = 3;

fn ours(dir: &Path, events: u64) -> (f64, u64) {
    let archive = ArchiveWriter::create(dir, "traces", ArchiveConfig::default()).expect("create");
    // Full chunks are written by a second thread while this one goes on encoding.
    let writer = BackgroundWriter::new("otf2-writer", StreamFrom::WriterThread, Box::new(NoHooks));
    let start = Instant::now();
    let mut w = archive
        .background_event_writer(0, &writer, 1 << 20, 8)
        .expect("event writer");
    for i in 0..events {
        let region = ((i / 2) % 2) as u32;
        if i % 2 == 0 {
            w.enter(1 + i, region);
        } else {
            w.leave(1 + i, region);
        }
    }
    let (_, result) = w.finish();
    let elapsed = start.elapsed();
    result.expect("write events");
    let bytes = std::fs::metadata(archive.event_path(0)).expect("evt").len();
    (elapsed.as_nanos() as f64 / events as f64, bytes)
}

fn build_libotf2_bench(target: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("c-tests/otf2_write_bench.c");
    let exe = target.join("otf2_write_bench_c");
    let flags = Command::new("pkg-config")
        .args(["--cflags", "--libs", "otf2"])
        .output();
    let flags = match flags {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).into_owned(),
        _ => panic!("pkg-config otf2 failed: install libopen-trace-format2-dev (scripts/setup.sh)"),
    };
    let status = Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(&src)
        .args(flags.split_whitespace())
        .status()
        .expect("run cc");
    assert!(status.success(), "compiling {} failed", src.display());
    exe
}

fn libotf2(exe: &Path, dir: &Path, events: u64) -> (f64, u64) {
    let out = Command::new(exe)
        .arg(dir)
        .arg(events.to_string())
        .output()
        .expect("run C bench");
    assert!(
        out.status.success(),
        "C bench failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = String::from_utf8_lossy(&out.stdout);
    let field = |key: &str| -> f64 {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {key} in C bench output: {line}"))
    };
    (field("ns_per_event="), field("bytes=") as u64)
}

fn main() {
    let events: u64 = std::env::args()
        .nth(1)
        .map_or(10_000_000, |a| a.parse().expect("EVENTS"));
    let work = std::env::temp_dir().join(format!("pomptrace-otf2-bench-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("work dir");
    let exe = build_libotf2_bench(&work);

    let (mut best_ours, mut best_c) = ((f64::MAX, 0), (f64::MAX, 0));
    for round in 0..ROUNDS {
        let c = libotf2(&exe, &work.join(format!("c{round}")), events);
        let r = ours(&work.join(format!("rust{round}")), events);
        println!(
            "round {}: ours {:.2} ns/event ({} bytes), libotf2 {:.2} ns/event ({} bytes)",
            round + 1,
            r.0,
            r.1,
            c.0,
            c.1
        );
        if r.0 < best_ours.0 {
            best_ours = r;
        }
        if c.0 < best_c.0 {
            best_c = c;
        }
        // Keep the page cache from filling up with earlier rounds' files.
        let _ = std::fs::remove_dir_all(work.join(format!("c{round}")));
        let _ = std::fs::remove_dir_all(work.join(format!("rust{round}")));
    }
    let _ = std::fs::remove_dir_all(&work);
    let (x, b1) = best_ours;
    let (y, b2) = best_c;
    println!(
        "otf2_write_bench: ours {x:.2} ns/event, libotf2 {y:.2} ns/event, ratio Y/X = {:.2}, bytes/event ours {:.3} libotf2 {:.3}",
        y / x,
        b1 as f64 / events as f64,
        b2 as f64 / events as f64
    );
}
