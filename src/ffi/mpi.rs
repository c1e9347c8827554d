//! The internal C API through which the MPI wrapper library (`src/mpi/pomptrace_mpi.c`, built
//! into `libpomptrace_mpi.so` by `mpicc`) records. Declared in `include/pomptrace/pomptrace_mpi.h`
//! (generated); not meant for programs. MPI handles never cross it: the wrappers turn
//! communicators into Comm ids, requests into request ids and statuses into ranks, tags and
//! byte counts, so the library itself never depends on an MPI implementation.
//!
//! Safety contract: string arguments are NUL-terminated; `world_ranks` points to `size`
//! readable integers.
#![allow(clippy::missing_safety_doc)]

use std::ffi::CStr;
use std::os::raw::c_char;

use super::ffi_boundary;
use crate::ops::mpi as m;
use crate::ops::mpi::{CallKind, Message};

/// `pomptrace_mpi_region` kinds: what an MPI function does (its region role).
#[allow(dead_code)] // read by C, through the generated header
pub const POMPTRACE_MPI_FUNCTION: u32 = 0;
#[allow(dead_code)] // read by C, through the generated header
pub const POMPTRACE_MPI_POINT_TO_POINT: u32 = 1;
#[allow(dead_code)] // read by C, through the generated header
pub const POMPTRACE_MPI_BARRIER: u32 = 2;
#[allow(dead_code)] // read by C, through the generated header
pub const POMPTRACE_MPI_ONE_TO_ALL: u32 = 3;
#[allow(dead_code)] // read by C, through the generated header
pub const POMPTRACE_MPI_ALL_TO_ONE: u32 = 4;
#[allow(dead_code)] // read by C, through the generated header
pub const POMPTRACE_MPI_ALL_TO_ALL: u32 = 5;
#[allow(dead_code)] // read by C, through the generated header
pub const POMPTRACE_MPI_OTHER_COLLECTIVE: u32 = 6;

/// `pomptrace_mpi_leave_collective` operations (the values of OTF2's CollectiveOp).
#[allow(dead_code)] // read by C, through the generated header
pub const POMPTRACE_MPI_OP_BARRIER: u32 = 0;
#[allow(dead_code)] // read by C, through the generated header
pub const POMPTRACE_MPI_OP_BCAST: u32 = 1;
#[allow(dead_code)] // read by C, through the generated header
pub const POMPTRACE_MPI_OP_GATHER: u32 = 2;
#[allow(dead_code)] // read by C, through the generated header
pub const POMPTRACE_MPI_OP_GATHERV: u32 = 3;
#[allow(dead_code)] // read by C, through the generated header
pub const POMPTRACE_MPI_OP_SCATTER: u32 = 4;
#[allow(dead_code)] // read by C, through the generated header
pub const POMPTRACE_MPI_OP_SCATTERV: u32 = 5;
#[allow(dead_code)] // read by C, through the generated header
pub const POMPTRACE_MPI_OP_ALLGATHER: u32 = 6;
#[allow(dead_code)] // read by C, through the generated header
pub const POMPTRACE_MPI_OP_ALLGATHERV: u32 = 7;
#[allow(dead_code)] // read by C, through the generated header
pub const POMPTRACE_MPI_OP_ALLTOALL: u32 = 8;
#[allow(dead_code)] // read by C, through the generated header
pub const POMPTRACE_MPI_OP_ALLTOALLV: u32 = 9;
#[allow(dead_code)] // read by C, through the generated header
pub const POMPTRACE_MPI_OP_ALLREDUCE: u32 = 11;
#[allow(dead_code)] // read by C, through the generated header
pub const POMPTRACE_MPI_OP_REDUCE: u32 = 12;
#[allow(dead_code)] // read by C, through the generated header
pub const POMPTRACE_MPI_OP_REDUCE_SCATTER: u32 = 13;
#[allow(dead_code)] // read by C, through the generated header
pub const POMPTRACE_MPI_OP_SCAN: u32 = 14;
#[allow(dead_code)] // read by C, through the generated header
pub const POMPTRACE_MPI_OP_EXSCAN: u32 = 15;
#[allow(dead_code)] // read by C, through the generated header
pub const POMPTRACE_MPI_OP_REDUCE_SCATTER_BLOCK: u32 = 16;

/// An id no communicator, region or rank has (also: "no root").
#[allow(dead_code)] // read by C, through the generated header
pub const POMPTRACE_MPI_UNDEFINED: u32 = u32::MAX;

fn text<'a>(s: *const c_char) -> &'a str {
    if s.is_null() {
        return "";
    }
    // SAFETY: the module's contract (NUL-terminated).
    unsafe { CStr::from_ptr(s) }.to_str().unwrap_or("")
}

/// After `PMPI_Init`: this process's rank in MPI_COMM_WORLD and its size. Starts the
/// measurement if nothing did before.
#[no_mangle]
pub extern "C" fn pomptrace_mpi_init(world_rank: u32, world_size: u32) {
    ffi_boundary!("pomptrace_mpi_init", { m::init(world_rank, world_size) })
}

/// The region of an MPI function (one of the `POMPTRACE_MPI_*` kinds); the same name always
/// gives the same id.
#[no_mangle]
pub unsafe extern "C" fn pomptrace_mpi_region(name: *const c_char, kind: u32) -> u32 {
    ffi_boundary!("pomptrace_mpi_region", {
        Id(m::region(text(name), CallKind::from_code(kind)))
    })
    .0
}

/// An id that is undefined by default (what a caught panic returns).
struct Id(u32);
impl Default for Id {
    fn default() -> Self {
        Self(POMPTRACE_MPI_UNDEFINED)
    }
}

#[no_mangle]
pub extern "C" fn pomptrace_mpi_enter(region: u32) {
    ffi_boundary!("pomptrace_mpi_enter", { m::enter(region) })
}

#[no_mangle]
pub extern "C" fn pomptrace_mpi_leave(region: u32) {
    ffi_boundary!("pomptrace_mpi_leave", { m::leave(region) })
}

/// A communicator: its name, the ranks in MPI_COMM_WORLD of its members (in its rank order)
/// and the Comm id it was derived from (or `POMPTRACE_MPI_UNDEFINED`). Returns its Comm id.
#[no_mangle]
pub unsafe extern "C" fn pomptrace_mpi_define_comm(
    name: *const c_char,
    world_ranks: *const u32,
    size: u32,
    parent: u32,
) -> u32 {
    ffi_boundary!("pomptrace_mpi_define_comm", {
        let ranks = if world_ranks.is_null() {
            Vec::new()
        } else {
            // SAFETY: the module's contract.
            unsafe { std::slice::from_raw_parts(world_ranks, size as usize) }.to_vec()
        };
        Id(crate::output::communicators::define_communicator(
            text(name),
            ranks,
            parent,
        ))
    })
    .0
}

/// Enters the region of a blocking send and records the send, at one time (before
/// `PMPI_Send`).
#[no_mangle]
pub extern "C" fn pomptrace_mpi_enter_send(
    region: u32,
    receiver: u32,
    comm: u32,
    tag: u32,
    bytes: u64,
) {
    ffi_boundary!("pomptrace_mpi_enter_send", {
        m::enter_with(
            region,
            Message::Send {
                peer: receiver,
                comm,
                tag,
                bytes,
            },
        )
    })
}

/// Records a non-blocking send that `PMPI_Isend` started (`request` names it until it
/// completes) and leaves the call's region, at one time.
#[no_mangle]
pub extern "C" fn pomptrace_mpi_leave_isend(
    region: u32,
    receiver: u32,
    comm: u32,
    tag: u32,
    bytes: u64,
    request: u64,
) {
    ffi_boundary!("pomptrace_mpi_leave_isend", {
        m::leave_with(
            region,
            Message::Isend {
                peer: receiver,
                comm,
                tag,
                bytes,
                request,
            },
        )
    })
}

/// A non-blocking send completed (in a wait or test call).
#[no_mangle]
pub extern "C" fn pomptrace_mpi_isend_complete(request: u64) {
    ffi_boundary!("pomptrace_mpi_isend_complete", {
        m::message(Message::IsendComplete { request })
    })
}

/// Records a non-blocking send that a call started without leaving its region (`MPI_Start` of
/// a persistent send).
#[no_mangle]
pub extern "C" fn pomptrace_mpi_isend(
    receiver: u32,
    comm: u32,
    tag: u32,
    bytes: u64,
    request: u64,
) {
    ffi_boundary!("pomptrace_mpi_isend", {
        m::message(Message::Isend {
            peer: receiver,
            comm,
            tag,
            bytes,
            request,
        })
    })
}

/// Records a non-blocking receive that a call posted without leaving its region (`MPI_Start`
/// of a persistent receive).
#[no_mangle]
pub extern "C" fn pomptrace_mpi_irecv_request(request: u64) {
    ffi_boundary!("pomptrace_mpi_irecv_request", {
        m::message(Message::IrecvRequest { request })
    })
}

/// A test call found the request not complete.
#[no_mangle]
pub extern "C" fn pomptrace_mpi_request_test(request: u64) {
    ffi_boundary!("pomptrace_mpi_request_test", {
        m::message(Message::RequestTest { request })
    })
}

/// The request completed as cancelled.
#[no_mangle]
pub extern "C" fn pomptrace_mpi_request_cancelled(request: u64) {
    ffi_boundary!("pomptrace_mpi_request_cancelled", {
        m::message(Message::RequestCancelled { request })
    })
}

/// Records a non-blocking receive that `PMPI_Irecv` posted and leaves the call's region, at
/// one time.
#[no_mangle]
pub extern "C" fn pomptrace_mpi_leave_irecv_request(region: u32, request: u64) {
    ffi_boundary!("pomptrace_mpi_leave_irecv_request", {
        m::leave_with(region, Message::IrecvRequest { request })
    })
}

/// Records a completed blocking receive (what its status says) and leaves the call's region,
/// at one time.
#[no_mangle]
pub extern "C" fn pomptrace_mpi_leave_recv(
    region: u32,
    sender: u32,
    comm: u32,
    tag: u32,
    bytes: u64,
) {
    ffi_boundary!("pomptrace_mpi_leave_recv", {
        m::leave_with(
            region,
            Message::Recv {
                peer: sender,
                comm,
                tag,
                bytes,
            },
        )
    })
}

/// A non-blocking receive completed (in a wait or test call), with what its status says.
#[no_mangle]
pub extern "C" fn pomptrace_mpi_irecv(sender: u32, comm: u32, tag: u32, bytes: u64, request: u64) {
    ffi_boundary!("pomptrace_mpi_irecv", {
        m::message(Message::Irecv {
            peer: sender,
            comm,
            tag,
            bytes,
            request,
        })
    })
}

/// Enters the region of a collective operation and records its begin, at one time.
#[no_mangle]
pub extern "C" fn pomptrace_mpi_enter_collective(region: u32) {
    ffi_boundary!("pomptrace_mpi_enter_collective", {
        m::enter_with(region, Message::CollectiveBegin)
    })
}

/// Records the end of a collective operation and leaves its region, at one time: which
/// operation (`POMPTRACE_MPI_OP_*`), on which Comm, its root's rank in it (or
/// `POMPTRACE_MPI_UNDEFINED`), and the bytes this process sent and received.
#[no_mangle]
pub extern "C" fn pomptrace_mpi_leave_collective(
    region: u32,
    op: u32,
    comm: u32,
    root: u32,
    sent: u64,
    received: u64,
) {
    ffi_boundary!("pomptrace_mpi_leave_collective", {
        m::leave_with(
            region,
            Message::CollectiveEnd {
                op: op as u8,
                comm,
                root,
                sent,
                received,
            },
        )
    })
}

/// Records the start of a non-blocking collective operation (`request` names it until it
/// completes) and leaves the call's region, at one time.
#[no_mangle]
pub extern "C" fn pomptrace_mpi_leave_nbc_request(region: u32, request: u64) {
    ffi_boundary!("pomptrace_mpi_leave_nbc_request", {
        m::leave_with(region, Message::CollectiveRequest { request })
    })
}

/// A non-blocking collective operation completed (in a wait or test call): which operation
/// (`POMPTRACE_MPI_OP_*`), on which Comm, its root's rank in it (or
/// `POMPTRACE_MPI_UNDEFINED`), and the bytes this process sent and received.
#[no_mangle]
pub extern "C" fn pomptrace_mpi_nbc_complete(
    op: u32,
    comm: u32,
    root: u32,
    sent: u64,
    received: u64,
    request: u64,
) {
    ffi_boundary!("pomptrace_mpi_nbc_complete", {
        m::message(Message::CollectiveComplete {
            op: op as u8,
            comm,
            root,
            sent,
            received,
            request,
        })
    })
}

/// The measurement's clock now (for the clock synchronisation's ping-pong).
#[no_mangle]
pub extern "C" fn pomptrace_mpi_time() -> u64 {
    ffi_boundary!("pomptrace_mpi_time", { m::time() })
}

/// The offset to add to this process's clock at local time `time` to get rank 0's clock,
/// and how uncertain it is (ticks).
#[no_mangle]
pub extern "C" fn pomptrace_mpi_clock_offset(time: u64, offset: i64, deviation: f64) {
    ffi_boundary!("pomptrace_mpi_clock_offset", {
        crate::output::communicators::add_clock_offset(time, offset, deviation)
    })
}
