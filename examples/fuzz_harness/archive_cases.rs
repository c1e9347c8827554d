//! Damaged OTF2 archives for the reader: small valid archives written with pomptrace's own
//! writer (anchor, global definitions, local definitions, events with attribute lists, a
//! snapshot file, and one event file of two chunks), one of whose files is mutated per case
//! before the whole archive is read back.

use std::path::{Path, PathBuf};

use crate::harness::{mutate, run_cases, Report, Rng};
use otf2::*;

/// Record ids, framing and length bytes, for mutations to insert.
const ALPHABET: &[u8] = &[
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x0a, 0x0b, 0x0c, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15,
    0x16, 0x17, 0x1f, 0x20, 0x2b, 0x2e, 0x3d, 0x40, 0x5e, 0x7f, 0x80, 0xfe, 0xff,
];

/// A base archive on disk and its files' original bytes.
struct Archive {
    anchor: PathBuf,
    files: Vec<(PathBuf, Vec<u8>)>,
}

const S_NAMES: [&str; 8] = [
    "", "program", "OpenMP", "machine", "node", "process", "region", "attr",
];

fn write_definitions(defs: &mut GlobalDefWriter, events: &[u64]) {
    defs.write(&GlobalDef::ClockProperties {
        timer_resolution: 1_000_000_000,
        global_offset: 0,
        trace_length: 1_000_000,
        realtime_timestamp: 0,
    });
    for (id, s) in S_NAMES.iter().enumerate() {
        defs.write(&GlobalDef::String {
            id: id as u32,
            string: s.to_string(),
        });
    }
    defs.write(&GlobalDef::Paradigm {
        paradigm: Paradigm::OPENMP,
        name: 2,
        paradigm_class: ParadigmClass::THREAD_FORK_JOIN,
    });
    defs.write(&GlobalDef::Attribute {
        id: 0,
        name: 7,
        description: 0,
        attribute_type: Type::UINT64,
    });
    defs.write(&GlobalDef::SystemTreeNode {
        id: 0,
        name: 3,
        class_name: 4,
        parent: UNDEFINED_U32,
    });
    defs.write(&GlobalDef::LocationGroup {
        id: 0,
        name: 5,
        location_group_type: LocationGroupType::PROCESS,
        system_tree_parent: 0,
        creating_location_group: UNDEFINED_U32,
    });
    for r in 0..3 {
        defs.write(&GlobalDef::Region {
            id: r,
            name: 6,
            canonical_name: 6,
            description: 0,
            region_role: RegionRole::PARALLEL,
            paradigm: Paradigm::OPENMP,
            region_flags: RegionFlag::NONE,
            source_file: 1,
            begin_line: r,
            end_line: r + 1,
        });
    }
    for (l, &n) in events.iter().enumerate() {
        defs.write(&GlobalDef::Location {
            id: l as u64,
            name: 5,
            location_type: LocationType::CPU_THREAD,
            number_of_events: n,
            location_group: 0,
        });
    }
}

/// Every kind of event the writer has a method for, a few times, some with an attribute list.
fn write_events(w: &mut EventWriter<FileSink>, rounds: u64) {
    let mut attributes = AttributeList::new();
    attributes.add(0, TypedValue::u64(42));
    let mut t = 1000;
    w.write(
        t,
        Some(&attributes),
        &Event::ProgramBegin {
            program_name: 1,
            arguments: vec![0, 2],
        },
    );
    for round in 0..rounds {
        t += 10;
        w.thread_fork(t, Paradigm::OPENMP, 2);
        w.thread_team_begin_with_u64_attribute(t + 1, 0, 0, round);
        w.enter(t + 2, (round % 3) as u32);
        w.thread_acquire_lock(t + 3, Paradigm::OPENMP, 0, round as u32);
        w.thread_release_lock(t + 4, Paradigm::OPENMP, 0, round as u32);
        w.thread_task_create(t + 5, 0, 0, round as u32);
        w.thread_task_switch(t + 6, 0, 0, round as u32);
        w.thread_task_complete(t + 7, 0, 0, round as u32);
        w.leave(t + 8, (round % 3) as u32);
        w.thread_team_end(t + 9, 0);
        w.thread_join(t + 10, Paradigm::OPENMP);
    }
    w.buffer_flush(t + 20, t + 30);
    w.write(
        t + 40,
        None,
        &Event::MeasurementOnOff {
            mode: MeasurementMode::OFF,
        },
    );
    w.write(t + 50, None, &Event::ProgramEnd { exit_status: 0 });
}

/// Writes the base archives under `dir`: a three-location archive with every kind of file,
/// and a one-location archive whose event file spans two chunks.
fn write_base_archives(dir: &Path) -> std::io::Result<Vec<Archive>> {
    let mut archives = Vec::new();
    // The smallest chunks readers accept: each case reads less, and 3000 rounds of events
    // (about 300 KiB) span two chunks.
    let config = ArchiveConfig {
        event_chunk_size: chunk::MIN_CHUNK_SIZE,
        def_chunk_size: chunk::MIN_CHUNK_SIZE,
        ..ArchiveConfig::default()
    };
    for (name, locations, rounds) in [("small", 3u64, 4u64), ("chunks", 1, 3000)] {
        let archive_dir = dir.join(name);
        let mut archive = ArchiveWriter::create(&archive_dir, "traces", config.clone())?;
        let mut events = Vec::new();
        for l in 0..locations {
            let mut w = archive.event_writer(l)?;
            write_events(&mut w, rounds);
            events.push(w.events());
            w.finish().1?;
        }
        if locations > 1 {
            let mut local = archive.local_def_writer();
            local.write(&LocalDef::ClockOffset {
                time: 5,
                offset: -3,
                standard_deviation: 0.5,
            });
            archive.write_local_defs(0, local)?;
            let mut snap = archive.snap_writer(1)?;
            snap.write(
                1000,
                None,
                &SnapRecord::SnapshotStart {
                    number_of_records: 1,
                },
            );
            snap.write(
                1001,
                None,
                &SnapRecord::Enter {
                    orig_event_time: 900,
                    region: 1,
                },
            );
            snap.write(1002, None, &SnapRecord::SnapshotEnd { cont_read_pos: 0 });
            snap.finish().1?;
            archive.set_snapshot_count(1);
        }
        let mut defs = archive.global_def_writer();
        write_definitions(&mut defs, &events);
        let ids: Vec<u64> = (0..locations).collect();
        let anchor = archive.anchor_path();
        archive.finish(defs, &ids)?;
        let mut files = vec![anchor.clone()];
        for entry in
            std::fs::read_dir(&archive_dir)?.chain(std::fs::read_dir(archive_dir.join("traces"))?)
        {
            let path = entry?.path();
            if path.is_file() && path != anchor {
                files.push(path);
            }
        }
        files.sort();
        let files: Vec<(PathBuf, Vec<u8>)> = files
            .into_iter()
            .map(|p| std::fs::read(&p).map(|bytes| (p, bytes)))
            .collect::<std::io::Result<_>>()?;
        if rounds > 1000 {
            let events = &files
                .iter()
                .find(|(p, _)| p.ends_with("traces/0.evt"))
                .unwrap()
                .1;
            assert!(
                events.len() > chunk::MIN_CHUNK_SIZE,
                "{} bytes",
                events.len()
            );
        }
        archives.push(Archive { anchor, files });
    }
    Ok(archives)
}

/// Reads everything the reader offers; errors are expected, panics and hangs are not.
fn read_everything(anchor: &Path) -> u64 {
    let Ok(reader) = ArchiveReader::open(anchor) else {
        return 0;
    };
    let mut records = reader.global_defs().map_or(0, |d| d.len() as u64);
    let Ok(locations) = reader.locations() else {
        return records;
    };
    // Damaged definitions can name many locations; their files do not exist past the first few.
    for &location in locations.iter().take(8) {
        records += reader.local_defs(location).map_or(0, |d| d.len() as u64);
        if let Ok(events) = reader.events(location) {
            for event in events {
                if event.is_err() {
                    break;
                }
                records += 1;
            }
        }
        records += reader.snapshots(location).map_or(0, |s| s.len() as u64);
    }
    records
}

/// A scratch directory (in memory where /dev/shm exists), removed on drop.
pub struct Scratch(PathBuf);

impl Scratch {
    fn new() -> std::io::Result<Self> {
        let base = Path::new("/dev/shm");
        let base = if base.is_dir() {
            base.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let dir = base.join(format!("pomptrace-fuzz-reader-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One case: a file of a base archive mutated (1 in 32 from the larger two-chunk one), the whole
/// archive read back, the file restored.
fn one_case(rng: &mut Rng, archives: &[Archive]) -> std::io::Result<()> {
    let archive = &archives[if rng.one_in(32) { 1 } else { 0 }];
    let (path, original) = rng.pick(&archive.files);
    let (_, donor) = rng.pick(&archive.files);
    let mut damaged = original.clone();
    mutate(rng, &mut damaged, donor, ALPHABET);
    std::fs::write(path, &damaged)?;
    std::hint::black_box(read_everything(&archive.anchor));
    std::fs::write(path, original)
}

pub fn run(cases: u64, seed: u64, first: u64) -> std::io::Result<Report> {
    let scratch = Scratch::new()?;
    let archives = write_base_archives(&scratch.0)?;
    // The base archives themselves read back whole.
    for a in &archives {
        assert!(read_everything(&a.anchor) > 0, "{}", a.anchor.display());
        ArchiveReader::open(&a.anchor)
            .and_then(|r| r.global_defs())
            .expect("base archive reads back");
    }
    let mut io_error = None;
    let report = run_cases("reader", cases, seed, first, |rng| {
        if let Err(e) = one_case(rng, &archives) {
            io_error.get_or_insert(e);
        }
    });
    match io_error {
        Some(e) => Err(e),
        None => Ok(report),
    }
}
