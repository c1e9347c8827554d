//! The profile half of `pomptrace unify DIR`: the ranks' profile parts
//! (`DIR/ranks/<rank>.profile.cubex`, see `otf2::profile_unify`) merged into
//! `DIR/profile.cubex`, for a job whose last rank did not get to it.

use std::path::Path;

use otf2::profile_unify::{parts, unify_directory, PROFILE_FILE};
use otf2::unify::PARTS_DIR;

/// Whether `dir` holds profile parts and no merged profile yet.
pub fn pending(dir: &Path) -> bool {
    !dir.join(PROFILE_FILE).exists()
        && parts(&dir.join(PARTS_DIR)).is_ok_and(|found| !found.is_empty())
}

/// Merges the parts there are; returns the lines to print.
pub fn unify(dir: &Path) -> Result<String, String> {
    let summary = unify_directory(dir, &dir.join(PARTS_DIR), false)?;
    let mut out = format!(
        "profile written to {} ({} ranks, {} call paths, {} locations)\n",
        summary.profile.display(),
        summary.parts,
        summary.call_paths,
        summary.locations
    );
    if !summary.missing_parts.is_empty() {
        let ranks: Vec<String> = summary.missing_parts.iter().map(u32::to_string).collect();
        out.push_str(&format!(
            "pomptrace: rank(s) {} wrote no profile; the profile leaves them out\n",
            ranks.join(", ")
        ));
    }
    Ok(out)
}
