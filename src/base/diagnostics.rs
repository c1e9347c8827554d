//! The one way pomptrace speaks to the user: a `pomptrace:` line on stderr, at most once per
//! cause where a cause can repeat. Safe in any state and from a signal handler's finalize (the
//! set of causes seen is behind a signal-blocking lock).

use std::collections::HashSet;

use super::signal_safe_mutex::SignalSafeMutex;

/// Prints one `pomptrace:` line on stderr. Control characters in it (a region or file name
/// may hold terminal escape sequences, or a line break) are shown escaped, as `\x1b`.
///
/// The line goes out in one write: stderr is unbuffered, and the ranks of an MPI job share
/// it, so a line written in pieces would interleave with theirs. A closed or full stderr loses
/// the line, never the program.
pub(crate) fn warn(message: &str) {
    use std::io::Write;
    let line = format!("pomptrace: {}\n", shown(message));
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// `text` with every control character escaped, so that it stays one line of plain text.
fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return text.into();
    }
    text.chars()
        .map(|c| match c {
            c if c.is_control() && (c as u32) < 0x100 => format!("\\x{:02x}", c as u32),
            c if c.is_control() => format!("\\u{{{:x}}}", c as u32),
            c => c.to_string(),
        })
        .collect::<String>()
        .into()
}

/// The keys `warn_once` has warned about.
pub(crate) static WARNED: SignalSafeMutex<Option<HashSet<String>>> = SignalSafeMutex::new(None);

/// Prints a warning the first time `key` is seen.
pub(crate) fn warn_once(key: &str, message: impl FnOnce() -> String) {
    let mut seen = WARNED.lock();
    if seen
        .get_or_insert_with(HashSet::new)
        .insert(key.to_string())
    {
        warn(&message());
    }
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn control_characters_are_shown_escaped() {
        assert_eq!(shown("plain text"), "plain text");
        assert_eq!(shown("a\x1b[31mred\nline"), "a\\x1b[31mred\\x0aline");
        assert_eq!(shown("\u{85}"), "\\x85");
    }
}
