//! Small archives written with the otf2 crate's writer, for tests of the commands that read
//! traces.

use std::path::{Path, PathBuf};

use otf2::*;

/// The names a [`one_region_archive`] shows.
pub struct Names<'a> {
    pub region: &'a str,
    pub file: &'a str,
    pub location: &'a str,
}

/// `dir/traces.otf2`: one thread that enters and leaves one user function, `region` of source
/// file `file` (lines 7-9), `visits` times, 50 ns each; returns the anchor.
pub fn one_region_archive(dir: &Path, names: &Names, visits: u64) -> PathBuf {
    let archive = ArchiveWriter::create(dir, "traces", ArchiveConfig::default()).unwrap();
    let mut w = archive.event_writer(0).unwrap();
    for i in 0..visits {
        w.enter(10 + 100 * i, 0);
        w.leave(60 + 100 * i, 0);
    }
    let events = w.events();
    w.finish().1.unwrap();
    let mut defs = archive.global_def_writer();
    defs.write(&GlobalDef::ClockProperties {
        timer_resolution: 1_000_000_000,
        global_offset: 0,
        trace_length: 100 * visits + 10,
        realtime_timestamp: UNDEFINED_U64,
    });
    let strings = [
        "node",
        "machine",
        "Process",
        names.location,
        names.region,
        names.file,
    ];
    for (id, s) in strings.iter().enumerate() {
        defs.write(&GlobalDef::String {
            id: id as u32,
            string: s.to_string(),
        });
    }
    super::write_process_and_locations(&mut defs, (0, 1), 2, &[(3, events)]);
    defs.write(&GlobalDef::Region {
        id: 0,
        name: 4,
        canonical_name: 4,
        description: 0,
        region_role: RegionRole::FUNCTION,
        paradigm: Paradigm::USER,
        region_flags: RegionFlag::NONE,
        source_file: 5,
        begin_line: 7,
        end_line: 9,
    });
    archive.finish(defs, &[0]).unwrap();
    dir.join("traces.otf2")
}
