//! The MPI calls beyond the basic set, one family per test: c-tests/mpi_families.c built with
//! `pomptrace mpicc` (no OpenMP: the MPI wrapper library is linked all the same), run as 2
//! ranks, its trace read by both reference readers (the python `otf2` module through `View`,
//! and otf2-print), every message matched in each.

mod support;

use std::collections::BTreeMap;
use std::path::PathBuf;

use support::mpi::{build_with_wrapper, mpirun_with_args, printed_messages, Job};
use support::pomp2::View;
use support::{otf2_print, Scratch};

/// `mpi_families FAMILY` traced as 2 ranks: the python reader's view and otf2-print's text.
struct Traced {
    _scratch: Scratch,
    view: View,
    printed: String,
}

fn trace(family: &str) -> Traced {
    let scratch = Scratch::new(&format!("mpi-family-{family}"));
    let source = support::repo_root().join("c-tests/mpi_families.c");
    build_with_wrapper(
        &scratch.path,
        "mpicc",
        &["-O1", source.to_str().unwrap(), "-o", "mpi_families"],
    );
    let experiment = scratch.join("trace");
    let exe: PathBuf = scratch.join("mpi_families");
    let env = [(
        "POMPTRACE_EXPERIMENT_DIRECTORY",
        experiment.to_str().unwrap(),
    )];
    let out = mpirun_with_args(&scratch.path, &exe, &[family], 2, 1, &env);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("mpi_families {family} ok")),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let anchor = experiment.join("traces.otf2");
    let view = View::read(&anchor);
    view.assert_well_formed();
    let printed = otf2_print(&[], &anchor, &[]);
    Traced {
        _scratch: scratch,
        view,
        printed,
    }
}

impl Traced {
    fn job(&self) -> Job<'_> {
        Job { view: &self.view }
    }

    /// Every message matched in both readers; returns how many there are.
    fn assert_messages_match(&self) -> usize {
        let count = self.job().assert_consistent();
        let (sends, receives) = printed_messages(&self.printed);
        assert_eq!(sends, receives, "otf2-print: sends and receives differ");
        assert_eq!(sends.len(), count, "both readers see as many messages");
        count
    }

    /// How often each listed MPI function was entered on each rank.
    fn assert_calls(&self, expected: &[(&str, usize)]) {
        let calls = self.job().mpi_calls();
        for rank in 0..2u64 {
            for (name, count) in expected {
                assert_eq!(
                    calls[&rank].get(*name).copied().unwrap_or(0),
                    *count,
                    "rank {rank}: {name}"
                );
                assert_eq!(self.view.region(name).role, "POINT2POINT", "{name}");
            }
        }
    }

    /// otf2-print lines of an event kind.
    fn printed_lines(&self, kind: &str) -> Vec<&str> {
        self.printed
            .lines()
            .filter(|l| l.split_whitespace().next() == Some(kind))
            .collect()
    }

    /// Events of one kind on one location (python reader).
    fn events(&self, location: u64, kind: &str) -> Vec<&support::pomp2::Ev> {
        self.view.events[&location]
            .iter()
            .filter(|e| e.kind == kind)
            .collect()
    }
}

#[test]
fn synchronous_buffered_and_ready_sends() {
    let t = trace("sync");
    t.assert_calls(&[
        ("MPI_Ssend", 1),
        ("MPI_Bsend", 1),
        ("MPI_Rsend", 1),
        ("MPI_Issend", 1),
        ("MPI_Ibsend", 1),
        ("MPI_Irsend", 1),
    ]);
    // Per rank: Ssend, Bsend, Rsend blocking; Issend, Ibsend, Irsend non-blocking.
    assert_eq!(t.assert_messages_match(), 12);
    assert_eq!(t.printed_lines("MPI_SEND").len(), 6);
    assert_eq!(t.printed_lines("MPI_ISEND").len(), 6);
    assert_eq!(t.printed_lines("MPI_ISEND_COMPLETE").len(), 6);
    for location in [0, 1] {
        let sends = t.events(location, "MpiIsend");
        let completes = t.events(location, "MpiIsendComplete");
        let ids = |events: &[&support::pomp2::Ev], field: usize| -> Vec<String> {
            events.iter().map(|e| e.detail[field].clone()).collect()
        };
        assert_eq!(ids(&sends, 4), ids(&completes, 0), "each Isend completes");
    }
}

#[test]
fn persistent_requests_send_at_each_start() {
    let t = trace("persistent");
    t.assert_calls(&[
        ("MPI_Send_init", 1),
        ("MPI_Recv_init", 1),
        ("MPI_Startall", 3),
        ("MPI_Start", 2),
        ("MPI_Request_free", 2),
        ("MPI_Cancel", 1),
    ]);
    // Three Startall and one pair of Start: four messages each way, each start a request of
    // its own.
    assert_eq!(t.assert_messages_match(), 8);
    for location in [0, 1] {
        let sends = t.events(location, "MpiIsend");
        let posted = t.events(location, "MpiIrecvRequest");
        let received = t.events(location, "MpiIrecv");
        assert_eq!(sends.len(), 4);
        // Four receives, and the cancelled one.
        assert_eq!(posted.len(), 5);
        assert_eq!(received.len(), 4);
        let mut ids: Vec<&str> = sends
            .iter()
            .map(|e| e.detail[4].as_str())
            .chain(posted.iter().map(|e| e.detail[0].as_str()))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 9, "a new request id at every start");
        let cancelled = t.events(location, "MpiRequestCancelled");
        assert_eq!(cancelled.len(), 1);
        assert_eq!(cancelled[0].detail[0], posted[4].detail[0]);
    }
    assert_eq!(t.printed_lines("MPI_REQUEST_CANCELLED").len(), 2);
    assert_eq!(t.printed_lines("MPI_ISEND_COMPLETE").len(), 8);
}

/// The operations the non-blocking collectives of `mpi_families nbc` complete.
const NONBLOCKING: [&str; 16] = [
    "BARRIER",
    "BCAST",
    "ALLREDUCE",
    "REDUCE",
    "ALLGATHER",
    "ALLTOALL",
    "GATHER",
    "SCATTER",
    "GATHERV",
    "SCATTERV",
    "ALLGATHERV",
    "ALLTOALLV",
    "REDUCE_SCATTER_BLOCK",
    "REDUCE_SCATTER",
    "SCAN",
    "EXSCAN",
];

#[test]
fn non_blocking_collectives_are_requested_and_completed() {
    let t = trace("nbc");
    let calls = t.job().mpi_calls();
    for rank in 0..2u64 {
        for name in [
            "MPI_Ibarrier",
            "MPI_Ibcast",
            "MPI_Iallreduce",
            "MPI_Ireduce",
            "MPI_Iallgather",
            "MPI_Ialltoall",
            "MPI_Igather",
            "MPI_Iscatter",
            "MPI_Igatherv",
            "MPI_Iscatterv",
            "MPI_Iallgatherv",
            "MPI_Ialltoallv",
            "MPI_Ireduce_scatter_block",
            "MPI_Ireduce_scatter",
            "MPI_Iscan",
            "MPI_Iexscan",
        ] {
            assert_eq!(calls[&rank].get(name), Some(&1), "rank {rank}: {name}");
        }
    }
    assert_eq!(t.view.region("MPI_Ibarrier").role, "BARRIER");
    assert_eq!(t.view.region("MPI_Ibcast").role, "COLL_ONE2ALL");
    assert_eq!(t.view.region("MPI_Igather").role, "COLL_ALL2ONE");
    assert_eq!(t.view.region("MPI_Iallreduce").role, "COLL_ALL2ALL");
    assert_eq!(t.view.region("MPI_Iscan").role, "COLL_OTHER");
    let world = *t
        .view
        .comms
        .iter()
        .find(|(_, c)| c.name == "MPI_COMM_WORLD")
        .unwrap()
        .0;
    for location in [0u64, 1] {
        let requests: Vec<String> = t
            .events(location, "NonBlockingCollectiveRequest")
            .iter()
            .map(|e| e.detail[0].clone())
            .collect();
        let completes = t.events(location, "NonBlockingCollectiveComplete");
        // Each request completes once, later; the operations in the order the program
        // started them (Igather/Iscatter may complete in either order).
        let mut completed: Vec<String> = completes.iter().map(|e| e.detail[5].clone()).collect();
        completed.sort_unstable();
        let mut started = requests.clone();
        started.sort_unstable();
        assert_eq!(completed, started, "location {location}");
        let by_request: BTreeMap<&str, &support::pomp2::Ev> = completes
            .iter()
            .map(|e| (e.detail[5].as_str(), *e))
            .collect();
        let ops: Vec<&str> = requests
            .iter()
            .map(|r| by_request[r.as_str()].detail[0].as_str())
            .collect();
        assert_eq!(ops, NONBLOCKING, "location {location}");
        for e in &completes {
            assert_eq!(e.detail[1], world.to_string());
        }
        // What each rank moved: the broadcast's root sent, the other received.
        let bcast = by_request[requests[1].as_str()];
        let (sent, received) = if location == 0 {
            ("4", "0")
        } else {
            ("0", "4")
        };
        assert_eq!(
            (bcast.detail[3].as_str(), bcast.detail[4].as_str()),
            (sent, received)
        );
        let allreduce = by_request[requests[2].as_str()];
        assert_eq!(allreduce.detail[2], u32::MAX.to_string(), "no root");
        assert_eq!(
            (allreduce.detail[3].as_str(), allreduce.detail[4].as_str()),
            ("4", "4")
        );
    }
    // otf2-print: as many of each, the same operations.
    let requested = t.printed_lines("NON_BLOCKING_COLLECTIVE_REQUEST");
    let completed = t.printed_lines("NON_BLOCKING_COLLECTIVE_COMPLETE");
    assert_eq!(requested.len(), 32);
    assert_eq!(completed.len(), 32);
    let mut printed_ops: Vec<&str> = completed
        .iter()
        .map(|l| {
            let rest = &l[l.find("Operation: ").unwrap() + 11..];
            &rest[..rest.find(',').unwrap()]
        })
        .collect();
    printed_ops.sort_unstable();
    let mut expected: Vec<&str> = NONBLOCKING.iter().chain(&NONBLOCKING).copied().collect();
    expected.sort_unstable();
    assert_eq!(printed_ops, expected);
    // The Test loops found requests still in flight now and then; every MpiRequestTest names
    // one that was requested on its location.
    for location in [0u64, 1] {
        let requested: Vec<String> = t
            .events(location, "NonBlockingCollectiveRequest")
            .iter()
            .map(|e| e.detail[0].clone())
            .collect();
        for test in t.events(location, "MpiRequestTest") {
            assert!(requested.contains(&test.detail[0]), "{test:?}");
        }
    }
}

#[test]
fn probes_and_matched_receives() {
    let t = trace("probe");
    let calls = t.job().mpi_calls();
    for rank in 0..2u64 {
        for name in ["MPI_Probe", "MPI_Mprobe", "MPI_Mrecv", "MPI_Imrecv"] {
            assert_eq!(calls[&rank].get(name), Some(&1), "rank {rank}: {name}");
        }
        for name in ["MPI_Iprobe", "MPI_Improbe"] {
            assert!(calls[&rank][name] >= 1, "rank {rank}: {name}");
        }
    }
    // Four Isends each way; received by Recv (after Probe and Iprobe), Mrecv and Imrecv.
    assert_eq!(t.assert_messages_match(), 8);
    for location in [0u64, 1] {
        assert_eq!(t.events(location, "MpiRecv").len(), 3);
        assert_eq!(t.events(location, "MpiIrecv").len(), 1);
    }
    assert_eq!(t.printed_lines("MPI_RECV").len(), 6);
    assert_eq!(t.printed_lines("MPI_IRECV").len(), 2);
}

#[test]
fn scans_reduce_scatters_sendrecv_replace_and_testsome() {
    let t = trace("scan");
    let expected = [
        ("SCAN", "4", "4"),
        ("EXSCAN", "4", "0"),
        ("REDUCE_SCATTER", "8", "4"),
        ("REDUCE_SCATTER_BLOCK", "8", "4"),
    ];
    for location in [0u64, 1] {
        let ends: Vec<(String, String, String)> = t
            .events(location, "MpiCollectiveEnd")
            .iter()
            .map(|e| {
                (
                    e.detail[0].clone(),
                    e.detail[3].clone(),
                    e.detail[4].clone(),
                )
            })
            .filter(|(op, _, _)| op != "REDUCE") // the program's own failure count
            .collect();
        let want: Vec<(String, String, String)> = expected
            .iter()
            .map(|(op, sent, received)| {
                // Rank 0 of an exclusive scan receives nothing; rank 1 does.
                let received = if *op == "EXSCAN" && location == 1 {
                    "4"
                } else {
                    received
                };
                (op.to_string(), sent.to_string(), received.to_string())
            })
            .collect();
        assert_eq!(ends, want, "location {location}");
    }
    assert_eq!(t.view.region("MPI_Scan").role, "COLL_OTHER");
    assert_eq!(t.view.region("MPI_Reduce_scatter").role, "COLL_ALL2ALL");
    // Sendrecv_replace's message, and the two Isends completed by Testsome, each way.
    assert_eq!(t.assert_messages_match(), 6);
    let calls = t.job().mpi_calls();
    for rank in 0..2u64 {
        assert_eq!(calls[&rank]["MPI_Sendrecv_replace"], 1);
        assert!(calls[&rank]["MPI_Testsome"] >= 1);
    }
    let printed_ends = t.printed_lines("MPI_COLLECTIVE_END");
    for op in ["SCAN", "EXSCAN", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK"] {
        let with_op = printed_ends
            .iter()
            .filter(|l| l.contains(&format!("Operation: {op},")))
            .count();
        assert_eq!(with_op, 2, "{op}");
    }
}

#[test]
fn created_communicators_and_an_intercommunicator() {
    let t = trace("comms");
    let comms = &t.view.comms;
    let named = |prefix: &str| -> Vec<&support::pomp2::Comm> {
        comms
            .values()
            .filter(|c| c.name.starts_with(prefix))
            .collect()
    };
    // Comm_create and Comm_create_group of the even ranks (rank 0 alone), the two sides of the
    // split, the merged intercommunicator: each one Comm for all its members.
    // (Named by the world rank that created them and its count.)
    let plain: BTreeMap<&str, &support::pomp2::Comm> = named("MPI communicator ")
        .into_iter()
        .map(|c| (c.name.as_str(), c))
        .collect();
    let members: Vec<(&str, &Vec<u64>)> = plain.iter().map(|(n, c)| (*n, &c.members)).collect();
    assert_eq!(
        members,
        [
            ("MPI communicator 0.0", &vec![0]),
            ("MPI communicator 0.1", &vec![0]),
            ("MPI communicator 0.2", &vec![0]),
            ("MPI communicator 0.3", &vec![0, 1]),
            ("MPI communicator 1.0", &vec![1]),
        ]
    );
    assert_eq!(plain["MPI communicator 0.3"].parent, None, "the merged one");
    // The intercommunicator, on each side a Comm of the other side's ranks.
    let sides = named("MPI intercommunicator ");
    let members: Vec<&Vec<u64>> = sides.iter().map(|c| &c.members).collect();
    assert_eq!(members.len(), 2);
    assert!(
        members.contains(&&vec![0]) && members.contains(&&vec![1]),
        "{sides:?}"
    );
    // Its message reaches the other side's rank in both readers.
    let (sends, receives) = t.job().messages();
    let across: Vec<(u64, u64, u64)> = sends.iter().map(|m| (m.0, m.1, m.3)).collect();
    assert_eq!(across, [(0, 1, 81), (1, 0, 81)]);
    let receives: Vec<(u64, u64, u64)> = receives.iter().map(|m| (m.0, m.1, m.3)).collect();
    assert_eq!(receives, across);
    let (sends, receives) = printed_messages(&t.printed);
    assert_eq!(sends, receives);
    assert_eq!(sends, [(0, 1, 81, 4), (1, 0, 81, 4)]);
    for name in [
        "MPI_Comm_create",
        "MPI_Comm_create_group",
        "MPI_Intercomm_create",
        "MPI_Intercomm_merge",
    ] {
        assert_eq!(t.view.region(name).role, "FUNCTION");
    }
}
