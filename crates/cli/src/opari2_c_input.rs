//! What the compiler wrapper changes in a preprocessed C or C++ source before opari2 reads it,
//! each change leaving the program's meaning as it was:
//!
//! * every line marker names an absolute file (opari2 puts the directory of its input, a
//!   temporary one, in front of a relative name, and the name becomes the region's File);
//!   the markers of the wrapper's own input file, `<built-in>` and `<command-line>` name the
//!   user's source;
//! * `#pragma omp parallel for simd` is split into `#pragma omp parallel` and `#pragma omp for
//!   simd` (opari2 would put `simd` on the parallel);
//! * braces go around the unbraced statements opari2 finds the end of wrongly: the loop body of
//!   a `for` construct, the structured block of a block construct, and a construct that is
//!   itself the unbraced branch of an `if`, `else`, loop or `do` (opari2 counts semicolons and
//!   ends a construct after an `else` that follows it).
//!
//! It also finds the first `taskloop` directive, which opari2 leaves uninstrumented.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// A place in the user's sources.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    pub file: String,
    pub line: u32,
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// How the file names of line markers are made absolute.
pub struct Names<'a> {
    /// The directory relative names are relative to: the compiler's working directory.
    pub cwd: &'a Path,
    /// Names that stand for the user's source: the wrapper's input file as the compiler was
    /// given it (`<built-in>` and `<command-line>` always do).
    pub input: &'a [u8],
    /// The user's source, absolute.
    pub source: &'a [u8],
}

/// The preprocessed text as opari2 is to read it.
pub struct Fixed {
    pub text: Vec<u8>,
    /// Where the first `taskloop` directive is.
    pub taskloop: Option<Place>,
}

pub fn fix(text: &[u8], names: &Names) -> Fixed {
    let (text, taskloop) = fix_lines(text, names);
    let text = without_digit_separators(&text);
    let text = add_braces(&text).unwrap_or(text);
    Fixed { text, taskloop }
}

/// `text` with the digit separators of its numbers (`1'000'000`, C++14 and C23) left out:
/// opari2 takes the `'` for the start of a character constant and reads past the end of the
/// line, writing memory into its output or crashing.
fn without_digit_separators(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut copied = 0;
    for token in tokens(text) {
        let number = token.kind == Kind::Literal
            && (text[token.start].is_ascii_digit() || text[token.start] == b'.');
        if number && text[token.start..token.end].contains(&b'\'') {
            out.extend_from_slice(&text[copied..token.start]);
            out.extend(text[token.start..token.end].iter().filter(|c| **c != b'\''));
            copied = token.end;
        }
    }
    out.extend_from_slice(&text[copied..]);
    out
}

/// A line marker: `# 12 "file" 1 3` or `#line 12 "file"`.
#[derive(Debug, PartialEq, Eq)]
pub struct Marker {
    pub line: u32,
    pub name: Option<Vec<u8>>,
    pub flags: Vec<u8>,
}

/// The line marker on `line` (without its newline), if it is one.
pub fn parse_marker(line: &[u8]) -> Option<Marker> {
    let rest = skip_blanks(line).strip_prefix(b"#")?;
    let rest = skip_blanks(rest);
    let rest = match rest.strip_prefix(b"line") {
        Some(after) if after.first().is_some_and(|c| c.is_ascii_whitespace()) => skip_blanks(after),
        _ => rest,
    };
    let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let number = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
    let rest = skip_blanks(&rest[digits..]);
    let Some(quoted) = rest.strip_prefix(b"\"") else {
        return rest.is_empty().then_some(Marker {
            line: number,
            name: None,
            flags: Vec::new(),
        });
    };
    let (name, after) = unquote(quoted)?;
    let flags = after
        .split(|c| c.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
        .map(|w| std::str::from_utf8(w).ok()?.parse::<u8>().ok())
        .collect::<Option<Vec<u8>>>()?;
    Some(Marker {
        line: number,
        name: Some(name),
        flags,
    })
}

fn skip_blanks(text: &[u8]) -> &[u8] {
    let n = text
        .iter()
        .take_while(|c| matches!(c, b' ' | b'\t'))
        .count();
    &text[n..]
}

/// The name of a quoted marker file name (after its opening quote) and the text after it.
fn unquote(text: &[u8]) -> Option<(Vec<u8>, &[u8])> {
    let mut name = Vec::new();
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'"' => return Some((name, &text[i + 1..])),
            b'\\' if i + 1 < text.len() => {
                let octal = text[i + 1..]
                    .iter()
                    .take(3)
                    .take_while(|c| (b'0'..=b'7').contains(c))
                    .count();
                if octal > 0 {
                    let digits = std::str::from_utf8(&text[i + 1..i + 1 + octal]).ok()?;
                    name.push(u8::from_str_radix(digits, 8).ok()?);
                    i += 1 + octal;
                } else {
                    name.push(text[i + 1]);
                    i += 2;
                }
            }
            c => {
                name.push(c);
                i += 1;
            }
        }
    }
    None
}

/// `name` as a C string literal's contents, as the preprocessor writes marker names.
pub fn quote(name: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(name.len() + 2);
    out.push(b'"');
    for &c in name {
        match c {
            b'\\' | b'"' => out.extend_from_slice(&[b'\\', c]),
            c if c < 0x20 || c == 0x7f => out.extend_from_slice(format!("\\{c:03o}").as_bytes()),
            c => out.push(c),
        }
    }
    out.push(b'"');
    out
}

/// A marker line naming `name` for the next line, `line`; of the flags, only "system header"
/// (3) and "extern C" (4) are kept: 1 and 2 (entering and leaving a file) would not nest.
/// Without a name (none was given yet) it is a `#line` directive.
fn marker_line(line: u32, name: &[u8], flags: &[u8]) -> Vec<u8> {
    if name.is_empty() {
        return format!("#line {line}\n").into_bytes();
    }
    let mut out = format!("# {line} ").into_bytes();
    out.extend(quote(name));
    for flag in flags.iter().filter(|f| matches!(f, 3 | 4)) {
        out.extend_from_slice(format!(" {flag}").as_bytes());
    }
    out.push(b'\n');
    out
}

/// The name a marker is rewritten to: absolute, without `.` components.
fn absolute_name(name: &[u8], names: &Names) -> Vec<u8> {
    if name == names.input || name == b"<built-in>" || name == b"<command-line>" {
        return names.source.to_vec();
    }
    if name.first() == Some(&b'/') || name.is_empty() || name.starts_with(b"<") {
        return name.to_vec();
    }
    let relative = Path::new(OsStr::from_bytes(name));
    let joined = names.cwd.join(relative);
    let has_parent = relative.components().any(|c| c == Component::ParentDir);
    let path = match joined.canonicalize() {
        // `..` after a symbolic link is where the compiler found the file, not the lexical
        // parent.
        Ok(real) if has_parent => real,
        _ => joined
            .components()
            .filter(|c| *c != Component::CurDir)
            .collect::<PathBuf>(),
    };
    path.as_os_str().as_bytes().to_vec()
}

/// The current file and line of a preprocessed text, line by line.
struct LineTracker {
    file: Vec<u8>,
    flags: Vec<u8>,
    /// The number of the line about to be read.
    next: u32,
}

impl Default for LineTracker {
    fn default() -> Self {
        LineTracker {
            file: Vec::new(),
            flags: Vec::new(),
            next: 1,
        }
    }
}

impl LineTracker {
    /// Takes in one line; returns the number it has in `self.file`.
    fn advance(&mut self, marker: Option<&Marker>) -> u32 {
        let this = self.next;
        match marker {
            Some(m) => {
                if let Some(name) = &m.name {
                    self.file = name.clone();
                    self.flags = m.flags.clone();
                }
                self.next = m.line;
            }
            None => self.next = self.next.saturating_add(1),
        }
        this
    }
}

/// Splits `text` into lines, each with its newline (the last may have none).
fn lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    text.split_inclusive(|c| *c == b'\n')
}

fn strip_newline(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The words of an OpenMP directive line (`#pragma omp ...`): its name's words and the text of
/// its clauses.
fn omp_directive(line: &[u8]) -> Option<(Vec<String>, &[u8])> {
    let rest = skip_blanks(line).strip_prefix(b"#")?;
    let rest = skip_blanks(rest).strip_prefix(b"pragma")?;
    if !rest.first().is_some_and(|c| matches!(c, b' ' | b'\t')) {
        return None;
    }
    let rest = skip_blanks(rest).strip_prefix(b"omp")?;
    if rest
        .first()
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    {
        return None;
    }
    let mut rest = skip_blanks(rest);
    let mut words = Vec::new();
    loop {
        let n = rest
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
            .count();
        if n == 0 {
            break;
        }
        let word = String::from_utf8_lossy(&rest[..n]).into_owned();
        let after = skip_blanks(&rest[n..]);
        // A clause that takes arguments is not a directive word.
        if after.first() == Some(&b'(') || !is_directive_word(&word) || words.len() == 8 {
            break;
        }
        words.push(word);
        rest = after;
        if rest.first() == Some(&b',') {
            break;
        }
    }
    Some((words, strip_newline(rest)))
}

/// The words that OpenMP directive names are made of (a following word that is not one of
/// these starts the clauses).
fn is_directive_word(word: &str) -> bool {
    matches!(
        word,
        "parallel"
            | "for"
            | "simd"
            | "sections"
            | "section"
            | "single"
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
            | "end"
            | "data"
            | "enter"
            | "exit"
            | "update"
            | "threadprivate"
            | "cancel"
            | "cancellation"
            | "point"
            | "scan"
            | "depobj"
            | "requires"
            | "scope"
            | "error"
            | "interop"
            | "dispatch"
            | "metadirective"
            | "tile"
            | "unroll"
            | "nothing"
            | "allocate"
            | "assume"
            | "assumes"
    )
}

/// One clause of a directive: its name and its whole text (`reduction(+:s)`).
#[derive(Debug, PartialEq, Eq)]
pub struct Clause {
    pub name: String,
    pub text: String,
    /// The text between the parentheses, if any.
    pub argument: Option<String>,
}

/// The clauses of a directive, or None if they do not parse (unbalanced parentheses).
pub fn clauses(text: &str) -> Option<Vec<Clause>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_whitespace() || bytes[i] == b',' {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
            i += 1;
        }
        if i == start {
            return None;
        }
        let name = text[start..i].to_ascii_lowercase();
        let mut j = i;
        while j < bytes.len() && bytes[j].is_ascii_whitespace() {
            j += 1;
        }
        let mut argument = None;
        if bytes.get(j) == Some(&b'(') {
            let mut depth = 0usize;
            let mut k = j;
            loop {
                match bytes.get(k)? {
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                k += 1;
            }
            argument = Some(text[j + 1..k].to_string());
            i = k + 1;
        }
        out.push(Clause {
            name,
            text: text[start..i].to_string(),
            argument,
        });
    }
    Some(out)
}

/// The clauses of a combined `parallel` + worksharing-loop SIMD directive split into those of
/// the `parallel` and those of the loop, as the combined construct applies them: the
/// parallel's own (`num_threads`, `copyin`, `proc_bind`, `shared`, `default`, an `if` for it)
/// and everything else on the loop. `default(none)` is dropped: the variables of the loop's
/// clauses and its iteration variables would have to be listed on the parallel, and
/// `default(none)` only makes a compile fail. An `if` without a modifier goes to both.
pub fn split_parallel_loop(clauses: &[Clause]) -> (Vec<String>, Vec<String>) {
    let (mut parallel, mut inner) = (Vec::new(), Vec::new());
    for clause in clauses {
        let argument = clause.argument.as_deref().unwrap_or("").trim();
        match clause.name.as_str() {
            "num_threads" | "copyin" | "proc_bind" | "shared" => parallel.push(clause.text.clone()),
            "default" if argument.eq_ignore_ascii_case("none") => {}
            "default" => parallel.push(clause.text.clone()),
            "if" => match argument.split_once(':') {
                Some((modifier, expression)) if modifier.trim() == "parallel" => {
                    parallel.push(format!("if({})", expression.trim()))
                }
                Some(_) => inner.push(clause.text.clone()),
                None => {
                    parallel.push(clause.text.clone());
                    inner.push(format!("if(simd: {argument})"));
                }
            },
            _ => inner.push(clause.text.clone()),
        }
    }
    (parallel, inner)
}

/// Pass over lines: markers and the `parallel for simd` split.
fn fix_lines(text: &[u8], names: &Names) -> (Vec<u8>, Option<Place>) {
    let mut out = Vec::with_capacity(text.len() + text.len() / 16);
    let mut tracker = LineTracker::default();
    let mut taskloop = None;
    for line in lines(text) {
        let bare = strip_newline(line);
        if let Some(mut marker) = parse_marker(bare) {
            if let Some(name) = &marker.name {
                marker.name = Some(absolute_name(name, names));
            }
            tracker.advance(Some(&marker));
            out.extend(match &marker.name {
                Some(name) => {
                    let mut rewritten = format!("# {} ", marker.line).into_bytes();
                    rewritten.extend(quote(name));
                    for flag in &marker.flags {
                        rewritten.extend_from_slice(format!(" {flag}").as_bytes());
                    }
                    rewritten.push(b'\n');
                    rewritten
                }
                None => line.to_vec(),
            });
            continue;
        }
        let number = tracker.advance(None);
        let Some((words, rest)) = omp_directive(bare) else {
            out.extend_from_slice(line);
            continue;
        };
        if taskloop.is_none() && words.iter().any(|w| w == "taskloop") {
            taskloop = Some(Place {
                file: String::from_utf8_lossy(&tracker.file).into_owned(),
                line: number,
            });
        }
        let split = (words == ["parallel", "for", "simd"])
            .then(|| clauses(&String::from_utf8_lossy(rest)))
            .flatten();
        match split {
            Some(clauses) => {
                let (parallel, inner) = split_parallel_loop(&clauses);
                let mut first = String::from("#pragma omp parallel");
                for c in &parallel {
                    first.push(' ');
                    first.push_str(c);
                }
                first.push('\n');
                out.extend_from_slice(first.as_bytes());
                out.extend(marker_line(number, &tracker.file, &tracker.flags));
                let mut second = String::from("#pragma omp for simd");
                for c in &inner {
                    second.push(' ');
                    second.push_str(c);
                }
                out.extend_from_slice(second.as_bytes());
                out.extend_from_slice(&line[bare.len()..]);
            }
            None => out.extend_from_slice(line),
        }
    }
    (out, taskloop)
}

/// What a token is, as far as finding statements goes.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Kind {
    /// `#pragma ...`: the words of an OpenMP directive's name, or None for another pragma.
    Pragma(Option<Vec<String>>),
    Ident,
    Punct(u8),
    /// Numbers, strings and character constants.
    Literal,
}

#[derive(Clone, Debug)]
struct Token {
    start: usize,
    end: usize,
    kind: Kind,
}

/// The tokens of a preprocessed text that matter for its statements; line markers and other
/// directives are left out.
fn tokens(text: &[u8]) -> Vec<Token> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut line_start = true;
    let ident_byte = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80;
    while i < text.len() {
        let c = text[i];
        if c == b'\n' {
            line_start = true;
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if line_start && c == b'#' {
            let end = text[i..]
                .iter()
                .position(|c| *c == b'\n')
                .map_or(text.len(), |n| i + n);
            let line = &text[i..end];
            if parse_marker(line).is_none() && skip_blanks(&line[1..]).starts_with(b"pragma") {
                let words = omp_directive(line).map(|(words, _)| words);
                out.push(Token {
                    start: i,
                    end,
                    kind: Kind::Pragma(words),
                });
            }
            i = end;
            continue;
        }
        line_start = false;
        let start = i;
        if c == b'/' && text.get(i + 1) == Some(&b'*') {
            i = find(text, i + 2, b"*/").map_or(text.len(), |n| n + 2);
            continue;
        }
        if c == b'/' && text.get(i + 1) == Some(&b'/') {
            i = text[i..]
                .iter()
                .position(|c| *c == b'\n')
                .map_or(text.len(), |n| i + n);
            continue;
        }
        if c == b'"' || c == b'\'' {
            i = end_of_quoted(text, i);
            out.push(Token {
                start,
                end: i,
                kind: Kind::Literal,
            });
            continue;
        }
        if c.is_ascii_digit() || (c == b'.' && text.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            i += 1;
            while i < text.len() {
                let d = text[i];
                let exponent_sign =
                    matches!(d, b'+' | b'-') && matches!(text[i - 1], b'e' | b'E' | b'p' | b'P');
                let separator = d == b'\'' && text.get(i + 1).is_some_and(|n| ident_byte(*n));
                if ident_byte(d) || d == b'.' || exponent_sign || separator {
                    i += 1;
                } else {
                    break;
                }
            }
            out.push(Token {
                start,
                end: i,
                kind: Kind::Literal,
            });
            continue;
        }
        if ident_byte(c) {
            while i < text.len() && ident_byte(text[i]) {
                i += 1;
            }
            let word = &text[start..i];
            if text.get(i) == Some(&b'"') && matches!(word, b"R" | b"LR" | b"uR" | b"UR" | b"u8R") {
                i = end_of_raw_string(text, i);
                out.push(Token {
                    start,
                    end: i,
                    kind: Kind::Literal,
                });
                continue;
            }
            if text.get(i).is_some_and(|q| matches!(q, b'"' | b'\''))
                && matches!(word, b"L" | b"u" | b"U" | b"u8")
            {
                i = end_of_quoted(text, i);
                out.push(Token {
                    start,
                    end: i,
                    kind: Kind::Literal,
                });
                continue;
            }
            out.push(Token {
                start,
                end: i,
                kind: Kind::Ident,
            });
            continue;
        }
        i += 1;
        out.push(Token {
            start,
            end: i,
            kind: Kind::Punct(c),
        });
    }
    out
}

fn find(text: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    text.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|n| from + n)
}

/// The end of the string or character constant that starts at `start` (at its quote).
fn end_of_quoted(text: &[u8], start: usize) -> usize {
    let quote = text[start];
    let mut i = start + 1;
    while i < text.len() {
        match text[i] {
            b'\\' => i += 2,
            b'\n' => return i,
            c if c == quote => return i + 1,
            _ => i += 1,
        }
    }
    text.len()
}

/// The end of the C++ raw string literal whose quote is at `quote`.
fn end_of_raw_string(text: &[u8], quote: usize) -> usize {
    let Some(open) = text[quote..].iter().position(|c| *c == b'(') else {
        return end_of_quoted(text, quote);
    };
    let delimiter = &text[quote + 1..quote + open];
    let mut closing = vec![b')'];
    closing.extend_from_slice(delimiter);
    closing.push(b'"');
    find(text, quote + open + 1, &closing).map_or(text.len(), |n| n + closing.len())
}

/// The OpenMP directives that stand alone: no statement belongs to them.
fn is_standalone(words: &[String], pragma_text: &[u8]) -> bool {
    let first = words.first().map(String::as_str).unwrap_or("");
    let standalone_first = matches!(
        first,
        "barrier"
            | "flush"
            | "taskwait"
            | "taskyield"
            | "cancel"
            | "cancellation"
            | "threadprivate"
            | "declare"
            | "end"
            | "scan"
            | "depobj"
            | "requires"
            | "error"
            | "interop"
            | "nothing"
            | "allocate"
            | "assumes"
    );
    let target_data_motion = first == "target"
        && words
            .get(1)
            .is_some_and(|w| matches!(w.as_str(), "update" | "enter" | "exit"));
    let ordered_depend = first == "ordered" && {
        let text = String::from_utf8_lossy(pragma_text);
        text.contains("depend") || text.contains("doacross")
    };
    words.is_empty() || standalone_first || target_data_motion || ordered_depend
}

/// How opari2 treats a construct's statement.
#[derive(Debug, PartialEq, Eq)]
enum Construct {
    /// A worksharing loop: the body of its loop needs braces.
    Loop,
    /// A structured block that opari2 instruments.
    Block,
    /// Anything else with a statement.
    Other,
}

fn construct(words: &[String]) -> Construct {
    let w: Vec<&str> = words.iter().map(String::as_str).collect();
    match w.as_slice() {
        ["for", ..] | ["parallel", "for", ..] => Construct::Loop,
        ["parallel"]
        | ["parallel", "sections"]
        | ["sections"]
        | ["section"]
        | ["single"]
        | ["master"]
        | ["masked"]
        | ["critical"]
        | ["task"]
        | ["taskgroup"]
        | ["ordered", ..] => Construct::Block,
        _ => Construct::Other,
    }
}

/// The statement structure of the token list.
struct Statements<'a> {
    tokens: &'a [Token],
    text: &'a [u8],
    /// For each bracket token, the index of its partner.
    partner: Vec<Option<usize>>,
}

impl<'a> Statements<'a> {
    /// None if the brackets do not match.
    fn new(text: &'a [u8], tokens: &'a [Token]) -> Option<Self> {
        let mut partner = vec![None; tokens.len()];
        let mut open: Vec<(usize, u8)> = Vec::new();
        for (i, t) in tokens.iter().enumerate() {
            if let Kind::Punct(c) = t.kind {
                match c {
                    b'(' | b'[' | b'{' => open.push((i, c)),
                    b')' | b']' | b'}' => {
                        let (o, oc) = open.pop()?;
                        if !matches!((oc, c), (b'(', b')') | (b'[', b']') | (b'{', b'}')) {
                            return None;
                        }
                        partner[o] = Some(i);
                        partner[i] = Some(o);
                    }
                    _ => {}
                }
            }
        }
        open.is_empty().then_some(Statements {
            tokens,
            text,
            partner,
        })
    }

    fn is_punct(&self, i: usize, c: u8) -> bool {
        self.tokens.get(i).is_some_and(|t| t.kind == Kind::Punct(c))
    }

    fn is_word(&self, i: usize, word: &str) -> bool {
        self.tokens
            .get(i)
            .is_some_and(|t| t.kind == Kind::Ident && &self.text[t.start..t.end] == word.as_bytes())
    }

    /// The index after the parenthesised group at `i` (which must open it).
    fn after_parens(&self, i: usize) -> Option<usize> {
        if !self.is_punct(i, b'(') {
            return None;
        }
        Some(self.partner[i]? + 1)
    }

    /// The index of the last token of the statement that starts at `i`.
    fn statement_end(&self, i: usize) -> Option<usize> {
        let token = self.tokens.get(i)?;
        match &token.kind {
            Kind::Pragma(Some(words))
                if is_standalone(words, &self.text[token.start..token.end]) =>
            {
                Some(i)
            }
            Kind::Pragma(_) => self.statement_end(i + 1),
            Kind::Punct(b'{') => self.partner[i],
            Kind::Punct(b';') => Some(i),
            Kind::Ident => {
                let word = &self.text[token.start..token.end];
                match word {
                    b"if" => {
                        let mut j = i + 1;
                        if self.is_word(j, "constexpr") {
                            j += 1;
                        }
                        let end = self.statement_end(self.after_parens(j)?)?;
                        if self.is_word(end + 1, "else") {
                            self.statement_end(end + 2)
                        } else {
                            Some(end)
                        }
                    }
                    b"for" | b"while" | b"switch" => self.statement_end(self.after_parens(i + 1)?),
                    b"do" => {
                        let end = self.statement_end(i + 1)?;
                        if !self.is_word(end + 1, "while") {
                            return None;
                        }
                        let semicolon = self.after_parens(end + 2)?;
                        self.is_punct(semicolon, b';').then_some(semicolon)
                    }
                    b"try" => {
                        let mut end = if self.is_punct(i + 1, b'{') {
                            self.partner[i + 1]?
                        } else {
                            return None;
                        };
                        while self.is_word(end + 1, "catch") {
                            let body = self.after_parens(end + 2)?;
                            if !self.is_punct(body, b'{') {
                                return None;
                            }
                            end = self.partner[body]?;
                        }
                        Some(end)
                    }
                    b"else" => None,
                    b"case" => {
                        let mut j = i + 1;
                        loop {
                            let t = self.tokens.get(j)?;
                            match t.kind {
                                Kind::Punct(b':') if !self.is_punct(j + 1, b':') => {
                                    return self.statement_end(j + 1)
                                }
                                Kind::Punct(b':') => j += 2,
                                Kind::Punct(b'(' | b'[' | b'{') => j = self.partner[j]? + 1,
                                _ => j += 1,
                            }
                        }
                    }
                    _ if self.is_punct(i + 1, b':') && !self.is_punct(i + 2, b':') => {
                        // A label (or `default:`).
                        self.statement_end(i + 2)
                    }
                    _ => self.expression_end(i),
                }
            }
            _ => self.expression_end(i),
        }
    }

    /// The `;` that ends the expression or declaration statement starting at `i`.
    fn expression_end(&self, mut i: usize) -> Option<usize> {
        loop {
            match self.tokens.get(i)?.kind {
                Kind::Punct(b';') => return Some(i),
                Kind::Punct(b'(' | b'[' | b'{') => i = self.partner[i]? + 1,
                Kind::Punct(b')' | b']' | b'}') | Kind::Pragma(_) => return None,
                _ => i += 1,
            }
        }
    }

    /// Whether the token before `i` makes the statement at `i` an unbraced branch or body:
    /// the `)` of an `if`/`for`/`while`/`switch` head, `else` or `do`.
    fn is_sub_statement(&self, i: usize) -> bool {
        let Some(before) = i.checked_sub(1) else {
            return false;
        };
        if self.is_word(before, "else") || self.is_word(before, "do") {
            return true;
        }
        if !self.is_punct(before, b')') {
            return false;
        }
        let Some(open) = self.partner[before] else {
            return false;
        };
        let Some(keyword) = open.checked_sub(1) else {
            return false;
        };
        ["if", "for", "while", "switch"]
            .iter()
            .any(|w| self.is_word(keyword, w))
            || (self.is_word(keyword, "constexpr")
                && keyword
                    .checked_sub(1)
                    .is_some_and(|k| self.is_word(k, "if")))
    }

    /// The unbraced loop body of the loop nest starting at the `for` at `i` that needs braces:
    /// (the index of the head's `)`, the index of the body's last token).
    fn loop_body(&self, mut i: usize) -> Option<(usize, usize)> {
        loop {
            while matches!(self.tokens.get(i)?.kind, Kind::Pragma(None)) {
                i += 1;
            }
            if !self.is_word(i, "for") {
                return None;
            }
            let close = self.after_parens(i + 1)? - 1;
            let body = close + 1;
            if self.is_punct(body, b'{') {
                return None;
            }
            if self.is_word(body, "for") {
                i = body;
                continue;
            }
            return Some((close, self.statement_end(body)?));
        }
    }
}

/// Braces around the statements opari2 would end wrongly (see the module's documentation);
/// None if the text's brackets do not match (it is left as it is).
fn add_braces(text: &[u8]) -> Option<Vec<u8>> {
    let tokens = tokens(text);
    let statements = Statements::new(text, &tokens)?;
    // (position of `{`, position of `}`): byte offsets.
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        let Kind::Pragma(Some(words)) = &token.kind else {
            continue;
        };
        if is_standalone(words, &text[token.start..token.end]) {
            continue;
        }
        if statements.is_sub_statement(i) {
            if let Some(end) = statements.statement_end(i) {
                pairs.push((tokens[i - 1].end, tokens[end].end));
            }
        }
        let next = i + 1;
        match construct(words) {
            Construct::Loop => {
                if let Some((close, end)) = statements.loop_body(next) {
                    pairs.push((tokens[close].end, tokens[end].end));
                }
            }
            Construct::Block => {
                let starts_braced_or_directive = tokens.get(next).map_or(true, |t| {
                    matches!(t.kind, Kind::Punct(b'{') | Kind::Pragma(_))
                });
                if !starts_braced_or_directive {
                    if let Some(end) = statements.statement_end(next) {
                        pairs.push((tokens[next].start, tokens[end].end));
                    }
                }
            }
            Construct::Other => {}
        }
    }
    if pairs.is_empty() {
        return Some(text.to_vec());
    }
    pairs.sort_unstable();
    pairs.dedup();
    let mut opens: Vec<usize> = pairs.iter().map(|&(open, _)| open).collect();
    let mut closes: Vec<usize> = pairs.iter().map(|&(_, close)| close).collect();
    opens.sort_unstable();
    closes.sort_unstable();
    let places = LinePlaces::new(text);
    let mut out = Vec::with_capacity(text.len() + 64 * closes.len());
    let mut copied = 0;
    let (mut o, mut c) = (0, 0);
    while o < opens.len() || c < closes.len() {
        // At one position, closing braces before opening ones.
        let position = match (opens.get(o), closes.get(c)) {
            (Some(&open), Some(&close)) => open.min(close),
            (Some(&open), None) => open,
            (None, Some(&close)) => close,
            (None, None) => break,
        };
        out.extend_from_slice(&text[copied..position]);
        copied = position;
        let mut closing = 0;
        while closes.get(c) == Some(&position) {
            closing += 1;
            c += 1;
        }
        if closing > 0 {
            // On a line of its own: opari2 ends a construct whose statement ends in `;` at the
            // start of the next line, and one ending on the same line as the brace would
            // never be ended. Line markers give the brace and the rest of the line the
            // statement's line.
            let (file, line, flags) = places.at(position);
            out.push(b'\n');
            for _ in 0..closing {
                out.extend(marker_line(line, file, flags));
                out.extend_from_slice(b"}\n");
            }
            out.extend(marker_line(line, file, flags));
        }
        while opens.get(o) == Some(&position) {
            out.push(b'{');
            o += 1;
        }
    }
    out.extend_from_slice(&text[copied..]);
    Some(out)
}

/// The file, line and flags of every line of a preprocessed text, by its start.
struct LinePlaces {
    starts: Vec<usize>,
    places: Vec<(Vec<u8>, u32, Vec<u8>)>,
}

impl LinePlaces {
    fn new(text: &[u8]) -> Self {
        let mut tracker = LineTracker::default();
        let (mut starts, mut places) = (Vec::new(), Vec::new());
        let mut start = 0;
        for line in lines(text) {
            let marker = parse_marker(strip_newline(line));
            let number = tracker.advance(marker.as_ref());
            starts.push(start);
            places.push((tracker.file.clone(), number, tracker.flags.clone()));
            start += line.len();
        }
        LinePlaces { starts, places }
    }

    /// The place of the line that holds byte `position`.
    fn at(&self, position: usize) -> (&[u8], u32, &[u8]) {
        let index = self
            .starts
            .partition_point(|&s| s <= position)
            .saturating_sub(1);
        match self.places.get(index) {
            Some((file, line, flags)) => (file, *line, flags),
            None => (b"", 0, b""),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Names<'static> {
        Names {
            cwd: Path::new("/work/project"),
            input: b"/tmp/pomptrace-cc-x/0_m.input.c",
            source: b"/work/project/m.c",
        }
    }

    fn fixed(text: &str) -> String {
        String::from_utf8(fix(text.as_bytes(), &names()).text).unwrap()
    }

    #[test]
    fn markers_become_absolute_and_the_input_is_the_source() {
        let text = "# 0 \"/tmp/pomptrace-cc-x/0_m.input.c\"\n# 0 \"<built-in>\"\n\
                    # 1 \"/usr/include/stdio.h\" 1 3 4\n# 1 \"./matrix.hpp\" 1\nint x;\n\
                    # 7 \"sub/./a\\\"b.h\" 2\n#line 3 \"x.h\"\nint y;\n";
        assert_eq!(
            fixed(text),
            "# 0 \"/work/project/m.c\"\n# 0 \"/work/project/m.c\"\n\
             # 1 \"/usr/include/stdio.h\" 1 3 4\n# 1 \"/work/project/matrix.hpp\" 1\nint x;\n\
             # 7 \"/work/project/sub/a\\\"b.h\" 2\n# 3 \"/work/project/x.h\"\nint y;\n"
        );
        assert_eq!(
            parse_marker(b"# 12 \"a\\\\b\\001\" 1 3"),
            Some(Marker {
                line: 12,
                name: Some(b"a\\b\x01".to_vec()),
                flags: vec![1, 3]
            })
        );
        assert_eq!(quote(b"a\\b\x01"), b"\"a\\\\b\\001\"");
        assert_eq!(parse_marker(b"#pragma omp for"), None);
        assert_eq!(parse_marker(b"#  line 4").unwrap().name, None);
    }

    #[test]
    fn parallel_for_simd_is_split_at_the_same_line() {
        let text = "# 5 \"m.c\"\n\
                    #pragma omp parallel for simd default(none) shared(a) reduction(+:s) if(n > 9) num_threads(4) schedule(static) safelen(8)\n\
                    for (i = 0; i < n; i++) {\n s += a[i];\n}\n";
        assert_eq!(
            fixed(text),
            "# 5 \"/work/project/m.c\"\n\
             #pragma omp parallel shared(a) if(n > 9) num_threads(4)\n\
             # 5 \"/work/project/m.c\"\n\
             #pragma omp for simd reduction(+:s) if(simd: n > 9) schedule(static) safelen(8)\n\
             for (i = 0; i < n; i++) {\n s += a[i];\n}\n"
        );
    }

    /// `body` fixed as the text of file m.c.
    fn fixed_body(body: &str) -> String {
        let text = fixed(&format!("# 1 \"m.c\"\n{body}"));
        text.strip_prefix("# 1 \"/work/project/m.c\"\n")
            .expect("the marker")
            .replace("\"/work/project/m.c\"", "m")
    }

    #[test]
    fn loop_bodies_and_blocks_get_braces() {
        // The unbraced loop of a worksharing construct inside `if ... else`: braces for the
        // loop body and the construct, closed on lines of their own.
        assert_eq!(
            fixed_body(
                "if (n > 5)\n#pragma omp parallel for\n  for (i = 0; i < n; i++)\n    a[i] = i;\nelse\n  a[0] = 1;\n"
            ),
            "if (n > 5){\n#pragma omp parallel for\n  for (i = 0; i < n; i++){\n    a[i] = i;\n# 4 m\n}\n# 4 m\n}\n# 4 m\n\nelse\n  a[0] = 1;\n"
        );
        // An `if ... else` as the loop body; a collapsed nest gets braces at the inner body;
        // the rest of the line keeps its number.
        assert_eq!(
            fixed_body("#pragma omp for collapse(2)\nfor (i = 0; i < n; i++)\n for (j = 0; j < n; j++)\n  if (i) x(); else { y(); } z();\n"),
            "#pragma omp for collapse(2)\nfor (i = 0; i < n; i++)\n for (j = 0; j < n; j++){\n  if (i) x(); else { y(); }\n# 4 m\n}\n# 4 m\n z();\n"
        );
        // Braced bodies and blocks stay as they are.
        let braced =
            "#pragma omp parallel\n{\n#pragma omp for\nfor (i = 0; i < n; i++) {\n x();\n}\n}\n";
        assert_eq!(fixed_body(braced), braced);
        // A block construct's statement, a do-while, and a pragma inside a loop body.
        assert_eq!(
            fixed_body("#pragma omp single\ndo x(); while (f(\"}\"));\n#pragma omp task\nif (a) b(); else c();\n"),
            "#pragma omp single\n{do x(); while (f(\"}\"));\n# 2 m\n}\n# 2 m\n\n#pragma omp task\n{if (a) b(); else c();\n# 4 m\n}\n# 4 m\n\n"
        );
        assert_eq!(
            fixed_body("#pragma omp parallel for\nfor (auto &v : m)\n#pragma omp atomic\n  v.x++;\n"),
            "#pragma omp parallel for\nfor (auto &v : m){\n#pragma omp atomic\n  v.x++;\n# 4 m\n}\n# 4 m\n\n"
        );
        // Standalone directives, atomics and expression statements are left alone.
        let alone = "#pragma omp barrier\n#pragma omp atomic\nn++;\nx = [&]{ return 1; }();\n";
        assert_eq!(fixed_body(alone), alone);
        // Unbalanced text is left as it is.
        let broken = "#pragma omp single\nif (a) b(;\n";
        assert_eq!(fixed_body(broken), broken);
        // Without a marker, the line is given by #line.
        assert_eq!(
            fixed("#pragma omp task\nx();\n"),
            "#pragma omp task\n{x();\n#line 2\n}\n#line 2\n\n"
        );
    }

    #[test]
    fn digit_separators_are_left_out() {
        assert_eq!(
            fixed("long x = 1'000'000 + 0x1'f + 1.5'5e+1'0, c = 'a' + u8'b';\n"),
            "long x = 1000000 + 0x1f + 1.55e+10, c = 'a' + u8'b';\n"
        );
    }

    #[test]
    fn the_first_taskloop_is_found() {
        let found = fix(
            b"# 3 \"t.c\"\nint x;\n#pragma omp parallel master taskloop grainsize(4)\nfor(;;);\n#pragma omp taskloop\n",
            &names(),
        );
        assert_eq!(
            found.taskloop,
            Some(Place {
                file: "/work/project/t.c".into(),
                line: 4
            })
        );
    }

    #[test]
    fn clauses_parse() {
        let c = clauses("reduction(+:s), schedule (static,4) nowait").unwrap();
        assert_eq!(c.len(), 3);
        assert_eq!(c[1].name, "schedule");
        assert_eq!(c[1].argument.as_deref(), Some("static,4"));
        assert!(clauses("if(a").is_none());
    }
}
