//! `pomptrace unify DIR`: merges the definitions that the ranks of an MPI job wrote into their
//! shared experiment directory (`DIR/ranks/`) into `DIR/traces.otf2`. The last rank to finish
//! does this by itself; the command is for a job that ended before (killed, or a rank failed).
//! A rank that never wrote its part is recovered first, like `pomptrace recover` recovers a
//! process: its part from its journal, its events up to its last whole chunk. Ranks that left
//! neither are named.
//! The ranks' profile parts, when the job was profiled, are merged too (`unify_profile.rs`).

use std::path::{Path, PathBuf};

use otf2::regular_file::not_regular;
use otf2::unify::{job_size, unify_directory, PARTS_DIR};
use pomptrace::recovery as recover;

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
    let profile = crate::unify_profile::pending(&args.dir);
    let profile_only = profile && !has_trace_parts(&args.dir);
    let anchor = args.dir.join("traces.otf2");
    if let Ok(metadata) = std::fs::metadata(&anchor) {
        if let Some(kind) = not_regular(metadata.file_type()) {
            return Err(Failure::Error(format!(
                "{} is {kind}, not a trace",
                anchor.display()
            )));
        }
    }
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
    let parts_dir = args.dir.join(PARTS_DIR);
    let recovered = recover_unfinished_ranks(&args.dir, &parts_dir);
    let summary = unify_directory(&args.dir, "traces", &parts_dir).map_err(Failure::Error)?;
    let mut out = recovered;
    out.push_str(&format!(
        "trace written to {} ({} ranks, {} locations)\n",
        escape_controls(&summary.anchor.display().to_string()),
        summary.parts,
        summary.locations
    ));
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

/// Writes the part of every rank that left its journal but no part; one line per rank.
fn recover_unfinished_ranks(dir: &Path, parts_dir: &Path) -> String {
    let journaled = recover::journaled_ranks(dir);
    let unfinished: Vec<u32> = journaled
        .into_iter()
        .filter(|rank| !parts_dir.join(format!("{rank}.otf2")).exists())
        .collect();
    let Some(&last) = unfinished.last() else {
        return String::new();
    };
    let job_size = job_size(parts_dir).max(last + 1);
    let mut out = String::new();
    for rank in unfinished {
        out.push_str(&match recover::recover_rank(dir, rank, job_size) {
            Ok(r) => format!(
                "pomptrace: rank {rank} did not finish: its part was rebuilt from its journal \
                 ({} locations, {} events in {} chunks); lost {} chunks ({} bytes) that did not \
                 reach the disk whole{}\n",
                r.locations,
                r.events,
                r.chunks,
                r.dropped_chunks,
                r.dropped_bytes,
                r.warnings
                    .iter()
                    .map(|w| format!("; {w}"))
                    .collect::<String>()
            ),
            Err(e) => {
                format!("pomptrace: rank {rank} did not finish and cannot be recovered: {e}\n")
            }
        });
    }
    out
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
