//! Which rank of which job this process is, read from the variables that MPI launchers put in
//! every rank's environment. Pure: the environment comes in as a lookup function, so every
//! launcher's spelling is unit-tested without launching anything.
//!
//! A rank found here makes the measurement write into the job's shared experiment directory
//! (one location group per rank), with or without the MPI wrapper library.

/// This process's place in a parallel job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobRank {
    pub rank: u32,
    pub size: u32,
    /// Names the job; the same in every rank of one job and different between jobs (the
    /// default experiment directory is derived from it). None when the launcher exports no
    /// job identity.
    pub job_id: Option<String>,
    /// Which launcher's variables were used (for messages).
    pub source: &'static str,
}

/// (rank variable, size variable, launcher) in the order they are trusted: a variable of the
/// MPI library's own launcher wins over the resource manager's that launched it (an `mpirun`
/// inside a Slurm allocation sees SLURM_PROCID of the `mpirun`, not of the rank).
const RANK_VARIABLES: [(&str, &str, &str); 5] = [
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "Open MPI"),
    ("PMI_RANK", "PMI_SIZE", "MPICH/Hydra"),
    ("PMIX_RANK", "PMIX_SIZE", "PMIx"),
    ("SLURM_PROCID", "SLURM_NTASKS", "Slurm"),
    ("MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE", "MVAPICH2"),
];

/// Variables naming the job, most specific first (each value is joined with the next one's
/// when both exist, e.g. Slurm's job and step).
const JOB_VARIABLES: [&[&str]; 4] = [
    &["OMPI_MCA_ess_base_jobid"],
    &["PMIX_NAMESPACE"],
    &["SLURM_JOB_ID", "SLURM_STEP_ID"],
    &["PMI_KVSNAME"],
];

/// The job rank described by `var`, or None when no launcher variable is set (a plain run).
/// A rank variable whose value is not a number, or not below its size, is reported through
/// `warn` and skipped.
pub fn detect(
    var: impl Fn(&str) -> Option<String>,
    mut warn: impl FnMut(String),
) -> Option<JobRank> {
    let number = |name: &str| var(name).map(|v| (v.trim().parse::<u32>().ok(), v));
    for (rank_name, size_name, source) in RANK_VARIABLES {
        let Some((rank, rank_text)) = number(rank_name) else {
            continue;
        };
        let size = number(size_name);
        let (Some(rank), Some((Some(size), _))) = (rank, &size) else {
            warn(format!(
                "{rank_name}={rank_text} (with {size_name}={}) is not a rank and a job size; ignoring them",
                size.map_or_else(|| "unset".into(), |s| s.1)
            ));
            continue;
        };
        if rank >= *size {
            warn(format!(
                "{rank_name}={rank} is not below {size_name}={size}; ignoring them"
            ));
            continue;
        }
        return Some(JobRank {
            rank,
            size: *size,
            job_id: job_id(&var),
            source,
        });
    }
    None
}

fn job_id(var: &impl Fn(&str) -> Option<String>) -> Option<String> {
    JOB_VARIABLES.iter().find_map(|names| {
        let parts: Vec<String> = names
            .iter()
            .map_while(|n| var(n).filter(|v| !v.trim().is_empty()))
            .map(|v| sanitize(v.trim()))
            .collect();
        (!parts.is_empty()).then(|| parts.join("."))
    })
}

/// A job id usable as part of a directory name (Open MPI's namespaces contain `@`, PMIx's
/// may contain `/`).
fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn detect_in(pairs: &[(&str, &str)]) -> (Option<JobRank>, Vec<String>) {
        let env: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut warnings = Vec::new();
        let found = detect(|n| env.get(n).cloned(), |w| warnings.push(w));
        (found, warnings)
    }

    fn job_rank(rank: u32, size: u32, source: &'static str, job_id: Option<&str>) -> JobRank {
        JobRank {
            rank,
            size,
            job_id: job_id.map(String::from),
            source,
        }
    }

    #[test]
    fn a_plain_run_has_no_rank() {
        assert_eq!(detect_in(&[("HOME", "/root")]), (None, vec![]));
    }

    #[test]
    fn open_mpi_rank_size_and_job() {
        let found = detect_in(&[
            ("OMPI_COMM_WORLD_RANK", "3"),
            ("OMPI_COMM_WORLD_SIZE", "4"),
            ("OMPI_MCA_ess_base_jobid", "2839609345"),
            ("PMIX_RANK", "3"),
            ("PMIX_NAMESPACE", "prterun-host-1234@1"),
        ]);
        let expected = job_rank(3, 4, "Open MPI", Some("2839609345"));
        assert_eq!(found, (Some(expected), vec![]));
    }

    #[test]
    fn pmix_alone_names_the_job_by_namespace() {
        let (found, _) = detect_in(&[
            ("PMIX_RANK", "1"),
            ("PMIX_SIZE", "2"),
            ("PMIX_NAMESPACE", "prterun-host-1234@1"),
        ]);
        let expected = job_rank(1, 2, "PMIx", Some("prterun-host-1234_1"));
        assert_eq!(found, Some(expected));
    }

    #[test]
    fn mpich_hydra() {
        let (found, _) = detect_in(&[("PMI_RANK", "0"), ("PMI_SIZE", "8")]);
        assert_eq!(found, Some(job_rank(0, 8, "MPICH/Hydra", None)));
    }

    #[test]
    fn slurm_job_and_step_name_the_job() {
        let (found, _) = detect_in(&[
            ("SLURM_PROCID", "5"),
            ("SLURM_NTASKS", "16"),
            ("SLURM_JOB_ID", "991"),
            ("SLURM_STEP_ID", "2"),
        ]);
        assert_eq!(found, Some(job_rank(5, 16, "Slurm", Some("991.2"))));
    }

    #[test]
    fn the_mpi_launcher_wins_over_the_resource_manager() {
        let (found, _) = detect_in(&[
            ("SLURM_PROCID", "0"),
            ("SLURM_NTASKS", "1"),
            ("OMPI_COMM_WORLD_RANK", "2"),
            ("OMPI_COMM_WORLD_SIZE", "4"),
        ]);
        assert_eq!(found.unwrap().rank, 2);
    }

    #[test]
    fn broken_values_are_reported_and_the_next_launcher_is_tried() {
        let (found, warnings) = detect_in(&[
            ("OMPI_COMM_WORLD_RANK", "x"),
            ("OMPI_COMM_WORLD_SIZE", "4"),
            ("PMI_RANK", "9"),
            ("PMI_SIZE", "4"),
            ("SLURM_PROCID", "1"),
            ("SLURM_NTASKS", "2"),
        ]);
        assert_eq!(found.unwrap().source, "Slurm");
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("OMPI_COMM_WORLD_RANK=x"));
        assert!(warnings[1].contains("PMI_RANK=9 is not below PMI_SIZE=4"));
    }

    #[test]
    fn a_rank_without_a_size_is_reported() {
        let (found, warnings) = detect_in(&[("PMI_RANK", "1")]);
        assert_eq!(found, None);
        assert!(warnings[0].contains("PMI_SIZE=unset"), "{warnings:?}");
    }
}
