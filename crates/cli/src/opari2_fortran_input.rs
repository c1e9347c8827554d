//! What the compiler wrapper changes in a Fortran source before opari2 reads it:
//! `!$omp parallel do simd` is split into `!$omp parallel` and `!$omp do simd` (opari2 would
//! put `simd` on the parallel), with `!$omp end parallel` after the loop (in place of an
//! `!$omp end parallel do simd`). Line markers keep every other line at its number, so the
//! compiler's messages and opari2's regions name the user's lines. It also finds the first
//! `taskloop` directive, which opari2 leaves uninstrumented.

use super::opari2_c_input::{clauses, split_parallel_loop};

pub struct Fixed {
    /// The text for opari2, or None where nothing changes.
    pub text: Option<Vec<u8>>,
    /// The line of the first `taskloop` directive.
    pub taskloop: Option<u32>,
}

/// `source` is the user's file, absolute: the line markers name it.
pub fn fix(text: &[u8], fixed_form: bool, source: &str) -> Fixed {
    let lines: Vec<&[u8]> = text.split_inclusive(|c| *c == b'\n').collect();
    let units = units(&lines, fixed_form);
    let taskloop = units.iter().find_map(|u| match u {
        Unit::Directive { first, words, .. } if words.iter().any(|w| w == "taskloop") => {
            Some(*first as u32 + 1)
        }
        _ => None,
    });
    let mut edits = Edits::new(lines.len());
    for (index, unit) in units.iter().enumerate() {
        if let Unit::Directive {
            first,
            last,
            words,
            clauses: text,
        } = unit
        {
            if words == &["parallel", "do", "simd"] {
                split(
                    &units,
                    index,
                    (*first, *last),
                    text,
                    fixed_form,
                    source,
                    &mut edits,
                );
            } else if words == &["do", "simd"] {
                end_do_simd(&units, index, fixed_form, source, &mut edits);
            }
        }
    }
    Fixed {
        text: edits.changed().then(|| edits.apply(&lines)),
        taskloop,
    }
}

/// A statement or directive of the source, by its (0-based) line range.
#[derive(Debug)]
enum Unit {
    Directive {
        first: usize,
        last: usize,
        /// The directive name's words, lower case.
        words: Vec<String>,
        /// The text after them.
        clauses: String,
    },
    Statement {
        last: usize,
        label: Option<u32>,
        /// Lower case, without comments; without blanks in fixed form.
        text: String,
    },
}

/// One physical line, classified.
enum Line {
    /// Blank, comment or preprocessor line.
    Nothing,
    /// An OpenMP directive line: the text after its sentinel; whether it continues an earlier
    /// line.
    Directive { text: String, continuation: bool },
    /// Code: label, text, whether it continues an earlier line.
    Code {
        label: Option<u32>,
        text: String,
        continuation: bool,
    },
}

fn classify(raw: &[u8], fixed_form: bool) -> Line {
    let line = String::from_utf8_lossy(raw);
    let line = line.trim_end_matches(['\n', '\r']);
    let lower = line.to_ascii_lowercase();
    let trimmed = lower.trim_start();
    if trimmed.is_empty() || trimmed.starts_with('#') {
        return Line::Nothing;
    }
    if fixed_form {
        let first = lower.as_bytes()[0];
        if matches!(first, b'c' | b'*' | b'!') {
            if lower.get(1..5) == Some("$omp") {
                let column6 = lower.as_bytes().get(5).copied().unwrap_or(b' ');
                return Line::Directive {
                    text: lower.get(6..).unwrap_or("").to_string(),
                    continuation: !matches!(column6, b' ' | b'0' | b'\t'),
                };
            }
            if lower.get(1..2) == Some("$")
                && lower
                    .get(2..5)
                    .is_some_and(|s| s.bytes().all(|c| c == b' ' || c.is_ascii_digit()))
            {
                let mut code = String::from("  ");
                code.push_str(&lower[2..]);
                return fixed_code(&code);
            }
            return Line::Nothing;
        }
        if trimmed.starts_with('!') {
            return Line::Nothing;
        }
        return fixed_code(&lower);
    }
    if let Some(rest) = trimmed.strip_prefix("!$omp") {
        let rest = rest.trim_start();
        return match rest.strip_prefix('&') {
            Some(after) => Line::Directive {
                text: after.to_string(),
                continuation: true,
            },
            None => Line::Directive {
                text: rest.to_string(),
                continuation: false,
            },
        };
    }
    let code = match trimmed.strip_prefix("!$") {
        Some(rest) if rest.starts_with([' ', '\t']) => rest,
        _ if trimmed.starts_with('!') => return Line::Nothing,
        _ => trimmed,
    };
    let (continuation, code) = match code.trim_start().strip_prefix('&') {
        Some(after) => (true, after),
        None => (false, code),
    };
    let digits = code.bytes().take_while(u8::is_ascii_digit).count();
    let label = (!continuation && digits > 0)
        .then(|| code[..digits].parse().ok())
        .flatten();
    let text = if label.is_some() {
        &code[digits..]
    } else {
        code
    };
    Line::Code {
        label,
        text: strip_comment(text).trim().to_string(),
        continuation,
    }
}

/// A fixed form code line (lower case): label in columns 1-5, continuation mark in column 6.
fn fixed_code(line: &str) -> Line {
    let (head, body, continuation) = match line.find('\t').filter(|&t| t < 6) {
        // Tab form: label, tab, then a digit for a continuation line.
        Some(tab) => {
            let after = &line[tab + 1..];
            match after.as_bytes().first() {
                Some(d) if (b'1'..=b'9').contains(d) => (&line[..tab], &after[1..], true),
                _ => (&line[..tab], after, false),
            }
        }
        None => {
            let column6 = line.as_bytes().get(5).copied().unwrap_or(b' ');
            (
                line.get(..5.min(line.len())).unwrap_or(""),
                line.get(6..).unwrap_or(""),
                !matches!(column6, b' ' | b'0'),
            )
        }
    };
    let label = head.trim().parse().ok().filter(|_| !continuation);
    let text: String = strip_comment(body)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    Line::Code {
        label,
        text,
        continuation,
    }
}

/// The code before a `!` comment (outside character constants).
fn strip_comment(text: &str) -> &str {
    let mut quote = None;
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '!') => return &text[..i],
            _ => {}
        }
    }
    text
}

/// Without a trailing `&` (free form continuation): (text, continues).
fn continued(text: &str) -> (&str, bool) {
    match text.trim_end().strip_suffix('&') {
        Some(before) => (before, true),
        None => (text, false),
    }
}

/// The source's directives and statements.
fn units(lines: &[&[u8]], fixed_form: bool) -> Vec<Unit> {
    let mut out: Vec<Unit> = Vec::new();
    // Index in `out` of the unit that the next line may continue.
    let mut open_directive: Option<usize> = None;
    let mut open_statement: Option<usize> = None;
    for (n, raw) in lines.iter().enumerate() {
        match classify(raw, fixed_form) {
            Line::Nothing => {}
            Line::Directive { text, continuation } => {
                let text = strip_comment(&text).to_string();
                let (text, continues) = if fixed_form {
                    (text.as_str(), false)
                } else {
                    continued(&text)
                };
                match open_directive.filter(|_| continuation) {
                    Some(index) => {
                        if let Unit::Directive { last, clauses, .. } = &mut out[index] {
                            *last = n;
                            clauses.push(' ');
                            clauses.push_str(text);
                        }
                    }
                    None => {
                        let (words, rest) = directive_words(text);
                        out.push(Unit::Directive {
                            first: n,
                            last: n,
                            words,
                            clauses: rest,
                        });
                    }
                }
                open_directive = (fixed_form || continues).then_some(out.len() - 1);
                open_statement = None;
            }
            Line::Code {
                label,
                text,
                continuation,
            } => {
                let (text, continues) = if fixed_form {
                    (text.as_str(), false)
                } else {
                    continued(&text)
                };
                match open_statement.filter(|_| continuation) {
                    Some(index) => {
                        if let Unit::Statement { last, text: t, .. } = &mut out[index] {
                            *last = n;
                            t.push_str(text);
                        }
                    }
                    None => {
                        for (k, part) in split_statements(text).into_iter().enumerate() {
                            out.push(Unit::Statement {
                                last: n,
                                label: label.filter(|_| k == 0),
                                text: part.trim().to_string(),
                            });
                        }
                    }
                }
                open_statement = (fixed_form || continues).then_some(out.len() - 1);
                open_directive = None;
            }
        }
    }
    out
}

/// The statements of a line separated by `;` (outside character constants).
fn split_statements(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut quote = None;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, ';') => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts.retain(|p| !p.trim().is_empty());
    if parts.is_empty() {
        parts.push("");
    }
    parts
}

/// The directive name's words (lower case) and the clause text after them.
fn directive_words(text: &str) -> (Vec<String>, String) {
    let mut words = Vec::new();
    let mut rest = text.trim_start();
    loop {
        let n = rest
            .bytes()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
            .count();
        if n == 0 {
            break;
        }
        let word = rest[..n].to_ascii_lowercase();
        let after = rest[n..].trim_start();
        if after.starts_with('(') || !is_directive_word(&word) {
            break;
        }
        words.push(word);
        rest = after;
    }
    (words, rest.to_string())
}

fn is_directive_word(word: &str) -> bool {
    matches!(
        word,
        "parallel"
            | "do"
            | "simd"
            | "end"
            | "sections"
            | "section"
            | "single"
            | "workshare"
            | "master"
            | "masked"
            | "critical"
            | "task"
            | "taskloop"
            | "taskwait"
            | "taskyield"
            | "taskgroup"
            | "atomic"
            | "flush"
            | "barrier"
            | "ordered"
            | "target"
            | "teams"
            | "distribute"
            | "loop"
            | "declare"
            | "data"
            | "update"
            | "threadprivate"
            | "cancel"
            | "cancellation"
            | "point"
    )
}

/// What a statement is, for finding the end of a loop.
#[derive(Debug, PartialEq, Eq)]
enum Statement {
    /// A DO statement, with the label of its terminating statement if it has one.
    Do(Option<u32>),
    EndDo,
    Other,
}

fn statement_kind(text: &str, fixed_form: bool) -> Statement {
    // A construct name: `outer: do ...`.
    let rest = match text.split_once(':') {
        Some((name, after))
            if !after.starts_with(':')
                && !name.trim().is_empty()
                && name
                    .trim()
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || c == b'_') =>
        {
            after.trim_start()
        }
        _ => text,
    };
    if fixed_form {
        if rest.starts_with("enddo") {
            return Statement::EndDo;
        }
        let Some(after) = rest.strip_prefix("do") else {
            return Statement::Other;
        };
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let label = after[..digits].parse().ok();
        let control = after[digits..].trim_start_matches(',');
        let is_do = control.is_empty()
            || control.starts_with("while(")
            || control.starts_with("concurrent(")
            || has_loop_control(control);
        return if is_do {
            Statement::Do(label)
        } else {
            Statement::Other
        };
    }
    if let Some(after) = rest.strip_prefix("end") {
        if after.trim_start().strip_prefix("do").is_some_and(|tail| {
            !tail
                .bytes()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
        }) {
            return Statement::EndDo;
        }
    }
    let Some(after) = rest.strip_prefix("do") else {
        return Statement::Other;
    };
    match after.bytes().next() {
        None => return Statement::Do(None),
        Some(c) if c.is_ascii_alphanumeric() || c == b'_' => return Statement::Other,
        _ => {}
    }
    let after = after.trim_start();
    if after.starts_with(['=', '%', '(']) {
        return Statement::Other;
    }
    let digits = after.bytes().take_while(u8::is_ascii_digit).count();
    Statement::Do(after[..digits].parse().ok())
}

/// Whether fixed form text after `DO [label][,]` is a loop control `var=first,last...` (and
/// not the assignment `DO10I=1.5`).
fn has_loop_control(text: &str) -> bool {
    let Some((_, bounds)) = text.split_once('=') else {
        return false;
    };
    let mut depth = 0i32;
    bounds.chars().any(|c| {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        c == ',' && depth == 0
    })
}

/// The index of the unit that ends the loop whose DO statement is unit `start`.
fn loop_end(units: &[Unit], start: usize, fixed_form: bool) -> Option<usize> {
    // Open loops: Some(label) ends at a labelled statement, None at END DO.
    let mut open: Vec<Option<u32>> = Vec::new();
    for (index, unit) in units.iter().enumerate().skip(start) {
        let Unit::Statement { label, text, .. } = unit else {
            continue;
        };
        match statement_kind(text, fixed_form) {
            Statement::Do(end_label) => {
                open.push(end_label);
                continue;
            }
            Statement::EndDo => {
                if open.pop()?.is_some() {
                    return None;
                }
            }
            Statement::Other => {}
        }
        if let Some(label) = label {
            while open.last() == Some(&Some(*label)) {
                open.pop();
            }
        }
        if open.is_empty() {
            return Some(index);
        }
    }
    None
}

/// Replacements and insertions by line.
struct Edits {
    replace: Vec<Option<Vec<u8>>>,
    after: Vec<Vec<u8>>,
}

impl Edits {
    fn new(lines: usize) -> Self {
        Edits {
            replace: vec![None; lines],
            after: vec![Vec::new(); lines],
        }
    }

    fn changed(&self) -> bool {
        self.replace.iter().any(Option::is_some) || self.after.iter().any(|a| !a.is_empty())
    }

    fn apply(&self, lines: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for (n, line) in lines.iter().enumerate() {
            match &self.replace[n] {
                Some(text) => out.extend_from_slice(text),
                None => {
                    out.extend_from_slice(line);
                    if !line.ends_with(b"\n") && !self.after[n].is_empty() {
                        out.push(b'\n');
                    }
                }
            }
            out.extend_from_slice(&self.after[n]);
        }
        out
    }
}

fn marker(line: usize, source: &str) -> String {
    format!(
        "# {line} \"{}\"\n",
        source.replace('\\', "\\\\").replace('"', "\\\"")
    )
}

/// A directive on as many lines as the source form allows, each ending in a newline: one
/// clause a line, a clause too long for a line continued in the middle (free form joins the
/// text after `!$omp&` to the `&` before it; fixed form ignores blanks).
fn directive(words: &str, clauses: &[String], fixed_form: bool) -> String {
    let mut out = format!("!$omp {words}");
    // Text after `!$omp& `: fixed form ends at column 72, free form at 132.
    let room = if fixed_form { 64 } else { 120 };
    for clause in clauses {
        let chars: Vec<char> = clause.chars().collect();
        for (n, chunk) in chars.chunks(room).enumerate() {
            out.push_str(match (fixed_form, n) {
                (true, 0) => "\n!$omp& ",
                (true, _) => "\n!$omp&",
                (false, 0) => " &\n!$omp& ",
                (false, _) => "&\n!$omp&",
            });
            out.extend(chunk);
        }
    }
    out.push('\n');
    out
}

/// The loop of the directive `units[index]`: (the index of its END DO or terminating
/// statement, that statement's last line), or None if no DO statement follows the directive.
fn directive_loop(units: &[Unit], index: usize, fixed_form: bool) -> Option<(usize, usize)> {
    let Some(Unit::Statement { text, .. }) = units.get(index + 1) else {
        return None;
    };
    if !matches!(statement_kind(text, fixed_form), Statement::Do(_)) {
        return None;
    }
    let end = loop_end(units, index + 1, fixed_form)?;
    match units[end] {
        Unit::Statement { last, .. } => Some((end, last)),
        Unit::Directive { .. } => None,
    }
}

/// The end directive `words` right after unit `index`: its first and last line.
fn end_directive(units: &[Unit], index: usize, words: &[&str]) -> Option<(usize, usize)> {
    match units.get(index + 1) {
        Some(Unit::Directive {
            first,
            last,
            words: found,
            ..
        }) if found == words => Some((*first, *last)),
        _ => None,
    }
}

/// Puts `text` in place of the lines `first..=last`, with a line marker after it unless it has
/// as many lines.
fn replace_lines(edits: &mut Edits, (first, last): (usize, usize), text: &str, source: &str) {
    let mut text = text.to_string();
    if text.matches('\n').count() != last - first + 1 {
        text.push_str(&marker(last + 2, source));
    }
    edits.replace[first] = Some(text.into_bytes());
    for line in first + 1..=last {
        edits.replace[line] = Some(Vec::new());
    }
}

/// End directives, each marked as line `line` (0-based): where a construct ends.
fn ends_at(line: usize, directives: &[&str], source: &str) -> String {
    directives
        .iter()
        .map(|d| format!("{}{d}\n", marker(line + 1, source)))
        .collect()
}

/// Puts the end directives `directives` after line `line` (the end of a loop), marked as that
/// line, and a line marker for the next line.
fn insert_ends_after(edits: &mut Edits, line: usize, directives: &[&str], source: &str) {
    let mut text = ends_at(line, directives, source);
    text.push_str(&marker(line + 2, source));
    edits.after[line] = text.into_bytes();
}

/// Splits the `parallel do simd` directive `units[index]` (lines `first..=last`) into
/// `parallel` and `do simd`, ending both after the loop.
fn split(
    units: &[Unit],
    index: usize,
    (first, last): (usize, usize),
    clause_text: &str,
    fixed_form: bool,
    source: &str,
    edits: &mut Edits,
) {
    let Some(parsed) = clauses(clause_text) else {
        return;
    };
    let Some((end_index, end_line)) = directive_loop(units, index, fixed_form) else {
        return;
    };
    let (parallel, inner) = split_parallel_loop(&parsed);
    // Line numbers are 1-based: the directive's first line keeps its number for both.
    let mut text = directive("parallel", &parallel, fixed_form);
    text.push_str(&marker(first + 1, source));
    text.push_str(&directive("do simd", &inner, fixed_form));
    replace_lines(edits, (first, last), &text, source);
    let ends = ["!$omp end do simd", "!$omp end parallel"];
    match end_directive(units, end_index, &["end", "parallel", "do", "simd"]) {
        Some((first, last)) => {
            let text = ends_at(first, &ends, source);
            replace_lines(edits, (first, last), &text, source);
        }
        None => insert_ends_after(edits, end_line, &ends, source),
    }
}

/// Ends the loop of the `do simd` directive `units[index]` with `!$omp end do simd` where it
/// has none: opari2 would end it with `!$omp end do`.
fn end_do_simd(units: &[Unit], index: usize, fixed_form: bool, source: &str, edits: &mut Edits) {
    let Some((end_index, end_line)) = directive_loop(units, index, fixed_form) else {
        return;
    };
    if end_directive(units, end_index, &["end", "do", "simd"]).is_none() {
        insert_ends_after(edits, end_line, &["!$omp end do simd"], source);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(text: &str, fixed_form: bool) -> String {
        String::from_utf8(
            fix(text.as_bytes(), fixed_form, "/p/s.f90")
                .text
                .expect("changed"),
        )
        .unwrap()
    }

    #[test]
    fn parallel_do_simd_is_split_with_markers() {
        let source = "program p\n\
                      !$omp parallel do simd reduction(+:s) &\n\
                      !$omp& default(none) shared(a, n) schedule(static)\n  \
                      do i = 1, n\n    \
                      s = s + a(i) ! do it\n  \
                      end do\n\
                      print *, s\n";
        assert_eq!(
            fixed(source, false),
            "program p\n\
             !$omp parallel &\n!$omp& shared(a, n)\n\
             # 2 \"/p/s.f90\"\n\
             !$omp do simd &\n!$omp& reduction(+:s) &\n!$omp& schedule(static)\n\
             # 4 \"/p/s.f90\"\n  \
             do i = 1, n\n    \
             s = s + a(i) ! do it\n  \
             end do\n\
             # 6 \"/p/s.f90\"\n!$omp end do simd\n\
             # 6 \"/p/s.f90\"\n!$omp end parallel\n\
             # 7 \"/p/s.f90\"\n\
             print *, s\n"
        );
        // An end directive becomes `end parallel`; labelled and nested loops end right.
        let labelled = "!$OMP PARALLEL DO SIMD\n      do 10 i = 1, n\n      do 10 j = 1, n\n   10 a(i, j) = 0\n!$omp end parallel do simd\n";
        assert_eq!(
            fixed(labelled, false),
            "!$omp parallel\n# 1 \"/p/s.f90\"\n!$omp do simd\n# 2 \"/p/s.f90\"\n      do 10 i = 1, n\n      do 10 j = 1, n\n   10 a(i, j) = 0\n# 5 \"/p/s.f90\"\n!$omp end do simd\n# 5 \"/p/s.f90\"\n!$omp end parallel\n# 6 \"/p/s.f90\"\n"
        );
    }

    #[test]
    fn fixed_form_loops_and_continuations() {
        let source = "      program p\nc$omp parallel do simd private(t)\nc$omp+ if(n .gt. 1)\n      do i = 1, n\n        do j = 1, n\n          t = j\n        enddo\n      end do\n      end\n";
        assert_eq!(
            fixed(source, true),
            "      program p\n!$omp parallel\n!$omp& if(n .gt. 1)\n# 2 \"/p/s.f90\"\n!$omp do simd\n!$omp& private(t)\n!$omp& if(simd: n .gt. 1)\n# 4 \"/p/s.f90\"\n      do i = 1, n\n        do j = 1, n\n          t = j\n        enddo\n      end do\n# 8 \"/p/s.f90\"\n!$omp end do simd\n# 8 \"/p/s.f90\"\n!$omp end parallel\n# 9 \"/p/s.f90\"\n      end\n"
        );
    }

    #[test]
    fn statements_and_taskloops() {
        assert_eq!(
            statement_kind("outer: do i = 1, n", false),
            Statement::Do(None)
        );
        assert_eq!(
            statement_kind("do 20, i = 1, n", false),
            Statement::Do(Some(20))
        );
        assert_eq!(statement_kind("do while (x)", false), Statement::Do(None));
        assert_eq!(statement_kind("done = 1", false), Statement::Other);
        assert_eq!(statement_kind("do = 1", false), Statement::Other);
        assert_eq!(statement_kind("enddo outer", false), Statement::EndDo);
        assert_eq!(statement_kind("do10i=1,n", true), Statement::Do(Some(10)));
        assert_eq!(statement_kind("do10i=1.5", true), Statement::Other);
        let ended = "!$omp do simd\ndo i = 1, 2\nend do\n!$omp end do simd\n";
        assert!(fix(ended.as_bytes(), false, "s").text.is_none());
        assert_eq!(
            fixed("!$omp do simd\ndo i = 1, 2\nend do\n", false),
            "!$omp do simd\ndo i = 1, 2\nend do\n# 3 \"/p/s.f90\"\n!$omp end do simd\n# 4 \"/p/s.f90\"\n"
        );
        let found = fix(
            b"program p\n!$omp parallel\n!$omp taskloop\ndo i=1,2\nend do\n",
            false,
            "s",
        );
        assert!(found.text.is_none());
        assert_eq!(found.taskloop, Some(3));
    }
}
