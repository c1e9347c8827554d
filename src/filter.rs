//! Filter files in Score-P's syntax → which regions and source files record nothing. Pure: the
//! caller reads the file, hands over its text, and asks per region.
//!
//! ```text
//! # a comment
//! SCOREP_REGION_NAMES_BEGIN
//!   EXCLUDE *
//!   INCLUDE main solve_*
//!           init
//!   EXCLUDE MANGLED _Z3fooi
//! SCOREP_REGION_NAMES_END
//! SCOREP_FILE_NAMES_BEGIN
//!   EXCLUDE */generated/*
//! SCOREP_FILE_NAMES_END
//! ```
//!
//! As in Score-P: patterns are separated by white space and may continue on the following lines
//! until the next keyword; `*`, `?` and `[...]` are shell wildcards; a backslash makes the next
//! character literal (`\ ` puts a blank into a pattern, `\#` a `#`); within each block the last
//! matching rule decides, and a region is filtered when its file or its name is excluded.
//! `MANGLED` rules match the mangled name, which for POMP2 regions is the name itself.

use std::fmt;

/// A malformed filter file: the 1-based line and what is wrong there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilterError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Block {
    RegionNames,
    FileNames,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Rule {
    exclude: bool,
    pattern: String,
}

/// The rules of one filter file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    region_rules: Vec<Rule>,
    file_rules: Vec<Rule>,
}

/// The words of a line, with `#` comments removed; escapes are kept for the pattern matcher
/// (except that `\` + blank or `\#` become part of the word).
fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                word.push('\\');
                if let Some(next) = chars.next() {
                    word.push(next);
                }
            }
            '#' => break,
            c if c.is_whitespace() => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

impl Filter {
    /// Parses a filter file's text. An empty file (or one with comments only) filters nothing.
    pub fn parse(text: &str) -> Result<Filter, FilterError> {
        let mut filter = Filter::default();
        let mut block: Option<(Block, usize)> = None;
        // The rule kind that patterns on this and the following lines belong to.
        let mut current: Option<bool> = None;
        for (index, line) in text.lines().enumerate() {
            let line_number = index + 1;
            let error = |message: String| FilterError {
                line: line_number,
                message,
            };
            let mut expect_mangled = false;
            for word in words(line) {
                match (word.as_str(), block) {
                    (
                        "SCOREP_REGION_NAMES_BEGIN" | "SCOREP_FILE_NAMES_BEGIN",
                        Some((_, opened)),
                    ) => {
                        return Err(error(format!(
                            "{word} inside the block opened on line {opened}"
                        )))
                    }
                    ("SCOREP_REGION_NAMES_BEGIN", None) => {
                        block = Some((Block::RegionNames, line_number));
                        current = None;
                    }
                    ("SCOREP_FILE_NAMES_BEGIN", None) => {
                        block = Some((Block::FileNames, line_number));
                        current = None;
                    }
                    ("SCOREP_REGION_NAMES_END", Some((Block::RegionNames, _)))
                    | ("SCOREP_FILE_NAMES_END", Some((Block::FileNames, _))) => block = None,
                    ("SCOREP_REGION_NAMES_END" | "SCOREP_FILE_NAMES_END", _) => {
                        return Err(error(format!("{word} without its matching _BEGIN")))
                    }
                    (_, None) => {
                        return Err(error(format!(
                            "`{word}` outside a SCOREP_REGION_NAMES_BEGIN or \
                             SCOREP_FILE_NAMES_BEGIN block"
                        )))
                    }
                    ("EXCLUDE" | "INCLUDE", Some((kind, _))) => {
                        current = Some(word == "EXCLUDE");
                        expect_mangled = kind == Block::RegionNames;
                    }
                    ("MANGLED", Some((Block::RegionNames, _))) if expect_mangled => {
                        expect_mangled = false;
                    }
                    ("MANGLED", _) => {
                        return Err(error(
                            "MANGLED must directly follow EXCLUDE or INCLUDE in a region \
                             names block"
                                .into(),
                        ))
                    }
                    (pattern, Some((kind, _))) => {
                        expect_mangled = false;
                        let Some(exclude) = current else {
                            return Err(error(format!(
                                "pattern `{pattern}` before EXCLUDE or INCLUDE"
                            )));
                        };
                        if let Some(problem) = bracket_problem(pattern) {
                            return Err(error(format!("pattern `{pattern}`: {problem}")));
                        }
                        let rule = Rule {
                            exclude,
                            pattern: pattern.to_string(),
                        };
                        match kind {
                            Block::RegionNames => filter.region_rules.push(rule),
                            Block::FileNames => filter.file_rules.push(rule),
                        }
                    }
                }
            }
        }
        if let Some((kind, opened)) = block {
            let name = match kind {
                Block::RegionNames => "SCOREP_REGION_NAMES_BEGIN",
                Block::FileNames => "SCOREP_FILE_NAMES_BEGIN",
            };
            return Err(FilterError {
                line: opened,
                message: format!("{name} is never closed"),
            });
        }
        Ok(filter)
    }

    /// Whether the filter has no rules (then nothing is ever filtered).
    pub fn is_empty(&self) -> bool {
        self.region_rules.is_empty() && self.file_rules.is_empty()
    }

    /// Whether a region named `name`, defined in the source file `file`, records nothing.
    pub fn excludes(&self, name: &str, file: &str) -> bool {
        last_match_excludes(&self.file_rules, file) || last_match_excludes(&self.region_rules, name)
    }
}

fn last_match_excludes(rules: &[Rule], text: &str) -> bool {
    rules
        .iter()
        .rev()
        .find(|rule| wildcard_match(rule.pattern.as_bytes(), text.as_bytes()))
        .is_some_and(|rule| rule.exclude)
}

/// Why a pattern's bracket expression is unusable, if it is.
fn bracket_problem(pattern: &str) -> Option<&'static str> {
    let p = pattern.as_bytes();
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            b'\\' => i += 2,
            b'[' => match bracket_end(p, i) {
                Some(end) => i = end,
                None => return Some("`[` without a closing `]`"),
            },
            _ => i += 1,
        }
    }
    None
}

/// The index after the `]` closing the bracket expression that starts at `p[open]`.
fn bracket_end(p: &[u8], open: usize) -> Option<usize> {
    let mut i = open + 1;
    if matches!(p.get(i), Some(b'!' | b'^')) {
        i += 1;
    }
    // A `]` right after the opening (or its negation) is a member, as in the shell.
    if p.get(i) == Some(&b']') {
        i += 1;
    }
    while i < p.len() {
        match p[i] {
            b'\\' => i += 2,
            b']' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// Whether `c` is a member of the bracket expression `p[open..end]`.
fn bracket_contains(p: &[u8], open: usize, end: usize, c: u8) -> bool {
    let mut i = open + 1;
    let negated = matches!(p[i], b'!' | b'^');
    if negated {
        i += 1;
    }
    let last = end - 1; // the closing `]`
    let mut found = false;
    let mut first = true;
    while i < last {
        let mut lo = p[i];
        if lo == b'\\' && i + 1 < last {
            i += 1;
            lo = p[i];
        } else if lo == b']' && !first {
            break;
        }
        first = false;
        if i + 2 < last && p[i + 1] == b'-' {
            let hi = p[i + 2];
            found |= (lo..=hi).contains(&c);
            i += 3;
        } else {
            found |= lo == c;
            i += 1;
        }
    }
    found != negated
}

/// Shell wildcard matching (`*`, `?`, `[...]`, `\` escapes), iterative with one backtrack
/// point for the last `*`, so it runs in O(pattern × text) at worst.
pub fn wildcard_match(p: &[u8], t: &[u8]) -> bool {
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        let step = match p.get(pi) {
            Some(b'*') => {
                star = Some((pi + 1, ti));
                pi += 1;
                continue;
            }
            Some(b'?') => Some(1),
            Some(b'[') => match bracket_end(p, pi) {
                Some(end) if bracket_contains(p, pi, end, t[ti]) => Some(end - pi),
                Some(_) => None,
                None => (t[ti] == b'[').then_some(1),
            },
            Some(b'\\') if pi + 1 < p.len() => (p[pi + 1] == t[ti]).then_some(2),
            Some(&c) => (c == t[ti]).then_some(1),
            None => None,
        };
        match (step, star) {
            (Some(n), _) => {
                pi += n;
                ti += 1;
            }
            (None, Some((after_star, matched_from))) => {
                pi = after_star;
                ti = matched_from + 1;
                star = Some((after_star, matched_from + 1));
            }
            (None, None) => return false,
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, t: &str) -> bool {
        wildcard_match(p.as_bytes(), t.as_bytes())
    }

    #[test]
    fn wildcards() {
        for (pattern, name) in [
            ("*", ""),
            ("*", "anything"),
            ("foo", "foo"),
            ("foo*", "foobar"),
            ("*bar", "foobar"),
            ("f?o", "fxo"),
            ("a*b*c", "aXbYbZc"),
            ("[abc]x", "bx"),
            ("[a-c]x", "cx"),
            ("[]]", "]"),
            ("\\*", "*"),
            ("!$omp atomic @b.c:*", "!$omp atomic @b.c:17"),
            ("*/lib/*.c", "/src/lib/x.c"),
        ] {
            assert!(m(pattern, name), "{pattern} should match {name}");
        }
        for (pattern, name) in [
            ("foo", "foobar"),
            ("f?o", "fo"),
            ("a*b*c", "aXbYbZ"),
            ("[!abc]x", "bx"),
            ("[a-c]x", "dx"),
            ("\\*", "x"),
            ("!$omp atomic @b.c:*", "!$omp atomic @a.c:17"),
        ] {
            assert!(!m(pattern, name), "{pattern} should not match {name}");
        }
    }

    #[test]
    fn later_rules_win_and_patterns_continue_on_following_lines() {
        let f = Filter::parse(
            "# keep only the solver\n\
             SCOREP_REGION_NAMES_BEGIN\n\
             \x20 EXCLUDE *\n\
             \x20 INCLUDE main solve_*\n\
             \x20         init   # the setup\n\
             \x20 EXCLUDE solve_slow\n\
             SCOREP_REGION_NAMES_END\n",
        )
        .unwrap();
        assert!(!f.excludes("main", "a.c"));
        assert!(!f.excludes("solve_fast", "a.c"));
        assert!(!f.excludes("init", "a.c"));
        assert!(f.excludes("solve_slow", "a.c"));
        assert!(f.excludes("helper", "a.c"));
    }

    #[test]
    fn file_rules_filter_every_region_of_the_file() {
        let f = Filter::parse(
            "SCOREP_FILE_NAMES_BEGIN\n EXCLUDE */generated/*\n INCLUDE */generated/keep.c\n\
             SCOREP_FILE_NAMES_END\n",
        )
        .unwrap();
        assert!(f.excludes("!$omp for @x.c:3", "/src/generated/x.c"));
        assert!(!f.excludes("!$omp for @keep.c:3", "/src/generated/keep.c"));
        assert!(!f.excludes("!$omp for @x.c:3", "/src/x.c"));
    }

    #[test]
    fn escapes_and_mangled_rules() {
        let f = Filter::parse(
            "SCOREP_REGION_NAMES_BEGIN\nEXCLUDE MANGLED _Z3fooi\nEXCLUDE !$omp\\ critical*\n\
             EXCLUDE a\\#b\nSCOREP_REGION_NAMES_END",
        )
        .unwrap();
        assert!(f.excludes("_Z3fooi", ""));
        assert!(f.excludes("!$omp critical @a.c:4", ""));
        assert!(f.excludes("!$omp critical", ""));
        assert!(f.excludes("a#b", ""));
        assert!(!f.excludes("a", ""));
    }

    #[test]
    fn empty_and_comment_only_files_filter_nothing() {
        assert!(Filter::parse("").unwrap().is_empty());
        let f = Filter::parse("# nothing\n\n   # here\n").unwrap();
        assert!(f.is_empty());
        assert!(!f.excludes("main", "a.c"));
    }

    #[test]
    fn malformed_files_name_the_line() {
        let err = |text: &str| Filter::parse(text).unwrap_err();
        assert_eq!(
            err("\nEXCLUDE foo\n"),
            FilterError {
                line: 2,
                message: "`EXCLUDE` outside a SCOREP_REGION_NAMES_BEGIN or \
                          SCOREP_FILE_NAMES_BEGIN block"
                    .into()
            }
        );
        assert_eq!(err("SCOREP_REGION_NAMES_BEGIN\n  foo\n").line, 2);
        assert!(err("SCOREP_REGION_NAMES_BEGIN\n  foo\n")
            .message
            .contains("before EXCLUDE or INCLUDE"));
        let unclosed = err("\n\nSCOREP_FILE_NAMES_BEGIN\nEXCLUDE *.c\n");
        assert_eq!(unclosed.line, 3);
        assert!(unclosed.message.contains("never closed"));
        assert_eq!(err("SCOREP_REGION_NAMES_END\n").line, 1);
        assert_eq!(
            err("SCOREP_FILE_NAMES_BEGIN\nSCOREP_REGION_NAMES_END\n").line,
            2
        );
        assert_eq!(
            err("SCOREP_REGION_NAMES_BEGIN\nSCOREP_FILE_NAMES_BEGIN\n").line,
            2
        );
        assert!(
            err("SCOREP_FILE_NAMES_BEGIN\nEXCLUDE MANGLED x\nSCOREP_FILE_NAMES_END")
                .message
                .contains("MANGLED")
        );
        let bracket = err("SCOREP_REGION_NAMES_BEGIN\nEXCLUDE\n  foo[ab\nSCOREP_REGION_NAMES_END");
        assert_eq!(bracket.line, 3);
        assert!(bracket.message.contains("closing"));
        assert_eq!(
            format!("{}", err("x")),
            "line 1: `x` outside a SCOREP_REGION_NAMES_BEGIN or SCOREP_FILE_NAMES_BEGIN block"
        );
    }
}
