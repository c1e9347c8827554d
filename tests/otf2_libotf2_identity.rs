//! Byte identity with the OTF2 C library: `c-tests/otf2_reference_writer.c` writes a fixed
//! stream (10^5 events on two locations: Enter/Leave, ThreadFork/ThreadJoin, 3-value Metric,
//! 2-entry attribute lists, several chunks per location) through libotf2; we write the same
//! calls with `otf2` and compare the files byte for byte.
//!
//! `c-tests/otf2_reference_records.c` does the same for the MPI events and every snapshot
//! record (several chunks of each, one attribute list per round).
//!
//! The anchor file is the one exception: libotf2 puts a random trace id and its own version
//! in it, so only its decoded content is compared.

mod support;

use std::path::Path;
use std::process::Command;

use otf2::*;
use support::*;

const EVENTS_PER_LOCATION: u64 = 50_000;
const STRINGS: [&str; 18] = [
    "",
    "Master thread",
    "OMP thread 1",
    "process",
    "machine",
    "node",
    "region0",
    "region1",
    "region2",
    "region3",
    "region4",
    "regionA",
    "regionB",
    "metric",
    "count",
    "attr_u64",
    "attr_i32",
    "demo.c",
];

/// The event stream of the C program, call for call.
fn write_location(w: &mut EventWriter<FileSink>, location: u64, n: u64) {
    let mut attributes = AttributeList::new();
    for i in 0..n {
        let time = if i < 3 {
            0
        } else {
            1000 + 7 * (i / 2) + location
        };
        let attrs = if i % 16 == 5 || i % 16 == 10 {
            attributes.clear();
            attributes.add(0, TypedValue::u64(i * 300));
            attributes.add(1, TypedValue::i32(-((i % 100) as i32)));
            Some(&attributes)
        } else {
            None
        };
        let event = match i % 8 {
            0 => Event::Enter {
                region: ((i / 8) % 5) as u32,
            },
            1 => Event::ThreadFork {
                model: Paradigm::OPENMP,
                number_of_requested_threads: 1 + (i % 13) as u32,
            },
            2 => Event::Metric {
                metric: 0,
                values: vec![
                    TypedValue::u64(i),
                    TypedValue::i64(-(i as i64)),
                    TypedValue::f64(i as f64 * 0.5),
                ],
            },
            3 => Event::ThreadJoin {
                model: Paradigm::OPENMP,
            },
            4 => Event::Enter {
                region: 70000 + location as u32,
            },
            5 => Event::Leave {
                region: 70000 + location as u32,
            },
            6 => Event::Metric {
                metric: 0,
                values: vec![
                    TypedValue::u64(u64::MAX - i),
                    TypedValue::i64(i as i64 * 1000),
                    TypedValue::f64(-1.25),
                ],
            },
            _ => Event::Leave {
                region: ((i / 8) % 5) as u32,
            },
        };
        // The hot-path encoders and the generic one must agree; use both.
        match (&event, attrs) {
            (Event::Enter { region }, None) => w.enter(time, *region),
            (Event::Leave { region }, None) => w.leave(time, *region),
            (
                Event::ThreadFork {
                    model,
                    number_of_requested_threads,
                },
                None,
            ) => w.thread_fork(time, *model, *number_of_requested_threads),
            (Event::ThreadJoin { model }, None) => w.thread_join(time, *model),
            _ => w.write(time, attrs, &event),
        }
    }
}

/// The definitions both C programs begin with: the clock, the strings, and the attributes
/// `(id, name string)` of types UINT64 and INT32.
fn clock_strings_and_attributes(defs: &mut GlobalDefWriter, strings: &[&str], names: [u32; 2]) {
    defs.write(&GlobalDef::ClockProperties {
        timer_resolution: 1_000_000_000,
        global_offset: 0,
        trace_length: 1_000_000,
        realtime_timestamp: UNDEFINED_U64,
    });
    for (id, s) in strings.iter().enumerate() {
        defs.write(&GlobalDef::String {
            id: id as u32,
            string: s.to_string(),
        });
    }
    for (id, (name, t)) in names
        .into_iter()
        .zip([Type::UINT64, Type::INT32])
        .enumerate()
    {
        defs.write(&GlobalDef::Attribute {
            id: id as u32,
            name,
            description: 0,
            attribute_type: t,
        });
    }
}

fn global_defs(defs: &mut GlobalDefWriter, n: u64) {
    clock_strings_and_attributes(defs, &STRINGS, [15, 16]);
    // System tree, process and locations, in the C program's order.
    write_process_and_locations(defs, (4, 5), 3, &[(1, n), (2, n)]);
    let regions = (0..5u32)
        .map(|r| (r, 6 + r, 10 + r, 20 + r))
        .chain([(70000, 11, 30, 40), (70001, 12, 30, 40)]);
    for (id, name, begin_line, end_line) in regions {
        defs.write(&GlobalDef::Region {
            id,
            name,
            canonical_name: name,
            description: 0,
            region_role: RegionRole::FUNCTION,
            paradigm: Paradigm::USER,
            region_flags: RegionFlag::NONE,
            source_file: 17,
            begin_line,
            end_line,
        });
    }
    for (id, t) in [(0, Type::UINT64), (1, Type::INT64), (2, Type::DOUBLE)] {
        defs.write(&GlobalDef::MetricMember {
            id,
            name: 13,
            description: 0,
            metric_type: MetricType::OTHER,
            metric_mode: MetricMode::ACCUMULATED_START,
            value_type: t,
            base: Base::DECIMAL,
            exponent: 0,
            unit: 14,
        });
    }
    defs.write(&GlobalDef::MetricClass {
        id: 0,
        members: vec![0, 1, 2],
        occurrence: MetricOccurrence::SYNCHRONOUS_STRICT,
        recorder_kind: RecorderKind::CPU,
    });
}

fn write_ours(dir: &std::path::Path, n: u64) {
    let config = ArchiveConfig {
        event_chunk_size: 262_144,
        def_chunk_size: 262_144,
        ..Default::default()
    };
    let archive = ArchiveWriter::create(dir, "traces", config).unwrap();
    for location in 0..2 {
        let mut w = archive.event_writer(location).unwrap();
        write_location(&mut w, location, n);
        assert_eq!(w.events(), n);
        let (_, result) = w.finish();
        result.unwrap();
    }
    let mut defs = archive.global_def_writer();
    global_defs(&mut defs, n);
    archive.finish(defs, &[0, 1]).unwrap();
}

fn compare(n: u64) {
    let scratch = Scratch::new("identity");
    let theirs = scratch.join("libotf2");
    let ours = scratch.join("ours");
    run(Command::new(build_c_program("otf2_reference_writer"))
        .arg(&theirs)
        .arg(n.to_string()));
    write_ours(&ours, n);
    assert_same_archives(
        &theirs,
        &ours,
        &[
            "traces/0.evt",
            "traces/1.evt",
            "traces/0.def",
            "traces/1.def",
            "traces.def",
        ],
    );
}

/// `files` are byte-identical; the anchors have the same content apart from the trace id,
/// version and creator strings.
fn assert_same_archives(theirs: &Path, ours: &Path, files: &[&str]) {
    for file in files {
        let a = std::fs::read(theirs.join(file)).unwrap();
        let b = std::fs::read(ours.join(file)).unwrap();
        assert_eq!(
            a.len(),
            b.len(),
            "{file}: libotf2 wrote {} bytes, we wrote {}",
            a.len(),
            b.len()
        );
        if let Some(at) = a.iter().zip(&b).position(|(x, y)| x != y) {
            let lo = at.saturating_sub(16);
            panic!(
                "{file} differs at byte {at:#x}\nlibotf2: {:02x?}\nours:    {:02x?}",
                &a[lo..(at + 16).min(a.len())],
                &b[lo..(at + 16).min(b.len())]
            );
        }
    }
    let a = ArchiveReader::open(theirs.join("traces.otf2"))
        .unwrap()
        .anchor()
        .clone();
    let b = ArchiveReader::open(ours.join("traces.otf2"))
        .unwrap()
        .anchor()
        .clone();
    assert_eq!(
        (
            a.event_chunk_size,
            a.def_chunk_size,
            a.number_of_locations,
            a.number_of_global_defs
        ),
        (
            b.event_chunk_size,
            b.def_chunk_size,
            b.number_of_locations,
            b.number_of_global_defs
        )
    );
    assert_eq!(
        (a.file_substrate, a.compression, a.number_of_snapshots),
        (b.file_substrate, b.compression, b.number_of_snapshots)
    );
}

// ---------------------------------------------------------------------------------------------
// The MPI events and the snapshot records: `c-tests/otf2_reference_records.c`, call for call.

/// Rounds of ten MPI events and snapshots of eighteen state records: several chunks of each.
const RECORD_ROUNDS: u64 = 6_000;
const MPI_EVENTS_PER_ROUND: u64 = 10;
const SNAP_STATE_RECORDS: u64 = 18;

/// Field `k` of round `i`: 0, all ones, and values of every byte width in turn.
fn value(i: u64, k: u64) -> u64 {
    match (i * 7 + k * 3) % 66 {
        64 => 0,
        65 => u64::MAX,
        s => (1u64 << s) + i + k,
    }
}

fn value32(i: u64, k: u64) -> u32 {
    match value(i, k) {
        u64::MAX => u32::MAX,
        v if v >> 32 != 0 => (v >> 32) as u32,
        v => v as u32,
    }
}

/// The attribute list the C program gives the `k`th record of round `i`, if any.
fn attributes_for(list: &mut AttributeList, i: u64, k: u64) -> Option<&AttributeList> {
    if i % MPI_EVENTS_PER_ROUND != k {
        return None;
    }
    list.clear();
    list.add(0, TypedValue::u64(value(i, 11)));
    list.add(1, TypedValue::i32(-((i % 1000) as i32)));
    Some(list)
}

fn mpi_round(i: u64) -> [(u64, Event); MPI_EVENTS_PER_ROUND as usize] {
    let (v, v32) = (|k| value(i, k), |k| value32(i, k));
    let ts = 100 + 3 * i;
    [
        (
            ts,
            Event::MpiSend {
                receiver: v32(0),
                communicator: v32(1),
                msg_tag: v32(2),
                msg_length: v(3),
            },
        ),
        (
            ts,
            Event::MpiIsend {
                receiver: v32(1),
                communicator: v32(2),
                msg_tag: v32(3),
                msg_length: v(4),
                request_id: v(5),
            },
        ),
        (ts + 1, Event::MpiIsendComplete { request_id: v(5) }),
        (ts + 1, Event::MpiIrecvRequest { request_id: v(6) }),
        (
            ts + 1,
            Event::MpiRecv {
                sender: v32(7),
                communicator: v32(8),
                msg_tag: v32(9),
                msg_length: v(10),
            },
        ),
        (
            ts + 2,
            Event::MpiIrecv {
                sender: v32(8),
                communicator: v32(9),
                msg_tag: v32(10),
                msg_length: v(11),
                request_id: v(6),
            },
        ),
        (ts + 2, Event::MpiRequestTest { request_id: v(12) }),
        (ts + 2, Event::MpiRequestCancelled { request_id: v(13) }),
        (ts + 2, Event::MpiCollectiveBegin {}),
        (
            ts + 2,
            Event::MpiCollectiveEnd {
                collective_op: CollectiveOp((i % 23) as u8),
                communicator: v32(14),
                root: v32(15),
                size_sent: v(16),
                size_received: v(17),
            },
        ),
    ]
}

/// Snapshot `i`: its time and its records, SnapshotStart to SnapshotEnd.
fn snapshot(i: u64) -> (u64, Vec<SnapRecord>) {
    use SnapRecord as S;
    let (v, v32) = (|k| value(i, k), |k| value32(i, k));
    let o = 10 * i;
    let mode = if i % 2 == 1 {
        MeasurementMode::ON
    } else {
        MeasurementMode::OFF
    };
    let records = vec![
        S::SnapshotStart {
            number_of_records: SNAP_STATE_RECORDS,
        },
        S::MeasurementOnOff {
            orig_event_time: o,
            mode,
        },
        S::Enter {
            orig_event_time: o,
            region: v32(0),
        },
        S::MpiSend {
            orig_event_time: o + 1,
            receiver: v32(0),
            communicator: v32(1),
            msg_tag: v32(2),
            msg_length: v(3),
        },
        S::MpiIsend {
            orig_event_time: o + 1,
            receiver: v32(1),
            communicator: v32(2),
            msg_tag: v32(3),
            msg_length: v(4),
            request_id: v(5),
        },
        S::MpiIsendComplete {
            orig_event_time: o + 1,
            request_id: v(5),
        },
        S::MpiRecv {
            orig_event_time: o + 2,
            sender: v32(7),
            communicator: v32(8),
            msg_tag: v32(9),
            msg_length: v(10),
        },
        S::MpiIrecvRequest {
            orig_event_time: o + 2,
            request_id: v(6),
        },
        S::MpiIrecv {
            orig_event_time: o + 2,
            sender: v32(8),
            communicator: v32(9),
            msg_tag: v32(10),
            msg_length: v(11),
            request_id: v(6),
        },
        S::MpiCollectiveBegin {
            orig_event_time: o + 3,
        },
        S::MpiCollectiveEnd {
            orig_event_time: o + 3,
            collective_op: CollectiveOp((i % 23) as u8),
            communicator: v32(14),
            root: v32(15),
            size_sent: v(16),
            size_received: v(17),
        },
        S::OmpFork {
            orig_event_time: o + 4,
            number_of_requested_threads: v32(12),
        },
        S::OmpAcquireLock {
            orig_event_time: o + 4,
            lock_id: v32(13),
            acquisition_order: v32(14),
        },
        S::OmpTaskCreate {
            orig_event_time: o + 5,
            task_id: v(15),
        },
        S::OmpTaskSwitch {
            orig_event_time: o + 5,
            task_id: v(16),
        },
        S::Metric {
            orig_event_time: o + 6,
            metric: v32(17),
            values: vec![TypedValue::u64(v(18)), TypedValue::f64(i as f64 * 0.25)],
        },
        S::ParameterString {
            orig_event_time: o + 7,
            parameter: v32(18),
            string: v32(19),
        },
        S::ParameterInt {
            orig_event_time: o + 7,
            parameter: v32(19),
            value: (v(20) as i64).wrapping_neg() / 2,
        },
        S::ParameterUnsignedInt {
            orig_event_time: o + 8,
            parameter: v32(20),
            value: v(21),
        },
        S::SnapshotEnd {
            cont_read_pos: v(22),
        },
    ];
    (1000 + 10 * i, records)
}

fn write_ours_records(dir: &Path, rounds: u64) {
    let config = ArchiveConfig {
        event_chunk_size: 262_144,
        def_chunk_size: 262_144,
        ..Default::default()
    };
    let mut archive = ArchiveWriter::create(dir, "traces", config).unwrap();
    let mut list = AttributeList::new();
    let mut w = archive.event_writer(0).unwrap();
    for i in 0..rounds {
        for (k, (time, event)) in mpi_round(i).iter().enumerate() {
            w.write(*time, attributes_for(&mut list, i, k as u64), event);
        }
    }
    let events = w.events();
    assert_eq!(events, rounds * MPI_EVENTS_PER_ROUND);
    w.finish().1.unwrap();

    archive.set_snapshot_count(rounds as u32);
    let mut w = archive.snap_writer(0).unwrap();
    for i in 0..rounds {
        let (time, records) = snapshot(i);
        for (k, record) in records.iter().enumerate() {
            // The C program's only snapshot attribute list: on the Enter record.
            let attributes = if k == 2 {
                attributes_for(&mut list, i, 1)
            } else {
                None
            };
            w.write(time, attributes, record);
        }
    }
    assert_eq!(w.records(), rounds * (SNAP_STATE_RECORDS + 2));
    w.finish().1.unwrap();

    let mut defs = archive.global_def_writer();
    let strings = [
        "", "rank 0", "", "process", "machine", "node", "attr_u64", "attr_i32",
    ];
    clock_strings_and_attributes(&mut defs, &strings, [6, 7]);
    write_process_and_locations(&mut defs, (4, 5), 3, &[(1, events)]);
    archive.finish(defs, &[0]).unwrap();
}

fn compare_records(rounds: u64) {
    let scratch = Scratch::new("identity-records");
    let theirs = scratch.join("libotf2");
    let ours = scratch.join("ours");
    run(Command::new(build_c_program("otf2_reference_records"))
        .arg(&theirs)
        .arg(rounds.to_string()));
    write_ours_records(&ours, rounds);
    assert_same_archives(
        &theirs,
        &ours,
        &[
            "traces/0.evt",
            "traces/0.snap",
            "traces/0.def",
            "traces.def",
        ],
    );
}

#[test]
fn event_and_definition_files_match_libotf2_byte_for_byte() {
    compare(EVENTS_PER_LOCATION);
}

#[test]
fn a_short_single_chunk_stream_matches_too() {
    compare(7);
}

#[test]
fn the_reference_stream_spans_several_chunks() {
    let scratch = Scratch::new("identity-chunks");
    write_ours(&scratch.path, EVENTS_PER_LOCATION);
    let size = std::fs::metadata(scratch.join("traces/0.evt"))
        .unwrap()
        .len();
    assert!(
        size > 3 * 262_144,
        "only {size} bytes: the test would not cross chunk boundaries"
    );
}

#[test]
fn mpi_events_and_snapshot_records_match_libotf2_byte_for_byte() {
    compare_records(RECORD_ROUNDS);
}

#[test]
fn one_round_of_mpi_events_and_one_snapshot_match_too() {
    compare_records(1);
}

#[test]
fn the_record_rounds_span_several_chunks() {
    let scratch = Scratch::new("identity-records-chunks");
    write_ours_records(&scratch.path, RECORD_ROUNDS);
    for file in ["traces/0.evt", "traces/0.snap"] {
        let size = std::fs::metadata(scratch.join(file)).unwrap().len();
        assert!(
            size > 3 * 262_144,
            "{file}: only {size} bytes: the test would not cross chunk boundaries"
        );
    }
}
