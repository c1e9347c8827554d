//! Damaged archives: the reader must answer every kind of damage with a `ReadError` naming the
//! damaged file, the offset of the damage and what is wrong -- never a panic, never an endless
//! stream of phantom events. Every read runs in a thread with a deadline, so a hang fails the
//! test instead of stalling CI.
//!
//! Each test writes a small valid archive (checked by `otf2-print --silent`), damages a copy,
//! and reads everything (anchor, global definitions, then local definitions and events of each
//! location) until the first error.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use pomptrace::otf2::*;
use support::*;

const CHUNK: usize = 256 * 1024;
const HEADER: usize = 18;
/// Enter/Leave pairs on location 0 (every 4th inside a ThreadFork/ThreadJoin pair): about
/// 780 KB, two full chunks and a partial third.
const PAIRS: u64 = 25_000;
const REGIONS: u32 = 300;
const DEADLINE: Duration = Duration::from_secs(20);

const ENTER: u8 = 12;
const LEAVE: u8 = 13;
const THREAD_FORK: u8 = 53;
const THREAD_JOIN: u8 = 54;
const TIMESTAMP_ID: u8 = 0x05;
const ATTRIBUTE_LIST_ID: u8 = 0x06;

// ---------------------------------------------------------------------------------------------
// The pristine archive

struct Archive {
    scratch: Scratch,
    /// What was written, per location.
    expected: Vec<Vec<EventRecord>>,
}

impl Archive {
    fn anchor(&self) -> PathBuf {
        self.scratch.join("traces.otf2")
    }
    fn global_defs(&self) -> PathBuf {
        self.scratch.join("traces.def")
    }
    fn evt(&self, location: u64) -> PathBuf {
        self.scratch.join(&format!("traces/{location}.evt"))
    }
    fn read(&self, path: &Path) -> Vec<u8> {
        std::fs::read(path).unwrap()
    }
    fn write(&self, path: &Path, bytes: &[u8]) {
        std::fs::write(path, bytes).unwrap()
    }
    fn truncate(&self, path: &Path, len: usize) {
        let mut bytes = self.read(path);
        assert!(len <= bytes.len());
        bytes.truncate(len);
        self.write(path, &bytes);
    }
    /// Sets one byte, checking that it held `was`.
    fn patch(&self, path: &Path, at: usize, was: u8, now: u8) {
        let mut bytes = self.read(path);
        assert_eq!(bytes[at], was, "{} byte {at}", path.display());
        bytes[at] = now;
        self.write(path, &bytes);
    }
}

fn write_location0(w: &mut EventWriter<FileSink>) -> Vec<EventRecord> {
    let mut expected = Vec::new();
    let mut push = |time, event| {
        expected.push(EventRecord {
            time,
            attributes: AttributeList::new(),
            event,
        })
    };
    let mut time = 1_000;
    for k in 0..PAIRS {
        let region = (k % u64::from(REGIONS)) as u32;
        let forked = k % 4 == 0;
        if forked {
            w.thread_fork(time, Paradigm::OPENMP, 4);
            push(
                time,
                Event::ThreadFork {
                    model: Paradigm::OPENMP,
                    number_of_requested_threads: 4,
                },
            );
            time += 1;
        }
        w.enter(time, region);
        push(time, Event::Enter { region });
        // Some Leaves share their Enter's time, so the writer leaves out their TIMESTAMP.
        time += k % 3;
        w.leave(time, region);
        push(time, Event::Leave { region });
        time += 1 + k % 2;
        if forked {
            w.thread_join(time, Paradigm::OPENMP);
            push(
                time,
                Event::ThreadJoin {
                    model: Paradigm::OPENMP,
                },
            );
        }
    }
    expected
}

/// Location 1: an Enter with a two-entry attribute list (attributes 0 and 1), then a few
/// more events.
fn write_location1(w: &mut EventWriter<FileSink>) -> Vec<EventRecord> {
    let mut attributes = AttributeList::new();
    attributes.add(0, TypedValue::u64(0x1234));
    attributes.add(1, TypedValue::u32(7));
    let events = vec![
        EventRecord {
            time: 500,
            attributes,
            event: Event::Enter { region: 1 },
        },
        EventRecord {
            time: 600,
            attributes: AttributeList::new(),
            event: Event::ThreadFork {
                model: Paradigm::OPENMP,
                number_of_requested_threads: 2,
            },
        },
        EventRecord {
            time: 700,
            attributes: AttributeList::new(),
            event: Event::ThreadJoin {
                model: Paradigm::OPENMP,
            },
        },
        EventRecord {
            time: 800,
            attributes: AttributeList::new(),
            event: Event::Leave { region: 1 },
        },
    ];
    for e in &events {
        let attributes = Some(&e.attributes).filter(|a| !a.is_empty());
        w.write(e.time, attributes, &e.event);
    }
    events
}

fn write_global_defs(defs: &mut GlobalDefWriter, counts: &[u64]) {
    defs.write(&GlobalDef::ClockProperties {
        timer_resolution: 1_000_000_000,
        global_offset: 0,
        trace_length: 1_000_000,
        realtime_timestamp: UNDEFINED_U64,
    });
    let mut strings: Vec<String> = [
        "", "process", "machine", "node", "thread 0", "thread 1", "attr_u64", "attr_u32",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    strings.extend((0..REGIONS).map(|r| format!("region_{r}")));
    for (id, string) in strings.into_iter().enumerate() {
        defs.write(&GlobalDef::String {
            id: id as u32,
            string,
        });
    }
    for (id, name, attribute_type) in [(0, 6, Type::UINT64), (1, 7, Type::UINT32)] {
        defs.write(&GlobalDef::Attribute {
            id,
            name,
            description: 0,
            attribute_type,
        });
    }
    let locations: Vec<(u32, u64)> = counts
        .iter()
        .enumerate()
        .map(|(l, &c)| (4 + l as u32, c))
        .collect();
    write_process_and_locations(defs, (2, 3), 1, &locations);
    for r in 0..REGIONS {
        write_user_region(defs, r, 8 + r);
    }
}

fn pristine(label: &str) -> Archive {
    let scratch = Scratch::new(label);
    let config = ArchiveConfig {
        event_chunk_size: CHUNK,
        def_chunk_size: CHUNK,
        ..Default::default()
    };
    let archive = ArchiveWriter::create(&scratch.path, "traces", config).unwrap();
    let mut expected = Vec::new();
    let mut counts = Vec::new();
    for location in 0..2 {
        let mut w = archive.event_writer(location).unwrap();
        let events = if location == 0 {
            write_location0(&mut w)
        } else {
            write_location1(&mut w)
        };
        assert_eq!(w.events(), events.len() as u64);
        counts.push(w.events());
        w.finish().1.unwrap();
        expected.push(events);
    }
    let mut defs = archive.global_def_writer();
    write_global_defs(&mut defs, &counts);
    archive.finish(defs, &[0, 1]).unwrap();
    Archive { scratch, expected }
}

// ---------------------------------------------------------------------------------------------
// Reading with a deadline

/// Everything read before the first error, and that error.
struct Outcome {
    events: Vec<Vec<EventRecord>>,
    error: Option<ReadError>,
}

impl Outcome {
    fn error(&self) -> &ReadError {
        self.error
            .as_ref()
            .expect("the damaged archive was read without an error")
    }
}

fn read_everything(anchor: &Path, max_events: usize) -> Outcome {
    let mut outcome = Outcome {
        events: Vec::new(),
        error: None,
    };
    let reader = match ArchiveReader::open(anchor) {
        Ok(r) => r,
        Err(e) => {
            outcome.error = Some(e);
            return outcome;
        }
    };
    let locations: Vec<u64> = match reader.global_defs() {
        Ok(defs) => defs
            .iter()
            .filter_map(|d| match d {
                GlobalDef::Location { id, .. } => Some(*id),
                _ => None,
            })
            .collect(),
        Err(e) => {
            outcome.error = Some(e);
            return outcome;
        }
    };
    for location in locations {
        if let Err(e) = reader.local_defs(location) {
            outcome.error = Some(e);
            return outcome;
        }
        outcome.events.push(Vec::new());
        let events = match reader.events(location) {
            Ok(events) => events,
            Err(e) => {
                outcome.error = Some(e);
                return outcome;
            }
        };
        for event in events {
            match event {
                Ok(event) => {
                    let list = outcome.events.last_mut().unwrap();
                    assert!(
                        list.len() < max_events,
                        "location {location}: more than {max_events} events (phantom events?)"
                    );
                    list.push(event);
                }
                Err(e) => {
                    outcome.error = Some(e);
                    return outcome;
                }
            }
        }
    }
    outcome
}

/// Reads the archive in a thread; fails the test if the reader panics or takes longer than
/// the deadline.
fn read_with_deadline(archive: &Archive) -> Outcome {
    let anchor = archive.anchor();
    let max_events = 2 * archive.expected.iter().map(Vec::len).max().unwrap();
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        let _ = tx.send(read_everything(&anchor, max_events));
    });
    match rx.recv_timeout(DEADLINE) {
        Ok(outcome) => {
            handle.join().unwrap();
            outcome
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("the reader did not finish within {DEADLINE:?}: it hangs")
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            let payload = handle.join().unwrap_err();
            let message = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("?");
            panic!("the reader panicked: {message}")
        }
    }
}

/// What was read must be exactly the first `n` events of `location` (and all events of the
/// locations before it); no phantom or altered events.
fn assert_prefix(archive: &Archive, outcome: &Outcome, location: usize, n: usize) {
    assert_eq!(outcome.events.len(), location + 1, "locations reached");
    for l in 0..location {
        assert!(
            outcome.events[l] == archive.expected[l],
            "location {l} read differently"
        );
    }
    let got = &outcome.events[location];
    assert_eq!(got.len(), n, "events read from location {location}");
    assert!(
        got[..] == archive.expected[location][..n],
        "events read from location {location} differ from those written"
    );
}

fn assert_error(err: &ReadError, file: &Path, offset: u64, words: &[&str]) {
    assert_eq!(err.file, file, "wrong file in {err}");
    assert_eq!(err.offset, offset, "wrong offset in {err}");
    assert_message(err, words);
}

fn assert_message(err: &ReadError, words: &[&str]) {
    assert!(
        words.iter().any(|w| err.message.contains(w)),
        "message of {err} mentions none of {words:?}"
    );
    let shown = err.to_string();
    assert!(
        shown.contains(&err.file.display().to_string())
            && shown.contains(&format!("offset {}", err.offset)),
        "{shown}"
    );
}

/// The reference reader must reject the damaged archive too (a cross-check that the damage is
/// real); run under `timeout` since damaged files can make it loop.
fn assert_otf2_print_rejects(archive: &Archive) {
    let out = Command::new("timeout")
        .arg("20")
        .arg("otf2-print")
        .arg("--silent")
        .arg(archive.anchor())
        .output()
        .unwrap();
    assert!(
        !out.status.success() && out.status.code() != Some(124),
        "otf2-print did not reject the archive ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

// ---------------------------------------------------------------------------------------------
// The file structure, to find where to damage it

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    ChunkHeader,
    Timestamp,
    AttributeList,
    /// An event (event files) or definition (definition files) record with this id.
    Record(u8),
    /// END_OF_CHUNK and the padding after it.
    EndOfChunk,
    EndOfFile,
    EndOfBuffer,
}

/// One piece of a chunked file: `bytes[at..end]`.
#[derive(Clone, Copy, Debug)]
struct Unit {
    at: usize,
    end: usize,
    kind: Kind,
}

/// Splits a chunked file into its pieces. Event files: Enter/Leave are the only singletons.
fn walk(bytes: &[u8], event_file: bool) -> Vec<Unit> {
    let mut units = Vec::new();
    let mut chunk = 0;
    loop {
        units.push(Unit {
            at: chunk,
            end: chunk + HEADER,
            kind: Kind::ChunkHeader,
        });
        let mut pos = chunk + HEADER;
        loop {
            let id = bytes[pos];
            let (kind, end) = match id {
                0x00 => (Kind::EndOfChunk, chunk + CHUNK),
                0x02 => (Kind::EndOfFile, pos + 1),
                TIMESTAMP_ID if event_file => (Kind::Timestamp, pos + 9),
                ENTER | LEAVE if event_file => {
                    (Kind::Record(id), pos + 2 + bytes[pos + 1] as usize)
                }
                _ => {
                    assert_ne!(bytes[pos + 1], 0xff, "long length forms are not expected");
                    let end = pos + 2 + bytes[pos + 1] as usize;
                    if id == ATTRIBUTE_LIST_ID && event_file {
                        (Kind::AttributeList, end)
                    } else {
                        (Kind::Record(id), end)
                    }
                }
            };
            units.push(Unit { at: pos, end, kind });
            pos = end;
            match kind {
                Kind::EndOfChunk => break,
                Kind::EndOfFile => {
                    if pos < bytes.len() {
                        assert_eq!(bytes[pos], 0x01);
                        units.push(Unit {
                            at: pos,
                            end: pos + 1,
                            kind: Kind::EndOfBuffer,
                        });
                    }
                    assert_eq!(pos + 1, bytes.len(), "bytes after END_OF_BUFFER");
                    return units;
                }
                _ => {}
            }
        }
        chunk += CHUNK;
    }
}

fn is_event(kind: Kind) -> bool {
    matches!(kind, Kind::Record(_))
}

/// Events whose records lie wholly before `cut`.
fn events_before(units: &[Unit], cut: usize) -> usize {
    units
        .iter()
        .filter(|u| is_event(u.kind) && u.end <= cut)
        .count()
}

// ---------------------------------------------------------------------------------------------
// Tests

#[test]
fn the_pristine_archive_reads_back_whole_and_is_valid() {
    let a = pristine("errors-pristine");
    let outcome = read_with_deadline(&a);
    assert!(outcome.error.is_none(), "{}", outcome.error());
    assert!(outcome.events == a.expected);
    otf2_print(&["--silent"], &a.anchor(), &[]);
    let evt = a.read(&a.evt(0));
    assert!(
        evt.len() > 2 * CHUNK && evt.len() % CHUNK != 0,
        "{}",
        evt.len()
    );
    let units = walk(&evt, true);
    assert_eq!(
        units.iter().filter(|u| u.kind == Kind::ChunkHeader).count(),
        3
    );
    assert_eq!(
        units.iter().filter(|u| is_event(u.kind)).count(),
        a.expected[0].len()
    );
}

#[test]
fn evt_truncated_exactly_at_a_chunk_boundary() {
    for chunks in [1, 2] {
        let a = pristine("errors-chunk-boundary");
        let path = a.evt(0);
        let units = walk(&a.read(&path), true);
        let cut = chunks * CHUNK;
        a.truncate(&path, cut);
        let outcome = read_with_deadline(&a);
        let err = outcome.error();
        assert_error(err, &path, cut as u64, &["truncated"]);
        // Every event of the complete chunks, nothing more.
        assert_prefix(&a, &outcome, 0, events_before(&units, cut));
    }
}

#[test]
fn evt_truncated_inside_a_chunk_at_a_record_boundary() {
    let a = pristine("errors-inside-chunk");
    let path = a.evt(0);
    let bytes = a.read(&path);
    let units = walk(&bytes, true);
    // Record boundaries in the middle of the second (full) and third (last) chunk. Among them
    // one right after a TIMESTAMP record where the previous chunk holds a TIMESTAMP byte at the
    // same position: a reader looking past the end of the data there sees stale bytes.
    let boundary = |lo: usize| {
        units
            .iter()
            .find(|u| u.at >= lo && is_event(u.kind))
            .unwrap()
            .end
    };
    let stale = units
        .iter()
        .find(|u| {
            u.kind == Kind::Timestamp
                && u.at > CHUNK + CHUNK / 3
                && u.end < 2 * CHUNK
                && bytes[u.end - CHUNK] == TIMESTAMP_ID
        })
        .expect("no TIMESTAMP with a stale TIMESTAMP byte behind it")
        .end;
    for cut in [
        boundary(CHUNK + CHUNK / 2),
        stale,
        boundary(2 * CHUNK + 1000),
        CHUNK + HEADER,
    ] {
        let a = pristine("errors-inside-chunk");
        let path = a.evt(0);
        a.truncate(&path, cut);
        let outcome = read_with_deadline(&a);
        let err = outcome.error();
        assert_error(err, &path, cut as u64, &["truncated"]);
        assert_prefix(&a, &outcome, 0, events_before(&units, cut));
    }
}

#[test]
fn evt_truncated_in_the_middle_of_a_record() {
    let a = pristine("errors-mid-record");
    let path = a.evt(0);
    let units = walk(&a.read(&path), true);
    let after =
        |lo: usize, kind: Kind| *units.iter().find(|u| u.at >= lo && u.kind == kind).unwrap();
    let cases = [
        // Inside a TIMESTAMP's 8 time bytes.
        (after(CHUNK + 5000, Kind::Timestamp), 4),
        // After an Enter's id, and after its length byte.
        (after(CHUNK + 7000, Kind::Record(ENTER)), 1),
        (after(CHUNK + 9000, Kind::Record(LEAVE)), 2),
        // Inside a ThreadFork's payload, in the last chunk.
        (after(2 * CHUNK + 100, Kind::Record(THREAD_FORK)), 3),
    ];
    for (unit, into) in cases {
        let a = pristine("errors-mid-record");
        let path = a.evt(0);
        let cut = unit.at + into;
        assert!(cut < unit.end);
        a.truncate(&path, cut);
        let outcome = read_with_deadline(&a);
        let err = outcome.error();
        assert_eq!(err.file, path);
        assert!(
            (unit.at as u64..=cut as u64).contains(&err.offset),
            "{unit:?} cut at {cut}: {err}"
        );
        assert_message(err, &["truncated"]);
        assert_prefix(&a, &outcome, 0, events_before(&units, cut));
    }
}

/// Truncation anywhere: an error at the cut (or inside the record the cut splits), after
/// exactly the events that lie wholly before the cut.
#[test]
fn evt_truncated_anywhere_gives_an_error_at_the_cut() {
    let a = pristine("errors-sweep-evt");
    let path = a.evt(0);
    let bytes = a.read(&path);
    let units = walk(&bytes, true);
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut cuts: Vec<usize> = (0..3)
        .flat_map(|k| {
            let c = k * CHUNK;
            [
                c + 1,
                c + HEADER - 1,
                c + HEADER,
                c + HEADER + 1,
                c + CHUNK - 1,
            ]
        })
        .filter(|&c| c < bytes.len() - 1)
        .collect();
    for _ in 0..60 {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        cuts.push((rng % (bytes.len() as u64 - 1)) as usize);
    }
    // The last END_OF_CHUNK of the first chunk and the padding after it.
    let eoc = units
        .iter()
        .find(|u| u.kind == Kind::EndOfChunk)
        .unwrap()
        .at;
    cuts.extend([eoc, eoc + 1, CHUNK - 1]);
    for cut in cuts {
        let a = pristine("errors-sweep-evt");
        let path = a.evt(0);
        a.truncate(&path, cut);
        let outcome = read_with_deadline(&a);
        let err = outcome.error();
        assert_eq!(err.file, path, "cut at {cut}: {err}");
        // The piece the cut falls in; a cut on a boundary or in padding is reported exactly.
        let unit = units.iter().find(|u| u.at < cut && cut < u.end);
        let lowest = match unit {
            Some(u) if !matches!(u.kind, Kind::EndOfChunk | Kind::ChunkHeader) => u.at,
            _ => cut,
        };
        assert!(
            (lowest as u64..=cut as u64).contains(&err.offset),
            "cut at {cut} (in {unit:?}): {err}"
        );
        assert_message(err, &["truncated"]);
        assert_prefix(&a, &outcome, 0, events_before(&units, cut));
    }
}

#[test]
fn evt_without_end_of_file() {
    let a = pristine("errors-no-eof");
    let path = a.evt(0);
    let bytes = a.read(&path);
    // The file ends END_OF_FILE, END_OF_BUFFER: removing only the latter is harmless ...
    assert_eq!(bytes[bytes.len() - 2..], [0x02, 0x01]);
    a.truncate(&path, bytes.len() - 1);
    let outcome = read_with_deadline(&a);
    assert!(outcome.error.is_none(), "{}", outcome.error());
    assert!(outcome.events == a.expected);
    // ... removing END_OF_FILE too is an error where the file now ends ...
    let cut = bytes.len() - 2;
    a.truncate(&path, cut);
    let outcome = read_with_deadline(&a);
    assert_error(outcome.error(), &path, cut as u64, &["truncated"]);
    assert_prefix(&a, &outcome, 0, a.expected[0].len());
    // ... and so is END_OF_FILE overwritten with END_OF_CHUNK.
    let a = pristine("errors-no-eof");
    let path = a.evt(0);
    a.patch(&path, cut, 0x02, 0x00);
    let outcome = read_with_deadline(&a);
    let err = outcome.error();
    assert_eq!(err.file, path);
    assert!(
        (cut as u64..=bytes.len() as u64).contains(&err.offset),
        "{err}"
    );
    assert_message(err, &["END_OF_FILE", "truncated"]);
    assert_prefix(&a, &outcome, 0, a.expected[0].len());
}

#[test]
fn bad_chunk_header_byte() {
    // In the second chunk: the first chunk's events are read, then the error.
    let a = pristine("errors-header");
    let path = a.evt(0);
    let units = walk(&a.read(&path), true);
    a.patch(&path, CHUNK, 0x03, 0x04);
    let outcome = read_with_deadline(&a);
    assert_error(outcome.error(), &path, CHUNK as u64, &["chunk header"]);
    assert_prefix(&a, &outcome, 0, events_before(&units, CHUNK));
    assert_otf2_print_rejects(&a);
    // In the first chunk: opening the events fails.
    let a = pristine("errors-header");
    let path = a.evt(0);
    a.patch(&path, 0, 0x03, 0x00);
    let outcome = read_with_deadline(&a);
    assert_error(outcome.error(), &path, 0, &["chunk header"]);
    assert_prefix(&a, &outcome, 0, 0);
    // In the global definitions.
    let a = pristine("errors-header");
    a.patch(&a.global_defs(), 0, 0x03, 0x13);
    let outcome = read_with_deadline(&a);
    assert_error(outcome.error(), &a.global_defs(), 0, &["chunk header"]);
}

#[test]
fn bad_endianness_byte() {
    for (at, value) in [(CHUNK + 1, 0x00), (2 * CHUNK + 1, 0x23), (1, 0x41)] {
        let a = pristine("errors-endianness");
        let path = a.evt(0);
        let units = walk(&a.read(&path), true);
        a.patch(&path, at, 0x42, value);
        let outcome = read_with_deadline(&a);
        assert_error(outcome.error(), &path, at as u64, &["byte order"]);
        assert!(
            outcome.error().message.contains(&format!("{value:#04x}")),
            "{}",
            outcome.error()
        );
        assert_prefix(&a, &outcome, 0, events_before(&units, at));
        // otf2-print reads big-endian chunks (0x23); this reader does not.
        if value != 0x23 {
            assert_otf2_print_rejects(&a);
        }
    }
}

#[test]
fn record_length_running_past_the_chunk() {
    let a = pristine("errors-length");
    let path = a.evt(0);
    let bytes = a.read(&path);
    let units = walk(&bytes, true);
    // The last ThreadFork/ThreadJoin of the first chunk (more records and the padding follow
    // it, up to the chunk end), and the last one of the file (END_OF_FILE follows).
    let last_framed_before = |limit: usize| {
        *units
            .iter()
            .rev()
            .find(|u| matches!(u.kind, Kind::Record(THREAD_FORK | THREAD_JOIN)) && u.end < limit)
            .unwrap()
    };
    for (unit, limit) in [
        (last_framed_before(CHUNK), CHUNK),
        (last_framed_before(bytes.len()), bytes.len()),
    ] {
        let a = pristine("errors-length");
        let path = a.evt(0);
        // One byte more than there is up to the end of the chunk.
        let too_long = limit - (unit.at + 2) + 1;
        assert!(too_long < 255, "{too_long}");
        a.patch(&path, unit.at + 1, bytes[unit.at + 1], too_long as u8);
        let outcome = read_with_deadline(&a);
        let err = outcome.error();
        assert_error(err, &path, unit.at as u64 + 1, &["runs past"]);
        assert!(err.message.contains(&too_long.to_string()), "{err}");
        assert_prefix(&a, &outcome, 0, events_before(&units, unit.at));
    }
}

#[test]
fn invalid_compressed_length_byte() {
    let a = pristine("errors-cu32");
    let path = a.evt(0);
    let units = walk(&a.read(&path), true);
    let enter = *units
        .iter()
        .find(|u| u.at > CHUNK + CHUNK / 2 && u.kind == Kind::Record(ENTER))
        .unwrap();
    let was = a.read(&path)[enter.at + 1];
    assert!(was == 1 || was == 2, "Enter's region length byte {was}");
    a.patch(&path, enter.at + 1, was, 7);
    let outcome = read_with_deadline(&a);
    assert_error(
        outcome.error(),
        &path,
        enter.at as u64 + 1,
        &["invalid length byte 7"],
    );
    assert_prefix(&a, &outcome, 0, events_before(&units, enter.at));
    // Same in a ThreadFork's number of requested threads (a framed record).
    let a = pristine("errors-cu32");
    let path = a.evt(0);
    let fork = *units
        .iter()
        .find(|u| u.at > CHUNK && u.kind == Kind::Record(THREAD_FORK))
        .unwrap();
    // id, length, model, then the compressed u32.
    a.patch(&path, fork.at + 3, 1, 7);
    let outcome = read_with_deadline(&a);
    assert_error(
        outcome.error(),
        &path,
        fork.at as u64 + 3,
        &["invalid length byte 7"],
    );
    assert_prefix(&a, &outcome, 0, events_before(&units, fork.at));
}

#[test]
fn global_definitions_truncated_anywhere() {
    let a = pristine("errors-def");
    let path = a.global_defs();
    let bytes = a.read(&path);
    let units = walk(&bytes, false);
    assert!(units.len() > 300, "{} definition records", units.len());
    assert!(bytes.len() < CHUNK);
    for cut in 0..bytes.len() {
        a.write(&path, &bytes[..cut]);
        let outcome = read_with_deadline(&a);
        if cut == bytes.len() - 1 {
            // Only END_OF_BUFFER is gone.
            assert!(outcome.error.is_none(), "{}", outcome.error());
            continue;
        }
        let err = outcome.error();
        assert_eq!(err.file, path, "cut at {cut}: {err}");
        let unit = units.iter().find(|u| u.at < cut && cut < u.end);
        let lowest = match unit {
            Some(u) if u.kind != Kind::ChunkHeader => u.at,
            _ => cut,
        };
        assert!(
            (lowest as u64..=cut as u64).contains(&err.offset),
            "cut at {cut} (in {unit:?}): {err}"
        );
        assert_message(err, &["truncated"]);
        assert!(outcome.events.is_empty());
    }
}

#[test]
fn anchor_with_wrong_magic() {
    let a = pristine("errors-magic");
    let path = a.anchor();
    let bytes = a.read(&path);
    assert_eq!(&bytes[2..7], b"OTF2\0");
    a.patch(&path, 5, b'2', b'3');
    let outcome = read_with_deadline(&a);
    assert_error(outcome.error(), &path, 2, &["magic"]);
    assert_otf2_print_rejects(&a);
}

#[test]
fn anchor_truncated_anywhere() {
    let a = pristine("errors-anchor");
    let path = a.anchor();
    let bytes = a.read(&path);
    // The anchor ends END_OF_FILE, END_OF_BUFFER, END_OF_CHUNK; readers stop at END_OF_FILE.
    assert_eq!(bytes[bytes.len() - 3..], [0x02, 0x01, 0x00]);
    for cut in 0..bytes.len() {
        a.write(&path, &bytes[..cut]);
        let outcome = read_with_deadline(&a);
        if cut >= bytes.len() - 2 {
            assert!(outcome.error.is_none(), "cut at {cut}: {}", outcome.error());
            continue;
        }
        let err = outcome.error();
        assert_eq!(err.file, path);
        // No field of this anchor is longer than 8 bytes (its strings are empty).
        assert!(
            (cut.saturating_sub(8) as u64..=cut as u64).contains(&err.offset),
            "cut at {cut}: {err}"
        );
        assert_message(err, &["truncated", "unterminated", "END_OF_FILE"]);
    }
}

#[test]
fn anchor_with_invalid_chunk_sizes() {
    // Event chunk size at offset 12, definition chunk size at 20 (after header, "OTF2\0",
    // two format bytes and three version bytes).
    for (at, what) in [(12, "event"), (20, "definition")] {
        let a = pristine("errors-chunk-size");
        let path = a.anchor();
        let mut bytes = a.read(&path);
        assert_eq!(bytes[at..at + 8], (CHUNK as u64).to_le_bytes());
        bytes[at..at + 8].copy_from_slice(&4096u64.to_le_bytes());
        a.write(&path, &bytes);
        let outcome = read_with_deadline(&a);
        let err = outcome.error();
        assert_error(err, &path, at as u64, &["chunk size"]);
        assert!(
            err.message.contains(what) && err.message.contains("4096"),
            "{err}"
        );
        assert_otf2_print_rejects(&a);
    }
}

#[test]
fn missing_evt_file() {
    let a = pristine("errors-missing");
    let path = a.evt(1);
    std::fs::remove_file(&path).unwrap();
    let outcome = read_with_deadline(&a);
    let err = outcome.error();
    assert_error(err, &path, 0, &["No such file"]);
    assert!(err.to_string().contains("traces/1.evt"), "{err}");
    // Location 0 was read whole first.
    assert_prefix(&a, &outcome, 1, 0);
    assert_otf2_print_rejects(&a);
}

#[test]
fn attribute_list_with_a_repeated_attribute_id() {
    let a = pristine("errors-attributes");
    let path = a.evt(1);
    let bytes = a.read(&path);
    let list = *walk(&bytes, true)
        .iter()
        .find(|u| u.kind == Kind::AttributeList)
        .unwrap();
    // id, length, count 2 (01 02), attribute 0 (00), UINT64, 0x1234 (02 34 12), then
    // attribute 1 (01 01), UINT32, 7 (01 07).
    let at = list.at;
    assert_eq!(
        bytes[at..list.end],
        [0x06, 12, 0x01, 0x02, 0x00, 0x04, 0x02, 0x34, 0x12, 0x01, 0x01, 0x03, 0x01, 0x07]
    );
    // Second entry names attribute 0 again (a valid, if long, encoding of 0).
    a.patch(&path, at + 10, 0x01, 0x00);
    let outcome = read_with_deadline(&a);
    let err = outcome.error();
    assert_error(err, &path, at as u64 + 9, &["repeated"]);
    assert!(err.message.contains("attribute 0"), "{err}");
    assert_prefix(&a, &outcome, 1, 0);
    assert_otf2_print_rejects(&a);
}

/// Single damaged bytes anywhere in the event and definition files: whatever the reader
/// makes of them, it answers in time, without a panic, with no more events than there are
/// bytes, and any error names the damaged file and an offset inside it.
#[test]
fn random_byte_damage_never_panics_or_hangs() {
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let files = [
        ("traces/0.evt", 40),
        ("traces/1.evt", 60),
        ("traces.def", 60),
        ("traces.otf2", 40),
    ];
    for (file, trials) in files {
        for _ in 0..trials {
            let a = pristine("errors-random");
            let path = a.scratch.join(file);
            let mut bytes = a.read(&path);
            let at = (next() % bytes.len() as u64) as usize;
            let value = match next() % 4 {
                0 => 0x00,
                1 => 0xff,
                2 => bytes[at] ^ (1 << (next() % 8)),
                _ => next() as u8,
            };
            bytes[at] = value;
            a.write(&path, &bytes);
            let outcome = read_with_deadline(&a);
            if let Some(err) = &outcome.error {
                // A damaged anchor may show in another file (a different but valid chunk
                // size, say).
                if file != "traces.otf2" {
                    assert_eq!(
                        err.file, path,
                        "byte {at} of {file} set to {value:#04x}: {err}"
                    );
                }
                let len = std::fs::metadata(&err.file).map_or(0, |m| m.len());
                assert!(
                    err.offset <= len,
                    "byte {at} of {file} set to {value:#04x}: {err}"
                );
                assert!(!err.message.is_empty());
            }
        }
    }
}
