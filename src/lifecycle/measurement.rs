//! The measurement of one process: its configuration, clock, archive and writer, and every
//! location and team it has made. Built once by the start (`start.rs`); locations and teams are
//! added under its locks when a thread or a team is seen for the first time, never per event.

use std::path::{Path, PathBuf};

use super::directory::open_archive;
use crate::base::clock;
use crate::base::config::{Config, PROGRAM_LINE};
use crate::base::diagnostics::{warn, warn_once};
use crate::base::launcher;
use crate::base::signal_safe_mutex::SignalSafeMutex;
use crate::metrics::sampler;
use crate::metrics::synchronous as metrics;
use crate::model::team;
use crate::model::thread;
use crate::model::tree::{self, Factory, Node, Team};
use crate::output::facts::{self, Fact};
use crate::output::registry::REGISTRY;
use crate::output::{job, journal};
use crate::record::location::LocationCell;
use crate::record::profile::Profile;
use otf2::{ArchiveConfig, ArchiveWriter, BackgroundWriter, Event};

/// The name of the initial thread's location.
const MASTER_THREAD: &str = "Master thread";

pub(crate) struct Measurement {
    pub(crate) config: Config,
    pub(crate) clock_kind: clock::ClockKind,
    pub(crate) start: clock::Sample,
    pub(crate) archive: SignalSafeMutex<Option<ArchiveWriter>>,
    pub(crate) journal: &'static journal::Journal,
    pub(crate) writer: BackgroundWriter,
    pub(crate) memory_chunk_size: usize,
    pub(crate) locations: SignalSafeMutex<Vec<&'static LocationCell>>,
    pub(crate) teams: SignalSafeMutex<Vec<&'static Team>>,
    pub(crate) root: Option<&'static Node>,
    pub(crate) root_team: &'static Team,
    pub(crate) lock_api_regions: [u32; 10],
    pub(crate) experiment_dir: PathBuf,
    /// This process's rank when it runs in an MPI job (found in the launcher's environment).
    pub(crate) job: Option<launcher::JobRank>,
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

/// The program's name: its command's file name.
pub(crate) fn program_name() -> String {
    let args = command_line();
    Path::new(&args[0])
        .file_name()
        .map_or_else(|| args[0].clone(), |n| n.to_string_lossy().into_owned())
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
    /// `new_writer`: the event writer for this configuration, whose chunks are journaled in
    /// `journal` (`streaming::new_writer`).
    pub(crate) fn new(
        config: Config,
        new_writer: fn(&Config, &'static journal::Journal) -> BackgroundWriter,
    ) -> Result<Self, String> {
        let job = launcher::detect(|name| std::env::var(name).ok(), |m| warn(&m));
        let clock_kind = clock::select(job::clock_choice(config.clock, job.as_ref()));
        let start = clock::sample();
        let start_realtime_ns = realtime_ns();
        let args = command_line();
        let program = program_name();
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
        match config.sampling_interval {
            Some(interval) if config.tracing => start_sampler(&archive, interval),
            Some(_) => warn(
                "POMPTRACE_SAMPLING_INTERVAL records into the trace, and \
                 POMPTRACE_ENABLE_TRACING=0: no sampler",
            ),
            None => {}
        }
        if config.snapshots() && !config.tracing {
            warn("snapshots are part of the trace, and POMPTRACE_ENABLE_TRACING=0: no snapshots");
        }
        let mut record = config.record_text(&experiment_dir);
        // What names a profile's root when the trace lost the program's begin (a run killed
        // before its first chunk reached the disk).
        let program: String = command_line()[0]
            .chars()
            .map(|c| if c.is_control() { '?' } else { c })
            .collect();
        record.push_str(&format!("{PROGRAM_LINE}{program}\n"));
        if let Err(e) = archive
            .directory()
            .write_file_atomically("pomptrace.cfg", record.as_bytes())
        {
            warn(&format!(
                "cannot write {}: {e}",
                experiment_dir.join("pomptrace.cfg").display()
            ));
        }
        let start_fact = facts::Start {
            clock: clock_kind,
            sample: start,
            realtime_ns: start_realtime_ns,
            memory_chunk_size: config.chunk_size as u64,
            archive: archive.config().clone(),
            hostname: hostname(),
            rank: job.as_ref().map(|job| job.rank),
        };
        let mut registry = REGISTRY.lock();
        // The journal starts with what a run killed at once needs to be recovered: the
        // metrics that events carry, the first location (`create_location` below records it
        // again, which changes nothing) and whether a profile is to be rebuilt.
        let metric_names = metrics::selected()
            .iter()
            .map(|m| m.member.name.to_string())
            .collect();
        let master = Fact::Location {
            id: 0,
            name: registry.string(MASTER_THREAD),
        };
        let first_facts = [Fact::Metrics(metric_names), master];
        let journal = journal::start(
            archive.directory(),
            &journal::journal_name(job.as_ref().map(|j| j.rank)),
            start_fact,
            registry.strings(),
            registry.regions(),
            &first_facts,
        )
        .map_err(|e| format!("cannot write the definitions journal: {e}"))?;
        drop(registry);
        // A chunk goes to disk only after every definition it may refer to (the writer's
        // hooks); no thread is started here.
        let writer = new_writer(&config, journal);
        writer.limit_buffers(config.buffers_for_all_threads());
        let lock_api_regions = REGISTRY.lock().define_lock_api_regions();
        let root_team: &'static Team =
            Box::leak(Box::new(tree::new_team(0, 1, otf2::UNDEFINED_U32)));
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
            experiment_dir,
            job,
        };
        crate::record::budget::configure(
            m.config.max_trace_size,
            file_chunk_size(m.config.chunk_size) as u64,
        );
        let master = m.create_location(MASTER_THREAD.into(), root_team.comm)?;
        root_team.set_member(0, 0);
        let root = Node::root(master, String::new());
        if crate::openmp::level() == 0 {
            team::adopt(thread::state(), root, false, &m);
        }
        // Otherwise the start came from inside a parallel region the library did not see begin
        // (an orphaned construct called from uninstrumented code, possibly on a worker): the
        // calling thread finds its position like every other thread there, so that thread 0 of
        // that team continues the root location and no two threads share one.
        m.root = Some(root);
        Ok(m)
    }

    fn create_location(&self, name: String, team: u32) -> Result<&'static LocationCell, String> {
        // A new thread's location: where the ended ones' memory is worth taking back.
        super::retire::retire_ended(&self.writer);
        let mut locations = self.locations.lock();
        let number = locations.len() as u32;
        let archive = self.archive.lock();
        let archive = archive.as_ref().ok_or("the measurement has finished")?;
        let writer = if self.config.tracing {
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
            writer
                .sink_mut()
                .keep_in_memory(self.config.chunks_kept_in_memory());
            Some(writer)
        } else {
            None
        };
        let profile = self.config.profiling.then(|| {
            Profile::new(
                self.config.profile_max_nodes,
                self.config.profile_max_depth,
                crate::metrics::synchronous::selected().len(),
            )
        });
        let name_id = REGISTRY.lock().string(&name);
        journal::record(&Fact::Location {
            id: number,
            name: name_id,
        });
        // On disk before the location records anything: a run killed before its first chunk
        // still recovers into an archive that names every location (with no events).
        if let Err(e) = self.journal.flush() {
            warn_once("journal", || {
                format!("{e}; a killed run could not be recovered")
            });
        }
        let cell: &'static LocationCell = Box::leak(Box::new(LocationCell::new(
            number, name, writer, profile, team,
        )));
        locations.push(cell);
        Ok(cell)
    }

    pub(crate) fn program_begin(&self) {
        let args = command_line();
        let mut registry = REGISTRY.lock();
        let name = registry.string(&args[0]);
        let arguments = args[1..].iter().map(|a| registry.string(a)).collect();
        drop(registry);
        // SAFETY: the starting thread owns the root location.
        let master = unsafe { self.root().location.get() };
        master.write_with_thread_id(
            self.start.ticks,
            thread::state().tid.get(),
            &Event::ProgramBegin {
                program_name: name,
                arguments,
            },
        );
    }
}

impl Measurement {
    /// The initial thread's position in the thread tree.
    pub(crate) fn root(&self) -> &'static Node {
        self.root
            .expect("root node exists once the measurement runs")
    }
    pub(crate) fn locations(&self) -> Vec<&'static LocationCell> {
        self.locations.lock().clone()
    }
}

impl Factory for Measurement {
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
        let team: &'static Team = Box::leak(Box::new(tree::new_team(comm, size, parent_comm)));
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

pub(crate) fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is writable for its whole length, which is what we pass.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len()) };
    if rc != 0 {
        return "localhost".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

impl Measurement {
    /// The OTF2 location id of this process's location `number`.
    pub(crate) fn location_id(&self, number: u32) -> u64 {
        job::location_id(self.job.as_ref().map(|job| job.rank), number)
    }
}
