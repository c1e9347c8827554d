//! What the compiler wrapper checks and changes in opari2's output before compiling it:
//!
//! * text opari2 cannot have meant (NUL bytes, bytes its input does not have: it reads past the
//!   end of a line on some unterminated literals and copies memory into the file) is refused;
//! * the task handle opari2 declares without a value for a task with an `if` clause gets one
//!   (`-Werror=maybe-uninitialized` fails on it, and a copy of an undefined value is read);
//! * the region table opari2 writes to a separate `*.opari.inc` file is put into the source in
//!   place of its include line, under a file name of its own, so that the program's debug
//!   information names no temporary file.

use super::opari2_c_input::{parse_marker, quote};

/// Why the output is refused, if it is.
pub fn invalid_text(input: &[u8], output: &[u8]) -> Option<String> {
    if output.contains(&0) && !input.contains(&0) {
        return Some("opari2 wrote NUL bytes into its output".into());
    }
    if std::str::from_utf8(input).is_ok() && std::str::from_utf8(output).is_err() {
        return Some("opari2 wrote bytes that are not text into its output".into());
    }
    let unusual = |c: u8| (c < 0x20 && !matches!(c, b'\t' | b'\n' | b'\r' | 0x0c)) || c == 0x7f;
    let mut seen = [false; 256];
    for &c in input {
        seen[usize::from(c)] = true;
    }
    if let Some(c) = output
        .iter()
        .find(|&&c| unusual(c) && !seen[usize::from(c)])
    {
        return Some(format!(
            "opari2 wrote a control character (0x{c:02x}) into its output"
        ));
    }
    None
}

/// The declaration opari2 writes for a task's handle, which stays unset when the task's `if`
/// clause is false.
const TASK_HANDLE: &str = "POMP2_Task_handle pomp2_new_task;";

/// `text` with every task handle declared with a value.
pub fn initialise_task_handles(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + 64);
    for line in text.split_inclusive(|c| *c == b'\n') {
        let content = line.strip_suffix(b"\n").unwrap_or(line);
        if trim(content) == TASK_HANDLE.as_bytes() {
            let indent = content.len() - trim_start(content).len();
            out.extend_from_slice(&content[..indent]);
            out.extend_from_slice(b"POMP2_Task_handle pomp2_new_task = 0;");
            out.extend_from_slice(&line[content.len()..]);
        } else {
            out.extend_from_slice(line);
        }
    }
    out
}

fn trim_start(text: &[u8]) -> &[u8] {
    let n = text.iter().take_while(|c| c.is_ascii_whitespace()).count();
    &text[n..]
}

fn trim(text: &[u8]) -> &[u8] {
    let text = trim_start(text);
    let n = text
        .iter()
        .rev()
        .take_while(|c| c.is_ascii_whitespace())
        .count();
    &text[..text.len() - n]
}

/// The name the region table's lines get in the program (no such file exists).
pub const REGION_TABLE_NAME: &[u8] = b"<opari2 region table>";

/// `text` with each line that includes the file `include_name` (C `#include "DIR/NAME"`,
/// Fortran `include 'NAME'`) replaced by `table`, which is marked as [`REGION_TABLE_NAME`]; a line
/// marker after it gives the following line its number again.
pub fn inline_region_table(text: &[u8], include_name: &str, table: &[u8]) -> Vec<u8> {
    // opari2 names the file with or without its directory.
    let includes_table = |line: &str| {
        let named = line
            .strip_prefix("#include \"")
            .and_then(|rest| rest.strip_suffix('"'))
            .or_else(|| {
                let keyword = line.get(..9)?;
                keyword
                    .eq_ignore_ascii_case("include '")
                    .then(|| line[9..].strip_suffix('\''))?
            });
        named.is_some_and(|name| name.rsplit('/').next() == Some(include_name))
    };
    let mut out = Vec::with_capacity(text.len() + table.len());
    let mut file: Option<Vec<u8>> = None;
    // The number of the line about to be read, once a marker said it.
    let mut next: Option<u32> = None;
    for line in text.split_inclusive(|c| *c == b'\n') {
        let content = line.strip_suffix(b"\n").unwrap_or(line);
        if let Some(marker) = parse_marker(content) {
            if let Some(name) = marker.name {
                file = Some(name);
            }
            next = Some(marker.line);
            out.extend_from_slice(line);
            continue;
        }
        let this = next;
        next = next.map(|n| n.saturating_add(1));
        let trimmed = String::from_utf8_lossy(trim(content));
        if !includes_table(&trimmed) {
            out.extend_from_slice(line);
            continue;
        }
        out.extend_from_slice(b"# 1 ");
        out.extend(quote(REGION_TABLE_NAME));
        out.push(b'\n');
        out.extend_from_slice(table);
        if !table.ends_with(b"\n") {
            out.push(b'\n');
        }
        if let (Some(file), Some(this)) = (&file, this) {
            out.extend_from_slice(format!("# {} ", this + 1).as_bytes());
            out.extend(quote(file));
            out.push(b'\n');
        }
    }
    out
}

/// The first error in a compiler's messages: (`FILE:LINE`, message), if one can be found.
pub fn first_error(messages: &str) -> Option<(String, String)> {
    // gfortran names the place on a line of its own and the error a few lines later.
    let mut place: Option<String> = None;
    for line in messages.lines() {
        for marker in [": fatal error: ", ": error: ", ": Error: "] {
            if let Some((at, what)) = line.split_once(marker) {
                return Some((file_and_line(at), what.trim().to_string()));
            }
        }
        if let Some(what) = line
            .strip_prefix("Error: ")
            .or_else(|| line.strip_prefix("Fatal Error: "))
        {
            return Some((place.unwrap_or_default(), what.trim().to_string()));
        }
        if line.ends_with(':') && !line.starts_with(' ') && line.contains(':') {
            let at = line.trim_end_matches(':');
            if at.rsplit(':').next().is_some_and(is_number) {
                place = Some(file_and_line(at));
            }
        }
    }
    None
}

fn is_number(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|c| c.is_ascii_digit())
}

/// `FILE:LINE` of `FILE:LINE:COLUMN` (or of `FILE:LINE`).
fn file_and_line(at: &str) -> String {
    let parts: Vec<&str> = at.rsplitn(3, ':').collect();
    match parts.as_slice() {
        [column, line, file] if is_number(column) && is_number(line) => format!("{file}:{line}"),
        _ => at.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_opari2_cannot_have_meant_is_refused() {
        assert!(invalid_text(b"int x;\n", b"int x;\n").is_none());
        assert!(invalid_text(b"int x;\n", b"int x;\0\0/tmp\n")
            .unwrap()
            .contains("NUL"));
        assert!(invalid_text(b"int x;\n", b"int x;\xff\n")
            .unwrap()
            .contains("not text"));
        assert!(invalid_text(b"int x;\n", b"int x;\x01\n")
            .unwrap()
            .contains("0x01"));
        // Latin-1 input is passed through as it is.
        assert!(invalid_text(b"/* \xe9 */\n", b"/* \xe9 */\n").is_none());
    }

    #[test]
    fn task_handles_get_a_value() {
        let text = b"{ POMP2_Task_handle pomp2_old_task;\n  POMP2_Task_handle pomp2_new_task;\nif (pomp2_if)\n";
        assert_eq!(
            String::from_utf8(initialise_task_handles(text)).unwrap(),
            "{ POMP2_Task_handle pomp2_old_task;\n  POMP2_Task_handle pomp2_new_task = 0;\nif (pomp2_if)\n"
        );
    }

    #[test]
    fn the_region_table_goes_in_place_of_its_include() {
        let text = b"# 4 \"/p/m.c\"\n#include \"/tmp/t/0_m.prep.c.opari.inc\"\nint x;\n";
        assert_eq!(
            String::from_utf8(inline_region_table(
                text,
                "0_m.prep.c.opari.inc",
                b"#define A 1\nvoid f(void) {}\n"
            ))
            .unwrap(),
            "# 4 \"/p/m.c\"\n# 1 \"<opari2 region table>\"\n#define A 1\nvoid f(void) {}\n# 5 \"/p/m.c\"\nint x;\n"
        );
        let fortran = b"#line 3 \"/p/s.f90\"\n      include 's.f90.opari.inc'\n  x = 1\n";
        assert_eq!(
            String::from_utf8(inline_region_table(fortran, "s.f90.opari.inc", b"      integer y"))
                .unwrap(),
            "#line 3 \"/p/s.f90\"\n# 1 \"<opari2 region table>\"\n      integer y\n# 4 \"/p/s.f90\"\n  x = 1\n"
        );
    }

    #[test]
    fn first_errors_of_gcc_and_gfortran() {
        assert_eq!(
            first_error(
                "/p/a.c: In function 'main':\n/p/a.c:9:5: error: 'else' without a previous 'if'\n    9 | else\n/p/a.c:12:1: error: other\n"
            ),
            Some(("/p/a.c:9".into(), "'else' without a previous 'if'".into()))
        );
        assert_eq!(
            first_error(
                "/p/t.c:7:9: error: 'x' may be used uninitialized [-Werror=maybe-uninitialized]\n"
            ),
            Some((
                "/p/t.c:7".into(),
                "'x' may be used uninitialized [-Werror=maybe-uninitialized]".into()
            ))
        );
        assert_eq!(
            first_error("/p/f.f90:7:19:\n\n    7 | !$omp parallel simd\n      |  1\nError: Failed to match clause at (1)\n"),
            Some(("/p/f.f90:7".into(), "Failed to match clause at (1)".into()))
        );
        assert_eq!(first_error("warning: x\n"), None);
    }
}
