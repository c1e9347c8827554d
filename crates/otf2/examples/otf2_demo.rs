//! Writes a small OpenMP-shaped OTF2 trace with pomptrace's own writer: one process, four
//! threads, a parallel region with a work-shared loop and its implicit barrier, repeated a few
//! times, then reads it back with the crate's reader; `otf2-print OUT_DIR/traces.otf2` shows it too.
//!
//! Usage: `cargo run -p pomptrace-otf2 --example otf2_demo -- OUT_DIR`

use otf2::*;

const THREADS: u32 = 4;
const ITERATIONS: u64 = 3;

// String ids, in definition order.
const S_EMPTY: u32 = 0;
const S_PROGRAM: u32 = 1;
const S_OPENMP: u32 = 2;
const S_MACHINE: u32 = 3;
const S_NODE: u32 = 4;
const S_PROCESS: u32 = 5;
const S_FILE: u32 = 6;
const S_MAIN: u32 = 7;
const S_PARALLEL: u32 = 8;
const S_LOOP: u32 = 9;
const S_BARRIER: u32 = 10;
const S_TEAM: u32 = 11;
const S_TEMPLATE: u32 = 12;
const S_THREAD0: u32 = 13;

const R_MAIN: u32 = 0;
const R_PARALLEL: u32 = 1;
const R_LOOP: u32 = 2;
const R_BARRIER: u32 = 3;

fn main() -> std::io::Result<()> {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "pomptrace-demo".into());
    let config = ArchiveConfig {
        creator: format!("pomptrace {} (otf2_demo)", env!("CARGO_PKG_VERSION")),
        ..Default::default()
    };
    let archive = ArchiveWriter::create(out.as_ref(), "traces", config)?;
    let mut writers = (0..THREADS as u64)
        .map(|l| archive.event_writer(l))
        .collect::<std::io::Result<Vec<_>>>()?;

    // A made-up but plausible schedule, in nanoseconds.
    let start = 1_000_000u64;
    let mut t = start;
    let master = &mut writers[0];
    master.write(
        t,
        None,
        &Event::ProgramBegin {
            program_name: S_PROGRAM,
            arguments: vec![],
        },
    );
    master.enter(t + 10, R_MAIN);
    t += 100;
    for iteration in 0..ITERATIONS {
        writers[0].thread_fork(t, Paradigm::OPENMP, THREADS);
        for (thread, w) in writers.iter_mut().enumerate() {
            let thread = thread as u64;
            let begin = t + 200 + thread * 30;
            let work = 5_000 + thread * 700 + iteration * 300;
            w.thread_team_begin(begin, 0);
            w.enter(begin + 5, R_PARALLEL);
            w.enter(begin + 20, R_LOOP);
            w.enter(begin + 20 + work, R_BARRIER);
            let release = t + 200 + 5_000 + 3 * 700 + iteration * 300 + 150;
            w.leave(release, R_BARRIER);
            w.leave(release + 10, R_LOOP);
            w.leave(release + 20, R_PARALLEL);
            w.thread_team_end(release + 30, 0);
        }
        t += 200 + 5_000 + 3 * 700 + iteration * 300 + 400;
        writers[0].thread_join(t, Paradigm::OPENMP);
        t += 1_000;
    }
    writers[0].leave(t, R_MAIN);
    writers[0].write(t + 10, None, &Event::ProgramEnd { exit_status: 0 });

    let mut events = Vec::new();
    for w in writers {
        events.push(w.events());
        let (_, result) = w.finish();
        result?;
    }

    let mut defs = archive.global_def_writer();
    defs.write(&GlobalDef::ClockProperties {
        timer_resolution: 1_000_000_000,
        global_offset: start,
        trace_length: t + 10 - start,
        realtime_timestamp: UNDEFINED_U64,
    });
    let mut strings = vec![
        "",
        "otf2_demo",
        "OpenMP",
        "machine",
        "demo host",
        "process 0",
        "demo.c",
        "main",
        "!$omp parallel @demo.c:10",
        "!$omp for @demo.c:12",
        "!$omp implicit barrier @demo.c:15",
        "OMP Thread Team",
        "OMP Thread Team ${id}",
    ]
    .into_iter()
    .map(String::from)
    .collect::<Vec<_>>();
    strings.push("Master thread".into());
    strings.extend((1..THREADS).map(|k| format!("OMP thread {k}")));
    for (id, string) in strings.into_iter().enumerate() {
        defs.write(&GlobalDef::String {
            id: id as u32,
            string,
        });
    }
    defs.write(&GlobalDef::Paradigm {
        paradigm: Paradigm::OPENMP,
        name: S_OPENMP,
        paradigm_class: ParadigmClass::THREAD_FORK_JOIN,
    });
    defs.write(&GlobalDef::ParadigmProperty {
        paradigm: Paradigm::OPENMP,
        property: ParadigmProperty::COMM_NAME_TEMPLATE,
        value: TypedValue::reference(Type::STRING, S_TEMPLATE as u64),
    });
    defs.write(&GlobalDef::SystemTreeNode {
        id: 0,
        name: S_NODE,
        class_name: S_MACHINE,
        parent: UNDEFINED_U32,
    });
    defs.write(&GlobalDef::SystemTreeNodeDomain {
        node: 0,
        domain: SystemTreeDomain::SHARED_MEMORY,
    });
    defs.write(&GlobalDef::LocationGroup {
        id: 0,
        name: S_PROCESS,
        location_group_type: LocationGroupType::PROCESS,
        system_tree_parent: 0,
        creating_location_group: UNDEFINED_U32,
    });
    for (l, number_of_events) in events.iter().enumerate() {
        defs.write(&GlobalDef::Location {
            id: l as u64,
            name: S_THREAD0 + l as u32,
            location_type: LocationType::CPU_THREAD,
            number_of_events: *number_of_events,
            location_group: 0,
        });
    }
    let regions = [
        (R_MAIN, S_MAIN, RegionRole::FUNCTION, Paradigm::USER, 3, 30),
        (
            R_PARALLEL,
            S_PARALLEL,
            RegionRole::PARALLEL,
            Paradigm::OPENMP,
            10,
            20,
        ),
        (R_LOOP, S_LOOP, RegionRole::LOOP, Paradigm::OPENMP, 12, 15),
        (
            R_BARRIER,
            S_BARRIER,
            RegionRole::IMPLICIT_BARRIER,
            Paradigm::OPENMP,
            15,
            15,
        ),
    ];
    for (id, name, region_role, paradigm, begin_line, end_line) in regions {
        defs.write(&GlobalDef::Region {
            id,
            name,
            canonical_name: name,
            description: S_EMPTY,
            region_role,
            paradigm,
            region_flags: RegionFlag::NONE,
            source_file: S_FILE,
            begin_line,
            end_line,
        });
    }
    let all_threads: Vec<u64> = (0..THREADS as u64).collect();
    defs.write(&GlobalDef::Group {
        id: 0,
        name: S_EMPTY,
        group_type: GroupType::COMM_LOCATIONS,
        paradigm: Paradigm::OPENMP,
        group_flags: GroupFlag::NONE,
        members: all_threads.clone(),
    });
    defs.write(&GlobalDef::Group {
        id: 1,
        name: S_EMPTY,
        group_type: GroupType::COMM_GROUP,
        paradigm: Paradigm::OPENMP,
        group_flags: GroupFlag::NONE,
        members: all_threads.clone(),
    });
    defs.write(&GlobalDef::Comm {
        id: 0,
        name: S_TEAM,
        group: 1,
        parent: UNDEFINED_U32,
        flags: CommFlag::NONE,
    });
    let anchor = archive.finish(defs, &all_threads)?;
    println!(
        "pomptrace: demo trace written to {out}/traces.otf2 ({} locations, {} events, {} global definitions)",
        anchor.number_of_locations,
        events.iter().sum::<u64>(),
        anchor.number_of_global_defs
    );

    // Read it back: every location's events, as a reader of the archive sees them.
    let reader =
        ArchiveReader::open(format!("{out}/traces.otf2")).map_err(std::io::Error::other)?;
    let mut read = 0u64;
    for location in reader.locations().map_err(std::io::Error::other)? {
        for record in reader.events(location).map_err(std::io::Error::other)? {
            record.map_err(std::io::Error::other)?;
            read += 1;
        }
    }
    assert_eq!(
        read,
        events.iter().sum::<u64>(),
        "read back another number of events"
    );
    println!("read back {read} events");
    Ok(())
}
