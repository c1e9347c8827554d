//! The measurement: lifecycle (start on the first call, finalize once), global state, and the
//! operations the POMP2 entry points map to. Knows nothing of C types or OTF2 byte layouts.
//!
//! Locks are only taken off the hot path: at start, when a handle or a thread is seen for the
//! first time, when a team forms, and at finalize.

mod active;
pub(crate) mod clock;
pub mod config;
pub(crate) mod constructs;
mod definitions;
pub mod job;
mod journal;
pub mod launcher;
pub(crate) mod location;
pub(crate) mod locks;
/// Public for tests that ask whether this machine can count a hardware event.
pub mod metrics;
pub(crate) mod mpi;
mod output;
mod process;
pub mod recover;
pub(crate) mod regions;
pub(crate) mod sampler;
mod signal_safe_mutex;
pub(crate) mod snapshots;
pub(crate) mod tasks;
pub(crate) mod team;
pub(crate) mod thread;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use once_cell::sync::OnceCell;

pub use active::{active, active_fast, Active};
use config::Config;
use definitions::Fact;
use location::LocationCell;
use otf2::{ArchiveConfig, ArchiveWriter, BackgroundWriter, Event};
use regions::Registry;
use signal_safe_mutex::SignalSafeMutex;
use team::{Node, Team};

const NOT_STARTED: u8 = 0;
const STARTING: u8 = 1;
const RUNNING: u8 = 2;
const FINISHED: u8 = 3;
/// Disabled by configuration, or the start failed: every call only does its OpenMP duty.
const DISABLED: u8 = 4;

static STATE: AtomicU8 = AtomicU8::new(NOT_STARTED);
/// POMP2_On / POMP2_Off.
static RECORDING: AtomicBool = AtomicBool::new(true);
/// What the hot path needs of the global state, in one load: whether the measurement runs
/// and whether events are recorded (`STATE == RUNNING`, `RECORDING`), the clock's kind, and
/// whether recording may do without a real fence (see `active.rs`), and whether Enter and
/// Leave carry metrics.
pub(super) static HOT: AtomicU8 = AtomicU8::new(0);
pub(crate) const HOT_RUNNING: u8 = 1;
pub(crate) const HOT_RECORDING: u8 = 2;
pub(crate) const HOT_TSC: u8 = 4;
/// The process is registered for expedited membarrier (final): finalize issues the heavy
/// barrier, so recording needs only a compiler fence. Set only by `active.rs`, once the
/// registration is final; `update_hot` keeps it.
pub(crate) const HOT_MEMBARRIER: u8 = 8;
/// Enter and Leave carry synchronous metric values (`metrics::synchronous()`).
pub(crate) const HOT_METRICS: u8 = 16;
/// The measurement is over for this process (finished, disabled, or a forked child). Final, so
/// a call that sees it needs neither a fence nor the start path: with `POMPTRACE_ENABLE=0` every
/// call costs a few instructions instead of a real fence and two calls into the start path.
pub(crate) const HOT_ENDED: u8 = 32;

#[inline(always)]
pub(crate) fn hot() -> u8 {
    HOT.load(Ordering::Relaxed)
}

/// Recomputes `HOT` after `STATE` or `RECORDING` changed.
fn update_hot() {
    let state = STATE.load(Ordering::Acquire);
    let value = if state == RUNNING {
        HOT_RUNNING
            | if clock::is_tsc() { HOT_TSC } else { 0 }
            | if metrics::synchronous() {
                HOT_METRICS
            } else {
                0
            }
            | if RECORDING.load(Ordering::Relaxed) {
                HOT_RECORDING
            } else {
                0
            }
    } else if matches!(state, FINISHED | DISABLED) {
        HOT_ENDED
    } else {
        0
    };
    // A read-modify-write keeps the membarrier bit: the registration sets it with another one
    // (`fetch_or`), so whichever of the two comes second sees the other's result and the bit is
    // never lost to a recomputation racing with the registration.
    let _ = HOT.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |old| {
        Some(value | (old & HOT_MEMBARRIER))
    });
}
static MEASUREMENT: OnceCell<Measurement> = OnceCell::new();
static START_LOCK: SignalSafeMutex<()> = SignalSafeMutex::new(());

/// Strings, regions and critical-section locks: process-wide, so that handles can be assigned
/// in any state (by the init file while starting, after the end, with the measurement off).
pub static REGISTRY: once_cell::sync::Lazy<SignalSafeMutex<Registry>> =
    once_cell::sync::Lazy::new(|| SignalSafeMutex::new(Registry::default()));

pub struct Measurement {
    pub config: Config,
    clock_kind: clock::ClockKind,
    start: clock::Sample,
    archive: SignalSafeMutex<Option<ArchiveWriter>>,
    journal: &'static journal::Journal,
    writer: BackgroundWriter,
    memory_chunk_size: usize,
    locations: SignalSafeMutex<Vec<&'static LocationCell>>,
    teams: SignalSafeMutex<Vec<&'static Team>>,
    root: Option<&'static Node>,
    pub root_team: &'static Team,
    pub lock_api_regions: [u32; 10],
    pub program: String,
    pub experiment_dir: PathBuf,
    /// This process's rank when it runs in an MPI job (found in the launcher's environment).
    pub job: Option<launcher::JobRank>,
}

/// Prints one `pomptrace:` line on stderr.
pub fn warn(message: &str) {
    eprintln!("pomptrace: {message}");
}

/// The keys `warn_once` has warned about.
static WARNED: SignalSafeMutex<Option<HashSet<String>>> = SignalSafeMutex::new(None);

/// Prints a warning the first time `key` is seen.
pub fn warn_once(key: &str, message: impl FnOnce() -> String) {
    let mut seen = WARNED.lock();
    if seen
        .get_or_insert_with(HashSet::new)
        .insert(key.to_string())
    {
        warn(&message());
    }
}

/// The running measurement, starting it if this is the first call. None when it is disabled,
/// failed to start, or has finished.
#[inline]
pub fn started() -> Option<&'static Measurement> {
    if STATE.load(Ordering::Acquire) == RUNNING {
        return MEASUREMENT.get();
    }
    start_slow()
}

pub fn set_recording(on: bool) {
    RECORDING.store(on, Ordering::Relaxed);
    update_hot();
}

#[cold]
fn start_slow() -> Option<&'static Measurement> {
    if matches!(STATE.load(Ordering::Acquire), FINISHED | DISABLED) {
        // Final states: no lock (in a forked child another thread of the parent may have held
        // it at the fork, and every call after the end comes here).
        return None;
    }
    let guard = START_LOCK.lock();
    match STATE.load(Ordering::Acquire) {
        RUNNING => return MEASUREMENT.get(),
        // A call made while starting (the init file assigning handles): not yet recording.
        STARTING | FINISHED | DISABLED => return None,
        _ => {}
    }
    STATE.store(STARTING, Ordering::Release);
    // Also when disabled: a forked child still assigns handles and registers locks.
    process::register_fork_handler();
    let config = Config::from_env(|m| warn(&m));
    if !config.enabled {
        STATE.store(DISABLED, Ordering::Release);
        update_hot();
        return None;
    }
    active::register_membarrier_if_alone();
    load_filter_once(|| config.clone());
    metrics::configure(config.metrics.as_deref(), |m| warn(&m));
    let measurement = match Measurement::new(config) {
        Ok(m) => m,
        Err(message) => {
            warn(&format!("{message}; nothing will be recorded"));
            STATE.store(DISABLED, Ordering::Release);
            update_hot();
            return None;
        }
    };
    let m = MEASUREMENT.get_or_init(|| measurement);
    // The init file (if linked) assigns all handles now, before any event.
    crate::openmp::call_init_regions();
    active::register_membarrier();
    process::register_exit_handler();
    process::register_signal_handlers();
    m.program_begin();
    STATE.store(RUNNING, Ordering::Release);
    update_hot();
    drop(guard);
    Some(m)
}

/// Starts the process-metrics sampler; a failure is reported and the run goes on without it.
fn start_sampler(archive: &ArchiveWriter, interval: std::time::Duration) {
    let path = archive.location_dir().join("process-metrics.evt.part");
    let class = sampler::class_id();
    match sampler::Sampler::start(interval, &path, archive.config().event_chunk_size, class) {
        Ok(s) => *sampler::RUNNING.lock() = Some(s),
        Err(e) => warn(&format!(
            "cannot start the metric sampler ({}: {e}); tracing without it",
            path.display()
        )),
    }
}

/// Loads the filter file once, before the first construct is defined: by the start, or by an
/// assignment that comes earlier (an init file's, or a handle assigned while nothing else has
/// started the measurement, which an assignment alone must not do).
pub(crate) fn load_filter_once(config: impl FnOnce() -> Config) {
    static LOADED: std::sync::Once = std::sync::Once::new();
    LOADED.call_once(|| {
        if let Some(filter) = config().load_filter(|m| warn(&m)) {
            REGISTRY.lock().set_filter(filter);
        }
    });
}

/// Program name from /proc/self/cmdline (argv), falling back to the executable's name.
fn command_line() -> Vec<String> {
    let args: Vec<String> = std::fs::read("/proc/self/cmdline")
        .map(|b| {
            b.split(|&c| c == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default();
    if args.is_empty() {
        vec![std::env::current_exe()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "program".into())]
    } else {
        args
    }
}

fn local_timestamp() -> String {
    // SAFETY: time(NULL) has no preconditions; localtime_r writes only into `tm`.
    unsafe {
        let now = libc::time(std::ptr::null_mut());
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&now, &mut tm);
        format!(
            "{:04}{:02}{:02}_{:02}{:02}{:02}",
            tm.tm_year + 1900,
            tm.tm_mon + 1,
            tm.tm_mday,
            tm.tm_hour,
            tm.tm_min,
            tm.tm_sec
        )
    }
}

fn realtime_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// OTF2 event chunk size in the files: the in-memory chunk size, at least the readers' minimum.
fn file_chunk_size(memory_chunk: usize) -> usize {
    memory_chunk.clamp(otf2::chunk::MIN_CHUNK_SIZE, otf2::chunk::MAX_CHUNK_SIZE)
}

impl Measurement {
    fn new(config: Config) -> Result<Self, String> {
        let job = launcher::detect(|name| std::env::var(name).ok(), |m| warn(&m));
        let clock_kind = clock::select(job::clock_choice(config.clock, job.as_ref()));
        let start = clock::sample();
        let start_realtime_ns = realtime_ns();
        let args = command_line();
        let program = Path::new(&args[0])
            .file_name()
            .map_or_else(|| args[0].clone(), |n| n.to_string_lossy().into_owned());
        let archive_config = ArchiveConfig {
            event_chunk_size: file_chunk_size(config.chunk_size),
            def_chunk_size: 4 * 1024 * 1024,
            machine_name: hostname(),
            creator: format!("pomptrace {}", env!("CARGO_PKG_VERSION")),
            description: args.join(" "),
            properties: vec![(
                "POMPTRACE::VERSION".into(),
                env!("CARGO_PKG_VERSION").into(),
            )],
            trace_id: start.ticks ^ (std::process::id() as u64) << 32,
        };
        let (experiment_dir, archive) =
            open_archive(&config, &program, job.as_ref(), archive_config)?;
        if let Some(interval) = config.sampling_interval {
            start_sampler(&archive, interval);
        }
        let record = experiment_dir.join("pomptrace.cfg");
        let direct = otf2::ChunkFile::directory_takes_direct_writes(&experiment_dir);
        if let Err(e) = std::fs::write(&record, config.record_text(&experiment_dir, direct)) {
            warn(&format!("cannot write {}: {e}", record.display()));
        }
        let start_fact = definitions::Start {
            clock: clock_kind,
            sample: start,
            realtime_ns: start_realtime_ns,
            memory_chunk_size: config.chunk_size as u64,
            archive: archive.config().clone(),
            hostname: hostname(),
            rank: job.as_ref().map(|job| job.rank),
        };
        let journal = journal::start(
            journal::journal_path(&experiment_dir, job.as_ref().map(|j| j.rank)),
            start_fact,
            &REGISTRY.lock(),
        )
        .map_err(|e| format!("cannot write the definitions journal: {e}"))?;
        // A chunk goes to disk only after every definition it may refer to.
        let writer = process::with_signals_blocked(|| {
            // Opened in the writer thread's own descriptor table, and closed there.
            let mut journal_file = None;
            BackgroundWriter::spawn_with(
                "pomptrace-writer",
                Box::new(move || {
                    journal::record(&Fact::Clock(clock::sample()));
                    journal.flush_to(&mut journal_file)
                }),
            )
        })
        .map_err(|e| format!("cannot start the writer thread: {e}"))?;
        writer.limit_buffers(config.buffers_for_all_threads());
        let lock_api_regions = REGISTRY.lock().define_lock_api_regions();
        let root_team: &'static Team =
            Box::leak(Box::new(team::new_team(0, 1, otf2::UNDEFINED_U32)));
        journal::record(&Fact::Team {
            comm: 0,
            size: 1,
            parent_comm: otf2::UNDEFINED_U32,
        });
        let mut m = Measurement {
            memory_chunk_size: config.chunk_size,
            config,
            clock_kind,
            start,
            archive: SignalSafeMutex::new(Some(archive)),
            journal,
            writer,
            locations: SignalSafeMutex::new(Vec::new()),
            teams: SignalSafeMutex::new(vec![root_team]),
            root: None,
            root_team,
            lock_api_regions,
            program,
            experiment_dir,
            job,
        };
        let master = m.create_location("Master thread".into(), root_team.comm)?;
        root_team.set_member(0, 0);
        let root = Node::root(master, String::new());
        if crate::openmp::level() == 0 {
            team::adopt(thread::state(), root);
        }
        // Otherwise the start came from inside a parallel region the library did not see begin
        // (an orphaned construct called from uninstrumented code, possibly on a worker): the
        // calling thread finds its position like every other thread there, so that thread 0 of
        // that team continues the root location and no two threads share one.
        m.root = Some(root);
        Ok(m)
    }

    fn create_location(&self, name: String, team: u32) -> Result<&'static LocationCell, String> {
        let mut locations = self.locations.lock();
        let number = locations.len() as u32;
        let archive = self.archive.lock();
        let archive = archive.as_ref().ok_or("the measurement has finished")?;
        let mut writer = archive
            .background_event_writer(
                self.location_id(number),
                &self.writer,
                self.memory_chunk_size,
                self.config.buffers_per_location(),
            )
            .map_err(|e| {
                format!(
                    "cannot create {}: {e}",
                    archive.event_path(self.location_id(number)).display()
                )
            })?;
        // Waits for a free chunk show in the trace as BufferFlush events.
        writer.sink_mut().set_stall_clock(clock::now);
        let direct = writer.sink_mut().writes_directly();
        writer
            .sink_mut()
            .keep_in_memory(self.config.chunks_kept_in_memory(direct));
        let name_id = REGISTRY.lock().string(&name);
        journal::record(&Fact::Location {
            id: number,
            name: name_id,
        });
        let cell: &'static LocationCell =
            Box::leak(Box::new(LocationCell::new(number, name, writer, team)));
        locations.push(cell);
        Ok(cell)
    }

    fn program_begin(&self) {
        let args = command_line();
        let mut registry = REGISTRY.lock();
        let name = registry.string(&args[0]);
        let arguments = args[1..].iter().map(|a| registry.string(a)).collect();
        drop(registry);
        // SAFETY: the starting thread owns the root location.
        let master = unsafe { self.root().location.get() };
        master.write_with_thread_id(
            self.start.ticks,
            thread::state().tid,
            &Event::ProgramBegin {
                program_name: name,
                arguments,
            },
        );
    }
}

impl Measurement {
    /// The initial thread's position in the thread tree.
    pub fn root(&self) -> &'static Node {
        self.root
            .expect("root node exists once the measurement runs")
    }
    pub fn locations(&self) -> Vec<&'static LocationCell> {
        self.locations.lock().clone()
    }
    pub fn teams(&self) -> Vec<&'static Team> {
        self.teams.lock().clone()
    }
}

impl team::Factory for Measurement {
    fn new_location(&self, name: String) -> &'static LocationCell {
        match self.create_location(name, otf2::UNDEFINED_U32) {
            Ok(cell) => cell,
            Err(message) => {
                warn_once("location", || {
                    format!("{message}; events of that thread are lost")
                });
                placeholder_location()
            }
        }
    }

    fn new_team(&self, size: u32, parent_comm: u32) -> &'static Team {
        let mut teams = self.teams.lock();
        let comm = teams.len() as u32;
        let team: &'static Team = Box::leak(Box::new(team::new_team(comm, size, parent_comm)));
        journal::record(&Fact::Team {
            comm,
            size,
            parent_comm,
        });
        teams.push(team);
        team
    }
}

/// A location without a writer: events sent to it are dropped (only used when a location
/// cannot be created, e.g. the output directory vanished).
fn placeholder_location() -> &'static LocationCell {
    Box::leak(Box::new(LocationCell::without_writer()))
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is writable for its whole length, which is what we pass.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len()) };
    if rc != 0 {
        return "localhost".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// `path` relative to the working directory at start: files created later (a thread's events,
/// the definitions and the anchor at the end) must land there even if the program changes its
/// working directory meanwhile.
fn absolute(path: PathBuf) -> PathBuf {
    match std::env::current_dir() {
        Ok(cwd) if path.is_relative() => cwd.join(path),
        _ => path,
    }
}

/// Why a directory cannot hold this run's trace.
enum Unusable {
    /// Another run's: in use, finished, or the remains of one that did not end.
    Taken(String),
    Failed(std::io::Error),
}

/// The archive in `dir`, if this process may have it: one process owns an experiment directory
/// (its lock), a finished trace is never overwritten, and the remains of a run that did not
/// end are kept for `pomptrace recover` rather than mixed with this run's files. The ranks of
/// an MPI job share the directory: each owns its own lock and journal, and only its own
/// remains (or a trace the job has already written) make the directory another run's.
fn claim(
    dir: &Path,
    job: Option<&launcher::JobRank>,
    archive_config: ArchiveConfig,
) -> Result<ArchiveWriter, Unusable> {
    let rank = job.map(|job| job.rank);
    let created = match rank {
        Some(rank) => {
            ArchiveWriter::create_shared(dir, "traces", archive_config, &format!("rank{rank}"))
        }
        None => ArchiveWriter::create(dir, "traces", archive_config),
    };
    match created {
        Ok(_) if journal::journal_path(dir, rank).exists() => Err(Unusable::Taken(format!(
            "holds the remains of a run that did not end (`pomptrace {} {}` makes them a \
             readable trace)",
            // A job's remains are the parts its ranks wrote; recovery reads one process's.
            if job.is_some() { "unify" } else { "recover" },
            dir.display()
        ))),
        Ok(_) if job.is_some_and(|job| job::part_written(dir, job)) => Err(Unusable::Taken(
            "already holds this rank's part of another job's trace".into(),
        )),
        Ok(archive) => Ok(archive),
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
            Err(Unusable::Taken(format!("is {e}")))
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            Err(Unusable::Taken("already holds a trace".into()))
        }
        Err(e) => Err(Unusable::Failed(e)),
    }
}

/// Creates the experiment directory and the archive in it. A directory taken by another run
/// gives way to `DIR-<pid>`; one that cannot be created falls back to the temporary directory.
/// Either is said in one line.
fn open_archive(
    config: &Config,
    program: &str,
    job: Option<&launcher::JobRank>,
    archive_config: ArchiveConfig,
) -> Result<(PathBuf, ArchiveWriter), String> {
    let pid = std::process::id();
    let default_name = match job {
        Some(job) => job::default_directory_name(program, job),
        None => format!("pomptrace-{program}-{}-{pid}", local_timestamp()),
    };
    let wanted = absolute(
        config
            .experiment_directory
            .clone()
            .unwrap_or_else(|| PathBuf::from(&default_name)),
    );
    let first = match claim(&wanted, job, archive_config.clone()) {
        Ok(a) => return Ok((wanted, a)),
        Err(Unusable::Taken(why)) => {
            // The ranks of a job give way together, to a directory they all name alike.
            let suffix = job.map_or_else(|| pid.to_string(), job::directory_suffix);
            let own = PathBuf::from(format!("{}-{suffix}", wanted.display()));
            match claim(&own, job, archive_config.clone()) {
                Ok(a) => {
                    warn(&format!(
                        "{} {why}; writing this trace to {} instead",
                        wanted.display(),
                        own.display()
                    ));
                    return Ok((own, a));
                }
                Err(Unusable::Taken(why)) => format!("{} {why}", own.display()),
                Err(Unusable::Failed(e)) => format!("{}: {e}", own.display()),
            }
        }
        Err(Unusable::Failed(e)) => e.to_string(),
    };
    let fallback = absolute(std::env::temp_dir().join(&default_name));
    match claim(&fallback, job, archive_config) {
        Ok(a) => {
            warn(&format!(
                "cannot write the trace to {} ({first}); writing it to {} instead",
                wanted.display(),
                fallback.display()
            ));
            Ok((fallback, a))
        }
        Err(Unusable::Taken(second)) => Err(format!(
            "cannot create the trace directory {} ({first}) nor {} (it {second})",
            wanted.display(),
            fallback.display()
        )),
        Err(Unusable::Failed(second)) => Err(format!(
            "cannot create the trace directory {} ({first}) nor {} ({second})",
            wanted.display(),
            fallback.display()
        )),
    }
}

/// Ends the measurement once: closes open regions, drains every location's events, writes
/// definitions and the anchor file, and prints one line saying where the trace is. The exit
/// status is not known here (POMP2_Finalize); ProgramEnd records it as undefined.
pub fn finalize() {
    finalize_with_status(otf2::UNDEFINED_I64)
}

/// `finalize` at the end of the process: `exit_status` is what exit() was given (or 128 +
/// the signal number for a fatal signal, as shells report it).
pub(super) fn finalize_with_status(exit_status: i64) {
    if STATE.load(Ordering::Acquire) == DISABLED {
        // Also a forked child, where another thread of the parent may have held the lock.
        return;
    }
    let _guard = START_LOCK.lock();
    let ended = STATE.compare_exchange(RUNNING, FINISHED, Ordering::AcqRel, Ordering::Acquire);
    update_hot();
    if ended.is_err() {
        if STATE.load(Ordering::Acquire) == NOT_STARTED {
            // Finalize before any event: nothing to write, and nothing may start afterwards.
            STATE.store(FINISHED, Ordering::Release);
            update_hot();
        }
        return;
    }
    let still_busy = active::wait_for_recorders();
    if let Some(m) = MEASUREMENT.get() {
        match output::write_trace(m, exit_status, &still_busy) {
            Ok(summary) => {
                if m.config.verbose > 0 {
                    warn(&summary.line);
                }
                if m.config.verbose > 1 {
                    warn(&summary.cost);
                }
            }
            Err(message) => warn(&message),
        }
    }
}
