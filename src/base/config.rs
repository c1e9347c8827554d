//! Configuration from `POMPTRACE_*` environment variables, read once at measurement start, and
//! the one list of every `POMPTRACE_*` variable (what `pomptrace config --env` prints, the
//! README's table, and the `pomptrace.cfg` file of each experiment directory).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Who reads a variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// The library, when the instrumented program starts.
    Run,
    /// The compiler wrapper (`pomptrace COMPILER ARGS...`), when a program is built.
    Build,
}

/// One `POMPTRACE_*` environment variable.
#[derive(Clone, Copy, Debug)]
pub struct Variable {
    pub name: &'static str,
    pub default: &'static str,
    pub meaning: &'static str,
    pub phase: Phase,
}

/// Defines each variable as a `const` and lists them all, in order, in `VARIABLES`.
macro_rules! variables {
    ($($phase:ident $NAME:ident = $name:literal, default $default:literal, $meaning:literal;)*) => {
        $(pub const $NAME: Variable = Variable {
            name: $name,
            default: $default,
            meaning: $meaning,
            phase: Phase::$phase,
        };)*

        /// Every `POMPTRACE_*` variable, run-time ones first.
        pub const VARIABLES: [Variable; [$($name),*].len()] = [$($NAME),*];
    };
}

variables! {
    Run EXPERIMENT_DIRECTORY = "POMPTRACE_EXPERIMENT_DIRECTORY",
        default "pomptrace-<program>-<YYYYmmdd_HHMMSS>-<pid>",
        "where traces.otf2, its files and pomptrace.cfg go (falls back to $TMPDIR with a warning \
         when not writable); a directory another process is writing, that already holds a trace, \
         or that holds the remains of a killed run gives way to DIR-<pid>, said in one line";
    Run ENABLE = "POMPTRACE_ENABLE", default "1",
        "0 records nothing (OpenMP calls such as the lock wrappers still work; an \
         instrumented call then costs about 34 instructions, no fence)";
    Run ENABLE_TRACING = "POMPTRACE_ENABLE_TRACING", default "1",
        "0 writes no trace (no traces.otf2, no event files): with POMPTRACE_ENABLE_PROFILING=1 \
         the run leaves only profile.cubex and pomptrace.cfg; with profiling off too, nothing \
         is recorded";
    Run ENABLE_PROFILING = "POMPTRACE_ENABLE_PROFILING", default "0",
        "1 writes a call-path profile, DIR/profile.cubex (CUBE4: visits, time, min_time, \
         max_time and the POMPTRACE_METRICS per call path and thread), beside the trace or \
         instead of it; its memory is bounded by the call paths, not by the run length";
    Run PROFILE_MAX_DEPTH = "POMPTRACE_PROFILE_MAX_DEPTH", default "128",
        "regions a thread's call paths keep below where its work starts (a team member: its \
         team's fork), 1-65535; regions entered deeper are counted in their deepest kept \
         ancestor, and the end of the run says how many";
    Run PROFILE_MAX_NODES = "POMPTRACE_PROFILE_MAX_NODES", default "64K",
        "call paths the profile keeps per thread (16-16M); visits of further new paths are \
         counted in their parent's path, and the end of the run says how many";
    Run CHUNK_SIZE = "POMPTRACE_CHUNK_SIZE", default "1M",
        "bytes per event chunk, in memory and in the files (256K-16M: OTF2 readers take no \
         smaller chunk; a smaller setting is raised to 256K)";
    Run BUFFER_SIZE = "POMPTRACE_BUFFER_SIZE",
        default "64M (less where memory is short: a 32nd of the memory over the cores, at least 8M)",
        "event memory per thread, touched only as it fills, at least two chunks; when the \
         writer falls behind, recording waits instead of dropping";
    Run TOTAL_BUFFER_SIZE = "POMPTRACE_TOTAL_BUFFER_SIZE",
        default "a 32nd of the memory (at least the buffer size per core)",
        "event memory all threads of the process hold together beyond two chunks each; a thread \
         that needs more writes what it kept and from then on every chunk as it fills";
    Run KEEP_IN_MEMORY = "POMPTRACE_KEEP_IN_MEMORY", default "0",
        "a thread's first full event chunks, up to this many bytes (at most the buffer less one \
         chunk), stay in memory until the end of the run and are written then by the thread that \
         ends it; past that, all of them and every later chunk are written as they fill (see \
         POMPTRACE_WRITER). 0 writes every full chunk as it fills and fills its buffer again: \
         writing a chunk costs at most what faulting in a fresh buffer costs (half of it through \
         a local disk's page cache, as much on tmpfs), the program nothing where a core is idle \
         for the writer thread, and nothing is lost if the process is killed (SIGKILL, OOM, time \
         limit: see pomptrace recover). A kept chunk is fresh memory that its recording thread \
         faults in itself: 2 to 4 ns per event more on the development VM (docs/benchmarks.md)";
    Run WRITER = "POMPTRACE_WRITER", default "auto",
        "who writes a full event chunk that goes to disk while the program runs: thread (the \
         thread that filled it, at once, or, if it holds an OpenMP lock or critical section then, \
         right after it releases it), background (a writer thread, started with the first such \
         chunk, while the program goes on, through the page cache; it costs nothing where a core \
         is idle and a core's time where none is), direct (that writer thread, each chunk straight \
         to the device while the disk keeps up, on a local disk file system: less than half the \
         CPU time of a copy), or auto (background if a core is idle when the first chunk goes: the \
         program has fewer threads than the cores it may use, affinity and CPU quota, and the \
         machine fewer runnable threads than its CPUs; else direct on a local disk and thread \
         elsewhere). Nothing waits for the writer thread: a thread whose chunks wait for it writes \
         them itself, and so does the end of the run. A run that keeps its chunks in memory starts \
         no thread";
    Run CLOCK = "POMPTRACE_CLOCK", default "auto",
        "tsc (invariant TSC, calibrated against CLOCK_MONOTONIC) or monotonic";
    Run VERBOSE = "POMPTRACE_VERBOSE", default "1",
        "0 silences the closing summary line (warnings still show); 2 adds a line with the \
         helper threads started, the CPU time the writer's threads used while the program ran, \
         and how often and how long recording threads stopped to write a chunk or wait for a \
         free buffer";
    Run FILTERING_FILE = "POMPTRACE_FILTERING_FILE", default "",
        "a filter file in Score-P's syntax; the user regions and constructs it excludes record \
         nothing";
    Run MAX_TRACE_SIZE = "POMPTRACE_MAX_TRACE_SIZE", default "2G",
        "trace size budget per process (e.g. 50M, 2G, 512K, or bytes; 0: none). Near it, the \
         regions that cost the most bytes for the least time stop being recorded (structure \
         last), marked in the trace, named at the end, with a filter file that would have kept \
         the run under it (DIR/pomptrace.filter)";
    Run METRICS = "POMPTRACE_METRICS", default "",
        "counters recorded at every Enter and Leave, e.g. task-clock,page-faults,ru_utime (see \
         Metrics and snapshots)";
    Run SAMPLING_INTERVAL = "POMPTRACE_SAMPLING_INTERVAL", default "",
        "e.g. 10ms: a sampler thread records process RSS, CPU time and I/O bytes on a metric \
         location once per interval";
    Run SNAPSHOT_INTERVAL = "POMPTRACE_SNAPSHOT_INTERVAL", default "",
        "e.g. 100ms: snapshots of what is open on every location, every interval";
    Run SNAPSHOT_AT_END = "POMPTRACE_SNAPSHOT_AT_END", default "0",
        "1: one more snapshot at the end of the measurement";
    Build STATIC = "POMPTRACE_STATIC", default "0",
        "1 links programs with the static libpomptrace.a (as --static does)";
    Build SKIP_UNINSTRUMENTABLE = "POMPTRACE_SKIP_UNINSTRUMENTABLE", default "0",
        "1 compiles a file that opari2 cannot instrument without instrumentation, with one \
         warning (as --skip-uninstrumentable does)";
    Build INSTRUMENT_ALL = "POMPTRACE_INSTRUMENT_ALL", default "0",
        "1 instruments compiles without an OpenMP flag too (as --instrument-all does)";
    Build KEEP_FILES = "POMPTRACE_KEEP_FILES", default "0",
        "1 keeps the wrapper's temporary directory (preprocessed and instrumented sources) and \
         names it (as --keep-files does)";
    Build WRAPPER_VERBOSE = "POMPTRACE_WRAPPER_VERBOSE", default "0",
        "1 prints every command the wrapper runs (as --verbose does)";
    Build NO_MPI = "POMPTRACE_NO_MPI", default "0",
        "1 links programs built by an MPI compiler wrapper (mpicc, mpif90, ...) without the MPI \
         wrapper library libpomptrace_mpi, so that their MPI calls are not traced (as --no-mpi \
         does)";
    Build OPARI2 = "POMPTRACE_OPARI2", default "opari2", "the opari2 program the wrapper runs";
}

/// A variable's value in this environment, if set and not blank.
pub fn value(variable: &Variable) -> Option<String> {
    std::env::var(variable.name)
        .ok()
        .filter(|v| !v.trim().is_empty())
}

/// Whether a build-time switch is on (`1`, `true`, `yes`, `on`).
pub fn switch_on(variable: &Variable) -> bool {
    value(variable).is_some_and(|v| parse_bool(&v) == Some(true))
}

fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "0" | "false" | "no" | "off" => Some(false),
        "1" | "true" | "yes" | "on" => Some(true),
        _ => None,
    }
}

/// `pomptrace config --env`: each variable with its value here, its default and its meaning.
pub fn describe_environment() -> String {
    let mut text = String::new();
    for (phase, heading) in [
        (
            Phase::Run,
            "read by libpomptrace when the instrumented program starts",
        ),
        (
            Phase::Build,
            "read by the compiler wrapper `pomptrace COMPILER ARGS...`",
        ),
    ] {
        let _ = writeln!(text, "# {heading}");
        for v in VARIABLES.iter().filter(|v| v.phase == phase) {
            let shown = value(v).unwrap_or_else(|| "(unset)".into());
            let default = if v.default.is_empty() {
                "(none)"
            } else {
                v.default
            };
            let _ = writeln!(
                text,
                "{}={shown}\n    default: {default}\n    {}",
                v.name, v.meaning
            );
        }
    }
    text
}

/// Smallest event chunk: the smallest OTF2 file chunk (readers take no smaller one). A smaller
/// in-memory chunk would be followed in the file by a hole up to the next file chunk, which
/// every reader reads through and every copy writes out: 4 KiB chunks made a trace 64 times
/// its size.
pub const MIN_CHUNK_SIZE: usize = otf2::chunk::MIN_CHUNK_SIZE;
pub const MAX_CHUNK_SIZE: usize = otf2::chunk::MAX_CHUNK_SIZE;

#[derive(Clone, Debug)]
pub struct Config {
    /// `POMPTRACE_ENABLE=0` turns the measurement off (every call still performs its OpenMP
    /// duty, e.g. the real lock operation).
    pub enabled: bool,
    /// `POMPTRACE_ENABLE_TRACING` (default on): write the OTF2 trace.
    pub tracing: bool,
    /// `POMPTRACE_ENABLE_PROFILING` (default off): write the call-path profile.
    pub profiling: bool,
    /// `POMPTRACE_PROFILE_MAX_DEPTH`: the deepest call path a profile keeps.
    pub profile_max_depth: u32,
    /// `POMPTRACE_PROFILE_MAX_NODES`: call paths a profile keeps per location.
    pub profile_max_nodes: u32,
    /// `POMPTRACE_EXPERIMENT_DIRECTORY`: where `traces.otf2` goes; default
    /// `pomptrace-<program>-<YYYYmmdd_HHMMSS>-<pid>` in the working directory.
    pub experiment_directory: Option<PathBuf>,
    /// `POMPTRACE_CHUNK_SIZE`: bytes per event chunk (default 1 MiB).
    pub chunk_size: usize,
    /// `POMPTRACE_BUFFER_SIZE`: memory for events per location (default
    /// [`default_buffer_size`]); at least two chunks. When the writer falls behind, recording
    /// waits instead of dropping events.
    pub buffer_size: usize,
    /// `POMPTRACE_KEEP_IN_MEMORY`: a location's first full event chunks, up to this many bytes
    /// (at most the buffer less one chunk), stay in memory until the end of the run; past that
    /// they are written as they fill. Default: none (`chunks_kept_in_memory`).
    pub keep_in_memory: Option<usize>,
    /// `POMPTRACE_TOTAL_BUFFER_SIZE`: event memory of all locations together beyond two chunks
    /// each (default [`memory_for_all_threads`] on this machine).
    pub total_buffer_size: Option<usize>,
    /// `POMPTRACE_WRITER=thread|background|direct|auto`: who writes the chunks that go to disk while
    /// the program runs.
    pub writer: WriterChoice,
    /// `POMPTRACE_CLOCK=tsc|monotonic` (default: tsc where the CPU has an invariant TSC).
    pub clock: ClockChoice,
    /// `POMPTRACE_VERBOSE=0|1|2`: 0 silences the closing summary line (warnings still show).
    pub verbose: u8,
    /// `POMPTRACE_FILTERING_FILE`: the filter file, read when the measurement starts.
    pub filtering_file: Option<PathBuf>,
    /// `POMPTRACE_MAX_TRACE_SIZE`: the trace size budget of the process in bytes (0: none).
    pub max_trace_size: u64,
    /// `POMPTRACE_METRICS`: counters recorded at every Enter/Leave (see `metrics::CATALOG`).
    pub metrics: Option<String>,
    /// `POMPTRACE_SAMPLING_INTERVAL`: period of the process-metrics sampler (off by default).
    pub sampling_interval: Option<Duration>,
    /// `POMPTRACE_SNAPSHOT_INTERVAL`: period of the snapshots (off by default).
    pub snapshot_interval: Option<Duration>,
    /// `POMPTRACE_SNAPSHOT_AT_END=1`: one more snapshot at the end of the measurement.
    pub snapshot_at_end: bool,
}

/// `POMPTRACE_WRITER`: who writes a full chunk that goes to disk while the program runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriterChoice {
    /// The thread that filled it.
    Thread,
    /// A writer thread of pomptrace's, through the page cache.
    Background,
    /// A writer thread of pomptrace's, straight to the device while the disk keeps up.
    Direct,
    /// Background if a core is idle when the first chunk goes; else direct on a local disk and
    /// the filling thread elsewhere.
    Auto,
}

impl WriterChoice {
    /// The name `POMPTRACE_WRITER` takes.
    pub fn name(self) -> &'static str {
        match self {
            WriterChoice::Thread => "thread",
            WriterChoice::Background => "background",
            WriterChoice::Direct => "direct",
            WriterChoice::Auto => "auto",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockChoice {
    Auto,
    Tsc,
    Monotonic,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            enabled: true,
            tracing: true,
            profiling: false,
            profile_max_depth: DEFAULT_PROFILE_MAX_DEPTH,
            profile_max_nodes: DEFAULT_PROFILE_MAX_NODES,
            experiment_directory: None,
            chunk_size: 1024 * 1024,
            buffer_size: default_buffer_size(),
            keep_in_memory: None,
            total_buffer_size: None,
            writer: WriterChoice::Auto,
            clock: ClockChoice::Auto,
            verbose: 1,
            filtering_file: None,
            max_trace_size: DEFAULT_MAX_TRACE_SIZE,
            metrics: None,
            sampling_interval: None,
            snapshot_interval: None,
            snapshot_at_end: false,
        }
    }
}

/// `POMPTRACE_MAX_TRACE_SIZE` when unset: 2 GiB.
pub const DEFAULT_MAX_TRACE_SIZE: u64 = 2 << 30;
/// The deepest call path a profile keeps by default (Score-P's call paths rarely pass 30).
pub const DEFAULT_PROFILE_MAX_DEPTH: u32 = 128;
/// Call paths a profile keeps per location by default: 64 Ki nodes of a few dozen bytes each,
/// reserved up front and touched only as paths appear.
pub const DEFAULT_PROFILE_MAX_NODES: u32 = 64 * 1024;
const PROFILE_DEPTH_RANGE: std::ops::RangeInclusive<u32> = 1..=65535;
const PROFILE_NODES_RANGE: std::ops::RangeInclusive<usize> = 16..=(16 << 20);

/// Event memory may take this fraction of the usable memory: per thread by default (over the
/// cores), and for all threads together.
const MEMORY_SHARE: u64 = 32;
/// Most event memory a location gets by default: its pool of chunk buffers, and what a run that
/// keeps its chunks (`POMPTRACE_KEEP_IN_MEMORY`) holds until the end. When chunks were kept by
/// default, on the 2-core development VM syncbench's lock, critical and ordered rows at 2
/// threads (12.6-17 MB per thread) cost 10-44, 27 and 15 ns per construct less with 64 MiB than
/// with 8 MiB (paired rounds), the same at 1 thread, where the writer has a core to itself.
const DEFAULT_BUFFER_MAX: usize = 64 << 20;
/// The least: what the buffer always was, a burst of about 700 000 events per thread.
const DEFAULT_BUFFER_MIN: usize = 8 << 20;

/// This machine's usable memory ([`usable_memory`]) and cores, read once.
static MACHINE: std::sync::LazyLock<(Option<u64>, usize)> =
    std::sync::LazyLock::new(|| (usable_memory(), cores()));

/// The cores this process may run on: its affinity mask, one system call (std's
/// `available_parallelism` also reads the cgroup files: 1.7% of the CPU samples of a whole
/// tiny traced run here, about what writing its definitions and anchor took).
fn cores() -> usize {
    // SAFETY: an all-zero cpu_set_t is a valid empty set; sched_getaffinity fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 is the calling thread; `set` has the size passed.
    let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) };
    if rc == 0 {
        // SAFETY: `set` was filled by sched_getaffinity.
        let count = unsafe { libc::CPU_COUNT(&set) };
        if count > 0 {
            return count as usize;
        }
    }
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The default `POMPTRACE_BUFFER_SIZE` on this machine: [`buffer_size_for`] its memory (the
/// process's cgroup limit where that is lower) and its cores.
pub fn default_buffer_size() -> usize {
    let (memory, cores) = *MACHINE;
    buffer_size_for(memory, cores)
}

/// Event memory all threads of the process may hold together beyond two chunks each: a 32nd
/// of `memory`, but at least `buffer_size` for each of `cores` (so a thread per core always
/// gets its whole buffer); unlimited where the memory is not known.
pub fn memory_for_all_threads(memory: Option<u64>, cores: usize, buffer_size: usize) -> usize {
    memory.map_or(usize::MAX, |m| {
        let share = usize::try_from(m / MEMORY_SHARE).unwrap_or(usize::MAX);
        share.max(buffer_size.saturating_mul(cores.max(1)))
    })
}

/// 64 MiB per location, or a 32nd of `memory` over `cores` where that is less (a thread on
/// every core then keeps at most 1/32 of the memory), but never below 8 MiB; whole MiB.
pub fn buffer_size_for(memory: Option<u64>, cores: usize) -> usize {
    let share = memory.map_or(DEFAULT_BUFFER_MAX as u64, |m| {
        m / MEMORY_SHARE / cores.max(1) as u64
    });
    let share = usize::try_from(share).unwrap_or(DEFAULT_BUFFER_MAX);
    share.clamp(DEFAULT_BUFFER_MIN, DEFAULT_BUFFER_MAX) & !((1 << 20) - 1)
}

/// Physical memory, or the memory limit of the process's cgroup where that is lower (a batch
/// job's share of a node). None where neither is known.
fn usable_memory() -> Option<u64> {
    // SAFETY: sysconf only reads system values.
    let (pages, page_size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    let physical = (pages > 0 && page_size > 0).then(|| pages as u64 * page_size as u64);
    let limit = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|text| cgroup_memory_limit(&text, |path| std::fs::read_to_string(path).ok()));
    match (physical, limit) {
        (Some(p), Some(l)) => Some(p.min(l)),
        (p, l) => p.or(l),
    }
}

/// The memory limit of the cgroup that `/proc/self/cgroup` (`text`) names, read through `read`:
/// `memory.max` under the unified hierarchy (v2), else `memory.limit_in_bytes` under the v1
/// memory controller; None for "max" or where neither file is there.
fn cgroup_memory_limit(text: &str, read: impl Fn(&str) -> Option<String>) -> Option<u64> {
    let limit = |file: String| read(&file).and_then(|v| v.trim().parse::<u64>().ok());
    let v1 = text.lines().find_map(|line| {
        let (_, rest) = line.split_once(':')?;
        let (controllers, path) = rest.split_once(':')?;
        controllers
            .split(',')
            .any(|c| c == "memory")
            .then(|| format!("/sys/fs/cgroup/memory{path}/memory.limit_in_bytes"))
    });
    let v2 = text
        .lines()
        .find_map(|line| line.strip_prefix("0::"))
        .map(|path| format!("/sys/fs/cgroup{}/memory.max", path.trim_end_matches('/')));
    v2.and_then(limit).or_else(|| v1.and_then(limit))
}

/// Parses sizes like `65536`, `64K`, `64KiB`, `1M`, `1MB`, `2G`.
pub fn parse_size(text: &str) -> Option<usize> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let n: usize = digits.parse().ok()?;
    let factor = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(factor)
}

/// Parses durations like `10ms`, `1.5s`, `250us`, `100000ns`; a bare number is milliseconds.
/// A size as the variables take it: `256K`, `16M`, or bytes.
fn size_text(bytes: usize) -> String {
    if bytes > 0 && bytes % (1 << 20) == 0 {
        format!("{}M", bytes >> 20)
    } else if bytes > 0 && bytes % (1 << 10) == 0 {
        format!("{}K", bytes >> 10)
    } else {
        bytes.to_string()
    }
}

pub fn parse_duration(text: &str) -> Option<Duration> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let n: f64 = number.parse().ok()?;
    let seconds_per_unit = match unit.trim().to_ascii_lowercase().as_str() {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "" | "ms" => 1e-3,
        "s" => 1.0,
        _ => return None,
    };
    Duration::try_from_secs_f64(n * seconds_per_unit).ok()
}

/// Shortest interval accepted for the sampler and the snapshots: below it they would cost
/// more than they show.
pub const MIN_INTERVAL: Duration = Duration::from_micros(100);

/// The line of `pomptrace.cfg` that names the program the experiment measured (a comment to
/// anything reading the file as `NAME=value` lines).
pub const PROGRAM_LINE: &str = "# program: ";

impl Config {
    /// Reads the environment; every unusable value is reported (through `warn`) and replaced
    /// by its default.
    pub fn from_env(mut warn: impl FnMut(String)) -> Self {
        let mut c = Config::default();
        if let Some(v) = value(&ENABLE) {
            match parse_bool(&v) {
                Some(on) => c.enabled = on,
                None => warn(format!(
                    "POMPTRACE_ENABLE={v} is not a boolean; tracing stays on"
                )),
            }
        }
        for (variable, slot) in [
            (&ENABLE_TRACING, &mut c.tracing),
            (&ENABLE_PROFILING, &mut c.profiling),
        ] {
            if let Some(v) = value(variable) {
                match parse_bool(&v) {
                    Some(on) => *slot = on,
                    None => warn(format!(
                        "{}={v} is not a boolean (0/1, true/false, yes/no, on/off); using {}",
                        variable.name, variable.default
                    )),
                }
            }
        }
        if let Some(v) = value(&PROFILE_MAX_DEPTH) {
            match v.trim().parse::<u32>() {
                Ok(n) if PROFILE_DEPTH_RANGE.contains(&n) => c.profile_max_depth = n,
                _ => warn(format!(
                    "POMPTRACE_PROFILE_MAX_DEPTH={v} is not a depth in [1, 65535]; using {}",
                    c.profile_max_depth
                )),
            }
        }
        if let Some(v) = value(&PROFILE_MAX_NODES) {
            match parse_size(&v) {
                Some(n) if PROFILE_NODES_RANGE.contains(&n) => c.profile_max_nodes = n as u32,
                _ => warn(format!(
                    "POMPTRACE_PROFILE_MAX_NODES={v} is not a count in [16, 16M] (e.g. 4096, \
                     64K); using {}",
                    c.profile_max_nodes
                )),
            }
        }
        c.experiment_directory = value(&EXPERIMENT_DIRECTORY).map(PathBuf::from);
        c.filtering_file = value(&FILTERING_FILE).map(PathBuf::from);
        if let Some(v) = value(&CHUNK_SIZE) {
            match parse_size(&v) {
                Some(n) if n < MIN_CHUNK_SIZE => {
                    c.chunk_size = MIN_CHUNK_SIZE;
                    warn(format!(
                        "POMPTRACE_CHUNK_SIZE={v} is below the smallest chunk OTF2 readers \
                         take; using {}",
                        size_text(MIN_CHUNK_SIZE)
                    ));
                }
                Some(n) if n > MAX_CHUNK_SIZE => {
                    c.chunk_size = MAX_CHUNK_SIZE;
                    warn(format!(
                        "POMPTRACE_CHUNK_SIZE={v} is above the largest chunk OTF2 readers \
                         take; using {}",
                        size_text(MAX_CHUNK_SIZE)
                    ));
                }
                Some(n) => c.chunk_size = n,
                None => warn(format!(
                    "POMPTRACE_CHUNK_SIZE={v} is not a size; using {}",
                    size_text(c.chunk_size)
                )),
            }
        }
        let buffer_setting = value(&BUFFER_SIZE);
        if let Some(v) = &buffer_setting {
            match parse_size(v) {
                Some(n) if n > 0 => c.buffer_size = n,
                _ => warn(format!(
                    "POMPTRACE_BUFFER_SIZE={v} is not a size; using {}",
                    size_text(c.buffer_size)
                )),
            }
        }
        if let Some(v) = value(&TOTAL_BUFFER_SIZE) {
            match parse_size(&v) {
                Some(n) => c.total_buffer_size = Some(n),
                None => warn(format!(
                    "POMPTRACE_TOTAL_BUFFER_SIZE={v} is not a size; using a 32nd of the memory"
                )),
            }
        }
        if let Some(v) = value(&KEEP_IN_MEMORY) {
            match parse_size(&v) {
                Some(n) => c.keep_in_memory = Some(n),
                None => warn(format!(
                    "POMPTRACE_KEEP_IN_MEMORY={v} is not a size; using the buffer size"
                )),
            }
        }
        if c.buffer_size < 2 * c.chunk_size {
            // A location needs one chunk to fill while another is written.
            c.chunk_size = (c.buffer_size / 2).clamp(MIN_CHUNK_SIZE, MAX_CHUNK_SIZE);
            if c.buffer_size < 2 * c.chunk_size {
                c.buffer_size = 2 * c.chunk_size;
                if let Some(v) = buffer_setting {
                    warn(format!(
                        "POMPTRACE_BUFFER_SIZE={v} is less than two chunks of the smallest size \
                         OTF2 readers take; using {}",
                        size_text(c.buffer_size)
                    ));
                }
            }
        }
        if let Some(v) = value(&WRITER) {
            match v.trim().to_ascii_lowercase().as_str() {
                "thread" => c.writer = WriterChoice::Thread,
                "background" => c.writer = WriterChoice::Background,
                "direct" => c.writer = WriterChoice::Direct,
                "auto" => c.writer = WriterChoice::Auto,
                _ => warn(format!(
                    "POMPTRACE_WRITER={v} is not thread, background, direct or auto; using {}",
                    c.writer.name()
                )),
            }
        }
        if let Some(v) = value(&CLOCK) {
            match v.trim().to_ascii_lowercase().as_str() {
                "tsc" => c.clock = ClockChoice::Tsc,
                "monotonic" | "clock_gettime" => c.clock = ClockChoice::Monotonic,
                "auto" => {}
                _ => warn(format!(
                    "POMPTRACE_CLOCK={v} is not tsc or monotonic; using auto"
                )),
            }
        }
        if let Some(v) = value(&VERBOSE) {
            match v.trim().parse() {
                Ok(n) => c.verbose = n,
                Err(_) => warn(format!("POMPTRACE_VERBOSE={v} is not a number; using 1")),
            }
        }
        if let Some(v) = value(&MAX_TRACE_SIZE) {
            match parse_size(&v) {
                Some(n) => c.max_trace_size = n as u64,
                None => warn(format!(
                    "POMPTRACE_MAX_TRACE_SIZE={v} is not a size (accepted: bytes, or a number \
                     with K, M or G, e.g. 512K, 50M, 2G; 0 for no limit); using the default 2G"
                )),
            }
        }
        c.metrics = value(&METRICS);
        for (variable, slot) in [
            (&SAMPLING_INTERVAL, &mut c.sampling_interval),
            (&SNAPSHOT_INTERVAL, &mut c.snapshot_interval),
        ] {
            let name = variable.name;
            if let Some(v) = value(variable) {
                match parse_duration(&v) {
                    Some(d) if d >= MIN_INTERVAL => *slot = Some(d),
                    _ => warn(format!(
                        "{name}={v} is not a duration of at least 100us (e.g. 10ms, 1s); \
                         it stays off"
                    )),
                }
            }
        }
        if let Some(v) = value(&SNAPSHOT_AT_END) {
            match parse_bool(&v) {
                Some(on) => c.snapshot_at_end = on,
                None => warn(format!(
                    "POMPTRACE_SNAPSHOT_AT_END={v} is not a boolean; no snapshot at the end"
                )),
            }
        }
        c
    }

    /// The `pomptrace.cfg` file of an experiment directory: the run-time variables as this
    /// measurement used them, one `NAME=value` line each (as Score-P's `scorep.cfg`).
    pub fn record_text(&self, experiment_dir: &Path) -> String {
        let mut text = format!(
            "# pomptrace {}: the configuration this experiment was recorded with\n",
            env!("CARGO_PKG_VERSION")
        );
        for v in VARIABLES.iter().filter(|v| v.phase == Phase::Run) {
            let used = match v.name {
                n if n == EXPERIMENT_DIRECTORY.name => experiment_dir.display().to_string(),
                n if n == ENABLE.name => u8::from(self.enabled).to_string(),
                n if n == ENABLE_TRACING.name => u8::from(self.tracing).to_string(),
                n if n == ENABLE_PROFILING.name => u8::from(self.profiling).to_string(),
                n if n == PROFILE_MAX_DEPTH.name => self.profile_max_depth.to_string(),
                n if n == PROFILE_MAX_NODES.name => self.profile_max_nodes.to_string(),
                n if n == CHUNK_SIZE.name => self.chunk_size.to_string(),
                n if n == BUFFER_SIZE.name => self.buffer_size.to_string(),
                n if n == TOTAL_BUFFER_SIZE.name => match self.memory_for_all_threads() {
                    usize::MAX => String::new(),
                    bytes => bytes.to_string(),
                },
                n if n == KEEP_IN_MEMORY.name => (self.chunks_kept_in_memory() * self.chunk_size)
                    .min(self.buffer_size.saturating_sub(self.chunk_size))
                    .to_string(),
                n if n == WRITER.name => self.writer.name().to_string(),
                n if n == CLOCK.name => format!("{:?}", self.clock).to_ascii_lowercase(),
                n if n == VERBOSE.name => self.verbose.to_string(),
                n if n == FILTERING_FILE.name => self
                    .filtering_file
                    .as_ref()
                    .map_or(String::new(), |f| f.display().to_string()),
                n if n == MAX_TRACE_SIZE.name => self.max_trace_size.to_string(),
                n if n == METRICS.name => self.metrics.clone().unwrap_or_default(),
                n if n == SAMPLING_INTERVAL.name => self
                    .sampling_interval
                    .map_or(String::new(), |d| format!("{}us", d.as_micros())),
                n if n == SNAPSHOT_INTERVAL.name => self
                    .snapshot_interval
                    .map_or(String::new(), |d| format!("{}us", d.as_micros())),
                n if n == SNAPSHOT_AT_END.name => u8::from(self.snapshot_at_end).to_string(),
                _ => value(v).unwrap_or_default(),
            };
            let _ = writeln!(text, "{}={used}", v.name);
        }
        text
    }

    /// Reads and parses the filter file, if one is configured; a file that cannot be read or
    /// parsed is reported (naming its line) and filters nothing.
    pub fn load_filter(&self, mut warn: impl FnMut(String)) -> Option<crate::filter::Filter> {
        let path = self.filtering_file.as_ref()?;
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) => {
                warn(format!(
                    "cannot read the filter file {} ({e}); nothing is filtered",
                    path.display()
                ));
                return None;
            }
        };
        match crate::filter::Filter::parse(&text) {
            Ok(filter) => Some(filter).filter(|f| !f.is_empty()),
            Err(e) => {
                warn(format!(
                    "filter file {}, {e}; nothing is filtered",
                    path.display()
                ));
                None
            }
        }
    }

    /// Whether snapshots are written at all.
    pub fn snapshots(&self) -> bool {
        self.snapshot_interval.is_some() || self.snapshot_at_end
    }

    /// Chunks per location.
    pub fn buffers_per_location(&self) -> usize {
        (self.buffer_size / self.chunk_size).max(2)
    }

    /// Chunks all locations together may allocate beyond their first two
    /// ([`memory_for_all_threads`] on this machine): many more threads than cores, each with a
    /// full buffer, would otherwise hold many times the memory one thread per core does.
    pub fn buffers_for_all_threads(&self) -> usize {
        self.memory_for_all_threads() / self.chunk_size.max(1)
    }

    /// `POMPTRACE_TOTAL_BUFFER_SIZE` as set, else [`memory_for_all_threads`] on this machine.
    fn memory_for_all_threads(&self) -> usize {
        self.total_buffer_size.unwrap_or_else(|| {
            let (memory, cores) = *MACHINE;
            memory_for_all_threads(memory, cores, self.buffer_size)
        })
    }

    /// Full chunks per location kept from the writer (the sink caps it). By default none: a
    /// kept chunk is a fresh buffer that the recording thread faults in itself (no thread runs
    /// beside a run that keeps its chunks), while a chunk written as it fills gives its buffer
    /// back to be filled again, and its write costs at most what the fault would (on tmpfs as
    /// much, through a local disk's page cache half, with O_DIRECT a sixth), on an idle core
    /// where the writer thread has one (`chunk_memory_bench`; syncbench in `/dev/shm`).
    pub fn chunks_kept_in_memory(&self) -> usize {
        self.keep_in_memory.unwrap_or(0) / self.chunk_size
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variable_is_listed_once_and_documented() {
        let mut names: Vec<&str> = VARIABLES.iter().map(|v| v.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), VARIABLES.len());
        for v in VARIABLES {
            assert!(v.name.starts_with("POMPTRACE_"), "{}", v.name);
            assert!(!v.meaning.is_empty(), "{}", v.name);
        }
        // Every variable named in a string anywhere in the sources is in the list.
        let mut dirs = vec![PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/src"))];
        let mut checked = 0;
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                    continue;
                }
                let source = std::fs::read_to_string(&path).unwrap_or_default();
                for (i, _) in source.match_indices("\"POMPTRACE_") {
                    let name: String = source[i + 1..]
                        .chars()
                        .take_while(|c| c.is_ascii_uppercase() || *c == '_' || c.is_ascii_digit())
                        .collect();
                    if name == "POMPTRACE_" {
                        continue; // this test's own search string
                    }
                    assert!(
                        VARIABLES.iter().any(|v| v.name == name),
                        "{name} is used in {} but not listed",
                        path.display()
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked >= VARIABLES.len());
    }

    #[test]
    fn the_record_names_every_run_time_variable_with_the_value_used() {
        let c = Config {
            chunk_size: 65536,
            buffer_size: 8 << 20,
            total_buffer_size: Some(32 << 20),
            filtering_file: Some(PathBuf::from("/f/filter.txt")),
            clock: ClockChoice::Monotonic,
            ..Config::default()
        };
        assert!(c
            .record_text(Path::new("/exp"))
            .contains("\nPOMPTRACE_KEEP_IN_MEMORY=0\n"));
        let c = Config {
            keep_in_memory: Some(64 << 20),
            ..c
        };
        let text = c.record_text(Path::new("/exp"));
        assert!(text.starts_with("# pomptrace "));
        let lines: Vec<&str> = text.lines().skip(1).collect();
        assert_eq!(
            lines,
            [
                "POMPTRACE_EXPERIMENT_DIRECTORY=/exp",
                "POMPTRACE_ENABLE=1",
                "POMPTRACE_ENABLE_TRACING=1",
                "POMPTRACE_ENABLE_PROFILING=0",
                "POMPTRACE_PROFILE_MAX_DEPTH=128",
                "POMPTRACE_PROFILE_MAX_NODES=65536",
                "POMPTRACE_CHUNK_SIZE=65536",
                "POMPTRACE_BUFFER_SIZE=8388608",
                "POMPTRACE_TOTAL_BUFFER_SIZE=33554432",
                // The buffer less the chunk being filled.
                "POMPTRACE_KEEP_IN_MEMORY=8323072",
                "POMPTRACE_WRITER=auto",
                "POMPTRACE_CLOCK=monotonic",
                "POMPTRACE_VERBOSE=1",
                "POMPTRACE_FILTERING_FILE=/f/filter.txt",
                "POMPTRACE_MAX_TRACE_SIZE=2147483648",
                "POMPTRACE_METRICS=",
                "POMPTRACE_SAMPLING_INTERVAL=",
                "POMPTRACE_SNAPSHOT_INTERVAL=",
                "POMPTRACE_SNAPSHOT_AT_END=0",
            ]
        );
    }

    #[test]
    fn the_default_buffer_is_64_mib_less_where_memory_is_short_but_at_least_8_mib() {
        const GIB: u64 = 1 << 30;
        assert_eq!(buffer_size_for(Some(24 * GIB), 2), 64 << 20);
        assert_eq!(buffer_size_for(Some(256 * GIB), 128), 64 << 20);
        // 64 GiB over 128 cores: 16 MiB each, 2 GiB for a thread on every core.
        assert_eq!(buffer_size_for(Some(64 * GIB), 128), 16 << 20);
        // Rounded down to whole MiB.
        assert_eq!(buffer_size_for(Some(40 * GIB), 100), 12 << 20);
        assert_eq!(buffer_size_for(Some(GIB), 64), 8 << 20);
        assert_eq!(buffer_size_for(None, 4), 64 << 20);
        assert_eq!(buffer_size_for(Some(u64::MAX), 0), 64 << 20);
        let here = default_buffer_size();
        assert!((8 << 20..=64 << 20).contains(&here), "{here}");
    }

    #[test]
    fn the_cgroup_memory_limit_is_read_from_either_hierarchy() {
        let files = |path: &str| match path {
            "/sys/fs/cgroup/job/memory.max" => Some("4294967296\n".to_string()),
            "/sys/fs/cgroup/memory/slurm/job_1/memory.limit_in_bytes" => {
                Some("2147483648\n".to_string())
            }
            "/sys/fs/cgroup/free/memory.max" => Some("max\n".to_string()),
            _ => None,
        };
        assert_eq!(cgroup_memory_limit("0::/job\n", files), Some(4 << 30));
        let v1 = "5:cpu,cpuacct:/slurm/job_1\n4:memory:/slurm/job_1\n0::/\n";
        assert_eq!(cgroup_memory_limit(v1, files), Some(2 << 30));
        assert_eq!(cgroup_memory_limit("0::/free\n", files), None);
        assert_eq!(cgroup_memory_limit("", files), None);
    }

    #[test]
    fn all_threads_together_keep_a_32nd_of_the_memory_but_a_buffer_per_core_at_least() {
        const GIB: u64 = 1 << 30;
        const MIB: usize = 1 << 20;
        // 24 GiB, 2 cores, 64 MiB each: 768 MiB for all threads, twelve threads' worth.
        assert_eq!(
            memory_for_all_threads(Some(24 * GIB), 2, 64 * MIB),
            768 * MIB
        );
        // A buffer asked for that is larger than the share: every core still gets it.
        assert_eq!(
            memory_for_all_threads(Some(24 * GIB), 2, 1024 * MIB),
            2048 * MIB
        );
        assert_eq!(memory_for_all_threads(None, 2, 64 * MIB), usize::MAX);
        let c = Config {
            chunk_size: MIB,
            buffer_size: 8 * MIB,
            ..Config::default()
        };
        assert!(c.buffers_for_all_threads() >= 8);
        let set = Config {
            total_buffer_size: Some(16 * MIB),
            ..c
        };
        assert_eq!(set.buffers_for_all_threads(), 16);
    }

    #[test]
    fn sizes_parse_with_units() {
        assert_eq!(parse_size("65536"), Some(65536));
        assert_eq!(parse_size("64K"), Some(65536));
        assert_eq!(parse_size("64KiB"), Some(65536));
        assert_eq!(parse_size("1M"), Some(1 << 20));
        assert_eq!(parse_size("1mb"), Some(1 << 20));
        assert_eq!(parse_size("2G"), Some(2 << 30));
        assert_eq!(parse_size("12X"), None);
        assert_eq!(parse_size("K"), None);
        assert_eq!(parse_size("99999999999999999999999G"), None);
    }

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("10ms"), Some(Duration::from_millis(10)));
        assert_eq!(parse_duration("10"), Some(Duration::from_millis(10)));
        assert_eq!(parse_duration("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_duration("250us"), Some(Duration::from_micros(250)));
        assert_eq!(parse_duration("100000ns"), Some(Duration::from_micros(100)));
        assert_eq!(parse_duration("5 min"), None);
        assert_eq!(parse_duration("ms"), None);
        assert_eq!(parse_duration("-1s"), None);
    }
}
