//! A slow disk: every chunk write takes 5 ms more. The writer has only two chunks of memory, so
//! the producer is held up by the disk (waiting for a write, or writing a chunk itself); each
//! hold-up shows as a BufferFlush event, and no event is lost.

mod support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use otf2::*;
use support::*;

/// The test's clock: every event takes the next tick; a stall ends "now".
static CLOCK: AtomicU64 = AtomicU64::new(1);
fn now() -> u64 {
    CLOCK.load(Ordering::Relaxed)
}

const EVENTS: u64 = 400_000;
const CHUNK: usize = 256 * 1024;

#[test]
fn a_slow_sink_gives_buffer_flush_events_and_loses_nothing() {
    let scratch = Scratch::new("slow-sink");
    let archive = ArchiveWriter::create(
        &scratch.path,
        "traces",
        ArchiveConfig {
            event_chunk_size: CHUNK,
            ..Default::default()
        },
    )
    .unwrap();
    let evt = archive.event_path(0);

    // The slow disk: 5 ms before every chunk written, whoever writes it (the writer thread,
    // or the producer when the writer thread has not got to its chunk).
    struct SlowDisk;
    impl WriterHooks for SlowDisk {
        fn before_write(&self, _: Option<&mut Option<std::fs::File>>) -> std::io::Result<()> {
            std::thread::sleep(Duration::from_millis(5));
            Ok(())
        }
    }
    let background =
        BackgroundWriter::new("slow-writer", StreamFrom::WriterThread, Box::new(SlowDisk));
    let mut sink = background.sink(ChunkFile::create(&evt).unwrap(), CHUNK, CHUNK, 2);
    sink.set_stall_clock(now);
    let mut w = EventWriter::new(CHUNK, sink);
    for i in 0..EVENTS {
        let t = CLOCK.fetch_add(1, Ordering::Relaxed);
        if i % 2 == 0 {
            w.enter(t, 0);
        } else {
            w.leave(t, 0);
        }
    }
    let events = w.events();
    let (waited, waits) = w.sink().waited();
    let (_, result) = w.finish();
    result.unwrap();
    drop(background);
    let bytes = std::fs::metadata(&evt).unwrap().len();
    assert!(
        bytes > 10 * CHUNK as u64,
        "only {bytes} bytes went through the slow sink"
    );
    assert!(
        waits > 0,
        "the writer never had to wait ({waited:?}): the sink was not slow enough to test anything"
    );

    let mut defs = archive.global_def_writer();
    defs.write(&GlobalDef::ClockProperties {
        timer_resolution: 1_000_000_000,
        global_offset: 0,
        trace_length: now(),
        realtime_timestamp: UNDEFINED_U64,
    });
    for (id, s) in ["", "thread", "region"].iter().enumerate() {
        defs.write(&GlobalDef::String {
            id: id as u32,
            string: s.to_string(),
        });
    }
    write_process_and_locations(&mut defs, (0, 0), 0, &[(1, events)]);
    write_user_region(&mut defs, 0, 2);
    archive.finish(defs, &[0]).unwrap();

    // Every event is there, in order; every wait is one BufferFlush; both readers agree.
    let reader = ArchiveReader::open(scratch.join("traces.otf2")).unwrap();
    let (mut regions, mut flushes, mut last_time) = (0u64, 0u64, 0u64);
    for record in reader.events(0).unwrap() {
        let record = record.unwrap();
        assert!(record.time >= last_time);
        last_time = record.time;
        match record.event {
            Event::Enter { region: 0 } => {
                assert_eq!(regions % 2, 0, "Enter out of turn at {}", record.time)
            }
            Event::Leave { region: 0 } => {
                assert_eq!(regions % 2, 1, "Leave out of turn at {}", record.time)
            }
            Event::BufferFlush { stop_time } => {
                assert!(
                    stop_time >= record.time,
                    "a flush cannot end before it starts"
                );
                flushes += 1;
                continue;
            }
            other => panic!("unexpected {other:?}"),
        }
        regions += 1;
    }
    assert_eq!(regions, EVENTS, "events lost");
    assert_eq!(flushes, waits, "one BufferFlush per wait");
    assert_eq!(regions + flushes, events);
    let printed = otf2_print(&[], &scratch.join("traces.otf2"), &[]);
    assert_eq!(
        printed
            .lines()
            .filter(|l| l.starts_with("BUFFER_FLUSH"))
            .count() as u64,
        flushes
    );
    assert_eq!(
        printed
            .lines()
            .filter(|l| l.starts_with("ENTER") || l.starts_with("LEAVE"))
            .count() as u64,
        EVENTS
    );
}
