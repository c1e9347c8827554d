//! CTC string → [`RegionInfo`]. Pure and fuzzable.
//!
//! OPARI2 describes every instrumented construct with a "CTC string" such as
//!
//! ```text
//! 91*regionType=ordered*sscl=/opt/code/demo01/all.c:16:16*escl=/opt/code/demo01/all.c:17:17**
//! ```
//!
//! This module turns such a string into a [`RegionInfo`]. It knows nothing of threads, I/O, OTF2
//! or C: the caller hands it a byte slice (for Fortran, bounded by the hidden length argument, so
//! the string is not NUL-terminated and usually ends in two blanks).
//!
//! The parser is deliberately more forgiving than OPARI2's own, which calls `exit(1)` on most
//! defects: it reports every problem as a [`CtcProblem`] and keeps whatever it could recover.
//! It never panics and runs in time linear in the input length.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fmt;

/// The construct a CTC string describes (the `regionType` value).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegionType {
    Parallel,
    For,
    Do,
    Sections,
    Single,
    Master,
    Critical,
    Ordered,
    Atomic,
    Flush,
    Barrier,
    Taskwait,
    Task,
    /// Accepted by the OPARI2 parser, never emitted by OPARI2 2.0.x.
    TaskUntied,
    Workshare,
    ParallelFor,
    ParallelDo,
    ParallelSections,
    ParallelWorkshare,
    /// `pomp inst begin(name)`.
    UserRegion,
}

impl RegionType {
    /// Every region type, in declaration order.
    pub const ALL: [RegionType; 20] = [
        RegionType::Parallel,
        RegionType::For,
        RegionType::Do,
        RegionType::Sections,
        RegionType::Single,
        RegionType::Master,
        RegionType::Critical,
        RegionType::Ordered,
        RegionType::Atomic,
        RegionType::Flush,
        RegionType::Barrier,
        RegionType::Taskwait,
        RegionType::Task,
        RegionType::TaskUntied,
        RegionType::Workshare,
        RegionType::ParallelFor,
        RegionType::ParallelDo,
        RegionType::ParallelSections,
        RegionType::ParallelWorkshare,
        RegionType::UserRegion,
    ];

    /// The region type for a `regionType` value (case-sensitive, matched exactly).
    pub fn from_ctc(word: &str) -> Option<Self> {
        RegionType::ALL.into_iter().find(|t| t.ctc_name() == word)
    }

    /// The `regionType` value OPARI2 writes for this type.
    pub fn ctc_name(self) -> &'static str {
        match self {
            RegionType::Parallel => "parallel",
            RegionType::For => "for",
            RegionType::Do => "do",
            RegionType::Sections => "sections",
            RegionType::Single => "single",
            RegionType::Master => "master",
            RegionType::Critical => "critical",
            RegionType::Ordered => "ordered",
            RegionType::Atomic => "atomic",
            RegionType::Flush => "flush",
            RegionType::Barrier => "barrier",
            RegionType::Taskwait => "taskwait",
            RegionType::Task => "task",
            RegionType::TaskUntied => "taskuntied",
            RegionType::Workshare => "workshare",
            RegionType::ParallelFor => "parallelfor",
            RegionType::ParallelDo => "paralleldo",
            RegionType::ParallelSections => "parallelsections",
            RegionType::ParallelWorkshare => "parallelworkshare",
            RegionType::UserRegion => "userRegion",
        }
    }

    /// True for user regions (`pomp inst begin`), false for OpenMP constructs.
    pub fn is_user(self) -> bool {
        self == RegionType::UserRegion
    }

    /// True for the constructs that open a parallel region (`parallel` and the combined forms).
    pub fn is_parallel(self) -> bool {
        matches!(
            self,
            RegionType::Parallel
                | RegionType::ParallelFor
                | RegionType::ParallelDo
                | RegionType::ParallelSections
                | RegionType::ParallelWorkshare
        )
    }
}

/// A source location `file:first_line:last_line` (the value of `sscl` or `escl`).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct SourceRange {
    pub file: String,
    pub first_line: u32,
    pub last_line: u32,
}

/// Everything a CTC string says about one construct.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionInfo {
    pub region_type: RegionType,
    /// `sscl`: the directive's own lines.
    pub start: SourceRange,
    /// `escl`: the end of the construct.
    pub end: SourceRange,
    /// `criticalName` (an empty value is reported and stored as `None`).
    pub critical_name: Option<String>,
    /// `numSections`.
    pub num_sections: Option<u32>,
    /// `userRegionName` (an empty value is reported and stored as `Some("")`).
    pub user_region_name: Option<String>,
    /// `hasSchedule` value with `@` turned back into `*`.
    pub schedule: Option<String>,
    /// `hasDefault` value.
    pub default: Option<String>,
    /// Names (without the `has` prefix) of every `has<Clause>=1` flag, in input order of their
    /// first appearance, e.g. `"Nowait"`, `"Num_threads"`, `"Copyprivate"`. `hasSchedule` and
    /// `hasDefault` carry values rather than flags and are not listed here.
    pub clauses: Vec<String>,
}

/// One defect found in a CTC string: a human-readable sentence such as "unknown key `foo`".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CtcProblem {
    pub message: String,
}

impl fmt::Display for CtcProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CtcProblem {}

/// At most this many problems are listed; the rest are summarised in one final problem.
pub const MAX_PROBLEMS: usize = 64;

/// Quoted input text in problem messages is cut after this many characters.
const MAX_QUOTE_CHARS: usize = 60;

/// Parses a CTC string. Never panics, for any input bytes (non-UTF-8 included), and takes time
/// linear in the input length.
///
/// Returns the best [`RegionInfo`] that can be made (`None` only when no region type can be
/// recovered: `regionType` missing, empty or unknown; see [`parse_lossy_name`] for naming such
/// a region anyway), plus every problem found (at most [`MAX_PROBLEMS`] of them, then one that
/// counts the rest).
///
/// Grammar and tolerance:
/// * Optional leading ASCII digits (the length; its value is ignored, a mismatch is no problem),
///   then `*`. If the `*` is missing that is a problem and parsing continues right after the
///   digits (so `regionType=...*...**` still parses).
/// * Then `key=value*` pairs, until a `*` where a key would start (the second `*` of `**`) or the
///   end of the input. Bytes after the terminating `**` (Fortran blank padding, whatever follows
///   a non-NUL-terminated constant) are ignored and never examined.
/// * Missing terminating `**`: when the input ends right after a pair's closing `*` (only the
///   last `*` of `**` is missing, a form OPARI2 also accepts) nothing is lost and this is **not**
///   reported. In every other case (input ends inside a pair, or no pair at all) the problem
///   "missing terminating `**`" is reported; a final `key=value` without its `*` is still used.
/// * A pair without `=` (up to the next `*`) is reported and skipped; unlike OPARI2 it does not
///   swallow the following pair. A pair with an empty key is reported and skipped. Values may
///   contain `=` but never `*`.
/// * Bytes that are not UTF-8 are replaced by U+FFFD; this is reported once.
///
/// Keys (case-sensitive): `regionType`, `sscl`, `escl`, `criticalName`, `numSections`,
/// `userRegionName`, `userGroupName` (ignored), `hasSchedule`, `hasDefault`, and every other key
/// `has<Clause>` (a flag whose value must be `0` or `1`). Anything else is reported as an unknown
/// key and ignored. A repeated key is reported and the later value wins (for a flag, a later `0`
/// removes the clause again).
///
/// Values:
/// * `sscl`/`escl` are `file:line1:line2`; the file name ends at the **last** two colons (so
///   `a:b.c:5:5` is file `a:b.c`, unlike OPARI2 which stops at the first colon). A line that is
///   not a decimal number, or does not fit in `u32`, is reported and taken as 0; `line1 > line2`
///   is reported and kept. With fewer than two colons the value is reported and the lines that
///   are there are used (`file:7` gives 7:7). Missing `sscl` gives an empty [`SourceRange`];
///   missing `escl` takes the `sscl` values. Both are reported.
/// * `numSections` must be a non-negative decimal integer (else reported, `None`); for
///   `regionType=sections` a missing or zero value is reported (the info is still returned).
/// * `criticalName` is kept as given; an empty one is reported and stored as `None`.
/// * `userRegionName` is kept as given; an empty one is reported as "user region without a name"
///   and stored as `Some("")`. A `userRegion` without the key is reported the same way (`None`).
/// * `hasSchedule` turns `@` back into `*`; `hasSchedule`/`hasDefault` with an empty value are
///   reported (and stored as `Some("")`). Their values are not checked against the OpenMP lists.
pub fn parse(ctc: &[u8]) -> (Option<RegionInfo>, Vec<CtcProblem>) {
    if ctc.is_empty() {
        return (
            None,
            vec![CtcProblem {
                message: "empty CTC string".to_string(),
            }],
        );
    }
    let scan = scan(ctc);
    let mut problems = scan.problems;
    let f = scan.fields;

    let region_type = match f.region_type {
        None => {
            problems.push("missing `regionType`".to_string());
            None
        }
        Some([]) => {
            problems.push("empty `regionType`".to_string());
            None
        }
        Some(word) => {
            let t = RegionType::from_ctc(&String::from_utf8_lossy(word));
            if t.is_none() {
                problems.push(format!("unknown region type `{}`", quote(word)));
            }
            t
        }
    };

    let start = match f.sscl {
        Some(v) => parse_scl("sscl", v, &mut problems).range,
        None => {
            problems.push("missing `sscl`".to_string());
            SourceRange::default()
        }
    };
    let end = match f.escl {
        Some(v) => parse_scl("escl", v, &mut problems).range,
        None => {
            problems.push("missing `escl` (using `sscl` instead)".to_string());
            start.clone()
        }
    };

    let num_sections = f.num_sections.and_then(|v| match parse_u32(v) {
        Ok(n) => Some(n),
        Err(NumError::NotNumber) => {
            problems.push(format!(
                "`numSections` value `{}` is not a non-negative integer",
                quote(v)
            ));
            None
        }
        Err(NumError::TooLarge) => {
            problems.push(format!("`numSections` value `{}` is too large", quote(v)));
            None
        }
    });
    if region_type == Some(RegionType::Sections) {
        match (f.num_sections, num_sections) {
            (None, _) => problems.push("`sections` region without `numSections`".to_string()),
            (Some(_), Some(0)) => {
                problems.push("`sections` region with `numSections=0`".to_string())
            }
            _ => {}
        }
    }

    let critical_name = match f.critical_name {
        Some([]) => {
            problems.push("empty `criticalName` (treated as an unnamed critical)".to_string());
            None
        }
        other => other.map(lossy),
    };

    let user_region_name = f.user_region_name.map(lossy);
    if user_region_name.as_deref() == Some("")
        || (user_region_name.is_none() && region_type == Some(RegionType::UserRegion))
    {
        problems.push("user region without a name".to_string());
    }

    let schedule = f.schedule.map(|v| {
        if v.is_empty() {
            problems.push("empty value for `hasSchedule`".to_string());
        }
        lossy(v).replace('@', "*")
    });
    let default = f.default.map(|v| {
        if v.is_empty() {
            problems.push("empty value for `hasDefault`".to_string());
        }
        lossy(v)
    });

    let clauses = f
        .clauses
        .iter()
        .filter(|(_, on)| *on)
        .map(|(name, _)| lossy(name))
        .collect();

    let info = region_type.map(|region_type| RegionInfo {
        region_type,
        start,
        end,
        critical_name,
        num_sections,
        user_region_name,
        schedule,
        default,
        clauses,
    });
    (info, problems.finish())
}

/// A short printable name for any CTC string, meant for strings [`parse`] cannot turn into a
/// [`RegionInfo`], so that the caller can still define a region.
///
/// The name is the `regionType` text (control characters escaped, cut after 60 characters), or
/// `unknown region` when it is missing or empty, followed by ` @B:L` when `sscl` is well formed,
/// where `B` is the base name of its file (text after the last `/`) and `L` its first line, as
/// in the region names of the reference. Examples: `bogus @all.c:12`, `unknown region`.
pub fn parse_lossy_name(ctc: &[u8]) -> String {
    let scan = scan(ctc);
    let mut name = match scan.fields.region_type {
        Some(word) if !word.is_empty() => quote(word),
        _ => "unknown region".to_string(),
    };
    if let Some(v) = scan.fields.sscl {
        let mut ignored = Problems::default();
        let scl = parse_scl("sscl", v, &mut ignored);
        if scl.well_formed {
            let file = scl.range.file.as_str();
            let base = file.rsplit('/').next().unwrap_or(file);
            name.push_str(" @");
            name.push_str(&quote(base.as_bytes()));
            name.push(':');
            name.push_str(&scl.range.first_line.to_string());
        }
    }
    name
}

// ------------------------------------------------------------------------------------------------
// Internals

/// Problem list with a cap, so that a huge garbage input cannot produce unbounded noise.
#[derive(Default)]
struct Problems {
    list: Vec<CtcProblem>,
    dropped: usize,
}

impl Problems {
    fn push(&mut self, message: String) {
        if self.list.len() < MAX_PROBLEMS {
            self.list.push(CtcProblem { message });
        } else {
            self.dropped += 1;
        }
    }

    fn finish(mut self) -> Vec<CtcProblem> {
        if self.dropped > 0 {
            self.list.push(CtcProblem {
                message: format!("{} further problems not listed", self.dropped),
            });
        }
        self.list
    }
}

/// The raw values of the known keys (later values win) and the clause flags.
#[derive(Default)]
struct Fields<'a> {
    region_type: Option<&'a [u8]>,
    sscl: Option<&'a [u8]>,
    escl: Option<&'a [u8]>,
    critical_name: Option<&'a [u8]>,
    num_sections: Option<&'a [u8]>,
    user_region_name: Option<&'a [u8]>,
    user_group_name: Option<&'a [u8]>,
    schedule: Option<&'a [u8]>,
    default: Option<&'a [u8]>,
    /// `(clause name without "has", on)` in order of first appearance.
    clauses: Vec<(&'a [u8], bool)>,
    clause_index: HashMap<&'a [u8], usize>,
}

struct Scan<'a> {
    fields: Fields<'a>,
    problems: Problems,
}

/// Splits the string into pairs and records the raw values; reports structural problems,
/// unknown and repeated keys and bad flag values.
fn scan(ctc: &[u8]) -> Scan<'_> {
    let mut problems = Problems::default();
    let mut fields = Fields::default();
    if ctc.is_empty() {
        problems.push("empty CTC string".to_string());
        return Scan { fields, problems };
    }

    let mut pos = ctc
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(ctc.len());
    if ctc.get(pos) == Some(&b'*') {
        pos += 1;
    } else {
        problems.push("missing `*` after the length prefix".to_string());
    }

    let mut terminated_at = None;
    let mut pairs = 0usize;
    let mut unclosed: Option<&[u8]> = None;
    let mut seen: HashSet<&[u8]> = HashSet::new();
    while pos < ctc.len() {
        if ctc[pos] == b'*' {
            terminated_at = Some(pos + 1);
            break;
        }
        let rest = &ctc[pos..];
        let star = rest.iter().position(|&b| b == b'*');
        let item = &rest[..star.unwrap_or(rest.len())];
        pairs += 1;
        match item.iter().position(|&b| b == b'=') {
            None => problems.push(format!("pair `{}` has no `=` (ignored)", quote(item))),
            Some(0) => problems.push(format!("empty key in pair `{}` (ignored)", quote(item))),
            Some(eq) => {
                let (key, value) = (&item[..eq], &item[eq + 1..]);
                let known = if is_flag_key(key) {
                    set_flag(&mut fields, key, value, &mut problems);
                    true
                } else {
                    record(&mut fields, key, value)
                };
                if !known {
                    problems.push(format!("unknown key `{}` (ignored)", quote(key)));
                } else if !seen.insert(key) {
                    problems.push(format!(
                        "repeated key `{}` (the later value wins)",
                        quote(key)
                    ));
                }
            }
        }
        if star.is_none() {
            unclosed = Some(item);
        }
        pos += item.len() + 1;
    }

    if terminated_at.is_none() {
        match unclosed {
            Some(item) => problems.push(format!(
                "missing terminating `**` (the input ends inside `{}`)",
                quote(item)
            )),
            None if pairs == 0 => problems.push("missing terminating `**`".to_string()),
            // Only the final `*` of `**` is missing: tolerated, as by OPARI2.
            None => {}
        }
    }

    let examined = &ctc[..terminated_at.unwrap_or(ctc.len())];
    if std::str::from_utf8(examined).is_err() {
        problems.push("non-UTF-8 bytes in the CTC string (replaced by U+FFFD)".to_string());
    }
    Scan { fields, problems }
}

/// `has<Clause>` with a non-empty clause name, except `hasSchedule` and `hasDefault`, which carry
/// values.
fn is_flag_key(key: &[u8]) -> bool {
    key.len() > 3 && key.starts_with(b"has") && key != b"hasSchedule" && key != b"hasDefault"
}

/// Stores the value of a known non-flag key; false for a key that is not one of them.
fn record<'a>(fields: &mut Fields<'a>, key: &'a [u8], value: &'a [u8]) -> bool {
    let slot = match key {
        b"regionType" => &mut fields.region_type,
        b"sscl" => &mut fields.sscl,
        b"escl" => &mut fields.escl,
        b"criticalName" => &mut fields.critical_name,
        b"numSections" => &mut fields.num_sections,
        b"userRegionName" => &mut fields.user_region_name,
        b"userGroupName" => &mut fields.user_group_name,
        b"hasSchedule" => &mut fields.schedule,
        b"hasDefault" => &mut fields.default,
        _ => return false,
    };
    *slot = Some(value);
    true
}

/// Handles a `has<Clause>` flag: value `1` turns the clause on, `0` off, anything else is a
/// problem and leaves the flag as it was.
fn set_flag<'a>(fields: &mut Fields<'a>, key: &'a [u8], value: &'a [u8], problems: &mut Problems) {
    let name = &key[3..];
    let on = match value {
        b"1" => Some(true),
        b"0" => Some(false),
        _ => {
            problems.push(format!(
                "`{}` value `{}` is not 0 or 1 (ignored)",
                quote(key),
                quote(value)
            ));
            None
        }
    };
    let index = *fields.clause_index.entry(name).or_insert_with(|| {
        fields.clauses.push((name, false));
        fields.clauses.len() - 1
    });
    if let Some(on) = on {
        fields.clauses[index].1 = on;
    }
}

struct Scl {
    range: SourceRange,
    /// Three parts, a non-empty file name and two numeric lines.
    well_formed: bool,
}

/// Parses `file:line1:line2`, the file name ending at the last two colons.
fn parse_scl(key: &str, value: &[u8], problems: &mut Problems) -> Scl {
    let mut parts = value.rsplitn(3, |&b| b == b':');
    let last = parts.next().unwrap_or_default();
    let first = parts.next();
    let file = parts.next();
    let (file, first, last) = match (file, first) {
        (Some(file), Some(first)) => (file, first, Some(last)),
        (None, Some(file)) => (file, last, None),
        _ => (last, &[][..], None),
    };
    let mut well_formed = true;
    if last.is_none() {
        well_formed = false;
        problems.push(format!(
            "`{key}` value `{}` is not `file:line1:line2`",
            quote(value)
        ));
    } else if file.is_empty() {
        well_formed = false;
        problems.push(format!("`{key}` has an empty file name"));
    }
    let mut line = |text: &[u8], report: bool, well_formed: &mut bool| match parse_u32(text) {
        Ok(n) => Some(n),
        Err(e) => {
            *well_formed = false;
            if report {
                problems.push(match e {
                    NumError::NotNumber => format!(
                        "`{key}` line `{}` is not a non-negative integer (using 0)",
                        quote(text)
                    ),
                    NumError::TooLarge => {
                        format!("`{key}` line `{}` is too large (using 0)", quote(text))
                    }
                });
            }
            None
        }
    };
    // Without any colon there are no lines to report on: the format problem says it all.
    let has_lines = !(last.is_none() && first.is_empty());
    let first_line = line(first, has_lines, &mut well_formed);
    let last_line = match last {
        Some(text) => line(text, true, &mut well_formed),
        None => first_line,
    };
    if let (Some(a), Some(b)) = (first_line, last_line) {
        if a > b {
            problems.push(format!("`{key}` first line {a} is after its last line {b}"));
        }
    }
    Scl {
        range: SourceRange {
            file: lossy(file),
            first_line: first_line.unwrap_or(0),
            last_line: last_line.unwrap_or(0),
        },
        well_formed,
    }
}

#[derive(Debug, PartialEq, Eq)]
enum NumError {
    NotNumber,
    TooLarge,
}

/// A non-empty run of ASCII digits that fits in `u32`.
fn parse_u32(text: &[u8]) -> Result<u32, NumError> {
    if text.is_empty() || !text.iter().all(u8::is_ascii_digit) {
        return Err(NumError::NotNumber);
    }
    let mut n: u32 = 0;
    for &d in text {
        n = n
            .checked_mul(10)
            .and_then(|n| n.checked_add(u32::from(d - b'0')))
            .ok_or(NumError::TooLarge)?;
    }
    Ok(n)
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Input text for a message: lossily decoded, control characters escaped, cut after
/// [`MAX_QUOTE_CHARS`] characters.
fn quote(bytes: &[u8]) -> String {
    // Four bytes per character at most; one more character tells whether to cut.
    let head = &bytes[..bytes.len().min(4 * (MAX_QUOTE_CHARS + 1))];
    let text: Cow<'_, str> = String::from_utf8_lossy(head);
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == MAX_QUOTE_CHARS {
            out.push('…');
            return out;
        }
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    if head.len() < bytes.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // -- helpers ----------------------------------------------------------------------------

    fn range(file: &str, first_line: u32, last_line: u32) -> SourceRange {
        SourceRange {
            file: file.to_string(),
            first_line,
            last_line,
        }
    }

    /// A RegionInfo with the given type and lines in `/opt/code/demo01/<file>`, nothing else.
    fn info(t: RegionType, file: &str, s: (u32, u32), e: (u32, u32)) -> RegionInfo {
        let path = format!("/opt/code/demo01/{file}");
        RegionInfo {
            region_type: t,
            start: range(&path, s.0, s.1),
            end: range(&path, e.0, e.1),
            critical_name: None,
            num_sections: None,
            user_region_name: None,
            schedule: None,
            default: None,
            clauses: Vec::new(),
        }
    }

    fn clauses(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    fn messages(problems: &[CtcProblem]) -> Vec<&str> {
        problems.iter().map(|p| p.message.as_str()).collect()
    }

    /// Parses a CTC string that describes a region, asserting the problems reported (in order).
    #[track_caller]
    fn parse_reporting(ctc: &[u8], expected: &[&str]) -> RegionInfo {
        let (info, problems) = parse(ctc);
        let text = String::from_utf8_lossy(ctc);
        assert_eq!(messages(&problems), expected, "{text}");
        info.unwrap_or_else(|| panic!("{text}: no info"))
    }

    /// Parses and asserts that there are no problems.
    #[track_caller]
    fn clean(ctc: &str) -> RegionInfo {
        parse_reporting(ctc.as_bytes(), &[])
    }

    #[track_caller]
    fn assert_problem(problems: &[CtcProblem], expected: &str) {
        assert!(
            problems.iter().any(|p| p.message == expected),
            "expected problem {expected:?} in {:?}",
            messages(problems)
        );
    }

    #[track_caller]
    fn assert_problem_starting(problems: &[CtcProblem], prefix: &str) {
        assert!(
            problems.iter().any(|p| p.message.starts_with(prefix)),
            "expected a problem starting with {prefix:?} in {:?}",
            messages(problems)
        );
    }

    const SSCL_ESCL: &str = "sscl=f.c:1:2*escl=f.c:3:4";

    fn with(extra: &str) -> String {
        format!("*regionType=parallel*{SSCL_ESCL}*{extra}**")
    }

    // -- one test per key -------------------------------------------------------------------

    #[test]
    fn region_type_every_word() {
        use RegionType::*;
        let words = [
            ("parallel", Parallel),
            ("for", For),
            ("do", Do),
            ("sections", Sections),
            ("single", Single),
            ("master", Master),
            ("critical", Critical),
            ("ordered", Ordered),
            ("atomic", Atomic),
            ("flush", Flush),
            ("barrier", Barrier),
            ("taskwait", Taskwait),
            ("task", Task),
            ("taskuntied", TaskUntied),
            ("workshare", Workshare),
            ("parallelfor", ParallelFor),
            ("paralleldo", ParallelDo),
            ("parallelsections", ParallelSections),
            ("parallelworkshare", ParallelWorkshare),
            ("userRegion", UserRegion),
        ];
        assert_eq!(words.len(), RegionType::ALL.len());
        for (word, t) in words {
            assert_eq!(RegionType::from_ctc(word), Some(t));
            assert_eq!(t.ctc_name(), word);
            assert_eq!(t.is_user(), word == "userRegion");
            let extra = match t {
                Sections => "*numSections=1",
                UserRegion => "*userRegionName=u",
                _ => "",
            };
            let ctc = format!("99*regionType={word}*{SSCL_ESCL}{extra}**");
            assert_eq!(clean(&ctc).region_type, t);
        }
        assert_eq!(RegionType::from_ctc("Parallel"), None);
        assert_eq!(RegionType::from_ctc("userregion"), None);
        assert_eq!(RegionType::from_ctc(""), None);
        assert!(ParallelWorkshare.is_parallel());
        assert!(!Sections.is_parallel());
    }

    #[test]
    fn key_sscl() {
        let i = clean("*regionType=barrier*sscl=dir/x.c:10:12*escl=dir/x.c:10:12**");
        assert_eq!(i.start, range("dir/x.c", 10, 12));
        // The file name ends at the last two colons.
        let i = clean("*regionType=barrier*sscl=a:b.c:5:5*escl=a:b.c:5:5**");
        assert_eq!(i.start, range("a:b.c", 5, 5));
        let i = clean("*regionType=barrier*sscl=C:\\x.c:1:1*escl=C:\\x.c:1:1**");
        assert_eq!(i.start, range("C:\\x.c", 1, 1));
    }

    #[test]
    fn key_escl() {
        let i = clean("*regionType=master*sscl=m.f90:3:3*escl=m.f90:7:8**");
        assert_eq!(i.start, range("m.f90", 3, 3));
        assert_eq!(i.end, range("m.f90", 7, 8));
    }

    #[test]
    fn key_critical_name() {
        let i = clean("*regionType=critical*sscl=c.c:1:1*escl=c.c:2:2*criticalName=foo**");
        assert_eq!(i.critical_name.as_deref(), Some("foo"));
        let i = clean("*regionType=critical*sscl=c.c:1:1*escl=c.c:2:2**");
        assert_eq!(i.critical_name, None);
    }

    #[test]
    fn key_num_sections() {
        let i = clean("*regionType=sections*sscl=s.c:1:1*escl=s.c:9:9*numSections=3**");
        assert_eq!(i.num_sections, Some(3));
        let i = clean("*regionType=parallelsections*sscl=s.c:1:1*escl=s.c:9:9**");
        assert_eq!(i.num_sections, None);
    }

    #[test]
    fn key_user_region_name() {
        let i = clean("*regionType=userRegion*sscl=u.c:1:1*escl=u.c:9:9*userRegionName=phase1**");
        assert_eq!(i.user_region_name.as_deref(), Some("phase1"));
        assert!(i.region_type.is_user());
    }

    #[test]
    fn key_user_group_name_is_ignored() {
        let with_group = clean(
            "*regionType=userRegion*sscl=u.c:1:1*escl=u.c:9:9*userRegionName=p*userGroupName=g**",
        );
        let without = clean("*regionType=userRegion*sscl=u.c:1:1*escl=u.c:9:9*userRegionName=p**");
        assert_eq!(with_group, without);
    }

    #[test]
    fn keys_has_schedule_and_has_default() {
        // (pair, schedule, default); `@` is only turned back for hasSchedule.
        for (pair, schedule, default) in [
            ("hasSchedule=dynamic,2@2", Some("dynamic,2*2"), None),
            ("hasSchedule=static", Some("static"), None),
            ("hasDefault=none", None, Some("none")),
            ("hasDefault=a@b", None, Some("a@b")),
        ] {
            let i = clean(&with(pair));
            assert_eq!(i.schedule.as_deref(), schedule, "{pair}");
            assert_eq!(i.default.as_deref(), default, "{pair}");
            assert!(i.clauses.is_empty());
        }
    }

    #[test]
    fn key_has_flags() {
        let i = clean(&with(
            "hasCopyprivate=1*hasProc_bind=1*hasNum_threads=1*hasNowait=0*hasIf=1*hasAstprivate=1",
        ));
        assert_eq!(
            i.clauses,
            clauses(&[
                "Copyprivate",
                "Proc_bind",
                "Num_threads",
                "If",
                "Astprivate"
            ])
        );
        for flag in [
            "Collapse",
            "CopyIn",
            "CopyPrivate",
            "FirstPrivate",
            "LastPrivate",
            "Nowait",
            "Ordered",
            "Reduction",
            "Shared",
            "Untied",
        ] {
            let i = clean(&with(&format!("has{flag}=1")));
            assert_eq!(i.clauses, clauses(&[flag]));
        }
    }

    // -- real examples (section 3.4) --------------------------------------------------------

    #[test]
    fn real_examples_c() {
        use RegionType::*;
        let cases = [
            ("175*regionType=parallel*sscl=/opt/code/demo01/all.c:12:12*escl=/opt/code/demo01/all.c:49:49*hasDefault=none*hasIf=1*hasNum_threads=1*hasProc_bind=1*hasReduction=1*hasShared=1**", RegionInfo { default: Some("none".into()), clauses: clauses(&["If", "Num_threads", "Proc_bind", "Reduction", "Shared"]), ..info(Parallel, "all.c", (12, 12), (49, 49)) }),
            ("165*regionType=for*sscl=/opt/code/demo01/all.c:14:14*escl=/opt/code/demo01/all.c:18:18*hasCollapse=1*hasNowait=1*hasOrdered=1*hasReduction=1*hasSchedule=dynamic,2@2**", RegionInfo { schedule: Some("dynamic,2*2".into()), clauses: clauses(&["Collapse", "Nowait", "Ordered", "Reduction"]), ..info(For, "all.c", (14, 14), (18, 18)) }),
            ("91*regionType=ordered*sscl=/opt/code/demo01/all.c:16:16*escl=/opt/code/demo01/all.c:17:17**", info(Ordered, "all.c", (16, 16), (17, 17))),
            ("121*regionType=sections*sscl=/opt/code/demo01/all.c:19:19*escl=/opt/code/demo01/all.c:27:27*numSections=3*hasReduction=1**", RegionInfo { num_sections: Some(3), clauses: clauses(&["Reduction"]), ..info(Sections, "all.c", (19, 19), (27, 27)) }),
            ("107*regionType=single*sscl=/opt/code/demo01/all.c:28:28*escl=/opt/code/demo01/all.c:29:29*hasCopyprivate=1**", RegionInfo { clauses: clauses(&["Copyprivate"]), ..info(Single, "all.c", (28, 28), (29, 29)) }),
            ("90*regionType=master*sscl=/opt/code/demo01/all.c:30:30*escl=/opt/code/demo01/all.c:31:31**", info(Master, "all.c", (30, 30), (31, 31))),
            ("92*regionType=critical*sscl=/opt/code/demo01/all.c:32:32*escl=/opt/code/demo01/all.c:33:33**", info(Critical, "all.c", (32, 32), (33, 33))),
            ("109*regionType=critical*sscl=/opt/code/demo01/all.c:34:34*escl=/opt/code/demo01/all.c:35:35*criticalName=foo**", RegionInfo { critical_name: Some("foo".into()), ..info(Critical, "all.c", (34, 34), (35, 35)) }),
            ("90*regionType=atomic*sscl=/opt/code/demo01/all.c:36:36*escl=/opt/code/demo01/all.c:37:37**", info(Atomic, "all.c", (36, 36), (37, 37))),
            ("89*regionType=flush*sscl=/opt/code/demo01/all.c:38:38*escl=/opt/code/demo01/all.c:38:38**", info(Flush, "all.c", (38, 38), (38, 38))),
            ("91*regionType=barrier*sscl=/opt/code/demo01/all.c:39:39*escl=/opt/code/demo01/all.c:39:39**", info(Barrier, "all.c", (39, 39), (39, 39))),
            ("120*regionType=task*sscl=/opt/code/demo01/all.c:40:40*escl=/opt/code/demo01/all.c:41:41*hasIf=1*hasShared=1*hasUntied=1**", RegionInfo { clauses: clauses(&["If", "Shared", "Untied"]), ..info(Task, "all.c", (40, 40), (41, 41)) }),
            ("88*regionType=task*sscl=/opt/code/demo01/all.c:42:42*escl=/opt/code/demo01/all.c:43:43**", info(Task, "all.c", (42, 42), (43, 43))),
            ("92*regionType=taskwait*sscl=/opt/code/demo01/all.c:44:44*escl=/opt/code/demo01/all.c:44:44**", info(Taskwait, "all.c", (44, 44), (44, 44))),
            ("114*regionType=parallelfor*sscl=/opt/code/demo01/all.c:50:50*escl=/opt/code/demo01/all.c:51:51*hasSchedule=static**", RegionInfo { schedule: Some("static".into()), ..info(ParallelFor, "all.c", (50, 50), (51, 51)) }),
            ("100*regionType=parallelsections*sscl=/opt/code/demo01/all.c:52:52*escl=/opt/code/demo01/all.c:56:56**", info(ParallelSections, "all.c", (52, 52), (56, 56))),
            ("87*regionType=for*sscl=/opt/code/demo01/all.c:57:57*escl=/opt/code/demo01/all.c:58:58**", info(For, "all.c", (57, 57), (58, 58))),
            ("113*regionType=userRegion*sscl=/opt/code/demo01/all.c:59:59*escl=/opt/code/demo01/all.c:64:64*userRegionName=foo**", RegionInfo { user_region_name: Some("foo".into()), ..info(UserRegion, "all.c", (59, 59), (64, 64)) }),
            ("92*regionType=parallel*sscl=/opt/code/demo01/all.c:68:68*escl=/opt/code/demo01/all.c:69:69**", info(Parallel, "all.c", (68, 68), (69, 69))),
            ("110*regionType=task*sscl=/opt/code/demo01/untied.c:7:7*escl=/opt/code/demo01/untied.c:8:8*hasIf=1*hasUntied=1**", RegionInfo { clauses: clauses(&["If", "Untied"]), ..info(Task, "untied.c", (7, 7), (8, 8)) }),
            ("128*regionType=parallelfor*sscl=/opt/code/demo01/cx.cpp:4:4*escl=/opt/code/demo01/cx.cpp:5:5*hasReduction=1*hasSchedule=runtime**", RegionInfo { schedule: Some("runtime".into()), clauses: clauses(&["Reduction"]), ..info(ParallelFor, "cx.cpp", (4, 4), (5, 5)) }),
        ];

        for (ctc, expected) in cases {
            assert_eq!(clean(ctc), expected, "{ctc}");
        }
    }

    #[test]
    fn real_example_unnamed_user_region() {
        let ctc = "104*regionType=userRegion*sscl=/opt/code/demo01/un.c:2:2*escl=/opt/code/demo01/un.c:4:4*userRegionName=**";
        let got = parse_reporting(ctc.as_bytes(), &["user region without a name"]);
        let expected = RegionInfo {
            user_region_name: Some(String::new()),
            ..info(RegionType::UserRegion, "un.c", (2, 2), (4, 4))
        };
        assert_eq!(got, expected);
    }

    #[test]
    fn real_examples_fortran_with_blank_padding() {
        use RegionType::*;
        let cases = [
            ("150*regionType=parallel*sscl=/opt/code/demo01/allf.f90:12:12*escl=/opt/code/demo01/allf.f90:58:58*hasIf=1*hasNum_threads=1*hasReduction=1*hasShared=1**", RegionInfo { clauses: clauses(&["If", "Num_threads", "Reduction", "Shared"]), ..info(Parallel, "allf.f90", (12, 12), (58, 58)) }),
            ("126*regionType=do*sscl=/opt/code/demo01/allf.f90:13:13*escl=/opt/code/demo01/allf.f90:19:19*hasOrdered=1*hasSchedule=guided,2**", RegionInfo { schedule: Some("guided,2".into()), clauses: clauses(&["Ordered"]), ..info(Do, "allf.f90", (13, 13), (19, 19)) }),
            ("112*regionType=sections*sscl=/opt/code/demo01/allf.f90:20:20*escl=/opt/code/demo01/allf.f90:25:25*numSections=2**", RegionInfo { num_sections: Some(2), ..info(Sections, "allf.f90", (20, 20), (25, 25)) }),
            ("115*regionType=critical*sscl=/opt/code/demo01/allf.f90:35:35*escl=/opt/code/demo01/allf.f90:37:37*criticalName=bar**", RegionInfo { critical_name: Some("bar".into()), ..info(Critical, "allf.f90", (35, 35), (37, 37)) }),
            ("102*regionType=task*sscl=/opt/code/demo01/allf.f90:42:42*escl=/opt/code/demo01/allf.f90:44:44*hasIf=1**", RegionInfo { clauses: clauses(&["If"]), ..info(Task, "allf.f90", (42, 42), (44, 44)) }),
            ("106*regionType=task*sscl=/opt/code/demo01/allf.f90:45:45*escl=/opt/code/demo01/allf.f90:47:47*hasUntied=1**", RegionInfo { clauses: clauses(&["Untied"]), ..info(Task, "allf.f90", (45, 45), (47, 47)) }),
            ("99*regionType=workshare*sscl=/opt/code/demo01/allf.f90:49:49*escl=/opt/code/demo01/allf.f90:51:51**", info(Workshare, "allf.f90", (49, 49), (51, 51))),
            ("100*regionType=paralleldo*sscl=/opt/code/demo01/allf.f90:59:59*escl=/opt/code/demo01/allf.f90:63:63**", info(ParallelDo, "allf.f90", (59, 59), (63, 63))),
            ("106*regionType=parallelsections*sscl=/opt/code/demo01/allf.f90:64:64*escl=/opt/code/demo01/allf.f90:67:67**", info(ParallelSections, "allf.f90", (64, 64), (67, 67))),
            ("107*regionType=parallelworkshare*sscl=/opt/code/demo01/allf.f90:68:68*escl=/opt/code/demo01/allf.f90:70:70**", info(ParallelWorkshare, "allf.f90", (68, 68), (70, 70))),
            ("120*regionType=userRegion*sscl=/opt/code/demo01/allf.f90:71:71*escl=/opt/code/demo01/allf.f90:73:73*userRegionName=ufoo**", RegionInfo { user_region_name: Some("ufoo".into()), ..info(UserRegion, "allf.f90", (71, 71), (73, 73)) }),
            // F77 fixed form.
            ("109*regionType=paralleldo*sscl=/opt/code/demo01/fx.f:3:3*escl=/opt/code/demo01/fx.f:6:6*hasSchedule=static,4**", RegionInfo { schedule: Some("static,4".into()), ..info(ParallelDo, "fx.f", (3, 3), (6, 6)) }),
        ];

        for (ctc, expected) in cases {
            // As declared in Fortran: two trailing blanks, no NUL.
            let padded = format!("{ctc}  ");
            assert_eq!(clean(&padded), expected, "{padded:?}");
            // Without padding, and followed by arbitrary bytes from .rodata.
            assert_eq!(clean(ctc), expected);
            let mut rodata = padded.into_bytes();
            rodata.extend_from_slice(b"\0\xff\xfe*junk=*");
            let (got, problems) = parse(&rodata);
            assert_eq!(got, Some(expected));
            assert!(problems.is_empty(), "{:?}", messages(&problems));
        }
    }

    // -- malformed strings ------------------------------------------------------------------

    #[test]
    fn missing_terminator() {
        // Ends inside the last pair: reported, the pair is still used.
        let got = parse_reporting(
            b"88*regionType=task*sscl=/a/t.c:42:42*escl=/a/t.c:43:43",
            &["missing terminating `**` (the input ends inside `escl=/a/t.c:43:43`)"],
        );
        assert_eq!(got.end, range("/a/t.c", 43, 43));
        // Only the very last `*` missing: tolerated, as by OPARI2.
        clean("88*regionType=task*sscl=/a/t.c:42:42*escl=/a/t.c:43:43*");
        // Clause flag cut short.
        let (got, problems) = parse(b"*regionType=task*sscl=t.c:1:1*escl=t.c:2:2*hasIf=1");
        assert_eq!(got.unwrap().clauses, clauses(&["If"]));
        assert_problem_starting(&problems, "missing terminating `**`");
        // A key without `=` at the end.
        let (_, problems) = parse(b"*regionType=task*sscl=t.c:1:1*escl=t.c:2:2*hasI");
        assert_problem(&problems, "pair `hasI` has no `=` (ignored)");
        assert_problem(
            &problems,
            "missing terminating `**` (the input ends inside `hasI`)",
        );
    }

    #[test]
    fn every_prefix_of_a_real_example() {
        let ctc = b"165*regionType=for*sscl=/opt/code/demo01/all.c:14:14*escl=/opt/code/demo01/all.c:18:18*hasCollapse=1*hasNowait=1*hasOrdered=1*hasReduction=1*hasSchedule=dynamic,2@2**";
        for n in 0..=ctc.len() {
            let (info, problems) = parse(&ctc[..n]);
            if n == ctc.len() {
                assert!(problems.is_empty());
            } else if n == 0 {
                assert_eq!(messages(&problems), ["empty CTC string"]);
            } else if ctc[n - 1] != b'*' || n == 4 {
                assert_problem_starting(&problems, "missing terminating `**`");
            }
            let _ = (info, parse_lossy_name(&ctc[..n]));
        }
    }

    #[test]
    fn wrong_length_prefix_is_not_a_problem() {
        for prefix in ["", "0", "1", "99999999999999999999999999", "007"] {
            let i = clean(&format!(
                "{prefix}*regionType=barrier*sscl=b.c:1:1*escl=b.c:1:1**"
            ));
            assert_eq!(i.region_type, RegionType::Barrier);
        }
    }

    #[test]
    fn missing_star_after_length() {
        let got = parse_reporting(
            b"92regionType=barrier*sscl=b.c:1:1*escl=b.c:1:1**",
            &["missing `*` after the length prefix"],
        );
        assert_eq!(got.start, range("b.c", 1, 1));
        // Garbage before the first `*`: reported and skipped.
        parse_reporting(
            b"92x*regionType=barrier*sscl=b.c:1:1*escl=b.c:1:1**",
            &[
                "missing `*` after the length prefix",
                "pair `x` has no `=` (ignored)",
            ],
        );
    }

    #[test]
    fn unknown_keys() {
        let got = parse_reporting(
            with("foo=bar*RegionType=x*has=1*hasX=1").as_bytes(),
            &[
                "unknown key `foo` (ignored)",
                "unknown key `RegionType` (ignored)",
                "unknown key `has` (ignored)",
            ],
        );
        assert_eq!(got.region_type, RegionType::Parallel);
        assert_eq!(got.clauses, clauses(&["X"]));
    }

    #[test]
    fn no_region_type() {
        // (CTC string, problem, lossy name)
        for (ctc, problem, name) in [
            (
                "*sscl=/x/y/b.c:12:13*escl=/x/y/b.c:14:14**",
                "missing `regionType`",
                "unknown region @b.c:12",
            ),
            (
                "*regionType=*sscl=b.c:12:13*escl=b.c:14:14**",
                "empty `regionType`",
                "unknown region @b.c:12",
            ),
            (
                "*regionType=simd*sscl=/p/b.c:12:13*escl=/p/b.c:14:14**",
                "unknown region type `simd`",
                "simd @b.c:12",
            ),
        ] {
            let (got, problems) = parse(ctc.as_bytes());
            assert_eq!(got, None);
            assert_eq!(messages(&problems), [problem]);
            assert_eq!(parse_lossy_name(ctc.as_bytes()), name);
        }

        let ctc = b"*regionType=simd\n*sscl=bad**";
        assert_eq!(parse_lossy_name(ctc), "simd\\n");
        assert_eq!(parse_lossy_name(b""), "unknown region");
        assert_eq!(
            parse_lossy_name(b"*regionType=barrier*sscl=b.c:1:1*escl=b.c:1:1**"),
            "barrier @b.c:1"
        );
    }

    #[test]
    fn missing_scl() {
        let got = parse_reporting(
            b"*regionType=parallel**",
            &["missing `sscl`", "missing `escl` (using `sscl` instead)"],
        );
        assert_eq!(got.start, SourceRange::default());
        assert_eq!(got.end, SourceRange::default());
        let got = parse_reporting(
            b"*regionType=parallel*sscl=p.c:3:4**",
            &["missing `escl` (using `sscl` instead)"],
        );
        assert_eq!(got.end, range("p.c", 3, 4));
    }

    #[test]
    fn malformed_scl() {
        let ctc = "*regionType=for*sscl=f.c:99999999999999999999:3*escl=f.c:x:5**";
        let got = parse_reporting(
            ctc.as_bytes(),
            &[
                "`sscl` line `99999999999999999999` is too large (using 0)",
                "`escl` line `x` is not a non-negative integer (using 0)",
            ],
        );
        assert_eq!(got.start, range("f.c", 0, 3));
        assert_eq!(got.end, range("f.c", 0, 5));

        let (got, problems) =
            parse(b"*regionType=for*sscl=f.c:9:5*escl=f.c:4294967295:4294967295**");
        let got = got.unwrap();
        assert_eq!(got.start, range("f.c", 9, 5));
        assert_eq!(got.end.first_line, u32::MAX);
        assert_eq!(
            messages(&problems),
            ["`sscl` first line 9 is after its last line 5"]
        );

        let got = parse_reporting(
            b"*regionType=for*sscl=f.c:7*escl=nolines**",
            &[
                "`sscl` value `f.c:7` is not `file:line1:line2`",
                "`escl` value `nolines` is not `file:line1:line2`",
            ],
        );
        assert_eq!(got.start, range("f.c", 7, 7));
        assert_eq!(got.end, range("nolines", 0, 0));

        let got = parse_reporting(
            b"*regionType=for*sscl=:1:2*escl=f.c:-1:+2**",
            &[
                "`sscl` has an empty file name",
                "`escl` line `-1` is not a non-negative integer (using 0)",
                "`escl` line `+2` is not a non-negative integer (using 0)",
            ],
        );
        assert_eq!(got.start, range("", 1, 2));
        assert_eq!(parse_lossy_name(b"*regionType=for*sscl=:1:2**"), "for");
        assert_eq!(parse_lossy_name(b"*regionType=for*sscl=a.c:1:x**"), "for");

        let (_, problems) = parse(b"*regionType=for*sscl=*escl=f.c:1:1**");
        assert_eq!(
            messages(&problems),
            ["`sscl` value `` is not `file:line1:line2`"]
        );
    }

    #[test]
    fn huge_numbers() {
        let got = parse_reporting(
            b"*regionType=sections*sscl=s.c:99999999999999999999:99999999999999999999\
              *escl=s.c:4294967296:1*numSections=99999999999999999999**",
            &[
                "`sscl` line `99999999999999999999` is too large (using 0)",
                "`sscl` line `99999999999999999999` is too large (using 0)",
                "`escl` line `4294967296` is too large (using 0)",
                "`numSections` value `99999999999999999999` is too large",
            ],
        );
        assert_eq!(got.start, range("s.c", 0, 0));
        assert_eq!(got.end, range("s.c", 0, 1));
        assert_eq!(got.num_sections, None);
    }

    #[test]
    fn num_sections_problems() {
        let base = "*regionType=sections*sscl=s.c:1:1*escl=s.c:5:5";
        for (rest, num_sections, problem) in [
            ("**", None, "`sections` region without `numSections`"),
            (
                "*numSections=0**",
                Some(0),
                "`sections` region with `numSections=0`",
            ),
            (
                "*numSections=-2**",
                None,
                "`numSections` value `-2` is not a non-negative integer",
            ),
        ] {
            let got = parse_reporting(format!("{base}{rest}").as_bytes(), &[problem]);
            assert_eq!(got.num_sections, num_sections);
        }
    }

    #[test]
    fn user_region_without_name() {
        let got = parse_reporting(
            b"*regionType=userRegion*sscl=u.c:1:1*escl=u.c:2:2**",
            &["user region without a name"],
        );
        assert_eq!(got.user_region_name, None);
    }

    #[test]
    fn empty_values() {
        let got = parse_reporting(
            b"*regionType=critical*sscl=c.c:1:1*escl=c.c:2:2*criticalName=*hasSchedule=*hasDefault=*hasIf=**",
            &[
                "`hasIf` value `` is not 0 or 1 (ignored)",
                "empty `criticalName` (treated as an unnamed critical)",
                "empty value for `hasSchedule`",
                "empty value for `hasDefault`",
            ],
        );
        assert_eq!(got.critical_name, None);
        assert_eq!(got.schedule.as_deref(), Some(""));
        assert_eq!(got.default.as_deref(), Some(""));
        assert!(got.clauses.is_empty());
    }

    #[test]
    fn bad_flag_values() {
        let got = parse_reporting(
            with("hasNowait=2*hasIf=yes*hasShared=1").as_bytes(),
            &[
                "`hasNowait` value `2` is not 0 or 1 (ignored)",
                "`hasIf` value `yes` is not 0 or 1 (ignored)",
            ],
        );
        assert_eq!(got.clauses, clauses(&["Shared"]));
    }

    #[test]
    fn repeated_keys() {
        let got = parse_reporting(
            b"*regionType=for*regionType=do*sscl=a.f:1:1*escl=a.f:2:2*sscl=b.f:3:3\
              *hasNowait=1*hasIf=1*hasNowait=0*hasIf=1**",
            &[
                "repeated key `regionType` (the later value wins)",
                "repeated key `sscl` (the later value wins)",
                "repeated key `hasNowait` (the later value wins)",
                "repeated key `hasIf` (the later value wins)",
            ],
        );
        assert_eq!(got.region_type, RegionType::Do);
        assert_eq!(got.start, range("b.f", 3, 3));
        assert_eq!(got.clauses, clauses(&["If"]));
    }

    #[test]
    fn pairs_without_equals_or_key() {
        // Unlike OPARI2, `foo` does not swallow the next pair.
        let got = parse_reporting(
            b"*regionType=for*foo*sscl=a.c:1:1*=x*escl=a.c:2:2*=*a=b=c**",
            &[
                "pair `foo` has no `=` (ignored)",
                "empty key in pair `=x` (ignored)",
                "empty key in pair `=` (ignored)",
                "unknown key `a` (ignored)",
            ],
        );
        assert_eq!(got.start, range("a.c", 1, 1));
        assert_eq!(got.end, range("a.c", 2, 2));
    }

    #[test]
    fn non_utf8_bytes() {
        let (got, problems) =
            parse(b"*regionType=critical*sscl=\xffa.c:1:1*escl=a.c:2:2*criticalName=n\xc3\x28**");
        let got = got.unwrap();
        assert_eq!(got.start.file, "\u{fffd}a.c");
        assert_eq!(got.critical_name.as_deref(), Some("n\u{fffd}("));
        assert_eq!(
            messages(&problems),
            ["non-UTF-8 bytes in the CTC string (replaced by U+FFFD)"]
        );
        // Reported once, also when the region type itself is garbage.
        let (got, problems) = parse(b"*regionType=\xfe\xff*sscl=a.c:1:1*escl=a.c:2:2*\xff=1**");
        assert_eq!(got, None);
        let utf8 = problems
            .iter()
            .filter(|p| p.message.starts_with("non-UTF-8"))
            .count();
        assert_eq!(utf8, 1);
        assert_problem(&problems, "unknown region type `\u{fffd}\u{fffd}`");
        // Valid multi-byte UTF-8 is fine.
        let i = clean("*regionType=userRegion*sscl=ü.c:1:1*escl=ü.c:2:2*userRegionName=größe**");
        assert_eq!(i.user_region_name.as_deref(), Some("größe"));
    }

    #[test]
    fn empty_and_star_only_inputs() {
        let (got, problems) = parse(b"");
        assert_eq!(got, None);
        assert_eq!(messages(&problems), ["empty CTC string"]);

        let (got, problems) = parse(b"*");
        assert_eq!(got, None);
        assert_problem(&problems, "missing terminating `**`");
        assert_problem(&problems, "missing `regionType`");

        let (got, problems) = parse(b"**");
        assert_eq!(got, None);
        assert_eq!(
            messages(&problems),
            [
                "missing `regionType`",
                "missing `sscl`",
                "missing `escl` (using `sscl` instead)"
            ]
        );

        let (_, problems) = parse(b"42");
        assert_problem(&problems, "missing `*` after the length prefix");
        assert_problem(&problems, "missing terminating `**`");

        let (_, problems) = parse(b"  ");
        assert_problem(&problems, "missing `*` after the length prefix");
        assert_problem(&problems, "pair `  ` has no `=` (ignored)");
    }

    #[test]
    fn huge_inputs_are_linear_and_capped() {
        let stars = vec![b'*'; 1 << 20];
        let (got, problems) = parse(&stars);
        assert_eq!(got, None);
        assert_eq!(problems.len(), 3);

        let mut equals = b"*".to_vec();
        equals.extend(std::iter::repeat(b'=').take(1 << 20));
        let (_, problems) = parse(&equals);
        assert_problem_starting(&problems, "empty key in pair `===");

        let mut many = b"*regionType=for*sscl=a:1:1*escl=a:1:1*".to_vec();
        for i in 0..100_000 {
            many.extend_from_slice(format!("hasC{i}=1*x{i}=y*").as_bytes());
        }
        let (got, problems) = parse(&many);
        assert_eq!(got.unwrap().clauses.len(), 100_000);
        assert_eq!(problems.len(), MAX_PROBLEMS + 1);
        assert_eq!(
            problems.last().unwrap().message,
            format!("{} further problems not listed", 100_000 - MAX_PROBLEMS)
        );

        let mut long_value = b"*regionType=".to_vec();
        long_value.extend(std::iter::repeat(b'x').take(1 << 20));
        let (_, problems) = parse(&long_value);
        let unknown = &problems
            .iter()
            .find(|p| p.message.starts_with("unknown region type"))
            .unwrap()
            .message;
        assert!(unknown.chars().count() < 100, "{unknown}");
        assert!(parse_lossy_name(&long_value).chars().count() <= MAX_QUOTE_CHARS + 1);
    }

    #[test]
    fn random_byte_soup_never_panics() {
        const ALPHABET: &[u8] = b"*=:0123456789abcdefrsTy@\xff ";
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            // xorshift64*
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            state.wrapping_mul(0x2545_f491_4f6c_dd1d)
        };
        let words: [&[u8]; 8] = [
            b"regionType=parallel*",
            b"regionType=sections*",
            b"sscl=a.c:1:2*",
            b"escl=a:b.c:3:4*",
            b"numSections=2*",
            b"hasSchedule=st@tic*",
            b"userRegionName=*",
            b"*",
        ];
        let mut some = 0;
        for round in 0..20_000 {
            // Every other input also mixes in whole pairs.
            let mix_words = round % 2 == 1;
            let len = (next() % 201) as usize;
            let mut input = Vec::with_capacity(len + 16);
            while input.len() < len {
                let r = next();
                if mix_words && r % 8 == 0 {
                    input.extend_from_slice(words[(r >> 8) as usize % words.len()]);
                } else {
                    input.push(ALPHABET[(r >> 8) as usize % ALPHABET.len()]);
                }
            }
            let (info, problems) = parse(&input);
            some += usize::from(info.is_some());
            assert!(problems.len() <= MAX_PROBLEMS + 1);
            assert!(!problems.iter().any(|p| p.message.is_empty()));
            let _ = parse_lossy_name(&input);
        }
        // Mixing in whole pairs makes some inputs parse to a region.
        assert!(some > 0);
    }
}
