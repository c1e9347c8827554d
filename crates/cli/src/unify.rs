//! `pomptrace unify DIR`: merges the definitions that the ranks of an MPI job wrote into their
//! shared experiment directory (`DIR/ranks/`) into `DIR/traces.otf2`. The last rank to finish
//! does this by itself; the command is for a job that ended before (killed, or a rank failed):
//! it unifies whatever parts were written and names the ranks that are missing.

use std::path::PathBuf;

use otf2::regular_file::not_regular;
use otf2::unify::{unify_directory, PARTS_DIR};

use crate::terminal_text::escape_controls;
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
    let anchor = args.dir.join("traces.otf2");
    if let Ok(metadata) = std::fs::metadata(&anchor) {
        return Err(Failure::Error(match not_regular(metadata.file_type()) {
            None => format!("{} exists: the job is already unified", anchor.display()),
            Some(kind) => format!("{} is {kind}, not a trace", anchor.display()),
        }));
    }
    let summary =
        unify_directory(&args.dir, "traces", &args.dir.join(PARTS_DIR)).map_err(Failure::Error)?;
    let mut out = format!(
        "trace written to {} ({} ranks, {} locations)\n",
        escape_controls(&summary.anchor.display().to_string()),
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
    print_stdout(&out)
}
