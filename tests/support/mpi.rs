//! MPI jobs in the tests: building `libpomptrace_mpi.so` and OPARI2-instrumented MPI programs
//! with `mpicc`, running them with Open MPI's `mpirun`, and checking what the reference reader
//! says about their messages and collectives.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use super::pomp2::{instrument, library_dir, Build, Link, View};
use super::{otf2_print, run};
use otf2::{ArchiveReader, LocalDef};

/// The MPI wrapper library that `cargo build` made next to libpomptrace (its build script
/// compiles it with mpicc whenever there is one: this machine has).
pub fn mpi_library() -> PathBuf {
    let library = library_dir().join("libpomptrace_mpi.so");
    assert!(
        library.is_file(),
        "{} is missing: the build script builds it where mpicc is found",
        library.display()
    );
    library
}

/// `c-tests/<name>` instrumented by opari2 and built by mpicc against the shared library
/// (with an init file); `link` says whether the MPI wrapper library is linked too.
pub fn build_instrumented(dir: &Path, name: &str, exe: &str, link: Link) -> PathBuf {
    let source = instrument(name, dir, &[]);
    Build {
        dir,
        compiler: "mpicc",
        init_file: true,
        link,
    }
    .executable(&[source], exe)
}

/// Runs `exe` as `ranks` ranks of `threads` OpenMP threads each, in `cwd`; `env` is exported
/// to every rank. Returns the output whatever the exit status.
pub fn mpirun(cwd: &Path, exe: &Path, ranks: u32, threads: u32, env: &[(&str, &str)]) -> Output {
    mpirun_with_args(cwd, exe, &[], ranks, threads, env)
}

/// `mpirun` of `exe ARGS...`.
pub fn mpirun_with_args(
    cwd: &Path,
    exe: &Path,
    args: &[&str],
    ranks: u32,
    threads: u32,
    env: &[(&str, &str)],
) -> Output {
    let mut cmd = Command::new("mpirun");
    cmd.args([
        "-np",
        &ranks.to_string(),
        "--oversubscribe",
        "--allow-run-as-root",
    ])
    .args(["-x", &format!("OMP_NUM_THREADS={threads}")])
    .current_dir(cwd)
    .env_remove("POMPTRACE_EXPERIMENT_DIRECTORY")
    .env_remove("LD_PRELOAD")
    .env_remove("POMPTRACE_ENABLE");
    for (k, v) in env {
        cmd.args(["-x", &format!("{k}={v}")]);
    }
    cmd.arg(exe).args(args);
    // Into files, not pipes: when a rank dies, Open MPI 4.1's mpirun may crash while tearing
    // the job down, and the other ranks, still writing their traces, would then die of SIGPIPE
    // on their next message.
    let (out_path, err_path) = (cwd.join("mpirun.stdout"), cwd.join("mpirun.stderr"));
    let file =
        |p: &Path| std::fs::File::create(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let status = cmd
        .stdin(Stdio::null())
        .stdout(file(&out_path))
        .stderr(file(&err_path))
        .status()
        .unwrap_or_else(|e| panic!("cannot run mpirun: {e}"));
    Output {
        status,
        stdout: std::fs::read(&out_path).unwrap_or_default(),
        stderr: std::fs::read(&err_path).unwrap_or_default(),
    }
}

/// `mpirun` that must succeed.
pub fn mpirun_ok(cwd: &Path, exe: &Path, ranks: u32, threads: u32, env: &[(&str, &str)]) -> Output {
    let out = mpirun(cwd, exe, ranks, threads, env);
    assert!(
        out.status.success(),
        "mpirun failed ({}):\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A message as one side saw it: (sending rank, receiving rank, comm, tag, length), ranks in
/// MPI_COMM_WORLD.
pub type MessageKey = (u64, u64, u32, u64, u64);

/// The MPI view of a trace: per location, its rank; per comm, its members' ranks.
pub struct Job<'a> {
    pub view: &'a View,
}

impl<'a> Job<'a> {
    /// The world rank of a location: the low 32 bits of its id.
    pub fn rank_of(location: u64) -> u64 {
        location & 0xffff_ffff
    }

    /// The world rank of rank `rank` of `comm`.
    pub fn world_rank(&self, comm: u32, rank: u64) -> u64 {
        let members = &self.view.comms[&comm].members;
        Self::rank_of(members[rank as usize])
    }

    /// Every message, as its sends and as its receives saw it (sorted).
    pub fn messages(&self) -> (Vec<MessageKey>, Vec<MessageKey>) {
        let mut sends = Vec::new();
        let mut receives = Vec::new();
        for (&location, events) in &self.view.events {
            let me = Self::rank_of(location);
            for e in events {
                let field = |i: usize| -> u64 { e.detail[i].parse().unwrap() };
                match e.kind.as_str() {
                    "MpiSend" | "MpiIsend" => {
                        let comm = field(1) as u32;
                        sends.push((
                            me,
                            self.world_rank(comm, field(0)),
                            comm,
                            field(2),
                            field(3),
                        ));
                    }
                    "MpiRecv" | "MpiIrecv" => {
                        let comm = field(1) as u32;
                        receives.push((
                            self.world_rank(comm, field(0)),
                            me,
                            comm,
                            field(2),
                            field(3),
                        ));
                    }
                    _ => {}
                }
            }
        }
        sends.sort();
        receives.sort();
        (sends, receives)
    }

    /// Per comm, per rank: the (operation, root) of every collective it completed, in order.
    pub fn collectives(&self) -> BTreeMap<u32, BTreeMap<u64, Vec<(String, String)>>> {
        let mut out: BTreeMap<u32, BTreeMap<u64, Vec<(String, String)>>> = BTreeMap::new();
        for (&location, events) in &self.view.events {
            for e in events.iter().filter(|e| e.kind == "MpiCollectiveEnd") {
                out.entry(e.detail[1].parse().unwrap())
                    .or_default()
                    .entry(Self::rank_of(location))
                    .or_default()
                    .push((e.detail[0].clone(), e.detail[2].clone()));
            }
        }
        out
    }

    /// Asserts that every send has its receive (same comm, tag and length, between the same
    /// ranks), that every collective was completed by every member of its comm in the same
    /// order, and that every MpiCollectiveBegin has its End. Returns the number of messages.
    pub fn assert_consistent(&self) -> usize {
        let (sends, receives) = self.messages();
        assert_eq!(sends, receives, "sends and receives do not match");
        for (comm, per_rank) in self.collectives() {
            let members: Vec<u64> = self.view.comms[&comm]
                .members
                .iter()
                .map(|&l| Self::rank_of(l))
                .collect();
            let ranks: Vec<u64> = per_rank.keys().copied().collect();
            let mut sorted_members = members.clone();
            sorted_members.sort();
            assert_eq!(
                ranks, sorted_members,
                "comm {comm}: not every member took part"
            );
            let first = per_rank.values().next().unwrap();
            for (rank, ops) in &per_rank {
                assert_eq!(ops, first, "comm {comm}: rank {rank} saw other collectives");
            }
        }
        for (location, events) in &self.view.events {
            let count = |k: &str| events.iter().filter(|e| e.kind == k).count();
            assert_eq!(
                count("MpiCollectiveBegin"),
                count("MpiCollectiveEnd"),
                "location {location}"
            );
        }
        sends.len()
    }

    /// How often each MPI region was entered on each rank (all its locations).
    pub fn mpi_calls(&self) -> BTreeMap<u64, BTreeMap<String, usize>> {
        let mut out: BTreeMap<u64, BTreeMap<String, usize>> = BTreeMap::new();
        for (&location, events) in &self.view.events {
            for e in events.iter().filter(|e| e.kind == "Enter") {
                if self.view.region(&e.detail[0]).paradigm == "MPI" {
                    *out.entry(Self::rank_of(location))
                        .or_default()
                        .entry(e.detail[0].clone())
                        .or_default() += 1;
                }
            }
        }
        out
    }
}

/// `pomptrace COMPILER ARGS...` in `dir`: a program built the way users build it.
pub fn build_with_wrapper(dir: &Path, compiler: &str, args: &[&str]) {
    run(Command::new(super::pomp2::pomptrace_command())
        .arg(compiler)
        .args(args)
        .current_dir(dir)
        .env_remove("POMPTRACE_NO_MPI")
        .env_remove("LD_PRELOAD"));
}

/// A message as otf2-print shows one side of it: (sending location, receiving location, tag,
/// length); the peer's location is what otf2-print resolved its rank to through the Comm.
pub type PrintedMessage = (u64, u64, u64, u64);

/// Every message in `otf2-print` output, as its sends and as its receives saw it (sorted).
pub fn printed_messages(printed: &str) -> (Vec<PrintedMessage>, Vec<PrintedMessage>) {
    let field = |line: &str, key: &str| -> u64 {
        let rest = &line[line.find(key).unwrap_or_else(|| panic!("{key} in {line}")) + key.len()..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().unwrap_or_else(|_| panic!("{key} in {line}"))
    };
    // `Receiver: 1 ("Master thread" <1>)`: the location id in angle brackets.
    let peer = |line: &str, key: &str| -> u64 {
        let rest = &line[line.find(key).unwrap() + key.len()..];
        let close = rest
            .find(">)")
            .unwrap_or_else(|| panic!("{key} location in {line}"));
        let open = rest[..close].rfind('<').unwrap();
        rest[open + 1..close].parse().unwrap()
    };
    let (mut sends, mut receives) = (Vec::new(), Vec::new());
    for line in printed.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(&kind) = words.first() else { continue };
        let is_send = kind == "MPI_SEND" || kind == "MPI_ISEND";
        let is_receive = kind == "MPI_RECV" || kind == "MPI_IRECV";
        if !is_send && !is_receive {
            continue;
        }
        let location: u64 = words[1].parse().unwrap();
        let (tag, length) = (field(line, "Tag: "), field(line, "Length: "));
        if is_send {
            sends.push((location, peer(line, "Receiver: "), tag, length));
        } else {
            receives.push((peer(line, "Sender: "), location, tag, length));
        }
    }
    sends.sort_unstable();
    receives.sort_unstable();
    (sends, receives)
}

/// What c-tests/mpi_jacobi.c traced with the MPI wrapper library shows, as `ranks` ranks of
/// `iterations` iterations: every MPI call as a region entered as often as it is called, every
/// halo message matched, the collectives in order on every rank, both readers agreeing, and
/// clock offsets against rank 0 at MPI_Init and MPI_Finalize on every location.
pub fn assert_jacobi_trace(view: &View, anchor: &Path, ranks: u32, iterations: usize) {
    let job = Job { view };
    // Every MPI call the program makes is a region, entered as often as it is called.
    let calls = job.mpi_calls();
    for r in 0..u64::from(ranks) {
        let expected: Vec<(&str, usize)> = vec![
            ("MPI_Allreduce", iterations),
            ("MPI_Barrier", 1),
            ("MPI_Bcast", 1),
            ("MPI_Finalize", 1),
            ("MPI_Init_thread", 1),
            ("MPI_Irecv", 2 * iterations),
            ("MPI_Isend", 2 * iterations),
            ("MPI_Reduce", 1),
            ("MPI_Waitall", iterations),
        ];
        let got: Vec<(&str, usize)> = calls[&r].iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(got, expected, "rank {r}");
    }
    for name in ["MPI_Isend", "MPI_Irecv", "MPI_Waitall"] {
        assert_eq!(view.region(name).role, "POINT2POINT");
    }
    assert_eq!(view.region("MPI_Allreduce").role, "COLL_ALL2ALL");
    assert_eq!(view.region("MPI_Bcast").role, "COLL_ONE2ALL");
    assert_eq!(view.region("MPI_Reduce").role, "COLL_ALL2ONE");
    assert_eq!(view.region("MPI_Barrier").role, "BARRIER");

    // Every halo message matched (ranks to PROC_NULL send nothing): 2 per inner boundary
    // and iteration, 512 bytes (64 doubles) each.
    let messages = job.assert_consistent();
    assert_eq!(messages, 2 * (ranks as usize - 1) * iterations);
    let (sends, _) = job.messages();
    assert!(sends.iter().all(|m| m.4 == 64 * 8), "{sends:?}");
    // Collectives on MPI_COMM_WORLD: Bcast from 0, Allreduce per iteration, Reduce to 0,
    // Barrier, in that order on every rank.
    let world = *view
        .comms
        .iter()
        .find(|(_, c)| c.name == "MPI_COMM_WORLD")
        .unwrap()
        .0;
    let collectives = job.collectives();
    let on_rank_0 = &collectives[&world][&0];
    let mut expected = vec![("BCAST".to_string(), "0".to_string())];
    expected.extend((0..iterations).map(|_| ("ALLREDUCE".into(), u32::MAX.to_string())));
    expected.push(("REDUCE".into(), "0".into()));
    expected.push(("BARRIER".into(), u32::MAX.to_string()));
    assert_eq!(on_rank_0, &expected);

    // The other reference reader counts the same messages.
    let printed = otf2_print(&[], anchor, &[]);
    let lines = |kind: &str| printed.lines().filter(|l| l.starts_with(kind)).count();
    assert_eq!(lines("MPI_ISEND "), messages);
    assert_eq!(lines("MPI_IRECV "), messages);
    assert_eq!(lines("MPI_ISEND_COMPLETE "), messages);
    assert_eq!(
        lines("MPI_COLLECTIVE_END "),
        ranks as usize * (iterations + 3)
    );

    // Clock offsets against rank 0, measured at MPI_Init and MPI_Finalize, hold for every
    // location of a rank; rank 0's are zero.
    let reader = ArchiveReader::open(anchor).unwrap();
    for location in view.locations.keys() {
        let offsets: Vec<(u64, i64, f64)> = reader
            .local_defs(*location)
            .unwrap()
            .into_iter()
            .filter_map(|d| match d {
                LocalDef::ClockOffset {
                    time,
                    offset,
                    standard_deviation,
                } => Some((time, offset, standard_deviation)),
                _ => None,
            })
            .collect();
        assert_eq!(offsets.len(), 2, "location {location}: {offsets:?}");
        assert!(offsets[0].0 < offsets[1].0);
        if Job::rank_of(*location) == 0 {
            assert!(offsets.iter().all(|o| o.1 == 0), "{offsets:?}");
        } else {
            // Ranks on one node share CLOCK_MONOTONIC, so rank 0's time, read between the
            // ping's send and the pong's arrival, is within half the round trip (the recorded
            // deviation) of their midpoint: the measured offset is that close to the true 0.
            assert!(
                offsets
                    .iter()
                    .all(|o| o.1.unsigned_abs() as f64 <= o.2 + 1.0),
                "{offsets:?}"
            );
        }
    }
}
