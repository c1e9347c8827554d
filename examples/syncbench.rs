//! Cost of recording per OpenMP construct and per POMP2 event, in the spirit of the EPCC
//! syncbench.
//!
//! Builds the library, then `examples/syncbench/syncbench.c` plain (`cc -O2 -fopenmp`) and
//! instrumented as README.md describes. At each thread count (`OMP_NUM_THREADS`) it runs four
//! configurations side by side, construct by construct and interleaved in rounds: *plain*, the
//! instrumented build with `POMPTRACE_ENABLE=0` (*off*: what OPARI2's inserted calls and
//! barriers cost), recording (*on*) and the instrumented build against the *floor library*
//! (below). All runs of one thread count time the same delay and,
//! per construct, the same inner count. The trace goes to the temp directory's file system, as
//! a user's would (with `--traces-in-memory` to `/dev/shm`), and is deleted after each run.
//!
//! *added* = on − off is the cost of recording alone: the median over the rounds of each
//! round's on − off, with a robust standard error (±, from the median absolute deviation). A
//! round runs off and on back to back (in alternating order), so a change in the machine's
//! speed that lasts seconds (a shared VM's host moves between fast and slow periods) falls on
//! both sides of one difference and the median leaves out the rounds it splits. The events
//! per construct are counted in traces, not taken from the program's table: each construct is
//! run recording with `--outer 1 --inner A` and `--inner 2A`, and the difference in the
//! Location definitions' event counts, divided by A, is the count per construct on the
//! critical path: the master's location for the constructs every thread executes, all
//! locations together for those the team shares, and the team's mean for `single` (whose
//! executor changes from instance to instance, so the master's share is not stable). The
//! table's number is printed beside it and a
//! difference flagged. *ns/event* = added / events, and *÷ tsc* divides it by the cost of a bare
//! TSC read timed in the same runs. The last lines are, per thread count,
//! `syncbench T threads: worst ns/event ÷ tsc = R (construct)` and the same from the best
//! repetitions (*best* columns: each round's fastest repetition of off and of on, the cost when
//! the machine runs at its best, as `hotpath_bench` keeps its best round), and for T > 1
//! `syncbench T threads: worst ns/event against 1 thread = Fx (construct)`: how much more an
//! event costs with T threads than with one (the writer thread and the threads' interference),
//! and `syncbench T threads: the writer's threads used the CPU for P% of the recording runs'
//! time`, summed from the library's `POMPTRACE_VERBOSE=2` line of each timed recording run: the
//! share of a core the writer and its buffer preparation took from the program.
//!
//! Each round also runs the recording build once with `--paired`: recording switched on and
//! off (`POMP2_On` / `POMP2_Off`) from one repetition to the next inside one process, in pairs.
//! Its *paired* figure, the median over the rounds of each run's mean (on − off) per pair, is
//! free of what differs from one process to the next (on a shared VM, run-to-run differences
//! of the same binary exceed the cost being measured). Recording off keeps the team structure of
//! parallel regions, so it is divided by the events recording off leaves out: *events* less
//! *off events*, the events per construct counted in traces recorded with `--recording-off`.
//! `syncbench T threads: worst paired ns/event ÷ tsc = R (construct)` ends each thread count.
//!
//! Each round runs the constructs that have a floor variant (parallel, barrier, for, critical,
//! lock, atomic) once more with `--floor`: the same construct with a bare TSC read and a record
//! of our size stored at each place we record, against the construct alone, in one process
//! with recording off; into memory faulted in before (*floor*) and into memory touched for the
//! first time (*fresh floor*, what any tracer pays for its trace's bytes). The second table
//! sets the cost of recording beside them, and at T > 1 each of the three over its 1-thread
//! figure (*÷ 1 thread*): how much of recording's growth with the threads a tracer that only
//! stamps and stores has too.
//!
//! The *floor library* (`syncbench/floor_library.c`, built as a `libpomptrace.so` of its own
//! that `LD_LIBRARY_PATH` puts before the binary's runpath) answers the same POMP2 calls at the
//! same call sites by reading the TSC and storing the records pomptrace writes for each, at
//! their sizes, into a buffer of the thread's own that stays in the core's cache, and does
//! nothing else: a lower bound for any tracer that time-stamps these calls, for every
//! construct and at every thread count, with the program's own synchronisation around the
//! stamps. The third table sets recording beside it per event written (floor library − off),
//! what recording costs *beyond* it (on − floor library) and, at T > 1, how much each grew
//! from 1 thread. Its lines:
//! `the floor library's highest ns/event ÷ tsc`, `worst ns/event beyond the floor library ÷
//! tsc`, and at T > 1 `recording's largest growth from 1 thread = +G ns/event (construct);
//! there the floor library's: +F, beyond it: +B` and `worst ns/event beyond the floor library
//! against 1 thread = Rx (construct)`.
//!
//! Run: `cargo run --release --example syncbench [-- --quick] [--threads 1,2] [--outer 100]
//! [--constructs barrier,parallel] [--traces-in-memory] [--warm-up MS] [--floor-clock
//! tsc|counter] [--load N]` (thread counts by
//! default: 1, 2 and nproc; every construct). Every timed process runs its construct for
//! `--warm-up MS` (50 by default) before its repetitions: they time the steady state of a
//! longer run, in which a thread's chunks stream out and their buffers are filled again, not
//! the page faults of its first, fresh ones (a timed process records only a few MB per
//! thread; `--warm-up 0` times those too, and the *fresh floor* column measures them).
//! `--outer` above 100 makes more rounds of 4 repetitions (up to 250), for a smaller ± on a
//! noisy row. `--floor-clock counter` builds the floor library with a counter of each thread's
//! own in place of the TSC: the same calls and stores without the clock reads, so that its
//! columns tell how much of the floor, and of its growth with the threads, is reading the clock.
//! (about 9 minutes on 2 idle cores; `--quick`: 20 repetitions instead of 100, about 2 minutes).
//! `--load N` runs N busy processes (pinned to nothing) for the whole measurement: the figures
//! of a node whose cores are all taken.
//! `--against LIBDIR` compares with another build's library (a `target/release` of an older
//! commit): each round also runs the recording build against it (`LD_LIBRARY_PATH`), next to
//! this build's recording and on alternating sides, and a last table gives per construct this
//! build's on − the other's, the median over the rounds per event ± its robust standard error,
//! with the line `this library − the --against library, largest difference = D ± E ns/event
//! (construct)`. Paired by round, the comparison leaves out most of what a shared VM's changes
//! of speed put between two separate runs.

#[path = "common/library_dir.rs"]
mod library_dir;
#[path = "common/load.rs"]
mod load;
#[path = "common/opari2_build.rs"]
mod opari2_build;
#[path = "common/scratch.rs"]
mod scratch;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use otf2::{ArchiveReader, ChunkFile, GlobalDef};

const USAGE: &str = "usage: syncbench [--quick] [--threads 1,2,4] [--outer N] \
     [--constructs barrier,parallel] [--traces-in-memory] [--warm-up MS] \
     [--floor-clock tsc|counter] [--load N] [--against LIBDIR]";

/// The constructs whose instances the team shares (each thread runs a part of them): their
/// events are counted over all locations. Every thread executes each instance of the others,
/// whose critical path is the master's location.
const SHARED_CONSTRUCTS: &[&str] = &["critical", "lock", "atomic", "ordered", "task"];
/// Constructs every thread passes but one thread executes, a different one from instance to
/// instance (single: 6 events on the executor, 4 on the others): the master's share is not
/// stable from run to run, so they count the team's mean, all locations' events over the
/// threads (at most the executor's count: per event, this errs towards a higher cost).
const EXECUTOR_VARIES: &[&str] = &["single"];

/// Milliseconds each timed process runs its construct before timing it (`--warm-up`): long
/// enough for every thread to fill its first buffers (2–3 MiB) at every construct, so that the
/// repetitions time the steady state of a longer run, where chunks stream out and buffers are
/// filled again, not the page faults of a thread's first, fresh ones.
const DEFAULT_WARM_UP_MS: f64 = 50.0;

/// Inner count of the shorter trace run that counts events (the longer one runs twice as many).
const COUNT_INNER: u32 = 1000;

fn usage(problem: &str) -> ! {
    if !problem.is_empty() {
        eprintln!("syncbench: {problem}");
    }
    eprintln!("{USAGE}");
    std::process::exit(2)
}

/// The configurations timed side by side.
#[derive(Clone, Copy, PartialEq)]
enum Config {
    Plain,
    Off,
    On,
    /// The instrumented build against the floor library (`syncbench/floor_library.c`): the
    /// same POMP2 calls time-stamped and stored, nothing else.
    FloorLibrary,
    /// The instrumented build, recording, switching within the run: `--paired` (recording on
    /// and off between repetitions) or `--floor` (recording off, the construct and its floor
    /// variant).
    Paired,
    /// The instrumented build, recording, against another build's library (`--against`).
    Against,
}

const CONFIGS: [Config; 5] = [
    Config::Plain,
    Config::Off,
    Config::On,
    Config::FloorLibrary,
    Config::Against,
];
/// Indices into `CONFIGS`.
const OFF: usize = 1;
const ON: usize = 2;
const FLOOR_LIBRARY: usize = 3;
const AGAINST: usize = 4;

/// One figure of each configuration per round (indexed like `CONFIGS`; `AGAINST` stays empty
/// without `--against`).
type PerConfig = [Vec<f64>; 5];

/// One `construct=` line of the C program.
struct Measured {
    /// µs per construct, mean over the repetitions.
    mean_us: f64,
    /// µs per construct of the fastest repetition.
    min_us: f64,
    /// Constructs per repetition.
    inner: u32,
    /// `--paired` runs: the mean over the pairs of on − off, µs per construct.
    paired_us: Option<f64>,
    /// `--floor` runs of a construct with a floor variant: the mean over the pairs of floor
    /// variant − construct, µs per construct, into (mapped, fresh) memory.
    floor_us: Option<(f64, f64)>,
}

/// What one run of the C program printed.
struct RunOutput {
    tsc_ns: f64,
    delay: u32,
    measured: Vec<Measured>,
    /// Recording runs: (the run's recording time, the writer threads' CPU time in it), in ms,
    /// from the library's `POMPTRACE_VERBOSE=2` line.
    writer_ms: Option<(f64, f64)>,
}

/// The programs and where their traces go.
struct Bench<'a> {
    plain: &'a Path,
    instrumented: &'a Path,
    /// The directory of the floor library's `libpomptrace.so`.
    floor_library: &'a Path,
    /// `--against`: the directory of another build's `libpomptrace.so`.
    against: Option<&'a Path>,
    traces: &'a Path,
}

impl Bench<'_> {
    /// Runs one configuration on `threads` threads with `args`; a trace, if any, goes to
    /// `trace` (relative to the trace root).
    fn run(&self, config: Config, threads: usize, args: &[String], trace: &str) -> RunOutput {
        let exe = if config == Config::Plain {
            self.plain
        } else {
            self.instrumented
        };
        let trace = self.traces.join(trace);
        let mut cmd = Command::new(exe);
        cmd.args(args)
            .env("OMP_NUM_THREADS", threads.to_string())
            .env("POMPTRACE_EXPERIMENT_DIRECTORY", &trace);
        if config == Config::FloorLibrary {
            // Searched before the program's runpath: the floor library stands in for ours.
            cmd.env("LD_LIBRARY_PATH", self.floor_library);
        } else if let (Config::Against, Some(dir)) = (config, self.against) {
            cmd.env("LD_LIBRARY_PATH", dir);
        } else {
            // cargo run's LD_LIBRARY_PATH may name an older copy in target/<profile>: the
            // program must load the library it was linked with (its runpath).
            cmd.env_remove("LD_LIBRARY_PATH");
        }
        match config {
            Config::Off => {
                cmd.env("POMPTRACE_ENABLE", "0");
            }
            Config::On => {
                cmd.env("POMPTRACE_VERBOSE", "2");
            }
            // Another build may word its closing line differently: none is read from it.
            Config::Against => {
                cmd.env("POMPTRACE_VERBOSE", "0");
            }
            Config::Plain | Config::FloorLibrary | Config::Paired => {}
        }
        let out = cmd.output().expect("run syncbench");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{} {args:?} failed ({}):\n{stdout}{}",
            exe.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        if config == Config::FloorLibrary {
            // pomptrace makes the experiment directory at its start; the floor library never.
            assert!(
                !trace.exists(),
                "{} did not load the floor library from {}: it wrote {}",
                exe.display(),
                self.floor_library.display(),
                trace.display()
            );
        }
        let mut output = parse(&stdout);
        if config == Config::On {
            output.writer_ms = Some(writer_cpu(&String::from_utf8_lossy(&out.stderr)));
        }
        output
    }

    /// Events written per construct, from two recorded runs of `construct` alone (with
    /// `extra` arguments: `--recording-off` counts the events recording off keeps).
    fn events_per_construct(
        &self,
        construct: &str,
        threads: usize,
        delay: u32,
        extra: &[&str],
    ) -> f64 {
        let mut counts = Vec::new();
        for inner in [COUNT_INNER, 2 * COUNT_INNER] {
            let mut args: Vec<String> = [
                "--only",
                construct,
                "--outer",
                "1",
                "--inner",
                &inner.to_string(),
                "--delay",
                &delay.to_string(),
            ]
            .map(String::from)
            .to_vec();
            args.extend(extra.iter().map(|a| a.to_string()));
            let trace = format!("count-{construct}-{inner}");
            let out = self.run(Config::On, threads, &args, &trace);
            let actual_inner = out.measured[0].inner;
            let dir = self.traces.join(&trace);
            let events = events_by_location(&dir.join("traces.otf2"));
            let _ = std::fs::remove_dir_all(&dir);
            let counted = if SHARED_CONSTRUCTS.contains(&construct) {
                events.values().sum()
            } else if EXECUTOR_VARIES.contains(&construct) {
                events.values().sum::<u64>() / threads as u64
            } else {
                *events
                    .get(&0)
                    .unwrap_or_else(|| panic!("no location 0 in the {construct} trace"))
            };
            counts.push((f64::from(actual_inner), counted as f64));
        }
        (counts[1].1 - counts[0].1) / (counts[1].0 - counts[0].0)
    }
}

/// Each location's number of events, from the trace's global definitions.
fn events_by_location(anchor: &Path) -> BTreeMap<u64, u64> {
    let archive = ArchiveReader::open(anchor).unwrap_or_else(|e| panic!("{e}"));
    archive
        .global_defs()
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .filter_map(|def| match def {
            GlobalDef::Location {
                id,
                number_of_events,
                ..
            } => Some((id, number_of_events)),
            _ => None,
        })
        .collect()
}

fn parse(text: &str) -> RunOutput {
    let field = |line: &str, key: &str| -> String {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .unwrap_or_else(|| panic!("no {key} in `{line}`"))
            .to_string()
    };
    let number = |line: &str, key: &str| -> f64 {
        field(line, key)
            .parse()
            .unwrap_or_else(|_| panic!("bad {key} in `{line}`"))
    };
    let header = text
        .lines()
        .find(|l| l.starts_with("tsc_ns="))
        .unwrap_or_else(|| panic!("no tsc_ns= line in:\n{text}"));
    assert!(
        text.contains("\nconstruct="),
        "no construct= line in:\n{text}"
    );
    RunOutput {
        tsc_ns: number(header, "tsc_ns="),
        delay: number(header, "delay=") as u32,
        measured: text
            .lines()
            .filter(|line| line.starts_with("construct="))
            .map(|line| Measured {
                mean_us: number(line, "us="),
                min_us: number(line, "min_us="),
                inner: number(line, "inner=") as u32,
                paired_us: line
                    .contains(" paired_us=")
                    .then(|| number(line, "paired_us=")),
                floor_us: line
                    .contains(" floor_us=")
                    .then(|| (number(line, "floor_us="), number(line, "fresh_floor_us="))),
            })
            .collect(),
        writer_ms: None,
    }
}

/// (recording ms, writer threads' CPU ms) from the library's cost line: `pomptrace: recording
/// took X ms; the writer's threads used the CPU for Y ms (…)`.
fn writer_cpu(stderr: &str) -> (f64, f64) {
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("pomptrace: recording took "))
        .unwrap_or_else(|| panic!("no cost line (POMPTRACE_VERBOSE=2) in:\n{stderr}"));
    let ms_after = |key: &str| -> f64 {
        line.split_once(key)
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no `{key}` figure in `{line}`"))
    };
    let recording = line
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no recording time in `{line}`"));
    (recording, ms_after("used the CPU for "))
}

/// The arguments of a timed run of `construct`: the first run finds the delay and the inner
/// count, the others reuse them (`delay`, `inner`); `warm_up`: ms of the construct before the
/// timed repetitions.
fn timed_args(
    construct: &str,
    outer: u32,
    delay: Option<u32>,
    inner: Option<u32>,
    warm_up: Option<f64>,
) -> Vec<String> {
    let mut args = vec![
        "--only".to_string(),
        construct.to_string(),
        "--outer".into(),
        outer.to_string(),
    ];
    if let Some(ms) = warm_up {
        args.extend(["--warm-up".into(), ms.to_string()]);
    }
    if let Some(d) = delay {
        args.extend(["--delay".into(), d.to_string()]);
    }
    if let Some(i) = inner {
        args.extend(["--inner".into(), i.to_string()]);
    }
    args
}

/// What the floor library's time stamps come from (`--floor-clock`).
#[derive(Clone, Copy, PartialEq)]
enum FloorClock {
    Tsc,
    /// A counter of each thread's own: the floor without its clock reads.
    Counter,
}

/// Builds `syncbench/floor_library.c` as a `libpomptrace.so` of its own in a directory under
/// `work`, and returns that directory.
fn build_floor_library(work: &Path, clock: FloorClock) -> PathBuf {
    let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/syncbench");
    let dir = work.join("floor-library");
    std::fs::create_dir_all(&dir).expect("create the floor library's directory");
    opari2_build::run_tool(
        Command::new("cc")
            // Initial-exec TLS, as pomptrace's thread pointer: no __tls_get_addr per call.
            .args([
                "-O2",
                "-fPIC",
                "-shared",
                "-fopenmp",
                "-ftls-model=initial-exec",
            ])
            .args((clock == FloorClock::Counter).then_some("-DFLOOR_LIBRARY_COUNTER_CLOCK"))
            .arg("-I")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("include"))
            .arg(sources.join("floor_library.c"))
            .arg("-o")
            .arg(dir.join("libpomptrace.so")),
    );
    dir
}

/// A construct of the program, as `--list` prints it.
struct Listed {
    name: String,
    /// The events its table expects.
    events: u32,
    /// It has a floor variant (`--floor`).
    floor: bool,
}

/// The constructs of the program in its order.
fn constructs(plain: &Path) -> Vec<Listed> {
    let out = Command::new(plain)
        .arg("--list")
        .output()
        .expect("run syncbench --list");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("construct=")?;
            let (name, rest) = rest.split_once(" events=")?;
            let (events, floor) = rest.split_once(" floor=")?;
            Some(Listed {
                name: name.to_string(),
                events: events.parse().ok()?,
                floor: floor.trim() == "1",
            })
        })
        .collect()
}

/// One line of the table: a construct at one thread count.
struct Row {
    construct: String,
    threads: usize,
    /// Per configuration (indexed like `CONFIGS`), each round's mean over its repetitions, µs.
    round_means: PerConfig,
    /// The same, each round's fastest repetition.
    round_bests: PerConfig,
    /// Each round's `--paired` run: mean on − off per pair, µs per construct.
    round_paired: Vec<f64>,
    /// Constructs with a floor variant: each round's `--floor` run, mean floor variant −
    /// construct per pair into (mapped, fresh) memory, µs per construct.
    round_floor: Option<Vec<(f64, f64)>>,
    events: f64,
    /// Events per construct that recording off still writes.
    events_off: f64,
    table_events: u32,
    tsc_ns: f64,
}

fn machine_line() -> String {
    let nproc = std::thread::available_parallelism().map_or(1, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, model)| format!(" ({})", model.trim()))
        })
        .unwrap_or_default();
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(String::from))
        .map_or(String::new(), |l| format!(", load average {l} at start"));
    format!("nproc={nproc}{model}{load}")
}

fn main() {
    load::spin_if_asked();
    let mut quick = false;
    // 1, 2 and every core: the last is the case where the program leaves no core idle.
    let nproc = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut threads: Vec<usize> = vec![1, 2, nproc];
    threads.sort_unstable();
    threads.dedup();
    let mut outer: Option<u32> = None;
    let mut only: Option<Vec<String>> = None;
    let mut traces_in_memory = false;
    let mut warm_up: Option<f64> = Some(DEFAULT_WARM_UP_MS);
    let mut floor_clock = FloorClock::Tsc;
    let mut against: Option<PathBuf> = None;
    let mut all_args: Vec<String> = std::env::args().skip(1).collect();
    let busy = load::take_load_option(&mut all_args);
    let mut args = all_args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => quick = true,
            "--traces-in-memory" => traces_in_memory = true,
            "--warm-up" => {
                let ms = args.next().unwrap_or_else(|| usage(""));
                warm_up = match ms.parse() {
                    Ok(0.0) => None,
                    Ok(ms) if ms > 0.0 => Some(ms),
                    _ => usage(&format!("bad warm-up `{ms}` (milliseconds)")),
                };
            }
            "--threads" => {
                let list = args.next().unwrap_or_else(|| usage(""));
                threads = list
                    .split(',')
                    .map(|t| match t.trim().parse() {
                        Ok(n) if n > 0 => n,
                        _ => usage(&format!("bad thread count `{t}`")),
                    })
                    .collect();
            }
            "--outer" => {
                let n = args.next().unwrap_or_else(|| usage(""));
                outer = match n.parse() {
                    Ok(n) if n > 1 => Some(n),
                    _ => usage(&format!("bad repetition count `{n}`")),
                };
            }
            "--floor-clock" => {
                floor_clock = match args.next().as_deref() {
                    Some("tsc") => FloorClock::Tsc,
                    Some("counter") => FloorClock::Counter,
                    other => usage(&format!(
                        "bad floor clock `{}` (tsc or counter)",
                        other.unwrap_or("")
                    )),
                };
            }
            "--against" => {
                let dir = PathBuf::from(args.next().unwrap_or_else(|| usage("")));
                if !dir.join("libpomptrace.so").is_file() {
                    usage(&format!("no libpomptrace.so in `{}`", dir.display()));
                }
                against = Some(dir);
            }
            "--constructs" => {
                let list = args.next().unwrap_or_else(|| usage(""));
                only = Some(list.split(',').map(|c| c.trim().to_string()).collect());
            }
            _ => usage(&format!("unknown argument `{arg}`")),
        }
    }
    // Repetitions per configuration, split into rounds so that a change in the machine's load
    // falls on all three configurations alike.
    let total = outer.unwrap_or(if quick { 20 } else { 100 });
    // Rounds of about 4 repetitions (at least 3, at most 250), for the median of the rounds'
    // differences: 25 and 5 by default, more with a larger --outer (a small ± on a noisy row).
    let rounds = (total / 4).clamp(3, 250).min(total);
    let per_round = total.div_ceil(rounds);

    let lib = library_dir::fresh_library_dir();
    let scratch = scratch::Scratch::new("syncbench", traces_in_memory);
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/syncbench/syncbench.c");
    let builds = opari2_build::build_plain_and_instrumented(&source, &lib, &scratch.work);
    let floor_library = build_floor_library(&scratch.work, floor_clock);
    let bench = Bench {
        plain: &builds.plain,
        instrumented: &builds.instrumented,
        floor_library: &floor_library,
        against: against.as_deref(),
        traces: &scratch.traces,
    };
    let mut constructs = constructs(&builds.plain);
    assert!(!constructs.is_empty(), "syncbench --list printed nothing");
    if let Some(only) = &only {
        if let Some(unknown) = only
            .iter()
            .find(|c| !constructs.iter().any(|k| k.name == **c))
        {
            let known: Vec<&str> = constructs.iter().map(|k| k.name.as_str()).collect();
            usage(&format!(
                "no construct `{unknown}` (there are {})",
                known.join(", ")
            ));
        }
        constructs.retain(|k| only.contains(&k.name));
    }
    println!(
        "syncbench: {}; {rounds} rounds x {per_round} repetitions per configuration",
        machine_line()
    );
    let _load = load::Load::start(busy);
    if busy > 0 {
        println!("syncbench: {busy} busy processes run throughout (--load)");
    }
    if floor_clock == FloorClock::Counter {
        println!(
            "syncbench: the floor library's time stamps come from a counter of each thread's own, \
             not the TSC (--floor-clock counter)"
        );
    }
    let direct = otf2::Directory::open(&scratch.traces)
        .is_ok_and(|d| ChunkFile::directory_takes_direct_writes(&d));
    println!(
        "syncbench: traces go to {} ({})",
        scratch.traces.display(),
        if direct {
            "a local disk: chunks stream out as they fill, straight to the device where no core is \
             idle"
        } else {
            "chunks stream out as they fill, through the page cache"
        }
    );
    match warm_up {
        Some(ms) => {
            println!(
                "syncbench: each timed process runs its construct for {ms} ms before timing it"
            )
        }
        None => println!("syncbench: no warm-up: the timed repetitions fill fresh buffers"),
    }

    let mut rows: Vec<Row> = Vec::new();
    let mut delay: Option<u32> = None;
    // Per thread count: (recording ms, writer threads' CPU ms) summed over the timed runs.
    let mut writer_share: Vec<(usize, (f64, f64))> = Vec::new();
    for &n in &threads {
        let started = Instant::now();
        let first = rows.len();
        let mut tsc_ns = f64::INFINITY;
        let mut inner: BTreeMap<String, u32> = BTreeMap::new();
        // Sums over the timed recording runs: (recording ms, writer CPU ms).
        let mut writer = (0.0, 0.0);
        for listed in &constructs {
            rows.push(Row {
                construct: listed.name.clone(),
                threads: n,
                round_means: Default::default(),
                round_bests: Default::default(),
                round_paired: Vec::new(),
                round_floor: listed.floor.then(Vec::new),
                events: 0.0,
                events_off: 0.0,
                table_events: listed.events,
                tsc_ns: 0.0,
            });
        }
        for round in 0..rounds {
            for row in &mut rows[first..] {
                // Alternate which of off and on (and off and the floor library) runs first, so
                // that a drift within a round does not always favour the same side.
                // The other build's recording runs next to this one's, on alternating sides.
                let order: &[usize] = match (round % 2 == 0, bench.against.is_some()) {
                    (true, false) => &[0, OFF, ON, FLOOR_LIBRARY],
                    (false, false) => &[0, FLOOR_LIBRARY, ON, OFF],
                    (true, true) => &[0, OFF, ON, AGAINST, FLOOR_LIBRARY],
                    (false, true) => &[0, FLOOR_LIBRARY, AGAINST, ON, OFF],
                };
                for &slot in order {
                    let config = CONFIGS[slot];
                    let inner_count = inner.get(&row.construct).copied();
                    let args = timed_args(&row.construct, per_round, delay, inner_count, warm_up);
                    let out = bench.run(config, n, &args, "timed");
                    let _ = std::fs::remove_dir_all(scratch.traces.join("timed"));
                    tsc_ns = tsc_ns.min(out.tsc_ns);
                    delay.get_or_insert(out.delay);
                    if let Some((recording, cpu)) = out.writer_ms {
                        writer = (writer.0 + recording, writer.1 + cpu);
                    }
                    let measured = &out.measured[0];
                    inner.entry(row.construct.clone()).or_insert(measured.inner);
                    row.round_means[slot].push(measured.mean_us);
                    row.round_bests[slot].push(measured.min_us);
                }
                // A run that switches within itself (`--paired`, `--floor`): as many pairs as
                // the others have repetitions.
                let inner_count = inner.get(&row.construct).copied();
                let pairs_run = |mode: &str| {
                    let mut args =
                        timed_args(&row.construct, 2 * per_round, delay, inner_count, warm_up);
                    args.push(mode.into());
                    let out = bench.run(Config::Paired, n, &args, "timed");
                    let _ = std::fs::remove_dir_all(scratch.traces.join("timed"));
                    out.measured.into_iter().next().expect("a construct= line")
                };
                let paired = pairs_run("--paired")
                    .paired_us
                    .expect("a --paired run prints paired_us=");
                // The floor run (recording off throughout).
                let floor = row.round_floor.is_some().then(|| {
                    pairs_run("--floor")
                        .floor_us
                        .expect("a --floor run of a construct with a floor prints floor_us=")
                });
                row.round_paired.push(paired);
                if let (Some(round_floor), Some(floor)) = (&mut row.round_floor, floor) {
                    round_floor.push(floor);
                }
            }
        }
        let timed = started.elapsed();
        writer_share.push((n, writer));
        for row in &mut rows[first..] {
            let delay = delay.unwrap_or(1);
            row.events = bench.events_per_construct(&row.construct, n, delay, &[]);
            row.events_off =
                bench.events_per_construct(&row.construct, n, delay, &["--recording-off"]);
            row.tsc_ns = tsc_ns;
        }
        eprintln!(
            "syncbench: {n} threads: timed in {:.1} s, events counted in {:.1} s",
            timed.as_secs_f64(),
            (started.elapsed() - timed).as_secs_f64()
        );
    }
    print_table(&rows);
    print_floor_table(&rows);
    print_floor_library_table(&rows, floor_clock);
    if let Some(dir) = &against {
        print_against_table(&rows, dir);
    }
    for &n in &threads {
        if let Some((ratio, row)) = worst(&rows, n, ns_per_event) {
            let noise = if is_noise(row) { "~" } else { "" };
            println!(
                "syncbench {n} threads: worst ns/event ÷ tsc = {ratio:.2}{noise} ({}; tsc {:.2} ns)",
                row.construct, row.tsc_ns
            );
        }
        if let Some((ratio, row)) = worst(&rows, n, best_ns_per_event) {
            println!(
                "syncbench {n} threads: worst best ns/event ÷ tsc = {ratio:.2} ({})",
                row.construct
            );
        }
        if let Some((ratio, row)) = worst(&rows, n, paired_ns_per_event) {
            let noise = if paired_is_noise(row) { "~" } else { "" };
            println!(
                "syncbench {n} threads: worst paired ns/event ÷ tsc = {ratio:.2}{noise} ({})",
                row.construct
            );
        }
        if let Some((ratio, row)) = worst_against_one_thread(&rows, n) {
            println!(
                "syncbench {n} threads: worst ns/event against 1 thread = {ratio:.2}x ({})",
                row.construct
            );
        }
        if let Some((ratio, row)) = worst(&rows, n, floor_library_ns_per_event) {
            println!(
                "syncbench {n} threads: the floor library's highest ns/event ÷ tsc = {ratio:.2} \
                 ({})",
                row.construct
            );
        }
        if let Some((ratio, row)) = worst(&rows, n, beyond_ns_per_event) {
            println!(
                "syncbench {n} threads: worst ns/event beyond the floor library ÷ tsc = \
                 {ratio:.2} ({})",
                row.construct
            );
        }
        if let Some((growth, row)) = largest_growth(&rows, n, ns_per_event) {
            let growth_of = |figure: fn(&Row) -> f64| {
                growth_from_one_thread(&rows, row, figure).unwrap_or(f64::NAN)
            };
            println!(
                "syncbench {n} threads: recording's largest growth from 1 thread = \
                 {growth:+.1} ns/event ({}); there the floor library's: {:+.1}, beyond it: \
                 {:+.1}",
                row.construct,
                growth_of(floor_library_ns_per_event),
                growth_of(beyond_ns_per_event),
            );
        }
        if let Some((ratio, row)) = worst_beyond_against_one_thread(&rows, n) {
            println!(
                "syncbench {n} threads: worst ns/event beyond the floor library against 1 \
                 thread = {ratio:.2}x ({})",
                row.construct
            );
        }
        if let Some((ratio, row)) = worst(&rows, n, fresh_floor_ns_per_event) {
            println!(
                "syncbench {n} threads: the floor's highest ÷ tsc = {ratio:.2} with fresh memory, \
                 {:.2} with mapped memory ({}: bare time stamps and stores at its events)",
                floor_ns_per_event(row, Memory::Mapped) / row.tsc_ns,
                row.construct
            );
        }
        if let Some((ratio, row)) = highest(&rows, n, |r| {
            paired_ns_per_event(r) / fresh_floor_ns_per_event(r)
        }) {
            println!(
                "syncbench {n} threads: worst paired ns/event ÷ the fresh-memory floor = \
                 {ratio:.2} ({})",
                row.construct
            );
        }
        if let Some((difference, row)) = highest(&rows, n, |r| this_minus_against(r).0) {
            let (_, error) = this_minus_against(row);
            println!(
                "syncbench {n} threads: this library − the --against library, largest \
                 difference = {difference:+.2} ± {error:.2} ns/event ({})",
                row.construct
            );
        }
        if let Some((_, (recording, cpu))) = writer_share.iter().find(|(t, _)| *t == n) {
            println!(
                "syncbench {n} threads: the writer's threads used the CPU for {:.2}% of the \
                 recording runs' time ({cpu:.1} of {recording:.0} ms)",
                100.0 * cpu / recording.max(1e-9)
            );
        }
    }
}

/// The construct whose `figure` grew most (in ns/event) from 1 thread to `threads` (> 1)
/// threads, and that growth.
fn largest_growth(rows: &[Row], threads: usize, figure: fn(&Row) -> f64) -> Option<(f64, &Row)> {
    if threads == 1 {
        return None;
    }
    highest(rows, threads, |r| {
        growth_from_one_thread(rows, r, figure).unwrap_or(f64::NAN)
    })
}

/// As `worst_against_one_thread`, for recording's cost beyond the floor library (rows within
/// noise of zero at either count left out).
fn worst_beyond_against_one_thread(rows: &[Row], threads: usize) -> Option<(f64, &Row)> {
    if threads == 1 {
        return None;
    }
    let clear = |r: &Row| !within_noise(beyond_floor_library(r)) && beyond_ns_per_event(r) > 0.0;
    rows.iter()
        .filter(|r| r.threads == threads && clear(r))
        .filter_map(|r| {
            let one = one_thread_row(rows, r).filter(|o| clear(o))?;
            Some((beyond_ns_per_event(r) / beyond_ns_per_event(one), r))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// The construct whose cost per event at `threads` (> 1) threads is the largest multiple of
/// its cost at one thread, and that multiple; rows within noise of zero at either count are
/// left out (their ratio means nothing).
fn worst_against_one_thread(rows: &[Row], threads: usize) -> Option<(f64, &Row)> {
    if threads == 1 {
        return None;
    }
    rows.iter()
        .filter(|r| r.threads == threads && !is_noise(r))
        .filter_map(|r| {
            let one = one_thread_row(rows, r).filter(|o| !is_noise(o))?;
            let base = ns_per_event(one);
            (base > 0.0).then(|| (ns_per_event(r) / base, r))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// The row of `row`'s construct at 1 thread.
fn one_thread_row<'a>(rows: &'a [Row], row: &Row) -> Option<&'a Row> {
    rows.iter()
        .find(|o| o.threads == 1 && o.construct == row.construct)
}

/// The row at `threads` threads with the highest `per_event(row)` ÷ TSC read, and that ratio.
fn worst(rows: &[Row], threads: usize, per_event: fn(&Row) -> f64) -> Option<(f64, &Row)> {
    highest(rows, threads, |r| per_event(r) / r.tsc_ns)
}

/// The row at `threads` threads with the highest `figure(row)`, and that figure (rows where
/// it is NaN, such as those without a floor, left out).
fn highest(rows: &[Row], threads: usize, figure: impl Fn(&Row) -> f64) -> Option<(f64, &Row)> {
    rows.iter()
        .filter(|r| r.threads == threads)
        .map(|r| (figure(r), r))
        .filter(|(value, _)| !value.is_nan())
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// On − off (median of the rounds' differences of means) with a robust standard error, µs per
/// construct.
fn added(row: &Row) -> (f64, f64) {
    median_with_error(&on_minus_off(&row.round_means))
}

/// Per round, on − off of one figure of each configuration (indexed like `CONFIGS`).
fn on_minus_off(per_config: &PerConfig) -> Vec<f64> {
    difference(per_config, ON, OFF)
}

/// Per round, configuration `a` − configuration `b` of one figure (slots of `CONFIGS`).
fn difference(per_config: &PerConfig, a: usize, b: usize) -> Vec<f64> {
    per_config[a]
        .iter()
        .zip(&per_config[b])
        .map(|(a, b)| a - b)
        .collect()
}

/// The same from each round's fastest repetitions, per event written, in ns: the cost when the
/// machine runs at its best (as `hotpath_bench` takes the best round).
fn best_ns_per_event(row: &Row) -> f64 {
    median(&on_minus_off(&row.round_bests)) * 1e3 / row.events
}

/// The median and its robust standard error.
fn median_with_error(values: &[f64]) -> (f64, f64) {
    let median = median(values);
    let deviations: Vec<f64> = values.iter().map(|d| (d - median).abs()).collect();
    // 1.4826 × MAD estimates the standard deviation of normal data; the median's standard
    // error is about 1.25 × σ / √n.
    let n = values.len().max(1) as f64;
    (median, 1.25 * 1.4826 * self::median(&deviations) / n.sqrt())
}

fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// Within two standard errors of zero: the difference is noise.
fn is_noise(row: &Row) -> bool {
    within_noise(added(row))
}

/// A median within two of its standard errors of zero.
fn within_noise((median, error): (f64, f64)) -> bool {
    median.abs() < 2.0 * error
}

/// Recording alone (on − off) per event written, in ns.
fn ns_per_event(row: &Row) -> f64 {
    added(row).0 * 1e3 / row.events
}

/// Events per construct that recording off leaves out: what the paired figure pays for.
fn events_left_out(row: &Row) -> f64 {
    row.events - row.events_off
}

/// The paired runs' on − off per event left out, in ns (NaN where recording off leaves out
/// nothing).
fn paired_ns_per_event(row: &Row) -> f64 {
    let events = events_left_out(row);
    if events < 0.5 {
        return f64::NAN;
    }
    median(&row.round_paired) * 1e3 / events
}

/// The paired figure is within two standard errors of zero.
fn paired_is_noise(row: &Row) -> bool {
    within_noise(median_with_error(&row.round_paired))
}

/// The floor library − off (the median of the rounds' differences) with its robust standard
/// error, µs per construct: time stamps and stores at pomptrace's calls, and nothing else.
fn floor_library_added(row: &Row) -> (f64, f64) {
    median_with_error(&difference(&row.round_means, FLOOR_LIBRARY, OFF))
}

/// Recording − the floor library (the median of the rounds' differences) with its robust
/// standard error, µs per construct: what pomptrace costs beyond stamping and storing.
fn beyond_floor_library(row: &Row) -> (f64, f64) {
    median_with_error(&difference(&row.round_means, ON, FLOOR_LIBRARY))
}

/// The floor library's cost per event written (the events recording writes), in ns.
fn floor_library_ns_per_event(row: &Row) -> f64 {
    floor_library_added(row).0 * 1e3 / row.events
}

/// Recording's cost per event beyond the floor library's, in ns.
fn beyond_ns_per_event(row: &Row) -> f64 {
    beyond_floor_library(row).0 * 1e3 / row.events
}

/// `figure(row)` − the same figure for its construct at 1 thread (None without that row).
fn growth_from_one_thread(rows: &[Row], row: &Row, figure: impl Fn(&Row) -> f64) -> Option<f64> {
    one_thread_row(rows, row).map(|one| figure(row) - figure(one))
}

/// `growth_from_one_thread` as a table cell (empty at 1 thread).
fn growth_cell(rows: &[Row], row: &Row, figure: impl Fn(&Row) -> f64) -> String {
    match growth_from_one_thread(rows, row, figure) {
        Some(growth) if row.threads > 1 => format!("{growth:+.1}"),
        _ => String::new(),
    }
}

/// Every construct: recording's cost per event beside the floor library's and what recording
/// costs beyond it, and at T > 1 how much each grew from 1 thread.
fn print_floor_library_table(rows: &[Row], clock: FloorClock) {
    println!();
    println!(
        "| construct | threads | ns/event | floor library ns/event | ± ns | ÷ tsc | beyond ns/event \
         | ± ns | ÷ tsc | growth from 1 thread: recording | floor library | beyond |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for row in rows {
        let per_event =
            |(median, error): (f64, f64)| (median * 1e3 / row.events, error * 1e3 / row.events);
        let (floor, floor_error) = per_event(floor_library_added(row));
        let (beyond, beyond_error) = per_event(beyond_floor_library(row));
        let [recording_growth, floor_growth, beyond_growth] = [
            ns_per_event as fn(&Row) -> f64,
            floor_library_ns_per_event,
            beyond_ns_per_event,
        ]
        .map(|figure| growth_cell(rows, row, figure));
        println!(
            "| {} | {} | {:.1} | {floor:.1} | {floor_error:.1} | {:.2} | {beyond:.1} \
             | {beyond_error:.1} | {:.2} | {recording_growth} | {floor_growth} | {beyond_growth} |",
            row.construct,
            row.threads,
            ns_per_event(row),
            floor / row.tsc_ns,
            beyond / row.tsc_ns,
        );
    }
    println!();
    let stamps = match clock {
        FloorClock::Tsc => "reads the TSC",
        FloorClock::Counter => {
            "counts up a counter of the thread's own in place of reading the TSC \
             (--floor-clock counter: the floor without its clock reads)"
        }
    };
    println!(
        "floor library: the same instrumented binary run against a POMP2 library of ours that \
         at every call {stamps} and stores the records pomptrace writes for it, at their \
         sizes, into a 256 KiB buffer of the thread's own (it stays in the core's cache), and \
         does nothing else (examples/syncbench/floor_library.c): floor library − off per event \
         recording writes, the median over the rounds ± its robust standard error; beyond: on \
         − floor library, what pomptrace costs beyond that floor; growth from 1 thread: the \
         figure at T threads − the same at 1 thread, ns/event (how much of recording's growth \
         with the threads any tracer that stamps and stores at the same calls has too)."
    );
}

/// Which memory a floor variant's records went to.
#[derive(Clone, Copy)]
enum Memory {
    /// One buffer used round and round, faulted in before.
    Mapped,
    /// Memory touched for the first time.
    Fresh,
}

/// The floor runs' figures of one kind of memory, µs per construct (empty without a floor).
fn round_floor(row: &Row, memory: Memory) -> Vec<f64> {
    row.round_floor
        .iter()
        .flatten()
        .map(|&(mapped, fresh)| match memory {
            Memory::Mapped => mapped,
            Memory::Fresh => fresh,
        })
        .collect()
}

/// The floor per event, in ns: the median over the rounds of floor variant − construct, over
/// the records the floor variant writes (the table's count on each thread). NaN without a
/// floor.
fn floor_ns_per_event(row: &Row, memory: Memory) -> f64 {
    median(&round_floor(row, memory)) * 1e3 / f64::from(row.table_events)
}

fn fresh_floor_ns_per_event(row: &Row) -> f64 {
    floor_ns_per_event(row, Memory::Fresh)
}

/// The constructs with a floor variant: recording's cost per event beside the floor's.
fn print_floor_table(rows: &[Row]) {
    if rows.iter().all(|r| r.round_floor.is_none()) {
        return;
    }
    println!();
    println!(
        "| construct | threads | ns/event | ÷ 1 thread | paired ns/event | floor ns/event | ± ns \
         | floor ÷ tsc | ÷ 1 thread | fresh floor ns/event | ± ns | fresh floor ÷ tsc \
         | ÷ 1 thread | paired ÷ floor | paired ÷ fresh floor |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for row in rows.iter().filter(|r| r.round_floor.is_some()) {
        let events = f64::from(row.table_events);
        let [(floor, floor_error), (fresh, fresh_error)] =
            [Memory::Mapped, Memory::Fresh].map(|memory| {
                let (median, error) = median_with_error(&round_floor(row, memory));
                (median * 1e3 / events, error * 1e3 / events)
            });
        let paired = paired_ns_per_event(row);
        let [recording_growth, floor_growth, fresh_growth] = [
            ns_per_event as fn(&Row) -> f64,
            |r| floor_ns_per_event(r, Memory::Mapped),
            fresh_floor_ns_per_event,
        ]
        .map(|figure| against_one_thread(rows, row, figure));
        println!(
            "| {} | {} | {:.1} | {recording_growth} | {paired:.1} | {floor:.1} | {floor_error:.1} \
             | {:.2} | {floor_growth} | {fresh:.1} | {fresh_error:.1} | {:.2} | {fresh_growth} \
             | {:.2} | {:.2} |",
            row.construct,
            row.threads,
            ns_per_event(row),
            floor / row.tsc_ns,
            fresh / row.tsc_ns,
            paired / floor,
            paired / fresh,
        );
    }
    println!();
    println!(
        "floor: the construct with a bare TSC read and a record of pomptrace's size stored at \
         each place pomptrace records (recording off), against the construct alone, in pairs in \
         one run: the median over the rounds, per record, ± its robust standard error; mapped: \
         into a buffer faulted in before, fresh: into memory touched for the first time (what \
         any tracer that keeps or writes its trace pays for its bytes); ÷ 1 thread: the figure \
         to its left over the same at 1 thread (how much of recording's growth with the threads \
         a tracer that only stamps and stores has too). parallel's floor region has one \
         explicit barrier more, with the stamps around it, and is timed against the same region \
         without the stamps."
    );
}

/// `figure(row)` over the same figure of `row`'s construct at 1 thread, as a table cell (empty
/// at 1 thread, without that row, or where its figure is not above zero: atomic's can be 0.0).
fn against_one_thread(rows: &[Row], row: &Row, figure: impl Fn(&Row) -> f64) -> String {
    let one = one_thread_row(rows, row).map(&figure);
    match one {
        Some(one) if row.threads > 1 && one > 0.0 => format!("{:.2}", figure(row) / one),
        _ => String::new(),
    }
}

fn print_table(rows: &[Row]) {
    println!();
    println!(
        "| construct | threads | plain µs | off µs | on µs | added µs | ± µs | events | table \
         | ns/event | ÷ tsc | best ns/event | best ÷ tsc | off events | paired µs | ± µs \
         | paired ns/event | paired ÷ tsc |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut order: Vec<&str> = Vec::new();
    for row in rows {
        if !order.contains(&row.construct.as_str()) {
            order.push(&row.construct);
        }
    }
    let (mut noisy, mut mismatched) = (0, 0);
    for construct in order {
        for row in rows.iter().filter(|r| r.construct == construct) {
            let [plain, off, on] = [0, OFF, ON].map(|slot| median(&row.round_means[slot]));
            let (added, error) = added(row);
            let noise = if is_noise(row) {
                noisy += 1;
                "~"
            } else {
                ""
            };
            let table = f64::from(row.table_events);
            let differs = if (row.events - table).abs() > 0.05 * table {
                mismatched += 1;
                " ≠"
            } else {
                ""
            };
            let per_event = ns_per_event(row);
            let best_per_event = best_ns_per_event(row);
            let (paired, paired_error) = median_with_error(&row.round_paired);
            let paired_noise = if within_noise((paired, paired_error)) {
                noisy += 1;
                "~"
            } else {
                ""
            };
            let paired_per_event = paired_ns_per_event(row);
            println!(
                "| {construct} | {} | {:.3} | {:.3} | {:.3} | {added:.3}{noise} | {error:.3} \
                 | {:.3}{differs} | {} | {per_event:.1}{noise} | {:.2}{noise} \
                 | {best_per_event:.1} | {:.2} | {:.3} | {paired:.3}{paired_noise} \
                 | {paired_error:.3} | {paired_per_event:.1}{paired_noise} \
                 | {:.2}{paired_noise} |",
                row.threads,
                plain,
                off,
                on,
                row.events,
                row.table_events,
                per_event / row.tsc_ns,
                best_per_event / row.tsc_ns,
                row.events_off,
                paired_per_event / row.tsc_ns,
            );
        }
    }
    println!();
    println!(
        "µs per construct: the median over the rounds of each round's mean over its repetitions, \
         minus the reference delay; added = on − off \
         (recording alone: the median of the rounds' on − off), ± its robust standard error; events: \
         written per construct, counted in \
         traces (critical path: the master's location, all locations for {}, the team's mean for \
         {}); table: the program's expected count; ÷ tsc: ns/event over one TSC read; best: the same from each \
         round's fastest repetition of off and of on; off events: written per construct with \
         recording off (POMP2_Off); paired: recording switched on and off between the \
         repetitions of one run, the median over the rounds of each run's mean on − off per \
         pair, ± its robust standard error, per event that recording off leaves out (events − \
         off events).",
        SHARED_CONSTRUCTS.join(", "),
        EXECUTOR_VARIES.join(", ")
    );
    if noisy > 0 {
        println!("~ marks {noisy} figure(s), added or paired, within two standard errors of zero.");
    }
    if mismatched > 0 {
        println!(
            "≠ marks {mismatched} row(s) whose counted events differ from the table by more than \
             5% (single at several threads: the team's mean, (6 + 4 × (threads − 1)) / threads)."
        );
    }
}

/// `--against`: this build's recording − the other build's, per event, ns: the median over the
/// rounds of their difference and its robust standard error (NaN without `--against`).
fn this_minus_against(row: &Row) -> (f64, f64) {
    if row.round_means[AGAINST].is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let (median, error) = median_with_error(&difference(&row.round_means, ON, AGAINST));
    (median * 1e3 / row.events, error * 1e3 / row.events)
}

fn print_against_table(rows: &[Row], against: &Path) {
    println!();
    println!("| construct | threads | against ns/event | this ns/event | this − against ns/event | ± ns |");
    println!("|---|---:|---:|---:|---:|---:|");
    for row in rows {
        let other = median(&difference(&row.round_means, AGAINST, OFF)) * 1e3 / row.events;
        let (difference, error) = this_minus_against(row);
        let noise = if within_noise((difference, error)) {
            "~"
        } else {
            ""
        };
        println!(
            "| {} | {} | {other:.1} | {:.1} | {difference:+.2}{noise} | {error:.2} |",
            row.construct,
            row.threads,
            ns_per_event(row),
        );
    }
    println!();
    println!(
        "against: the same instrumented binary recording with the library in {} (LD_LIBRARY_PATH \
         before its runpath), run next to this build's recording in every round, on alternating \
         sides: its on − off per event, and this build's on − the other's, the median over the \
         rounds ± its robust standard error, per event (~: within two standard errors of zero).",
        against.display()
    );
}
