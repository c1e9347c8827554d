//! The global definitions of a trace as one state, built from the journal's facts (see
//! `journal.rs`) and written as the reference lays them out (semantics doc 4.5). The end of a
//! run and `pomptrace recover` both write the definitions from this state, so the two cannot
//! drift apart.

use std::collections::HashMap;

use crate::base::clock::{ClockKind, Sample};
use otf2::*;

/// The one attribute definition of a trace: the OS thread id behind a location at ProgramBegin
/// and at every ThreadTeamBegin (UINT64, defined at the end of the measurement).
pub const THREAD_ID_ATTRIBUTE: u32 = 0;

/// The one parameter definition of a trace, when the size budget stopped recording something:
/// its ParameterString events mark where a region (or everything) stops being recorded on a
/// location, the string being the region's name.
pub const THROTTLE_PARAMETER: u32 = 0;

/// An OTF2 region definition (strings by id).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RegionDef {
    pub name: u32,
    pub file: u32,
    pub begin_line: u32,
    pub end_line: u32,
    pub role: RegionRole,
    pub paradigm: Paradigm,
}

/// What is fixed when the measurement starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Start {
    pub clock: ClockKind,
    pub sample: Sample,
    pub realtime_ns: u64,
    /// Size of the in-memory event chunks (the file chunk size is in `archive`).
    pub memory_chunk_size: u64,
    pub archive: ArchiveConfig,
    pub hostname: String,
    /// The rank when the process is one of an MPI job: its location ids and location group
    /// name say so (see `job.rs`).
    pub rank: Option<u32>,
}

/// One thread team: a Comm and the COMM_GROUP of its members.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TeamDef {
    pub comm: u32,
    pub size: u32,
    pub parent_comm: u32,
    /// Location number of each member by thread number (u32::MAX: not seen).
    pub members: Vec<u32>,
}

/// One definition as it is created, in the order it is created.
#[derive(Clone, Debug, PartialEq)]
pub enum Fact {
    Start(Start),
    String {
        id: u32,
        text: String,
    },
    Region {
        id: u32,
        def: RegionDef,
    },
    /// The regions from this id on were taken back (a filtered construct's); their ids are
    /// given to the next regions.
    RegionsDropped {
        from: u32,
    },
    Location {
        id: u32,
        name: u32,
    },
    Team {
        comm: u32,
        size: u32,
        parent_comm: u32,
    },
    Member {
        comm: u32,
        thread: u32,
        location: u32,
    },
    /// A later clock sample: the timer resolution and trace length of a run that never ended.
    Clock(Sample),
    /// The synchronous metrics recorded at every Enter and Leave, by name, in value order.
    Metrics(Vec<String>),
    /// MPI_Init: the size of MPI_COMM_WORLD.
    MpiWorldSize(u32),
    /// An MPI communicator, in the order they are defined (see `mpi.rs`).
    MpiCommunicator {
        name: String,
        world_ranks: Vec<u32>,
        parent: u32,
    },
    /// An offset to rank 0's clock (see `mpi.rs`).
    MpiClockOffset {
        time: u64,
        offset: i64,
        standard_deviation: f64,
    },
    /// The size budget stopped recording `region` on location `location` (every region, for
    /// `NO_REGION`).
    Throttled {
        location: u32,
        region: u32,
    },
}

/// What the MPI wrapper library defined (journaled, so that a rank that never ended can be
/// unified).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MpiFacts {
    pub world_size: u32,
    /// (name, ranks in MPI_COMM_WORLD, parent Comm) of each communicator, in order.
    pub communicators: Vec<(String, Vec<u32>, u32)>,
    pub clock_offsets: Vec<LocalDef>,
}

/// Every definition known so far.
#[derive(Default)]
pub struct Definitions {
    pub start: Option<Start>,
    strings: Vec<String>,
    string_ids: HashMap<String, u32>,
    regions: Vec<RegionDef>,
    /// Name (string id) of each location, by location number.
    locations: Vec<u32>,
    teams: Vec<TeamDef>,
    pub last_clock: Option<Sample>,
    /// The synchronous metrics' names (`Fact::Metrics`).
    pub metrics: Vec<String>,
    pub mpi: MpiFacts,
    /// (location, region) of every stop of the size budget.
    throttled: Vec<(u32, u32)>,
    /// Descriptions of regions (string ids), where the end of the run has one.
    region_descriptions: HashMap<u32, u32>,
}

impl Definitions {
    pub fn apply(&mut self, fact: Fact) {
        match fact {
            Fact::Start(start) => self.start = Some(start),
            Fact::String { id, text } => {
                if id as usize == self.strings.len() {
                    self.string_ids.entry(text.clone()).or_insert(id);
                    self.strings.push(text);
                }
            }
            Fact::Region { id, def } => {
                if id as usize == self.regions.len() {
                    self.regions.push(def);
                }
            }
            Fact::RegionsDropped { from } => self.regions.truncate(from as usize),
            Fact::Location { id, name } => {
                if id as usize == self.locations.len() {
                    self.locations.push(name);
                }
            }
            Fact::Team {
                comm,
                size,
                parent_comm,
            } => {
                if comm as usize == self.teams.len() {
                    self.teams.push(TeamDef {
                        comm,
                        size,
                        parent_comm,
                        members: vec![u32::MAX; size as usize],
                    });
                }
            }
            Fact::Member {
                comm,
                thread,
                location,
            } => {
                if let Some(slot) = self
                    .teams
                    .get_mut(comm as usize)
                    .and_then(|t| t.members.get_mut(thread as usize))
                {
                    *slot = location;
                }
            }
            Fact::Clock(sample) => self.last_clock = Some(sample),
            Fact::Metrics(names) => self.metrics = names,
            Fact::MpiWorldSize(size) => self.mpi.world_size = size,
            Fact::MpiCommunicator {
                name,
                world_ranks,
                parent,
            } => self.mpi.communicators.push((name, world_ranks, parent)),
            Fact::MpiClockOffset {
                time,
                offset,
                standard_deviation,
            } => self.mpi.clock_offsets.push(LocalDef::ClockOffset {
                time,
                offset,
                standard_deviation,
            }),
            Fact::Throttled { location, region } => self.throttled.push((location, region)),
        }
    }

    /// Gives regions a description (what the size budget left out of them).
    pub fn describe_regions(&mut self, descriptions: &[(u32, String)]) {
        for (region, text) in descriptions {
            let id = self.string(text);
            self.region_descriptions.insert(*region, id);
        }
    }

    pub fn locations(&self) -> usize {
        self.locations.len()
    }

    /// The id of `s`, defining it if new (the fixed strings of the definitions below).
    fn string(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.string_ids.get(s) {
            return id;
        }
        let id = self.strings.len() as u32;
        self.apply(Fact::String {
            id,
            text: s.to_string(),
        });
        id
    }

    /// Writes every definition: `events` is the event count of each location, `resolution`
    /// the ticks per second, `end_time` the last tick of the trace.
    pub fn write_global_defs(
        &mut self,
        defs: &mut GlobalDefWriter,
        events: &[u64],
        resolution: u64,
        end_time: u64,
        extra: &mut dyn ExtraDefinitions,
    ) -> Result<(), String> {
        let start = self
            .start
            .clone()
            .ok_or("the journal does not say how the measurement started")?;
        // Every string first: the python reader needs definitions before their users.
        let s_empty = self.string("");
        let s_openmp = self.string("OpenMP");
        let s_template = self.string("Thread team ${id}");
        let s_machine = self.string("machine");
        let s_machine_name = self.string("Linux");
        let s_node = self.string("node");
        let s_host = self.string(&start.hostname);
        let s_process = self.string(&crate::output::job::location_group_name(start.rank));
        let s_thread_id = self.string("ThreadId");
        let s_thread_id_description = self.string("Thread identifier");
        let s_throttled =
            (!self.throttled.is_empty()).then(|| self.string("pomptrace: not recorded from here"));
        // Regions stopped by the budget in a run that never ended say so (the end of a run
        // says more).
        for (_, region) in self.throttled.clone() {
            if (region as usize) < self.regions.len()
                && !self.region_descriptions.contains_key(&region)
            {
                let id = self.string(
                    "pomptrace: not recorded on some locations after the trace came near its \
                     size budget",
                );
                self.region_descriptions.insert(region, id);
            }
        }
        extra.strings(&mut |text| self.string(text));

        defs.write(&GlobalDef::ClockProperties {
            timer_resolution: resolution,
            global_offset: start.sample.ticks,
            trace_length: end_time.saturating_sub(start.sample.ticks),
            realtime_timestamp: start.realtime_ns,
        });
        for (id, string) in self.strings.iter().enumerate() {
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
            id: THREAD_ID_ATTRIBUTE,
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
        let location_id =
            |number: usize| crate::output::job::location_id(start.rank, number as u32);
        for (number, &name) in self.locations.iter().enumerate() {
            defs.write(&GlobalDef::Location {
                id: location_id(number),
                name,
                location_type: LocationType::CPU_THREAD,
                number_of_events: events.get(number).copied().unwrap_or(0),
                location_group: 0,
            });
        }
        extra.after_locations(defs, &mut |text| self.string(text));
        for (id, r) in self.regions.iter().enumerate() {
            defs.write(&GlobalDef::Region {
                id: id as u32,
                name: r.name,
                canonical_name: r.name,
                description: self
                    .region_descriptions
                    .get(&(id as u32))
                    .copied()
                    .unwrap_or(s_empty),
                region_role: r.role,
                paradigm: r.paradigm,
                region_flags: RegionFlag::NONE,
                source_file: r.file,
                begin_line: r.begin_line,
                end_line: r.end_line,
            });
        }
        // All thread locations, in location order: a team group's members are positions in it.
        defs.write(&GlobalDef::Group {
            id: 0,
            name: s_openmp,
            group_type: GroupType::COMM_LOCATIONS,
            paradigm: Paradigm::OPENMP,
            group_flags: GroupFlag::NONE,
            members: (0..self.locations.len()).map(location_id).collect(),
        });
        for team in &self.teams {
            defs.write(&GlobalDef::Group {
                id: team.comm + 1,
                name: s_empty,
                group_type: GroupType::COMM_GROUP,
                paradigm: Paradigm::OPENMP,
                group_flags: GroupFlag::NONE,
                members: team
                    .members
                    .iter()
                    .filter(|&&l| l != u32::MAX)
                    .map(|&l| u64::from(l))
                    .collect(),
            });
        }
        for team in &self.teams {
            defs.write(&GlobalDef::Comm {
                id: team.comm,
                name: UNDEFINED_U32,
                group: team.comm + 1,
                parent: team.parent_comm,
                flags: CommFlag::NONE,
            });
        }
        extra.after_comms(defs);
        if let Some(name) = s_throttled {
            defs.write(&GlobalDef::Parameter {
                id: THROTTLE_PARAMETER,
                name,
                parameter_type: ParameterType::STRING,
            });
        }
        match defs.oversized() {
            0 => Ok(()),
            n => Err(format!(
                "{n} definitions were larger than a definition chunk ({} bytes) and were left out",
                start.archive.def_chunk_size
            )),
        }
    }
}

/// Definitions that the end of a run adds to the journaled ones (metrics: they follow from the
/// configuration, not from facts; MPI communicators). Strings are interned before the string
/// table is written; the records come right after the locations, or after the OpenMP comms.
pub trait ExtraDefinitions {
    fn strings(&mut self, intern: &mut dyn FnMut(&str) -> u32);
    fn after_locations(&mut self, defs: &mut GlobalDefWriter, intern: &mut dyn FnMut(&str) -> u32);
    fn after_comms(&mut self, _defs: &mut GlobalDefWriter) {}
}

/// Both sets, `.0`'s records first at each place.
impl<A: ExtraDefinitions, B: ExtraDefinitions> ExtraDefinitions for (A, B) {
    fn strings(&mut self, intern: &mut dyn FnMut(&str) -> u32) {
        self.0.strings(intern);
        self.1.strings(intern);
    }
    fn after_locations(&mut self, defs: &mut GlobalDefWriter, intern: &mut dyn FnMut(&str) -> u32) {
        self.0.after_locations(defs, intern);
        self.1.after_locations(defs, intern);
    }
    fn after_comms(&mut self, defs: &mut GlobalDefWriter) {
        self.0.after_comms(defs);
        self.1.after_comms(defs);
    }
}
