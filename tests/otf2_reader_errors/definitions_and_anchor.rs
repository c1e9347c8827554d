//! Damaged global definitions and anchor files, and a missing event file.

use super::*;

#[test]
fn global_definitions_truncated_anywhere() {
    let a = pristine("errors-def");
    let path = a.global_defs();
    let bytes = a.read(&path);
    let units = walk(&bytes, false);
    assert!(units.len() > 300, "{} definition records", units.len());
    assert!(bytes.len() < CHUNK);
    for cut in 0..bytes.len() {
        a.write(&path, &bytes[..cut]);
        let outcome = read_with_deadline(&a);
        if cut == bytes.len() - 1 {
            // Only END_OF_BUFFER is gone.
            assert!(outcome.error.is_none(), "{}", outcome.error());
            continue;
        }
        let err = outcome.error();
        assert_eq!(err.file, path, "cut at {cut}: {err}");
        let unit = units.iter().find(|u| u.at < cut && cut < u.end);
        let lowest = match unit {
            Some(u) if u.kind != Kind::ChunkHeader => u.at,
            _ => cut,
        };
        assert!(
            (lowest as u64..=cut as u64).contains(&err.offset),
            "cut at {cut} (in {unit:?}): {err}"
        );
        assert_message(err, &["truncated"]);
        assert!(outcome.events.is_empty());
    }
}

#[test]
fn anchor_with_wrong_magic() {
    let a = pristine("errors-magic");
    let path = a.anchor();
    let bytes = a.read(&path);
    assert_eq!(&bytes[2..7], b"OTF2\0");
    a.patch(&path, 5, b'2', b'3');
    let outcome = read_with_deadline(&a);
    assert_error(outcome.error(), &path, 2, &["magic"]);
    assert_otf2_print_rejects(&a);
}

#[test]
fn anchor_truncated_anywhere() {
    let a = pristine("errors-anchor");
    let path = a.anchor();
    let bytes = a.read(&path);
    // The anchor ends END_OF_FILE, END_OF_BUFFER, END_OF_CHUNK; readers stop at END_OF_FILE.
    assert_eq!(bytes[bytes.len() - 3..], [0x02, 0x01, 0x00]);
    for cut in 0..bytes.len() {
        a.write(&path, &bytes[..cut]);
        let outcome = read_with_deadline(&a);
        if cut >= bytes.len() - 2 {
            assert!(outcome.error.is_none(), "cut at {cut}: {}", outcome.error());
            continue;
        }
        let err = outcome.error();
        assert_eq!(err.file, path);
        // No field of this anchor is longer than 8 bytes (its strings are empty).
        assert!(
            (cut.saturating_sub(8) as u64..=cut as u64).contains(&err.offset),
            "cut at {cut}: {err}"
        );
        assert_message(err, &["truncated", "unterminated", "END_OF_FILE"]);
    }
}

#[test]
fn anchor_with_invalid_chunk_sizes() {
    // Event chunk size at offset 12, definition chunk size at 20 (after header, "OTF2\0",
    // two format bytes and three version bytes).
    for (at, what) in [(12, "event"), (20, "definition")] {
        let a = pristine("errors-chunk-size");
        let path = a.anchor();
        let mut bytes = a.read(&path);
        assert_eq!(bytes[at..at + 8], (CHUNK as u64).to_le_bytes());
        bytes[at..at + 8].copy_from_slice(&4096u64.to_le_bytes());
        a.write(&path, &bytes);
        let outcome = read_with_deadline(&a);
        let err = outcome.error();
        assert_error(err, &path, at as u64, &["chunk size"]);
        assert!(
            err.message.contains(what) && err.message.contains("4096"),
            "{err}"
        );
        assert_otf2_print_rejects(&a);
    }
}

#[test]
fn missing_evt_file() {
    let a = pristine("errors-missing");
    let path = a.evt(1);
    std::fs::remove_file(&path).unwrap();
    let outcome = read_with_deadline(&a);
    let err = outcome.error();
    assert_error(err, &path, 0, &["No such file"]);
    assert!(err.to_string().contains("traces/1.evt"), "{err}");
    // Location 0 was read whole first.
    assert_prefix(&a, &outcome, 1, 0);
    assert_otf2_print_rejects(&a);
}
