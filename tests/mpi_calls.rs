//! Every MPI call of the wrapped set, communicators made by split and dup, and MPI called from
//! every thread of an OpenMP team (MPI_THREAD_MULTIPLE): c-tests/mpi_calls.c, linked with
//! `-lpomptrace_mpi -lpomptrace` as the README documents, as 2 ranks of 2 threads.

mod support;

use support::mpi::{build_instrumented, mpirun_ok, Job};
use support::pomp2::{Link, View};
use support::Scratch;

#[test]
fn every_wrapped_call_is_a_region_and_every_message_matches() {
    let scratch = Scratch::new("mpi-calls");
    let exe = build_instrumented(
        &scratch.path,
        "mpi_calls.c",
        "mpi_calls",
        Link::SharedWithMpi,
    );
    let experiment = scratch.join("trace");
    let out = mpirun_ok(
        &scratch.path,
        &exe,
        2,
        2,
        &[(
            "POMPTRACE_EXPERIMENT_DIRECTORY",
            experiment.to_str().unwrap(),
        )],
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("mpi_calls ok"));
    let view = View::read(&experiment.join("traces.otf2"));
    view.assert_well_formed();
    let job = Job { view: &view };

    let wrapped = [
        "MPI_Init_thread",
        "MPI_Finalize",
        "MPI_Send",
        "MPI_Recv",
        "MPI_Sendrecv",
        "MPI_Isend",
        "MPI_Irecv",
        "MPI_Wait",
        "MPI_Waitany",
        "MPI_Waitsome",
        "MPI_Test",
        "MPI_Testall",
        "MPI_Barrier",
        "MPI_Bcast",
        "MPI_Reduce",
        "MPI_Allreduce",
        "MPI_Gather",
        "MPI_Gatherv",
        "MPI_Scatter",
        "MPI_Scatterv",
        "MPI_Allgather",
        "MPI_Allgatherv",
        "MPI_Alltoall",
        "MPI_Alltoallv",
        "MPI_Comm_split",
        "MPI_Comm_dup",
        "MPI_Comm_free",
    ];
    let calls = job.mpi_calls();
    for rank in 0..2 {
        let missing: Vec<&&str> = wrapped
            .iter()
            .filter(|name| !calls[&rank].contains_key(**name))
            .collect();
        assert!(missing.is_empty(), "rank {rank} lacks {missing:?}");
        assert_eq!(calls[&rank]["MPI_Comm_free"], 2);
        assert_eq!(calls[&rank]["MPI_Allreduce"], 3);
    }

    // Messages of the world and of the split pair all match; the pair's comm has both ranks.
    let messages = job.assert_consistent();
    // Per direction: Send/Recv, Sendrecv, 4 Isends, the pair's Sendrecv, one per thread.
    assert_eq!(messages, 2 * (1 + 1 + 4 + 1 + 2), "{:?}", job.messages());
    let named: Vec<&str> = view.comms.values().map(|c| c.name.as_str()).collect();
    assert!(named.contains(&"MPI_COMM_WORLD"), "{named:?}");
    let derived: Vec<_> = view
        .comms
        .values()
        .filter(|c| c.name.starts_with("MPI communicator "))
        .collect();
    assert_eq!(
        derived.len(),
        2,
        "split and dup, one Comm each for both ranks: {derived:?}"
    );
    for c in &derived {
        assert_eq!(c.members, vec![0, 1]);
    }
    let split = view
        .comms
        .iter()
        .find(|(_, c)| c.name.starts_with("MPI communicator "))
        .map(|(id, _)| *id)
        .unwrap();
    assert!(
        derived.iter().any(|c| c.parent == Some(split)),
        "the dup's parent is the split communicator"
    );

    // MPI_THREAD_MULTIPLE: each OpenMP thread's location holds its own Sendrecv.
    for location in [1u64 << 32, (1u64 << 32) | 1] {
        let on_worker: Vec<&str> = view.events[&location]
            .iter()
            .filter(|e| e.kind.starts_with("Mpi"))
            .map(|e| e.kind.as_str())
            .collect();
        assert_eq!(on_worker, ["MpiSend", "MpiRecv"], "location {location}");
    }
}
