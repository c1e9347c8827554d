//! What the MPI wrapper library (`libpomptrace_mpi`, PMPI wrappers in C) records: the MPI
//! calls as regions of paradigm MPI, messages and collectives, the communicators with their
//! groups, and the clock offsets measured against rank 0. The wrappers reach this through the
//! internal C API in `src/ffi/mpi.rs`; the core library itself never depends on MPI.
//!
//! Communicators get ids above every OpenMP team's (teams count from 0), so that both share
//! one Comm id space without asking each other.

use parking_lot::Mutex;

use super::definitions::{ExtraDefinitions, Fact, MpiFacts};
use super::journal;
use super::regions::NO_REGION;
use super::{active, clock, constructs, warn, REGISTRY};
use otf2::*;

/// What an MPI function does, as far as its region's role is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallKind {
    Function,
    PointToPoint,
    Barrier,
    OneToAll,
    AllToOne,
    AllToAll,
    OtherCollective,
}

impl CallKind {
    /// From the C API's `POMPTRACE_MPI_*` kind codes (unknown codes: a plain function).
    pub fn from_code(code: u32) -> Self {
        match code {
            1 => Self::PointToPoint,
            2 => Self::Barrier,
            3 => Self::OneToAll,
            4 => Self::AllToOne,
            5 => Self::AllToAll,
            6 => Self::OtherCollective,
            _ => Self::Function,
        }
    }

    fn role(self) -> RegionRole {
        match self {
            Self::Function => RegionRole::FUNCTION,
            Self::PointToPoint => RegionRole::POINT2POINT,
            Self::Barrier => RegionRole::BARRIER,
            Self::OneToAll => RegionRole::COLL_ONE2ALL,
            Self::AllToOne => RegionRole::COLL_ALL2ONE,
            Self::AllToAll => RegionRole::COLL_ALL2ALL,
            Self::OtherCollective => RegionRole::COLL_OTHER,
        }
    }
}

/// A message or collective event, as the wrappers report it (peers are ranks in `comm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Message {
    Send {
        peer: u32,
        comm: u32,
        tag: u32,
        bytes: u64,
    },
    Isend {
        peer: u32,
        comm: u32,
        tag: u32,
        bytes: u64,
        request: u64,
    },
    IsendComplete {
        request: u64,
    },
    IrecvRequest {
        request: u64,
    },
    Recv {
        peer: u32,
        comm: u32,
        tag: u32,
        bytes: u64,
    },
    Irecv {
        peer: u32,
        comm: u32,
        tag: u32,
        bytes: u64,
        request: u64,
    },
    RequestTest {
        request: u64,
    },
    RequestCancelled {
        request: u64,
    },
    CollectiveBegin,
    CollectiveEnd {
        op: u8,
        comm: u32,
        root: u32,
        sent: u64,
        received: u64,
    },
    /// A non-blocking collective started.
    CollectiveRequest {
        request: u64,
    },
    CollectiveComplete {
        op: u8,
        comm: u32,
        root: u32,
        sent: u64,
        received: u64,
        request: u64,
    },
}

/// MPI_Init is done: starts the measurement if needed and checks what the launcher's
/// environment said against MPI's own answer.
pub fn init(world_rank: u32, world_size: u32) {
    set_world_size(world_size);
    let Some(guard) = active(true) else {
        return;
    };
    journal::record(&Fact::MpiWorldSize(world_size));
    match &guard.get().job {
        Some(job) if job.rank != world_rank || job.size != world_size => warn(&format!(
            "{} said rank {} of {}, MPI says rank {world_rank} of {world_size}; the trace uses the launcher's numbering",
            job.source, job.rank, job.size
        )),
        None if world_size > 1 => warn(&format!(
            "rank {world_rank} of {world_size}: no launcher variables were found at start, so this rank writes an archive of its own"
        )),
        _ => {}
    }
}

/// The region of an MPI function.
pub fn region(name: &str, kind: CallKind) -> u32 {
    REGISTRY
        .lock()
        .region(name, "", (0, 0), kind.role(), Paradigm::MPI)
}

pub fn enter(region: u32) {
    if region != NO_REGION {
        constructs::record(active(true), |loc, t| loc.enter(t, region));
    }
}

pub fn leave(region: u32) {
    if region != NO_REGION {
        constructs::record(active(false), |loc, t| loc.leave(t, region));
    }
}

/// Records a message or collective event on the calling thread's location.
pub fn message(message: Message) {
    let event = event(message);
    constructs::record(active(false), |loc, t| loc.write(t, &event));
}

/// Enters `region` and records `message` at the same time (one clock read: the call's first
/// action is the message's start).
pub fn enter_with(region: u32, message: Message) {
    if region == NO_REGION {
        return;
    }
    let event = event(message);
    constructs::record(active(true), |loc, t| {
        loc.enter(t, region);
        loc.write(t, &event);
    });
}

/// Records `message` and leaves `region` at the same time (the message's end is the call's
/// last action).
pub fn leave_with(region: u32, message: Message) {
    if region == NO_REGION {
        return;
    }
    let event = event(message);
    constructs::record(active(false), |loc, t| {
        loc.write(t, &event);
        loc.leave(t, region);
    });
}

/// The measurement's clock.
pub fn time() -> u64 {
    clock::now()
}

/// The first Comm id of an MPI communicator (and Group id of its group).
pub const FIRST_COMM: u32 = 1 << 30;
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
pub fn set_world_size(size: u32) {
    STATE.lock().world_size = size;
}

/// Defines a communicator; returns its Comm id.
pub fn define_communicator(name: &str, world_ranks: Vec<u32>, parent: u32) -> u32 {
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
pub fn add_clock_offset(time: u64, offset: i64, standard_deviation: f64) {
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
pub fn used() -> bool {
    !STATE.lock().communicators.is_empty()
}

/// The clock offsets measured so far (local definitions of every location of this process).
pub fn clock_offsets() -> Vec<LocalDef> {
    STATE.lock().clock_offsets.clone()
}

/// The MPI definitions of this process, written with the journaled ones at the end.
pub struct Definitions {
    world_size: u32,
    communicators: Vec<Communicator>,
    /// String ids of "MPI", "" and each communicator's name, once interned.
    paradigm_name: u32,
    empty: u32,
    names: Vec<u32>,
}

impl Definitions {
    pub fn collect() -> Self {
        let state = STATE.lock();
        Self::new(state.world_size, state.communicators.clone())
    }

    /// Those of a process that never ended, from its journal.
    pub fn journaled(facts: &MpiFacts) -> Self {
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

/// The OTF2 event of a message report.
fn event(message: Message) -> Event {
    match message {
        Message::Send {
            peer,
            comm,
            tag,
            bytes,
        } => Event::MpiSend {
            receiver: peer,
            communicator: comm,
            msg_tag: tag,
            msg_length: bytes,
        },
        Message::Isend {
            peer,
            comm,
            tag,
            bytes,
            request,
        } => Event::MpiIsend {
            receiver: peer,
            communicator: comm,
            msg_tag: tag,
            msg_length: bytes,
            request_id: request,
        },
        Message::IsendComplete { request } => Event::MpiIsendComplete {
            request_id: request,
        },
        Message::IrecvRequest { request } => Event::MpiIrecvRequest {
            request_id: request,
        },
        Message::Recv {
            peer,
            comm,
            tag,
            bytes,
        } => Event::MpiRecv {
            sender: peer,
            communicator: comm,
            msg_tag: tag,
            msg_length: bytes,
        },
        Message::Irecv {
            peer,
            comm,
            tag,
            bytes,
            request,
        } => Event::MpiIrecv {
            sender: peer,
            communicator: comm,
            msg_tag: tag,
            msg_length: bytes,
            request_id: request,
        },
        Message::RequestTest { request } => Event::MpiRequestTest {
            request_id: request,
        },
        Message::RequestCancelled { request } => Event::MpiRequestCancelled {
            request_id: request,
        },
        Message::CollectiveRequest { request } => Event::NonBlockingCollectiveRequest {
            request_id: request,
        },
        Message::CollectiveComplete {
            op,
            comm,
            root,
            sent,
            received,
            request,
        } => Event::NonBlockingCollectiveComplete {
            collective_op: CollectiveOp(op),
            communicator: comm,
            root,
            size_sent: sent,
            size_received: received,
            request_id: request,
        },
        Message::CollectiveBegin => Event::MpiCollectiveBegin {},
        Message::CollectiveEnd {
            op,
            comm,
            root,
            sent,
            received,
        } => Event::MpiCollectiveEnd {
            collective_op: CollectiveOp(op),
            communicator: comm,
            root,
            size_sent: sent,
            size_received: received,
        },
    }
}
