//! `pomptrace recover DIR`: makes what a killed or out-of-space run left in its experiment
//! directory a readable trace, and says how much was lost.

use std::path::PathBuf;

use crate::terminal_text::escape_controls;
use crate::{print_stdout, Failure};

/// Make what a killed (or out-of-space) run left in its experiment directory a readable trace,
/// DIR/traces.otf2, from its journal and every whole event chunk on disk; say how much was lost.
/// A profiled run's profile, DIR/profile.cubex, is rebuilt from that trace.
#[derive(clap::Args)]
#[command(override_usage = "pomptrace recover DIR")]
pub struct RecoverArgs {
    /// The run's experiment directory (POMPTRACE_EXPERIMENT_DIRECTORY).
    #[arg(value_name = "DIR")]
    dir: PathBuf,
}

pub fn run(args: &RecoverArgs) -> Result<(), Failure> {
    let recovered = match pomptrace::recover(&args.dir) {
        Ok(recovered) => recovered,
        // A whole trace whose profile is missing (a profiled run killed while writing it):
        // the profile alone.
        Err(e) => {
            return match pomptrace::recover_profile(&args.dir) {
                Ok(Some(line)) => print_stdout(&format!("pomptrace: {line}\n")),
                _ => Err(Failure::Error(e)),
            };
        }
    };
    let mut out = format!("pomptrace: {}\n", escape_controls(&recovered.summary()));
    match pomptrace::recover_profile(&args.dir) {
        Ok(Some(line)) => out.push_str(&format!("pomptrace: {line}\n")),
        Ok(None) => {}
        Err(e) => out.push_str(&format!(
            "pomptrace: {e}; the trace is recovered all the same\n"
        )),
    }
    print_stdout(&out)
}
