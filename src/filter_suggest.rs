//! Filters that keep a trace under a size: which construct a region belongs to as a filter file
//! names it, the pattern that excludes it, and the choice of what to exclude. Pure: the runtime
//! (`DIR/pomptrace.filter` at the end of a run over its budget) and `pomptrace score`
//! (`--filter`, `--suggest`) give it regions with their costs.
//!
//! A filter excludes constructs, never single regions (see `output::registry`): a user region
//! by its name (`foo` of `!$pomp user(foo) @f.c:3`), any other construct by the name of its
//! outer region (`!$omp critical (name) @f.c:7` for its `critical sblock` too). The parallel
//! region, barriers, taskwait, tasks, the lock API and MPI calls carry the structure of a trace
//! and cannot be filtered.

use otf2::{Paradigm, RegionRole};

/// How a filter sees a region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filterable {
    /// Structure: no filter excludes it.
    Never,
    /// The region names its construct (a user region, or an OpenMP outer region).
    Names,
    /// The inner region of a construct named by its outer region of this role.
    InnerOf(RegionRole),
}

/// How a filter sees a region of this role and paradigm.
pub fn filterable(role: RegionRole, paradigm: Paradigm) -> Filterable {
    if paradigm == Paradigm::USER {
        return Filterable::Names;
    }
    if paradigm != Paradigm::OPENMP {
        return Filterable::Never;
    }
    match role {
        RegionRole::LOOP
        | RegionRole::SECTIONS
        | RegionRole::WORKSHARE
        | RegionRole::SINGLE
        | RegionRole::MASTER
        | RegionRole::CRITICAL
        | RegionRole::ORDERED
        | RegionRole::ATOMIC
        | RegionRole::FLUSH => Filterable::Names,
        RegionRole::SECTION => Filterable::InnerOf(RegionRole::SECTIONS),
        RegionRole::SINGLE_SBLOCK => Filterable::InnerOf(RegionRole::SINGLE),
        RegionRole::CRITICAL_SBLOCK => Filterable::InnerOf(RegionRole::CRITICAL),
        RegionRole::ORDERED_SBLOCK => Filterable::InnerOf(RegionRole::ORDERED),
        _ => Filterable::Never,
    }
}

/// Whether the region carries the structure of the trace (see the module's comment).
pub fn is_structure(role: RegionRole, paradigm: Paradigm) -> bool {
    filterable(role, paradigm) == Filterable::Never
}

/// The name of a user region as its filter rule names it: `foo` of `!$pomp user(foo) @f.c:3`.
pub fn user_region_name(region_name: &str) -> Option<&str> {
    let rest = region_name.strip_prefix("!$pomp user(")?;
    match rest.rsplit_once(") @") {
        Some((name, _)) => Some(name),
        None => rest.strip_suffix(')'),
    }
}

/// `text` as a pattern that matches exactly it: wildcards, blanks, `#` and backslashes escaped.
pub fn escape_pattern(text: &str) -> String {
    let mut pattern = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\' | '#') || c.is_whitespace() {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern
}

/// The `@file:line` that an OpenMP region's name ends with (its construct's position).
fn position(region_name: &str) -> Option<&str> {
    region_name.rfind(" @").map(|at| &region_name[at + 1..])
}

/// The pattern of an `EXCLUDE` line that leaves out the construct this region belongs to
/// (named `region_name`, as the trace defines it); None for structure.
pub fn exclude_pattern(region_name: &str, role: RegionRole, paradigm: Paradigm) -> Option<String> {
    match filterable(role, paradigm) {
        Filterable::Never => None,
        Filterable::Names if paradigm == Paradigm::USER => {
            user_region_name(region_name).map(escape_pattern)
        }
        // `!$omp critical (name) @f.c:7` and its inner `!$omp critical sblock @f.c:7` alike.
        Filterable::Names if role == RegionRole::CRITICAL => Some(format!(
            "!$omp\\ critical*\\ {}",
            escape_pattern(position(region_name)?)
        )),
        Filterable::Names => Some(escape_pattern(region_name)),
        Filterable::InnerOf(outer) => {
            let at = escape_pattern(position(region_name)?);
            Some(match outer {
                // `!$omp critical (name) @f.c:7`: the inner region's name has no critical name.
                RegionRole::CRITICAL => format!("!$omp\\ critical*\\ {at}"),
                RegionRole::SECTIONS => format!("!$omp\\ sections\\ {at}"),
                RegionRole::SINGLE => format!("!$omp\\ single\\ {at}"),
                _ => format!("!$omp\\ ordered\\ {at}"),
            })
        }
    }
}

/// A region (or construct) a filter could leave out, with what it costs the trace.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// Its `EXCLUDE` pattern.
    pub pattern: String,
    /// Bytes its events take (or would take) in the trace.
    pub bytes: u64,
    /// Its time (any unit, the same for every candidate): the less time for the bytes, the
    /// less a reader loses when it is left out.
    pub time: u64,
    /// Left out whatever it costs (e.g. the run already stopped recording it).
    pub first: bool,
}

/// Which candidates to exclude so that a trace of `size` bytes shrinks to at most `budget`:
/// those marked `first`, then the most bytes per time first, skipping those too small to
/// matter (under a hundredth of what is still too much) while larger ones are left, until it
/// fits (every candidate, if nothing less does). Returns their indices, in that order, and the
/// size left.
pub fn choose(candidates: &[Candidate], size: u64, budget: u64) -> (Vec<usize>, u64) {
    let mut order: Vec<usize> = (0..candidates.len())
        .filter(|&i| candidates[i].bytes > 0 || candidates[i].first)
        .collect();
    let density = |c: &Candidate| c.bytes as f64 / (c.time as f64 + 1.0);
    order.sort_by(|&a, &b| {
        let (a, b) = (&candidates[a], &candidates[b]);
        b.first
            .cmp(&a.first)
            .then(density(b).total_cmp(&density(a)))
            .then(a.pattern.cmp(&b.pattern))
    });
    let mut left = size;
    let mut chosen: Vec<usize> = Vec::new();
    for &i in order.iter().filter(|&&i| candidates[i].first) {
        left = left.saturating_sub(candidates[i].bytes);
        chosen.push(i);
    }
    while left > budget {
        let excess = left - budget;
        let open = || order.iter().copied().filter(|i| !chosen.contains(i));
        let Some(next) = open()
            .find(|&i| candidates[i].bytes.saturating_mul(100) >= excess)
            .or_else(|| open().next())
        else {
            break;
        };
        left = left.saturating_sub(candidates[next].bytes);
        chosen.push(next);
    }
    (chosen, left)
}

/// A filter file in Score-P's syntax that excludes `patterns` (each with a comment line after
/// it, e.g. its cost), after `comments` (lines without their `#`).
pub fn filter_file(comments: &[String], patterns: &[(String, String)]) -> String {
    let mut text = String::new();
    for line in comments {
        text.push_str("# ");
        text.push_str(line);
        text.push('\n');
    }
    text.push_str("SCOREP_REGION_NAMES_BEGIN\n");
    for (pattern, comment) in patterns {
        text.push_str("  EXCLUDE ");
        text.push_str(pattern);
        if !comment.is_empty() {
            text.push_str("\n    # ");
            text.push_str(comment);
        }
        text.push('\n');
    }
    text.push_str("SCOREP_REGION_NAMES_END\n");
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::Filter;

    fn excludes(pattern: &str, name: &str) -> bool {
        let text = filter_file(&[], &[(pattern.to_string(), String::new())]);
        Filter::parse(&text).unwrap().excludes(name, "/src/f.c")
    }

    #[test]
    fn patterns_exclude_exactly_their_construct() {
        let omp = Paradigm::OPENMP;
        let flush = exclude_pattern("!$omp flush @spin.c:12", RegionRole::FLUSH, omp).unwrap();
        assert_eq!(flush, "!$omp\\ flush\\ @spin.c:12");
        assert!(excludes(&flush, "!$omp flush @spin.c:12"));
        assert!(!excludes(&flush, "!$omp flush @spin.c:120"));
        let user = exclude_pattern(
            "!$pomp user(hot [x]*) @spin.c:3",
            RegionRole::FUNCTION,
            Paradigm::USER,
        )
        .unwrap();
        assert_eq!(user, "hot\\ \\[x\\]\\*");
        assert_eq!(
            exclude_pattern(
                "!$pomp user(hot) @spin.c:29",
                RegionRole::FUNCTION,
                Paradigm::USER
            ),
            Some("hot".into())
        );
        assert!(excludes(&user, "hot [x]*"));
        assert!(!excludes(&user, "hot [x]y"));
        // An inner region is left out with its construct, named by the outer region.
        let sblock = exclude_pattern(
            "!$omp critical sblock @f.c:7",
            RegionRole::CRITICAL_SBLOCK,
            omp,
        )
        .unwrap();
        assert!(excludes(&sblock, "!$omp critical (lock) @f.c:7"));
        assert!(excludes(&sblock, "!$omp critical @f.c:7"));
        assert!(!excludes(&sblock, "!$omp critical @f.c:70"));
        let critical =
            exclude_pattern("!$omp critical (lock) @f.c:7", RegionRole::CRITICAL, omp).unwrap();
        assert_eq!(critical, sblock, "one construct, one pattern");
        let section = exclude_pattern("!$omp section @f.c:9", RegionRole::SECTION, omp).unwrap();
        assert!(excludes(&section, "!$omp sections @f.c:9"));
        for (role, paradigm) in [
            (RegionRole::PARALLEL, omp),
            (RegionRole::BARRIER, omp),
            (RegionRole::IMPLICIT_BARRIER, omp),
            (RegionRole::TASK, omp),
            (RegionRole::TASK_CREATE, omp),
            (RegionRole::TASK_WAIT, omp),
            (RegionRole::WRAPPER, omp),
            (RegionRole::POINT2POINT, Paradigm::MPI),
        ] {
            assert_eq!(exclude_pattern("x @f.c:1", role, paradigm), None);
            assert!(is_structure(role, paradigm));
        }
    }

    #[test]
    fn the_most_bytes_per_time_go_first_until_the_trace_fits() {
        let c = |pattern: &str, bytes, time, first| Candidate {
            pattern: pattern.into(),
            bytes,
            time,
            first,
        };
        let candidates = [
            c("slow", 400, 4000, false),
            c("fast", 300, 10, false),
            c("stopped", 100, 1000, true),
            c("none", 0, 0, false),
        ];
        // 1000 bytes, 600 allowed: the stopped one first, then the densest.
        let (chosen, left) = choose(&candidates, 1000, 600);
        assert_eq!(chosen, [2, 1]);
        assert_eq!(left, 600);
        // Already within it: only what must go.
        assert_eq!(choose(&candidates, 1000, 2000), (vec![2], 900));
        // Never fits: everything with bytes.
        assert_eq!(choose(&candidates, 1000, 10).0, [2, 1, 0]);
        // A dense but tiny one waits while a large one does the job.
        let candidates = [
            c("tiny", 5, 1, false),
            c("large", 900, 100, false),
            c("small", 40, 1000, false),
        ];
        assert_eq!(choose(&candidates, 1000, 200), (vec![1], 100));
        // Once the rest to cut is small, the small ones come in, the densest first.
        assert_eq!(choose(&candidates, 1000, 96).0, [1, 0]);
        assert_eq!(choose(&candidates, 1000, 80).0, [1, 0, 2]);
    }
}
