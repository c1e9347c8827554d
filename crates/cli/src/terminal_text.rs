//! Names from a trace (regions, files, threads) and paths shown as text: a terminal takes
//! control characters as commands (ESC starts a sequence that can recolour, move the cursor,
//! retitle the window or, in some terminals, write files), and the bidirectional formatting
//! characters reorder what is shown around them. Each is shown as an escape instead: `\x1b`
//! for the ASCII controls and DEL, `\u{202e}` for the others.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` with every control and bidirectional formatting character escaped; borrowed when
/// there is none.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !needs_escape(c) {
            shown.push(c);
        } else if c.is_ascii() {
            let _ = write!(shown, "\\x{:02x}", c as u32);
        } else {
            let _ = write!(shown, "\\u{{{:x}}}", c as u32);
        }
    }
    Cow::Owned(shown)
}

/// JSON text with the characters [`escape_controls`] escapes written as JSON escapes
/// (`\u001b`): a JSON writer escapes the ASCII controls in strings but leaves DEL, the C1
/// controls and the direction formatting characters as they are. Outside strings JSON text
/// has none of them (its line breaks and tabs there stay), and inside a string the escape
/// reads as the same character.
pub fn escape_json_controls(json: &str) -> Cow<'_, str> {
    let escaped = |c: char| needs_escape(c) && !matches!(c, '\n' | '\r' | '\t');
    if !json.chars().any(escaped) {
        return Cow::Borrowed(json);
    }
    let mut shown = String::with_capacity(json.len() + 8);
    for c in json.chars() {
        if escaped(c) {
            // All of them are in the Basic Multilingual Plane: one \u escape each.
            let _ = write!(shown, "\\u{:04x}", c as u32);
        } else {
            shown.push(c);
        }
    }
    Cow::Owned(shown)
}

/// C0 controls, DEL and C1 controls (`char::is_control`), and the characters that change the
/// direction of the text around them (embeddings, overrides, isolates, marks).
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_direction_overrides_are_escaped_and_the_rest_kept() {
        assert!(matches!(
            escape_controls("plain ünïcode <x>"),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            escape_controls("a\x1b[31mred\x07\tb\nc\x7f"),
            "a\\x1b[31mred\\x07\\x09b\\x0ac\\x7f"
        );
        assert_eq!(escape_controls("\u{9b}2J"), "\\u{9b}2J");
        assert_eq!(escape_controls("x\u{202e}cod.exe"), "x\\u{202e}cod.exe");
    }

    #[test]
    fn json_keeps_its_names_exact_with_every_control_escaped() {
        let name = "a\x1b[1m\x7f\u{9b}\u{202e}z";
        let json = serde_json::to_string_pretty(&serde_json::json!({ "name": name })).unwrap();
        let shown = escape_json_controls(&json);
        assert_eq!(
            shown,
            "{\n  \"name\": \"a\\u001b[1m\\u007f\\u009b\\u202ez\"\n}"
        );
        let back: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(back["name"], name);
    }
}
