//! `pomptrace unify DIR`: merges the definitions that the ranks of an MPI job wrote into their
//! shared experiment directory (`DIR/ranks/`) into `DIR/traces.otf2`. The last rank to finish
//! does this by itself; the command is for a job that ended before (killed, or a rank failed):
//! it unifies whatever parts were written and names the ranks that are missing. The ranks'
//! profile parts, when the job was profiled, are merged too (`unify_profile.rs`).

use std::path::PathBuf;

use otf2::unify::{unify_directory, PARTS_DIR};

use crate::{print_stdout, Failure};

/// Merge the definitions the ranks of an MPI job wrote into DIR (DIR/ranks/) into
/// DIR/traces.otf2, for a job that ended before its last rank could do it.
#[derive(clap::Args)]
#[command(override_usage = "pomptrace unify DIR")]
pub struct UnifyArgs {
    /// The job's experiment directory.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
}

pub fn run(args: &UnifyArgs) -> Result<(), Failure> {
    let profile = crate::unify_profile::pending(&args.dir);
    let profile_only = profile && !has_trace_parts(&args.dir);
    let anchor = args.dir.join("traces.otf2");
    if anchor.exists() || profile_only {
        if profile {
            let out = crate::unify_profile::unify(&args.dir).map_err(Failure::Error)?;
            return print_stdout(&out);
        }
        return Err(Failure::Error(format!(
            "{} exists: the job is already unified",
            anchor.display()
        )));
    }
    let summary =
        unify_directory(&args.dir, "traces", &args.dir.join(PARTS_DIR)).map_err(Failure::Error)?;
    let mut out = format!(
        "trace written to {} ({} ranks, {} locations)\n",
        summary.anchor.display(),
        summary.parts,
        summary.locations
    );
    if !summary.missing_parts.is_empty() {
        let ranks: Vec<String> = summary.missing_parts.iter().map(u32::to_string).collect();
        out.push_str(&format!(
            "pomptrace: rank(s) {} wrote no definitions; their events are left out\n",
            ranks.join(", ")
        ));
    }
    if summary.skipped_definitions > 0 {
        out.push_str(&format!(
            "pomptrace: {} definitions of kinds that unify does not merge were left out\n",
            summary.skipped_definitions
        ));
    }
    if profile {
        out.push_str(&crate::unify_profile::unify(&args.dir).map_err(Failure::Error)?);
    }
    print_stdout(&out)
}

/// Whether the ranks wrote trace definitions (`DIR/ranks/<rank>.otf2`): not when the job ran
/// without tracing.
fn has_trace_parts(dir: &std::path::Path) -> bool {
    std::fs::read_dir(dir.join(PARTS_DIR)).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.file_name().to_string_lossy().ends_with(".otf2"))
    })
}
