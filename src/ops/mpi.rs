//! What the MPI wrapper library (`libpomptrace_mpi`, PMPI wrappers in C) records: the MPI
//! calls as regions of paradigm MPI, messages and collectives, the communicators with their
//! groups, and the clock offsets measured against rank 0. The wrappers reach this through the
//! internal C API in `src/ffi/mpi.rs`; the core library itself never depends on MPI.
//!
//! Communicators get ids above every OpenMP team's (teams count from 0), so that both share
//! one Comm id space without asking each other.

use crate::base::clock;
use crate::base::diagnostics::warn;
use crate::lifecycle::active::active;
use crate::ops::constructs;
use crate::output::facts::Fact;
use crate::output::journal;
use crate::output::registry::NO_REGION;
use crate::output::registry::REGISTRY;
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
    crate::output::communicators::set_world_size(world_size);
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
