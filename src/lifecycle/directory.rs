//! The experiment directory: which one this run writes to, and what makes a directory
//! another run's. Decided once at the start; a refusal falls back and says so in one line.

use std::path::{Path, PathBuf};

use crate::base::config::Config;
use crate::base::diagnostics::warn;
use crate::base::launcher;
use crate::output::{job, journal};
use otf2::{ArchiveConfig, ArchiveWriter, Directory, Existing};

pub(crate) fn local_timestamp() -> String {
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
    /// Refused (a symbolic link, another user's, writable by others) or not creatable.
    Failed(std::io::Error),
}

/// How a directory is made: its mode when pomptrace makes it, and whether one already there
/// may be used.
#[derive(Clone, Copy)]
struct Placement {
    mode: u32,
    existing: Existing,
}

/// A directory the user named: made with the usual permissions, or used as it is.
const NAMED: Placement = Placement {
    mode: 0o777,
    existing: Existing::Reuse,
};
/// A name pomptrace picked that the ranks of a job share (or that is unique to this run):
/// private, and used when it is there already (after the checks `Directory` makes).
const PICKED: Placement = Placement {
    mode: 0o700,
    existing: Existing::Reuse,
};
/// A name pomptrace picked for this process alone: private, and made now or not at all.
const PICKED_FRESH: Placement = Placement {
    mode: 0o700,
    existing: Existing::Refuse,
};

/// The archive in `dir`, if this process may have it: one process owns an experiment directory
/// (its lock), a finished trace is never overwritten, and the remains of a run that did not
/// end are kept for `pomptrace recover` rather than mixed with this run's files. The ranks of
/// an MPI job share the directory: each owns its own lock and journal, and only its own
/// remains (or a trace the job has already written) make the directory another run's. Nothing
/// is ever created through a symbolic link (see `otf2::Directory`).
fn claim(
    dir: &Path,
    placement: Placement,
    job: Option<&launcher::JobRank>,
    archive_config: ArchiveConfig,
    profiling: bool,
) -> Result<ArchiveWriter, Unusable> {
    let rank = job.map(|job| job.rank);
    let directory =
        Directory::create(dir, placement.mode, placement.existing).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => Unusable::Taken("already exists".into()),
            _ => Unusable::Failed(e),
        })?;
    if job.is_some() {
        // Where every rank writes its part at the end (definitions, profile): refused now, while
        // the run can still go elsewhere, if it is not a directory of this user's.
        directory
            .subdirectory(otf2::unify::PARTS_DIR, placement.mode)
            .map_err(Unusable::Failed)?;
    }
    let created = match rank {
        Some(rank) => ArchiveWriter::create_shared_in(
            directory,
            "traces",
            archive_config,
            &format!("rank{rank}"),
        ),
        None => ArchiveWriter::create_in(directory, "traces", archive_config),
    };
    match created {
        Ok(archive) if archive.directory().contains(&journal::journal_name(rank)) => {
            Err(Unusable::Taken(format!(
                "holds the remains of a run that did not end (`pomptrace {} {}` makes them a \
                 readable trace)",
                // A job's remains are the parts its ranks wrote; recovery reads one process's.
                if job.is_some() { "unify" } else { "recover" },
                dir.display()
            )))
        }
        Ok(_) if job.is_some_and(|job| job::part_written(dir, job)) => Err(Unusable::Taken(
            "already holds this rank's part of another job's trace".into(),
        )),
        Ok(archive) if holds_event_files(&archive, rank) => Err(Unusable::Taken(
            "already holds event files of another run".into(),
        )),
        // A profile is as much a run's result as its trace (and a run without a trace has no
        // anchor to say it finished: its profile does).
        Ok(archive)
            if profiling
                && archive
                    .directory()
                    .contains(otf2::profile_unify::PROFILE_FILE) =>
        {
            Err(Unusable::Taken("already holds a profile".into()))
        }
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

/// Whether the archive's location directory already holds event files this process would
/// write (any, for a process alone; its own first location's, for a rank of a job).
fn holds_event_files(archive: &ArchiveWriter, rank: Option<u32>) -> bool {
    match rank {
        Some(rank) => archive
            .location_directory()
            .contains(&format!("{}.evt", job::location_id(Some(rank), 0))),
        None => std::fs::read_dir(archive.location_dir())
            .map_or(true, |mut entries| entries.next().is_some()),
    }
}

/// Eight random bytes in hex, from the kernel (a name in shared temporary space that nobody can
/// take before this process does).
fn unpredictable_suffix() -> String {
    let mut bytes = [0u8; 8];
    // SAFETY: `bytes` is writable for its whole length, which is what we pass.
    let got = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
    if got != bytes.len() as isize {
        // No entropy source: the clock and the process id (still made with O_EXCL semantics).
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        bytes = (now ^ (u64::from(std::process::id()) << 40)).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Creates the experiment directory and the archive in it. A directory taken by another run
/// gives way to `DIR-<pid>`; one that cannot be created (or is refused: a symbolic link,
/// another user's, writable by others) falls back to the temporary directory. Either is said in
/// one line.
pub(crate) fn open_archive(
    config: &Config,
    program: &str,
    job: Option<&launcher::JobRank>,
    archive_config: ArchiveConfig,
) -> Result<(PathBuf, ArchiveWriter), String> {
    let pid = std::process::id();
    let profiling = config.profiling;
    let results = match (config.tracing, config.profiling) {
        (true, true) => "trace and profile",
        (false, true) => "profile",
        _ => "trace",
    };
    let default_name = match job {
        Some(job) => job::default_directory_name(program, job),
        None => format!("pomptrace-{program}-{}-{pid}", local_timestamp()),
    };
    let (wanted, placement) = match &config.experiment_directory {
        Some(dir) => (absolute(dir.clone()), NAMED),
        None => (absolute(PathBuf::from(&default_name)), PICKED),
    };
    let first = match claim(&wanted, placement, job, archive_config.clone(), profiling) {
        Ok(a) => return Ok((wanted, a)),
        Err(Unusable::Taken(why)) => {
            // The ranks of a job give way together, to a directory they all name alike.
            let (suffix, own_placement) = match job {
                Some(job) => (job::directory_suffix(job), PICKED),
                None => (pid.to_string(), PICKED_FRESH),
            };
            let own = PathBuf::from(format!("{}-{suffix}", wanted.display()));
            match claim(&own, own_placement, job, archive_config.clone(), profiling) {
                Ok(a) => {
                    warn(&format!(
                        "{} {why}; writing this {results} to {} instead",
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
    // In shared temporary space: the ranks of a job need one name they all know; a process
    // alone takes a name nobody can guess.
    let (fallback, fallback_placement) = match job {
        Some(_) => (std::env::temp_dir().join(&default_name), PICKED),
        None => (
            std::env::temp_dir().join(format!("pomptrace-{program}-{}", unpredictable_suffix())),
            PICKED_FRESH,
        ),
    };
    let fallback = absolute(fallback);
    match claim(
        &fallback,
        fallback_placement,
        job,
        archive_config,
        profiling,
    ) {
        Ok(a) => {
            warn(&format!(
                "cannot write the {results} to {} ({first}); writing it to {} instead",
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
