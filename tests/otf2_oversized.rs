//! Records larger than a chunk: a definition must not straddle a chunk boundary (the reference
//! reader rejects that) and an event that cannot fit is counted, not dropped silently. Either
//! way the rest of the archive stays readable by both reference readers.

mod support;

use otf2::*;
use support::*;

const CHUNK: usize = 256 * 1024;

#[test]
fn records_larger_than_a_chunk_are_left_out_counted_and_the_archive_stays_readable() {
    let scratch = Scratch::new("oversized");
    let config = ArchiveConfig {
        event_chunk_size: CHUNK,
        def_chunk_size: CHUNK,
        ..Default::default()
    };
    let archive = ArchiveWriter::create(&scratch.path, "traces", config).unwrap();
    let mut w = archive.event_writer(0).unwrap();
    w.enter(1, 0);
    // 200 000 compressed string ids of 2 bytes each: more than a chunk.
    w.write(
        2,
        None,
        &Event::ProgramBegin {
            program_name: 1,
            arguments: vec![1; 200_000],
        },
    );
    w.leave(3, 0);
    assert_eq!(w.oversized_events(), 1);
    assert_eq!(w.events(), 2);
    let events = w.events();
    w.finish().1.unwrap();

    let mut defs = archive.global_def_writer();
    defs.write(&GlobalDef::ClockProperties {
        timer_resolution: 1_000_000_000,
        global_offset: 0,
        trace_length: 3,
        realtime_timestamp: UNDEFINED_U64,
    });
    for (id, s) in ["", "thread", "region"].iter().enumerate() {
        defs.write(&GlobalDef::String {
            id: id as u32,
            string: s.to_string(),
        });
    }
    // Unreferenced, so that the archive is complete without it.
    defs.write(&GlobalDef::String {
        id: 3,
        string: "x".repeat(CHUNK + 1000),
    });
    assert_eq!(defs.oversized(), 1);
    write_process_and_locations(&mut defs, (0, 0), 0, &[(1, events)]);
    write_user_region(&mut defs, 0, 2);
    let anchor = archive.finish(defs, &[0]).unwrap();
    assert_eq!(
        anchor.number_of_global_defs, 8,
        "the oversized one is not counted"
    );

    let path = scratch.join("traces.otf2");
    let printed = otf2_print(&[], &path, &[]);
    let events: Vec<&str> = printed
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| matches!(*w, "ENTER" | "LEAVE" | "PROGRAM_BEGIN"))
        .collect();
    assert_eq!(events, ["ENTER", "LEAVE"]);
    let dump = python_dump(&path);
    assert_eq!(dump.matches("\"kind\": \"Enter\"").count(), 1, "{dump}");
    assert_eq!(dump.matches("\"kind\": \"Leave\"").count(), 1, "{dump}");
    assert!(
        !dump.contains("xxxx"),
        "the oversized string is not in the archive"
    );
}
