//! `pomptrace recover DIR`: makes what a killed or out-of-space run left in its experiment
//! directory a readable trace, and says how much was lost.

use std::path::Path;

/// The line to print on success.
pub fn run(dir: &Path) -> Result<String, String> {
    pomptrace::measure::recover::recover(dir).map(|r| format!("pomptrace: {}\n", r.summary()))
}
