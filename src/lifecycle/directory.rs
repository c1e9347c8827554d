//! The experiment directory: which one this run writes to, and what makes a directory
//! another run's. Decided once at the start; a refusal falls back and says so in one line.

use std::path::{Path, PathBuf};

use crate::base::config::Config;
use crate::base::diagnostics::warn;
use crate::base::launcher;
use crate::output::{job, journal};
use otf2::{ArchiveConfig, ArchiveWriter};

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
    profile_only: bool,
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
        // A run without a trace has no anchor to say it finished: its profile does.
        Ok(_) if profile_only && dir.join(otf2::profile_unify::PROFILE_FILE).is_file() => {
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

/// Creates the experiment directory and the archive in it. A directory taken by another run
/// gives way to `DIR-<pid>`; one that cannot be created falls back to the temporary directory.
/// Either is said in one line.
pub(crate) fn open_archive(
    config: &Config,
    program: &str,
    job: Option<&launcher::JobRank>,
    archive_config: ArchiveConfig,
) -> Result<(PathBuf, ArchiveWriter), String> {
    let pid = std::process::id();
    let profile_only = config.profiling && !config.tracing;
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
    let first = match claim(&wanted, job, archive_config.clone(), profile_only) {
        Ok(a) => return Ok((wanted, a)),
        Err(Unusable::Taken(why)) => {
            // The ranks of a job give way together, to a directory they all name alike.
            let suffix = job.map_or_else(|| pid.to_string(), job::directory_suffix);
            let own = PathBuf::from(format!("{}-{suffix}", wanted.display()));
            match claim(&own, job, archive_config.clone(), profile_only) {
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
    match claim(&fallback, job, archive_config, profile_only) {
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
