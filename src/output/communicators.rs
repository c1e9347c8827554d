//! What this process knows of MPI for the trace's definitions: the size of MPI_COMM_WORLD,
//! the communicators the wrappers described, and the clock offsets against rank 0. Filled by the
//! MPI calls (`ops/mpi.rs`), read once at the end; never touched by an event.

use parking_lot::Mutex;

use super::facts::{ExtraDefinitions, Fact, MpiFacts};
use super::journal;
use otf2::*;

/// The first Comm id of an MPI communicator (and Group id of its group).
pub(crate) const FIRST_COMM: u32 = 1 << 30;
/// The Group id of the MPI `COMM_LOCATIONS` group (every rank's first location).
const LOCATIONS_GROUP: u32 = FIRST_COMM - 1;

/// A communicator as the wrappers describe it.
#[derive(Clone, Debug)]
struct Communicator {
    name: String,
    /// The ranks in MPI_COMM_WORLD of its members, in the order of their ranks in it.
    world_ranks: Vec<u32>,
    /// The Comm it was derived from (UNDEFINED for MPI_COMM_WORLD and MPI_COMM_SELF).
    parent: u32,
}

#[derive(Default)]
struct State {
    world_size: u32,
    communicators: Vec<Communicator>,
    clock_offsets: Vec<LocalDef>,
}

static STATE: Mutex<State> = Mutex::new(State {
    world_size: 0,
    communicators: Vec::new(),
    clock_offsets: Vec::new(),
});

/// MPI_Init told us the size of MPI_COMM_WORLD.
pub(crate) fn set_world_size(size: u32) {
    STATE.lock().world_size = size;
}

/// Defines a communicator; returns its Comm id.
pub(crate) fn define_communicator(name: &str, world_ranks: Vec<u32>, parent: u32) -> u32 {
    let mut state = STATE.lock();
    // Under the lock: the journal's order is the ids' order.
    journal::record(&Fact::MpiCommunicator {
        name: name.to_string(),
        world_ranks: world_ranks.clone(),
        parent,
    });
    state.communicators.push(Communicator {
        name: name.to_string(),
        world_ranks,
        parent,
    });
    FIRST_COMM + state.communicators.len() as u32 - 1
}

/// Records a clock offset of this process against rank 0 at local time `time` (measured at
/// MPI_Init, after the first communicators, and at MPI_Finalize): the journal is written then,
/// so that a rank killed later can be unified with its locations and communicators.
pub(crate) fn add_clock_offset(time: u64, offset: i64, standard_deviation: f64) {
    record_clock_offset(time, offset, standard_deviation);
    journal::flush_now();
}

fn record_clock_offset(time: u64, offset: i64, standard_deviation: f64) {
    let mut state = STATE.lock();
    // Readers require strictly increasing times.
    let later = match state.clock_offsets.last() {
        Some(LocalDef::ClockOffset { time: last, .. }) => time > *last,
        _ => true,
    };
    if later {
        journal::record(&Fact::MpiClockOffset {
            time,
            offset,
            standard_deviation,
        });
        state.clock_offsets.push(LocalDef::ClockOffset {
            time,
            offset,
            standard_deviation,
        });
    }
}

/// Whether the MPI wrappers defined anything (MPI_Init ran under them).
pub(crate) fn used() -> bool {
    !STATE.lock().communicators.is_empty()
}

/// The clock offsets measured so far (local definitions of every location of this process).
pub(crate) fn clock_offsets() -> Vec<LocalDef> {
    STATE.lock().clock_offsets.clone()
}

/// The MPI definitions of this process, written with the journaled ones at the end.
pub(crate) struct Definitions {
    world_size: u32,
    communicators: Vec<Communicator>,
    /// String ids of "MPI", "" and each communicator's name, once interned.
    paradigm_name: u32,
    empty: u32,
    names: Vec<u32>,
}

impl Definitions {
    pub(crate) fn collect() -> Self {
        let state = STATE.lock();
        Self::new(state.world_size, state.communicators.clone())
    }

    /// Those of a process that never ended, from its journal.
    pub(crate) fn journaled(facts: &MpiFacts) -> Self {
        let communicators = facts
            .communicators
            .iter()
            .map(|(name, world_ranks, parent)| Communicator {
                name: name.clone(),
                world_ranks: world_ranks.clone(),
                parent: *parent,
            })
            .collect();
        Self::new(facts.world_size, communicators)
    }

    fn new(world_size: u32, communicators: Vec<Communicator>) -> Self {
        Self {
            world_size,
            communicators,
            paradigm_name: 0,
            empty: 0,
            names: Vec::new(),
        }
    }
}

impl ExtraDefinitions for Definitions {
    fn strings(&mut self, intern: &mut dyn FnMut(&str) -> u32) {
        self.paradigm_name = intern("MPI");
        self.empty = intern("");
        self.names = self.communicators.iter().map(|c| intern(&c.name)).collect();
    }

    fn after_locations(&mut self, _: &mut GlobalDefWriter, _: &mut dyn FnMut(&str) -> u32) {}

    /// Paradigm MPI, the group of every rank's first location (what a communicator's ranks
    /// index), one group and one Comm per communicator. Nothing without MPI.
    fn after_comms(&mut self, defs: &mut GlobalDefWriter) {
        if self.communicators.is_empty() {
            return;
        }
        defs.write(&GlobalDef::Paradigm {
            paradigm: Paradigm::MPI,
            name: self.paradigm_name,
            paradigm_class: ParadigmClass::PROCESS,
        });
        defs.write(&GlobalDef::Group {
            id: LOCATIONS_GROUP,
            name: self.empty,
            group_type: GroupType::COMM_LOCATIONS,
            paradigm: Paradigm::MPI,
            group_flags: GroupFlag::NONE,
            // A rank's first location is location 0 of that rank: its id is the rank.
            members: (0..u64::from(self.world_size)).collect(),
        });
        for (i, c) in self.communicators.iter().enumerate() {
            defs.write(&GlobalDef::Group {
                id: FIRST_COMM + i as u32,
                name: self.empty,
                group_type: GroupType::COMM_GROUP,
                paradigm: Paradigm::MPI,
                group_flags: GroupFlag::NONE,
                members: c.world_ranks.iter().map(|&r| u64::from(r)).collect(),
            });
        }
        for (i, (c, &name)) in self.communicators.iter().zip(&self.names).enumerate() {
            defs.write(&GlobalDef::Comm {
                id: FIRST_COMM + i as u32,
                name,
                group: FIRST_COMM + i as u32,
                parent: c.parent,
                flags: CommFlag::NONE,
            });
        }
    }
}
