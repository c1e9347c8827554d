//! `pomptrace recover DIR`: makes what a killed or out-of-space run left in its experiment
//! directory a readable trace, and says how much was lost.

use std::path::PathBuf;

use crate::terminal_text::escape_controls;
use crate::{print_stdout, Failure};

/// Make what a killed (or out-of-space) run left in its experiment directory a readable trace,
/// DIR/traces.otf2, from its journal and every whole event chunk on disk; say how much was lost.
#[derive(clap::Args)]
#[command(override_usage = "pomptrace recover DIR")]
pub struct RecoverArgs {
    /// The run's experiment directory (POMPTRACE_EXPERIMENT_DIRECTORY).
    #[arg(value_name = "DIR")]
    dir: PathBuf,
}

pub fn run(args: &RecoverArgs) -> Result<(), Failure> {
    let recovered = pomptrace::recover(&args.dir).map_err(Failure::Error)?;
    print_stdout(&format!(
        "pomptrace: {}\n",
        escape_controls(&recovered.summary())
    ))
}
