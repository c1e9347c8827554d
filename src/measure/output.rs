//! The end of a measurement: close what is open, drain every location, and write the global
//! definitions (as the reference lays them out, semantics doc 4.5) and the anchor file.

use std::time::Duration;

use super::location::Location;
use super::{clock, Measurement, REGISTRY};
use crate::otf2::*;

/// The TSC frequency is measured between the first and the last clock sample of the run; each
/// sample brackets a CLOCK_MONOTONIC read within a few tens of nanoseconds, so even a run of
/// 200 µs gets its frequency within about 0.02 %. Shorter runs wait for the rest (a tiny fixed
/// cost, where a calibration loop at start would cost every run milliseconds).
const MIN_CALIBRATION: Duration = Duration::from_micros(200);

/// Writes the trace; returns the one-line summary (or what went wrong).
/// `still_busy` are the locations of threads that did not leave their recording call in time:
/// they are left alone (their chunks already on disk stay; their definitions are written).
pub fn write_trace(
    m: &Measurement,
    exit_status: i64,
    still_busy: &[*mut Location],
) -> Result<String, String> {
    let end_time = clock::now();
    let elapsed = Duration::from_nanos(clock::monotonic_ns().saturating_sub(m.start.ns));
    if elapsed < MIN_CALIBRATION {
        std::thread::sleep(MIN_CALIBRATION - elapsed);
    }
    let end_sample = clock::sample();
    let resolution = clock::resolution(m.clock_kind, m.start, end_sample);

    let locations = m.locations();
    let mut errors = Vec::new();
    let mut events = vec![0u64; locations.len()];
    for cell in &locations {
        if still_busy.contains(&cell.as_ptr()) {
            continue;
        }
        // SAFETY: recording has stopped (the state is no longer RUNNING) and no thread that
        // could still use this location is inside a recording call.
        let loc = unsafe { cell.get() };
        loc.close_open_regions(end_time);
        if loc.number == 0 {
            loc.write(end_time, &Event::ProgramEnd { exit_status });
        }
        if let Some(writer) = loc.take_writer() {
            if writer.clamped_timestamps() > 0 {
                errors.push(format!(
                    "{} timestamps of {} went backwards and were recorded as the previous one",
                    writer.clamped_timestamps(),
                    loc.name
                ));
            }
            events[loc.number as usize] = writer.events();
            let (_, result) = writer.finish();
            if let Err(e) = result {
                errors.push(format!("writing the events of {} failed: {e}", loc.name));
            }
        }
    }
    let archive = m
        .archive
        .lock()
        .take()
        .ok_or("the trace was already written")?;
    let mut defs = archive.global_def_writer();
    write_definitions(m, &mut defs, &locations, &events, resolution, end_time);
    let ids: Vec<u64> = (0..locations.len() as u32)
        .map(|n| m.location_id(n))
        .collect();
    let written = super::job::finish_archive(m, archive, defs, &ids)?;
    let bytes = directory_size(&m.experiment_dir);
    let total: u64 = events.iter().sum();
    let mut summary = format!(
        "{written} ({} locations, {} events, {} bytes)",
        locations.len(),
        total,
        bytes
    );
    if !errors.is_empty() {
        summary.push_str("; but ");
        summary.push_str(&errors.join("; "));
    }
    Ok(summary)
}

fn directory_size(dir: &std::path::Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(md) if md.is_dir() => directory_size(&e.path()),
            Ok(md) => md.len(),
            Err(_) => 0,
        })
        .sum()
}

fn write_definitions(
    m: &Measurement,
    defs: &mut GlobalDefWriter,
    locations: &[&'static super::location::LocationCell],
    events: &[u64],
    resolution: u64,
    end_time: u64,
) {
    let mut registry = REGISTRY.lock();
    // Every string first: the python reader needs definitions before their users.
    let s_empty = registry.string("");
    let s_openmp = registry.string("OpenMP");
    let s_template = registry.string("Thread team ${id}");
    let s_machine = registry.string("machine");
    let s_machine_name = registry.string("Linux");
    let s_node = registry.string("node");
    let s_host = registry.string(&super::hostname());
    let s_process = registry.string(&m.location_group_name());
    let mpi = super::mpi::Definitions::prepare(&mut registry);
    let s_thread_id = registry.string("ThreadId");
    let s_thread_id_description = registry.string("Thread identifier");
    let location_names: Vec<u32> = locations
        .iter()
        // SAFETY: recording has stopped; names are only read.
        .map(|cell| registry.string(&unsafe { cell.get() }.name))
        .collect();

    defs.write(&GlobalDef::ClockProperties {
        timer_resolution: resolution,
        global_offset: m.start.ticks,
        trace_length: end_time.saturating_sub(m.start.ticks),
        realtime_timestamp: m.start_realtime_ns,
    });
    for (id, string) in registry.strings().iter().enumerate() {
        defs.write(&GlobalDef::String {
            id: id as u32,
            string: string.clone(),
        });
    }
    defs.write(&GlobalDef::Paradigm {
        paradigm: Paradigm::OPENMP,
        name: s_openmp,
        paradigm_class: ParadigmClass::THREAD_FORK_JOIN,
    });
    defs.write(&GlobalDef::ParadigmProperty {
        paradigm: Paradigm::OPENMP,
        property: ParadigmProperty::COMM_NAME_TEMPLATE,
        value: TypedValue::reference(Type::STRING, s_template as u64),
    });
    defs.write(&GlobalDef::Attribute {
        id: super::location::THREAD_ID_ATTRIBUTE,
        name: s_thread_id,
        description: s_thread_id_description,
        attribute_type: Type::UINT64,
    });
    defs.write(&GlobalDef::SystemTreeNode {
        id: 0,
        name: s_machine_name,
        class_name: s_machine,
        parent: UNDEFINED_U32,
    });
    defs.write(&GlobalDef::SystemTreeNode {
        id: 1,
        name: s_host,
        class_name: s_node,
        parent: 0,
    });
    defs.write(&GlobalDef::SystemTreeNodeDomain {
        node: 1,
        domain: SystemTreeDomain::SHARED_MEMORY,
    });
    defs.write(&GlobalDef::LocationGroup {
        id: 0,
        name: s_process,
        location_group_type: LocationGroupType::PROCESS,
        system_tree_parent: 1,
        creating_location_group: UNDEFINED_U32,
    });
    for (number, name) in location_names.iter().enumerate() {
        defs.write(&GlobalDef::Location {
            id: m.location_id(number as u32),
            name: *name,
            location_type: LocationType::CPU_THREAD,
            number_of_events: events[number],
            location_group: 0,
        });
    }
    for (id, r) in registry.regions().iter().enumerate() {
        defs.write(&GlobalDef::Region {
            id: id as u32,
            name: r.name,
            canonical_name: r.name,
            description: s_empty,
            region_role: r.role,
            paradigm: r.paradigm,
            region_flags: RegionFlag::NONE,
            source_file: r.file,
            begin_line: r.begin_line,
            end_line: r.end_line,
        });
    }
    drop(registry);
    // All thread locations, in location order: a team group's members are positions in it.
    defs.write(&GlobalDef::Group {
        id: 0,
        name: s_openmp,
        group_type: GroupType::COMM_LOCATIONS,
        paradigm: Paradigm::OPENMP,
        group_flags: GroupFlag::NONE,
        members: (0..locations.len() as u32)
            .map(|n| m.location_id(n))
            .collect(),
    });
    let teams = m.teams();
    for team in &teams {
        defs.write(&GlobalDef::Group {
            id: team.comm + 1,
            name: s_empty,
            group_type: GroupType::COMM_GROUP,
            paradigm: Paradigm::OPENMP,
            group_flags: GroupFlag::NONE,
            members: team
                .members()
                .into_iter()
                .filter(|&l| l != u32::MAX)
                .map(u64::from)
                .collect(),
        });
    }
    for team in &teams {
        defs.write(&GlobalDef::Comm {
            id: team.comm,
            name: UNDEFINED_U32,
            group: team.comm + 1,
            parent: team.parent_comm,
            flags: CommFlag::NONE,
        });
    }
    mpi.write(defs);
}
