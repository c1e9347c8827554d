//! The measurement: lifecycle (start on the first call, finalize once), global state, and the
//! operations the POMP2 entry points map to. Knows nothing of C types or OTF2 byte layouts.
//!
//! Locks are only taken off the hot path: at start, when a handle or a thread is seen for the
//! first time, when a team forms, and at finalize.

mod active;
pub(crate) mod clock;
pub mod config;
pub(crate) mod constructs;
pub mod job;
pub mod launcher;
pub(crate) mod location;
pub(crate) mod locks;
pub(crate) mod mpi;
mod output;
mod process;
pub(crate) mod regions;
pub(crate) mod tasks;
pub(crate) mod team;
pub(crate) mod thread;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use once_cell::sync::OnceCell;
use parking_lot::Mutex;

use crate::otf2::{ArchiveConfig, ArchiveWriter, BackgroundWriter, Event};
pub use active::{active, Active};
use config::Config;
use location::LocationCell;
use regions::Registry;
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
/// and whether events are recorded (`STATE == RUNNING`, `RECORDING`).
pub(super) static HOT: AtomicU8 = AtomicU8::new(0);
pub(crate) const HOT_RUNNING: u8 = 1;
pub(crate) const HOT_RECORDING: u8 = 2;
pub(crate) const HOT_TSC: u8 = 4;

#[inline(always)]
pub(crate) fn hot() -> u8 {
    HOT.load(Ordering::Relaxed)
}

/// Recomputes `HOT` after `STATE` or `RECORDING` changed.
fn update_hot() {
    let running = STATE.load(Ordering::Acquire) == RUNNING;
    let value = if running {
        HOT_RUNNING
            | if clock::is_tsc() { HOT_TSC } else { 0 }
            | if RECORDING.load(Ordering::Relaxed) {
                HOT_RECORDING
            } else {
                0
            }
    } else {
        0
    };
    HOT.store(value, Ordering::Release);
}
static MEASUREMENT: OnceCell<Measurement> = OnceCell::new();
static START_LOCK: Mutex<()> = Mutex::new(());

/// Strings, regions and critical-section locks: process-wide, so that handles can be assigned
/// in any state (by the init file while starting, after the end, with the measurement off).
pub static REGISTRY: once_cell::sync::Lazy<Mutex<Registry>> =
    once_cell::sync::Lazy::new(|| Mutex::new(Registry::default()));

pub struct Measurement {
    pub config: Config,
    clock_kind: clock::ClockKind,
    start: clock::Sample,
    start_realtime_ns: u64,
    archive: Mutex<Option<ArchiveWriter>>,
    writer: BackgroundWriter,
    memory_chunk_size: usize,
    locations: Mutex<Vec<&'static LocationCell>>,
    teams: Mutex<Vec<&'static Team>>,
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

/// Prints a warning the first time `key` is seen.
pub fn warn_once(key: &str, message: impl FnOnce() -> String) {
    static SEEN: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    let mut seen = SEEN.lock();
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

/// The running measurement, without starting it (for calls that must not start it).
#[inline(always)]
pub fn running() -> Option<&'static Measurement> {
    if STATE.load(Ordering::Acquire) == RUNNING {
        MEASUREMENT.get()
    } else {
        None
    }
}

/// Whether events other than fork/join/team records are recorded (POMP2_On/Off).
#[inline(always)]
pub fn recording() -> bool {
    RECORDING.load(Ordering::Relaxed)
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
    let config = Config::from_env(|m| warn(&m));
    if !config.enabled {
        STATE.store(DISABLED, Ordering::Release);
        return None;
    }
    let measurement = match Measurement::new(config) {
        Ok(m) => m,
        Err(message) => {
            warn(&format!("{message}; nothing will be recorded"));
            STATE.store(DISABLED, Ordering::Release);
            return None;
        }
    };
    let m = MEASUREMENT.get_or_init(|| measurement);
    // The init file (if linked) assigns all handles now, before any event.
    crate::openmp::call_init_regions();
    active::register_membarrier();
    process::register_exit_handler();
    process::register_fork_handler();
    process::register_signal_handlers();
    m.program_begin();
    STATE.store(RUNNING, Ordering::Release);
    update_hot();
    drop(guard);
    Some(m)
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
    memory_chunk.clamp(
        crate::otf2::chunk::MIN_CHUNK_SIZE,
        crate::otf2::chunk::MAX_CHUNK_SIZE,
    )
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
        let writer = BackgroundWriter::spawn("pomptrace-writer")
            .map_err(|e| format!("cannot start the writer thread: {e}"))?;
        let lock_api_regions = REGISTRY.lock().define_lock_api_regions();
        let root_team: &'static Team =
            Box::leak(Box::new(team::new_team(0, 1, crate::otf2::UNDEFINED_U32)));
        let mut m = Measurement {
            memory_chunk_size: config.chunk_size,
            config,
            clock_kind,
            start,
            start_realtime_ns,
            archive: Mutex::new(Some(archive)),
            writer,
            locations: Mutex::new(Vec::new()),
            teams: Mutex::new(vec![root_team]),
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
        REGISTRY.lock().string(&name);
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
        match self.create_location(name, crate::otf2::UNDEFINED_U32) {
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
        let team: &'static Team = Box::leak(Box::new(team::new_team(
            teams.len() as u32,
            size,
            parent_comm,
        )));
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

/// Creates the experiment directory and the archive in it. If it cannot be created where the
/// user asked, falls back to the temporary directory (and says so).
fn open_archive(
    config: &Config,
    program: &str,
    job: Option<&launcher::JobRank>,
    archive_config: ArchiveConfig,
) -> Result<(PathBuf, ArchiveWriter), String> {
    let default_name = match job {
        Some(job) => job::default_directory_name(program, job),
        None => format!(
            "pomptrace-{program}-{}-{}",
            local_timestamp(),
            std::process::id()
        ),
    };
    let wanted = absolute(
        config
            .experiment_directory
            .clone()
            .unwrap_or_else(|| PathBuf::from(&default_name)),
    );
    match ArchiveWriter::create(&wanted, "traces", archive_config.clone()) {
        Ok(a) => Ok((wanted, a)),
        Err(first) => {
            let fallback = absolute(std::env::temp_dir().join(&default_name));
            match ArchiveWriter::create(&fallback, "traces", archive_config) {
                Ok(a) => {
                    warn(&format!(
                        "cannot write the trace to {} ({first}); writing it to {} instead",
                        wanted.display(),
                        fallback.display()
                    ));
                    Ok((fallback, a))
                }
                Err(second) => Err(format!(
                    "cannot create the trace directory {} ({first}) nor {} ({second})",
                    wanted.display(),
                    fallback.display()
                )),
            }
        }
    }
}

/// Ends the measurement once: closes open regions, drains every location's events, writes
/// definitions and the anchor file, and prints one line saying where the trace is. The exit
/// status is not known here (POMP2_Finalize); ProgramEnd records it as undefined.
pub fn finalize() {
    finalize_with_status(crate::otf2::UNDEFINED_I64)
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
        }
        return;
    }
    let still_busy = active::wait_for_recorders();
    if let Some(m) = MEASUREMENT.get() {
        match output::write_trace(m, exit_status, &still_busy) {
            Ok(summary) => {
                if m.config.verbose > 0 {
                    warn(&summary);
                }
            }
            Err(message) => warn(&message),
        }
    }
}
