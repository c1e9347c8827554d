//! `pomptrace recover` for a profiled run: a run that never ended writes no profile, so the
//! profile is rebuilt from its recovered trace. The trace's Enter and Leave records of each
//! location are fed to the same call tree the run kept (`record/profile.rs`), with team begins
//! and task regions as the run saw them, and the trees are merged and written as the end of a
//! run does (`profile_write.rs`). A region still open when the run was killed counts its visit,
//! with the time up to the location's last region or team event, as Score-P closes the regions of a run that
//! aborts.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use crate::base::config::{
    Variable, DEFAULT_PROFILE_MAX_DEPTH, DEFAULT_PROFILE_MAX_NODES, ENABLE_PROFILING, METRICS,
    PROFILE_MAX_DEPTH, PROFILE_MAX_NODES, PROGRAM_LINE,
};
use crate::lifecycle::profile_write::{self, LocationProfile, ProfileContext};
use crate::metrics::synchronous::{Metric, CATALOG, MAX_VALUES, SYNCHRONOUS_CLASS};
use crate::output::facts::RegionDef;
use crate::record::profile::Profile;
use otf2::profile_unify::PROFILE_FILE;
use otf2::{ArchiveReader, Event, GlobalDef, GroupType, LocationType, RegionRole};

/// The value `variable` had in the run, from its `pomptrace.cfg`.
fn recorded<'a>(config: &'a str, variable: &Variable) -> Option<&'a str> {
    config.lines().find_map(|line| {
        line.strip_prefix(variable.name)
            .and_then(|rest| rest.strip_prefix('='))
            .map(str::trim)
    })
}

/// What the trace's definitions say that the profile needs.
struct TraceDefinitions {
    strings: Vec<String>,
    regions: Vec<RegionDef>,
    task_regions: BTreeSet<u32>,
    /// Thread team (Comm) -> the location of its thread 0.
    masters: HashMap<u32, u64>,
    /// CPU thread locations: (id, name).
    locations: Vec<(u64, String)>,
    resolution: u64,
    hostname: String,
}

fn definitions(defs: &[GlobalDef]) -> TraceDefinitions {
    let mut strings: Vec<String> = Vec::new();
    let mut regions: Vec<RegionDef> = Vec::new();
    let mut task_regions = BTreeSet::new();
    let mut groups: HashMap<u32, (GroupType, Vec<u64>)> = HashMap::new();
    let mut comms: Vec<(u32, u32)> = Vec::new();
    let mut locations = Vec::new();
    let mut location_names = Vec::new();
    let mut resolution = 1_000_000_000;
    let mut node_name = None;
    for def in defs {
        match def {
            GlobalDef::String { id, string } => {
                let id = *id as usize;
                if strings.len() <= id {
                    strings.resize(id + 1, String::new());
                }
                strings[id] = string.clone();
            }
            GlobalDef::Region {
                id,
                name,
                source_file,
                begin_line,
                end_line,
                region_role,
                paradigm,
                ..
            } => {
                let id = *id as usize;
                if regions.len() <= id {
                    regions.resize(
                        id + 1,
                        RegionDef {
                            name: otf2::UNDEFINED_U32,
                            file: otf2::UNDEFINED_U32,
                            begin_line: 0,
                            end_line: 0,
                            role: RegionRole::UNKNOWN,
                            paradigm: otf2::Paradigm::UNKNOWN,
                        },
                    );
                }
                regions[id] = RegionDef {
                    name: *name,
                    file: *source_file,
                    begin_line: *begin_line,
                    end_line: *end_line,
                    role: *region_role,
                    paradigm: *paradigm,
                };
                if matches!(*region_role, RegionRole::TASK | RegionRole::TASK_UNTIED) {
                    task_regions.insert(id as u32);
                }
            }
            GlobalDef::Group {
                id,
                members,
                group_type,
                ..
            } => {
                groups.insert(*id, (*group_type, members.clone()));
            }
            GlobalDef::Comm { id, group, .. } => comms.push((*id, *group)),
            GlobalDef::Location {
                id,
                name,
                location_type,
                ..
            } if *location_type == LocationType::CPU_THREAD => location_names.push((*id, *name)),
            GlobalDef::ClockProperties {
                timer_resolution, ..
            } => resolution = *timer_resolution,
            GlobalDef::SystemTreeNode {
                name, class_name, ..
            } if strings
                .get(*class_name as usize)
                .is_some_and(|c| c == "node") =>
            {
                node_name = Some(*name);
            }
            _ => {}
        }
    }
    // A team's group lists positions in the OpenMP locations group; its first is thread 0.
    let all_threads = groups
        .values()
        .find(|(kind, _)| *kind == GroupType::COMM_LOCATIONS)
        .map(|(_, members)| members.clone())
        .unwrap_or_default();
    let mut masters = HashMap::new();
    for (comm, group) in comms {
        if let Some((GroupType::COMM_GROUP, members)) = groups.get(&group) {
            if let Some(&location) = members
                .first()
                .and_then(|&position| all_threads.get(position as usize))
            {
                masters.insert(comm, location);
            }
        }
    }
    for (id, name) in location_names {
        locations.push((id, strings.get(name as usize).cloned().unwrap_or_default()));
    }
    let hostname = node_name
        .and_then(|n| strings.get(n as usize).cloned())
        .unwrap_or_default();
    TraceDefinitions {
        strings,
        regions,
        task_regions,
        masters,
        locations,
        resolution,
        hostname,
    }
}

/// Rebuilds `DIR/profile.cubex` from the trace in `dir` when the run was profiled and left no
/// profile; returns the line to print (None: nothing to do).
pub fn recover_profile(dir: &Path) -> Result<Option<String>, String> {
    let config = std::fs::read_to_string(dir.join("pomptrace.cfg")).unwrap_or_default();
    let profiled = recorded(&config, &ENABLE_PROFILING).is_some_and(|v| v == "1");
    let path = dir.join(PROFILE_FILE);
    if !profiled || path.exists() {
        return Ok(None);
    }
    let anchor = dir.join("traces.otf2");
    let reader = ArchiveReader::open(&anchor)
        .map_err(|e| format!("cannot read {}: {e}", anchor.display()))?;
    let defs = reader
        .global_defs()
        .map_err(|e| format!("cannot read {}: {e}", anchor.display()))?;
    let d = definitions(&defs);
    let metrics: Vec<&'static Metric> = recorded(&config, &METRICS)
        .unwrap_or("")
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter_map(|name| {
            CATALOG
                .iter()
                .find(|m| m.member.name.eq_ignore_ascii_case(name))
        })
        .collect();
    let max_depth = recorded(&config, &PROFILE_MAX_DEPTH)
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_PROFILE_MAX_DEPTH);
    let max_nodes = recorded(&config, &PROFILE_MAX_NODES)
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_PROFILE_MAX_NODES);
    let events = |location: u64| {
        reader
            .events(location)
            .map_err(|e| format!("cannot read the events of location {location}: {e}"))
    };
    // The locations in an order where a team's thread 0 comes before the team's other
    // members (who start under its call path).
    let mut depends: HashMap<u64, BTreeSet<u64>> = HashMap::new();
    for (id, _) in &d.locations {
        let set = depends.entry(*id).or_default();
        for record in events(*id)?.flatten() {
            if let Event::ThreadTeamBegin { team } = record.event {
                match d.masters.get(&team) {
                    Some(&master) if master != *id => {
                        set.insert(master);
                    }
                    _ => {}
                }
            }
        }
    }
    let mut order = Vec::new();
    let mut placed = BTreeSet::new();
    fn place(
        id: u64,
        depends: &HashMap<u64, BTreeSet<u64>>,
        placed: &mut BTreeSet<u64>,
        visiting: &mut BTreeSet<u64>,
        order: &mut Vec<u64>,
    ) {
        if placed.contains(&id) || !visiting.insert(id) {
            return;
        }
        for &master in depends.get(&id).into_iter().flatten() {
            place(master, depends, placed, visiting, order);
        }
        placed.insert(id);
        order.push(id);
    }
    for (id, _) in &d.locations {
        place(*id, &depends, &mut placed, &mut BTreeSet::new(), &mut order);
    }

    let mut fork_paths: HashMap<(u32, u32), u64> = HashMap::new();
    let mut profiles: HashMap<u64, Profile> = HashMap::new();
    let (mut program_begin, mut last_time, mut program_end) = (None, 0u64, None);
    let mut program = String::new();
    for id in order {
        let mut profile = Profile::new(max_nodes, max_depth, metrics.len());
        let mut instances: HashMap<u32, u32> = HashMap::new();
        let mut values = [0u64; MAX_VALUES];
        let mut read = 0usize;
        let mut last_values = 0usize;
        let mut location_last = 0u64;
        for record in events(id)?.flatten() {
            let t = record.time;
            // The synchronous metrics come just before the Enter or Leave they belong to.
            if let Event::Metric { metric, values: v } = &record.event {
                if *metric == SYNCHRONOUS_CLASS {
                    read = v.len().min(metrics.len());
                    last_values = read;
                    for (slot, value) in values.iter_mut().zip(&v[..read]) {
                        *slot = value.raw;
                    }
                    continue;
                }
            }
            let pending = &values[..read];
            if matches!(
                record.event,
                Event::Enter { .. }
                    | Event::Leave { .. }
                    | Event::ThreadTeamBegin { .. }
                    | Event::ThreadTeamEnd { .. }
            ) {
                last_time = last_time.max(t);
                location_last = location_last.max(t);
            }
            match record.event {
                Event::Enter { region } if d.task_regions.contains(&region) => {
                    profile.begin_task(t, region, pending)
                }
                Event::Enter { region } => profile.enter(t, region, pending),
                Event::Leave { .. } => profile.leave(t, pending),
                Event::ThreadTeamBegin { team } => {
                    let k = instances.entry(team).or_default();
                    let number = (id & 0xffff_ffff) as u32;
                    if d.masters.get(&team).map_or(true, |&m| m == id) {
                        let path = (u64::from(number) << 32) | u64::from(profile.current_path());
                        fork_paths.insert((team, *k), path);
                    } else if let Some(&path) = fork_paths.get(&(team, *k)) {
                        profile.thread_start(path);
                    }
                    *k += 1;
                    profile.team_begin();
                }
                Event::ThreadTeamEnd { .. } => profile.team_end(),
                Event::ProgramBegin { program_name, .. } => {
                    program_begin = Some(t);
                    program = d
                        .strings
                        .get(program_name as usize)
                        .cloned()
                        .unwrap_or_default();
                }
                Event::ProgramEnd { .. } => program_end = Some(t),
                _ => {}
            }
            read = 0;
        }
        profile.leave_open(location_last, &values[..last_values]);
        profiles.insert(id, profile);
    }
    let locations: Vec<LocationProfile> = d
        .locations
        .iter()
        .map(|(id, name)| LocationProfile {
            number: (id & 0xffff_ffff) as u32,
            name: name.clone(),
            profile: profiles.remove(id),
        })
        .collect();
    if program.is_empty() {
        // The trace lost the program's begin (no chunk of the initial thread reached the disk).
        if let Some(line) = config.lines().find_map(|l| l.strip_prefix(PROGRAM_LINE)) {
            program = line.to_string();
        }
    }
    let program = Path::new(&program)
        .file_name()
        .map_or(program.clone(), |n| n.to_string_lossy().into_owned());
    let creator = format!("pomptrace {} (recovered)", env!("CARGO_PKG_VERSION"));
    let context = ProfileContext {
        regions: &d.regions,
        strings: &d.strings,
        metrics: &metrics,
        resolution: d.resolution,
        hostname: &d.hostname,
        rank: None,
        creator: &creator,
        program: &program,
        // A killed run has no ProgramEnd: it ran at least until the last region or team event
        // of any thread.
        program_ticks: program_end
            .unwrap_or(last_time)
            .saturating_sub(program_begin.unwrap_or(last_time)),
    };
    let (profile, _) = profile_write::build(&locations, &context);
    otf2::Directory::open(dir)
        .and_then(|out| profile.write_in(&out, PROFILE_FILE))
        .map_err(|e| format!("cannot write the profile {}: {e}", path.display()))?;
    Ok(Some(format!(
        "profile rebuilt from the trace: {} ({} call paths, {} threads)",
        path.display(),
        profile.cnodes.len(),
        locations.len()
    )))
}
