//! Scale: archives with 1 and 1000 locations, read back whole by our reader, `otf2-print` and
//! the python `otf2` module; and one location with 10^7 events spanning hundreds of chunks,
//! streamed back by our reader and validated by `otf2-print --silent`.

mod support;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::Command;

use otf2::*;
use support::*;

const CHUNK: usize = 256 * 1024;
/// Regions 0..REGIONS are defined (dense ids); ids >= 256 take two bytes as compressed u32.
const REGIONS: u32 = 300;
/// String ids: 0 "", 1 "process", 2 "machine", 3 "node", then the region names, then the
/// location names.
const FIRST_REGION_STRING: u32 = 4;
const FIRST_LOCATION_STRING: u32 = FIRST_REGION_STRING + REGIONS;

fn config() -> ArchiveConfig {
    ArchiveConfig {
        event_chunk_size: CHUNK,
        def_chunk_size: CHUNK,
        ..Default::default()
    }
}

/// A small deterministic pseudo-random sequence (64-bit LCG, high bits).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) as u32
    }
}

/// The event stream of one location of the many-location archives: `n` (even) events of
/// properly nested Enter/Leave, depth up to 12, regions and time steps (0 to 4 ticks, so some
/// events share a time) drawn from a per-location sequence.
fn location_stream(location: u64, n: usize) -> Vec<EventRecord> {
    assert!(n % 2 == 0);
    let mut rng = Lcg(location.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5eed);
    let mut time = 1_000 + location * 17;
    let mut stack: Vec<u32> = Vec::new();
    let mut events = Vec::with_capacity(n);
    for i in 0..n {
        let remaining = n - i;
        time += u64::from(rng.next() % 5);
        let can_enter = stack.len() < 12 && stack.len() + 2 <= remaining;
        let event = if can_enter && (stack.is_empty() || rng.next() % 2 == 0) {
            let region = rng.next() % REGIONS;
            stack.push(region);
            Event::Enter { region }
        } else {
            Event::Leave {
                region: stack
                    .pop()
                    .expect("stream logic keeps the stack non-empty here"),
            }
        };
        events.push(EventRecord {
            time,
            attributes: AttributeList::new(),
            event,
        });
    }
    assert!(stack.is_empty());
    events
}

/// Clock, strings, system tree node, location group, one Location per id (with its event
/// count), and the regions.
fn write_global_defs(defs: &mut GlobalDefWriter, event_counts: &[u64], trace_length: u64) {
    defs.write(&GlobalDef::ClockProperties {
        timer_resolution: 1_000_000_000,
        global_offset: 0,
        trace_length,
        realtime_timestamp: UNDEFINED_U64,
    });
    let mut strings = vec![
        String::new(),
        "process".to_string(),
        "machine".to_string(),
        "node".to_string(),
    ];
    strings.extend((0..REGIONS).map(|r| format!("region_{r}")));
    strings.extend((0..event_counts.len()).map(|l| format!("thread {l}")));
    for (id, string) in strings.into_iter().enumerate() {
        defs.write(&GlobalDef::String {
            id: id as u32,
            string,
        });
    }
    let locations: Vec<(u32, u64)> = event_counts
        .iter()
        .enumerate()
        .map(|(l, &c)| (FIRST_LOCATION_STRING + l as u32, c))
        .collect();
    write_process_and_locations(defs, (2, 3), 1, &locations);
    for r in 0..REGIONS {
        defs.write(&GlobalDef::Region {
            id: r,
            name: FIRST_REGION_STRING + r,
            canonical_name: FIRST_REGION_STRING + r,
            description: 0,
            region_role: RegionRole::FUNCTION,
            paradigm: Paradigm::USER,
            region_flags: RegionFlag::NONE,
            source_file: 0,
            begin_line: r,
            end_line: r + 1,
        });
    }
}

/// Writes `locations` locations through the hot-path `enter`/`leave` calls and returns the
/// anchor path and what was written per location.
fn write_many(dir: &Path, locations: u64) -> (PathBuf, Vec<Vec<EventRecord>>) {
    let archive = ArchiveWriter::create(dir, "traces", config()).unwrap();
    let mut expected = Vec::new();
    let mut counts = Vec::new();
    for l in 0..locations {
        let stream = location_stream(l, 200 + 2 * (l as usize % 60));
        let mut w = archive.event_writer(l).unwrap();
        for e in &stream {
            match e.event {
                Event::Enter { region } => w.enter(e.time, region),
                Event::Leave { region } => w.leave(e.time, region),
                _ => unreachable!(),
            }
        }
        assert_eq!(w.clamped_timestamps(), 0);
        counts.push(w.events());
        let (_, result) = w.finish();
        result.unwrap();
        expected.push(stream);
    }
    let mut defs = archive.global_def_writer();
    write_global_defs(&mut defs, &counts, 10_000);
    let ids: Vec<u64> = (0..locations).collect();
    let anchor = archive.finish(defs, &ids).unwrap();
    assert_eq!(anchor.number_of_locations, locations);
    (dir.join("traces.otf2"), expected)
}

/// (location, ENTER/LEAVE, time, region) per event, as `otf2-print` lists them.
type Row = (u64, &'static str, u64, u32);

fn rows_of(location: u64, events: &[EventRecord]) -> Vec<Row> {
    events
        .iter()
        .map(|e| match e.event {
            Event::Enter { region } => (location, "ENTER", e.time, region),
            Event::Leave { region } => (location, "LEAVE", e.time, region),
            ref other => panic!("unexpected event {other:?}"),
        })
        .collect()
}

/// Parses `otf2-print` event output into rows grouped by location (file order kept); every
/// line must be a header line or an ENTER/LEAVE line naming a defined region by name and id.
fn parse_otf2_print(output: &str) -> BTreeMap<u64, Vec<Row>> {
    let mut by_location: BTreeMap<u64, Vec<Row>> = BTreeMap::new();
    for line in output.lines() {
        if line.is_empty()
            || line.starts_with("===")
            || line.starts_with("Event ")
            || line.starts_with("-----")
        {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(fields.len(), 6, "unexpected otf2-print line: {line}");
        let kind = match fields[0] {
            "ENTER" => "ENTER",
            "LEAVE" => "LEAVE",
            _ => panic!("unexpected otf2-print line: {line}"),
        };
        let location: u64 = fields[1].parse().unwrap();
        let time: u64 = fields[2].parse().unwrap();
        let region: u32 = fields[5]
            .strip_prefix('<')
            .and_then(|s| s.strip_suffix('>'))
            .unwrap_or_else(|| panic!("no region id in: {line}"))
            .parse()
            .unwrap();
        assert_eq!(
            (fields[3], fields[4]),
            ("Region:", format!("\"region_{region}\"").as_str()),
            "{line}"
        );
        by_location
            .entry(location)
            .or_default()
            .push((location, kind, time, region));
    }
    by_location
}

/// The python module's events as (location, ENTER/LEAVE, time, region) rows by location.
fn python_events(anchor: &Path) -> BTreeMap<u64, Vec<Row>> {
    const SCRIPT: &str = r#"
import sys, otf2
out = []
with otf2.reader.open(sys.argv[1]) as trace:
    for location, event in trace.events:
        kind = type(event).__name__.upper()
        out.append("%d %s %d %d" % (location._ref, kind, event.time, event.region._ref))
sys.stdout.write("".join(line + "\n" for line in out))
"#;
    let out = run(Command::new("/usr/bin/python3")
        .arg("-c")
        .arg(SCRIPT)
        .arg(anchor));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.trim().is_empty(),
        "python otf2 complained:\n{stderr}"
    );
    let mut by_location: BTreeMap<u64, Vec<Row>> = BTreeMap::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let f: Vec<&str> = line.split(' ').collect();
        assert_eq!(f.len(), 4, "{line}");
        let kind = match f[1] {
            "ENTER" => "ENTER",
            "LEAVE" => "LEAVE",
            _ => panic!("unexpected python event: {line}"),
        };
        let location: u64 = f[0].parse().unwrap();
        by_location.entry(location).or_default().push((
            location,
            kind,
            f[2].parse().unwrap(),
            f[3].parse().unwrap(),
        ));
    }
    by_location
}

fn check_many(locations: u64) {
    let scratch = Scratch::new(&format!("scale-{locations}"));
    let (anchor, expected) = write_many(&scratch.path, locations);
    let total: usize = expected.iter().map(Vec::len).sum();

    // (a) our reader: definitions and every location's exact event sequence.
    let reader = ArchiveReader::open(&anchor).unwrap();
    assert_eq!(reader.anchor().number_of_locations, locations);
    assert_eq!(
        reader.locations().unwrap(),
        (0..locations).collect::<Vec<_>>()
    );
    let mut defined_counts = Vec::new();
    for def in reader.global_defs().unwrap() {
        if let GlobalDef::Location {
            id,
            name,
            number_of_events,
            ..
        } = def
        {
            assert_eq!(name, FIRST_LOCATION_STRING + id as u32);
            defined_counts.push(number_of_events);
        }
    }
    assert_eq!(
        defined_counts,
        expected.iter().map(|e| e.len() as u64).collect::<Vec<_>>()
    );
    for (l, want) in expected.iter().enumerate() {
        let got: Vec<EventRecord> = reader
            .events(l as u64)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("location {l}: {e}"));
        assert!(
            got == *want,
            "location {l}: events differ from those written"
        );
        assert!(reader.local_defs(l as u64).unwrap().is_empty());
    }

    let expected_rows: BTreeMap<u64, Vec<Row>> = expected
        .iter()
        .enumerate()
        .map(|(l, e)| (l as u64, rows_of(l as u64, e)))
        .collect();

    // (b) otf2-print: validation, the whole merged listing, and single-location listings.
    let silent = otf2_print(&["--silent"], &anchor, &[]);
    assert!(
        !silent.contains("ENTER") && !silent.contains("LEAVE"),
        "--silent printed events"
    );
    let all = otf2_print(&[], &anchor, &[]);
    let event_lines = all
        .lines()
        .filter(|l| l.starts_with("ENTER") || l.starts_with("LEAVE"))
        .count();
    assert_eq!(event_lines, total, "otf2-print listed {event_lines} events");
    assert!(
        parse_otf2_print(&all) == expected_rows,
        "otf2-print's per-location event sequences differ from those written"
    );
    for l in [0, locations / 2, locations - 1] {
        let listing = otf2_print(&["-L", &l.to_string()], &anchor, &[]);
        let parsed = parse_otf2_print(&listing);
        assert_eq!(parsed.len(), 1, "-L {l} listed other locations");
        assert_eq!(parsed[&l], expected_rows[&l], "otf2-print -L {l}");
    }

    // (c) the python module: counts in total and per location, and the sequences themselves.
    let python = python_events(&anchor);
    let python_total: usize = python.values().map(Vec::len).sum();
    assert_eq!(python_total, total, "python read {python_total} events");
    assert_eq!(python.len() as u64, locations);
    for (l, want) in &expected_rows {
        assert_eq!(python[l].len(), want.len(), "python count of location {l}");
        assert!(python[l] == *want, "python's events of location {l} differ");
    }
}

#[test]
fn one_location_reads_back_identically_in_all_three_readers() {
    check_many(1);
}

#[test]
fn a_thousand_locations_read_back_identically_in_all_three_readers() {
    check_many(1000);
}

const BIG: u64 = 10_000_000;
/// Regions of the 10^7-event location: Enter/Leave pair k uses region k % BIG_REGIONS.
const BIG_REGIONS: u64 = REGIONS as u64;

/// Time of event `i` of the big location: strictly increasing except that every tenth Enter
/// shares its predecessor's time (so the writer omits some TIMESTAMP records).
fn big_time(i: u64) -> u64 {
    1_000 + 3 * i - if i % 10 == 1 { 3 } else { 0 }
}

fn big_region(i: u64) -> u32 {
    ((i / 2) % BIG_REGIONS) as u32
}

#[test]
fn ten_million_events_stream_through_hundreds_of_chunks() {
    let scratch = Scratch::new("scale-big");
    let archive = ArchiveWriter::create(&scratch.path, "traces", config()).unwrap();
    let mut w = archive.event_writer(0).unwrap();
    for i in 0..BIG {
        if i % 2 == 0 {
            w.enter(big_time(i), big_region(i));
        } else {
            w.leave(big_time(i), big_region(i));
        }
    }
    assert_eq!(w.events(), BIG);
    let counts = [w.events()];
    let (sink, result) = w.finish();
    result.unwrap();
    let mut defs = archive.global_def_writer();
    write_global_defs(&mut defs, &counts, big_time(BIG - 1));
    archive.finish(defs, &[0]).unwrap();
    let anchor = scratch.join("traces.otf2");
    let evt = scratch.join("traces/0.evt");

    // Hundreds of chunks, each starting with a header whose event numbers continue the
    // previous chunk's.
    let size = std::fs::metadata(&evt).unwrap().len();
    assert_eq!(size, sink.bytes_written());
    assert!(
        size > 100 * CHUNK as u64,
        "only {size} bytes: fewer than 100 chunks"
    );
    let chunks = size.div_ceil(CHUNK as u64);
    let mut file = File::open(&evt).unwrap();
    let mut next_first = 1;
    for k in 0..chunks {
        let mut header = [0u8; 18];
        file.seek(SeekFrom::Start(k * CHUNK as u64)).unwrap();
        file.read_exact(&mut header).unwrap();
        assert_eq!(header[..2], [0x03, 0x42], "chunk {k}");
        let first = u64::from_le_bytes(header[2..10].try_into().unwrap());
        let last = u64::from_le_bytes(header[10..18].try_into().unwrap());
        assert_eq!(first, next_first, "chunk {k}: first event number");
        assert!(last >= first, "chunk {k}: empty");
        next_first = last + 1;
    }
    assert_eq!(
        next_first,
        BIG + 1,
        "the chunk headers do not count every event"
    );

    // Our reader, streaming: every event checked, none kept.
    let reader = ArchiveReader::open(&anchor).unwrap();
    let numbers: Vec<u64> = reader
        .global_defs()
        .unwrap()
        .iter()
        .filter_map(|d| match d {
            GlobalDef::Location {
                number_of_events, ..
            } => Some(*number_of_events),
            _ => None,
        })
        .collect();
    assert_eq!(numbers, [BIG]);
    let mut read = 0u64;
    for record in reader.events(0).unwrap() {
        let record = record.unwrap_or_else(|e| panic!("after {read} events: {e}"));
        let i = read;
        assert!(i < BIG, "more events than written");
        let region = big_region(i);
        let want = if i % 2 == 0 {
            Event::Enter { region }
        } else {
            Event::Leave { region }
        };
        if record.time != big_time(i) || record.event != want || !record.attributes.is_empty() {
            panic!(
                "event {i}: read {record:?}, wrote {want:?} at {}",
                big_time(i)
            );
        }
        read += 1;
    }
    assert_eq!(read, BIG);

    // The reference reader validates the whole stream.
    let out = otf2_print(&["--silent"], &anchor, &[]);
    assert!(!out.contains("ENTER"), "--silent printed events");
}
