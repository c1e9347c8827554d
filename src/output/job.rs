//! A measurement that is one rank of a parallel job (see `launcher.rs` for how it is known).
//!
//! All ranks write into one experiment directory: their event files under global location ids
//! that encode the rank (`(thread number << 32) | rank`, as the reference numbers them), and
//! their definitions, with ids of their own, as a *part* `DIR/ranks/<rank>.otf2` + `.def`.
//! Whichever rank finds every part written when it finishes unifies them into
//! `DIR/traces.otf2` (coordinated through the file system only: a part's anchor appears by an
//! atomic rename, and an exclusively created marker elects one unifier). A job that dies
//! before that is unified later by `pomptrace unify DIR`, from the parts that were written.

use std::path::Path;

use crate::base::config::ClockChoice;
use crate::base::launcher::JobRank;
use otf2::unify::{PARTS_DIR, PARTS_PROPERTY, PART_PROPERTY};
use otf2::{ArchiveConfig, ArchiveWriter, GlobalDefWriter, LocalDef};

/// Created (exclusively) by the rank that unifies the job's parts.
const UNIFIER_MARKER: &str = ".unifying";

/// The OTF2 location id of local location `number`: encodes the rank in a job, so that every
/// rank can name its files without asking the others.
pub fn location_id(rank: Option<u32>, number: u32) -> u64 {
    match rank {
        Some(rank) => (u64::from(number) << 32) | u64::from(rank),
        None => u64::from(number),
    }
}

/// The name of the location group of a process: its rank in a job.
pub fn location_group_name(rank: Option<u32>) -> String {
    match rank {
        Some(rank) => format!("MPI Rank {rank}"),
        None => "Process".into(),
    }
}

/// The clock of a rank: the one a plain process would use (the TSC where it is invariant,
/// unless `POMPTRACE_CLOCK=monotonic`). The ranks' time lines are merged by clock offsets: each
/// rank's part carries its own timer resolution and the offsets to rank 0's clock measured at
/// MPI_Init and MPI_Finalize, and unification puts every part on rank 0's time line
/// (`otf2::unify`), so that events of different nodes line up.
pub fn clock_choice(choice: ClockChoice, _job: Option<&JobRank>) -> ClockChoice {
    choice
}

/// The default experiment directory of a rank: the same name in every rank of the job.
pub fn default_directory_name(program: &str, job: &JobRank) -> String {
    match &job.job_id {
        Some(id) => format!("pomptrace-{program}-job{id}"),
        None => {
            // The launcher's process (the parent) is shared by the ranks of one node.
            // SAFETY: getppid has no preconditions.
            let parent = unsafe { libc::getppid() };
            crate::base::diagnostics::warn_once("job-id", || {
                format!("{} exports no job id; the ranks of each node name their directory after their parent process (set POMPTRACE_EXPERIMENT_DIRECTORY for a job on several nodes)", job.source)
            });
            format!("pomptrace-{program}-ppid{parent}")
        }
    }
}

/// What the ranks of a job append to their experiment directory's name when it is another
/// run's: the same in every rank of the job.
pub fn directory_suffix(job: &JobRank) -> String {
    match &job.job_id {
        Some(id) => format!("job{id}"),
        // SAFETY: getppid has no preconditions.
        None => format!("ppid{}", unsafe { libc::getppid() }),
    }
}

/// True if `experiment_dir` holds a part of `job`'s rank written earlier (by another job).
pub fn part_written(experiment_dir: &Path, job: &JobRank) -> bool {
    experiment_dir
        .join(PARTS_DIR)
        .join(format!("{}.otf2", job.rank))
        .exists()
}

/// Writes a rank's definitions as its part of the job's archive in `experiment_dir`, with
/// `clock_offsets` for all its locations.
pub(crate) fn write_part(
    job: &JobRank,
    experiment_dir: &Path,
    mut config: ArchiveConfig,
    defs: GlobalDefWriter,
    clock_offsets: &[LocalDef],
) -> Result<(), String> {
    config
        .properties
        .push((PARTS_PROPERTY.into(), job.size.to_string()));
    config
        .properties
        .push((PART_PROPERTY.into(), job.rank.to_string()));
    let parts_dir = experiment_dir.join(PARTS_DIR);
    let part = ArchiveWriter::create(&parts_dir, &job.rank.to_string(), config)
        .map_err(|e| format!("cannot write the definitions of rank {}: {e}", job.rank))?;
    let mut offsets = part.local_def_writer();
    for offset in clock_offsets {
        offsets.write(offset);
    }
    part.write_local_defs(location_id(Some(job.rank), 0), offsets)
        .and_then(|()| part.finish(defs, &[]).map(drop))
        .map_err(|e| format!("writing the definitions of rank {} failed: {e}", job.rank))
}

/// True for exactly one caller per directory: the first to create the marker while the job's
/// `anchor` is not written yet (the unifier removes the marker after writing it, with
/// [`unifier_done`]).
pub(crate) fn elected(parts_dir: &Path, anchor: &Path) -> bool {
    let marker = parts_dir.join(UNIFIER_MARKER);
    let created = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&marker)
        .is_ok();
    if created && anchor.exists() {
        let _ = std::fs::remove_file(&marker);
        return false;
    }
    created
}

/// The unifier wrote the job's anchor: its marker goes. A rank that creates the marker after
/// this sees the anchor and does not unify again.
pub(crate) fn unifier_done(parts_dir: &Path) {
    let _ = std::fs::remove_file(parts_dir.join(UNIFIER_MARKER));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank(rank: u32, job_id: Option<&str>) -> JobRank {
        JobRank {
            rank,
            size: 4,
            job_id: job_id.map(String::from),
            source: "test",
        }
    }

    #[test]
    fn location_ids_encode_the_rank() {
        assert_eq!(location_id(None, 3), 3);
        assert_eq!(location_id(Some(0), 0), 0);
        assert_eq!(location_id(Some(2), 0), 2);
        assert_eq!(location_id(Some(2), 1), (1 << 32) | 2);
    }

    #[test]
    fn ranks_of_one_job_share_their_default_directory() {
        assert_eq!(
            default_directory_name("app", &rank(0, Some("77"))),
            default_directory_name("app", &rank(3, Some("77")))
        );
        assert_ne!(
            default_directory_name("app", &rank(0, Some("77"))),
            default_directory_name("app", &rank(0, Some("78")))
        );
    }

    #[test]
    fn ranks_use_the_clock_a_plain_process_uses() {
        let job = rank(0, None);
        for choice in [ClockChoice::Auto, ClockChoice::Tsc, ClockChoice::Monotonic] {
            assert_eq!(clock_choice(choice, None), choice);
            assert_eq!(clock_choice(choice, Some(&job)), choice);
        }
    }

    #[test]
    fn one_unifier_is_elected() {
        let dir = crate::test_dir("pomptrace-elect");
        let _ = std::fs::remove_file(dir.join(UNIFIER_MARKER));
        let anchor = dir.join("traces.otf2");
        assert!(elected(&dir, &anchor));
        assert!(!elected(&dir, &anchor));
        // After the unifier wrote the anchor and removed the marker, nobody else is elected.
        std::fs::write(&anchor, "").unwrap();
        unifier_done(&dir);
        assert!(!elected(&dir, &anchor));
        assert!(!dir.join(UNIFIER_MARKER).exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
