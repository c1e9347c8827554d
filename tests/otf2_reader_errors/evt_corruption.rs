//! Damaged bytes in event files: chunk headers, endianness, record and compressed lengths,
//! attribute lists, random damage.

use super::*;

#[test]
fn bad_chunk_header_byte() {
    // In the second chunk: the first chunk's events are read, then the error.
    let a = pristine("errors-header");
    let path = a.evt(0);
    let units = walk(&a.read(&path), true);
    a.patch(&path, CHUNK, 0x03, 0x04);
    let outcome = read_with_deadline(&a);
    assert_error(outcome.error(), &path, CHUNK as u64, &["chunk header"]);
    assert_prefix(&a, &outcome, 0, events_before(&units, CHUNK));
    assert_otf2_print_rejects(&a);
    // In the first chunk: opening the events fails.
    let a = pristine("errors-header");
    let path = a.evt(0);
    a.patch(&path, 0, 0x03, 0x00);
    let outcome = read_with_deadline(&a);
    assert_error(outcome.error(), &path, 0, &["chunk header"]);
    assert_prefix(&a, &outcome, 0, 0);
    // In the global definitions.
    let a = pristine("errors-header");
    a.patch(&a.global_defs(), 0, 0x03, 0x13);
    let outcome = read_with_deadline(&a);
    assert_error(outcome.error(), &a.global_defs(), 0, &["chunk header"]);
}

#[test]
fn bad_endianness_byte() {
    for (at, value) in [(CHUNK + 1, 0x00), (2 * CHUNK + 1, 0x23), (1, 0x41)] {
        let a = pristine("errors-endianness");
        let path = a.evt(0);
        let units = walk(&a.read(&path), true);
        a.patch(&path, at, 0x42, value);
        let outcome = read_with_deadline(&a);
        assert_error(outcome.error(), &path, at as u64, &["byte order"]);
        assert!(
            outcome.error().message.contains(&format!("{value:#04x}")),
            "{}",
            outcome.error()
        );
        assert_prefix(&a, &outcome, 0, events_before(&units, at));
        // otf2-print reads big-endian chunks (0x23); this reader does not.
        if value != 0x23 {
            assert_otf2_print_rejects(&a);
        }
    }
}

#[test]
fn record_length_running_past_the_chunk() {
    let a = pristine("errors-length");
    let path = a.evt(0);
    let bytes = a.read(&path);
    let units = walk(&bytes, true);
    // The last ThreadFork/ThreadJoin of the first chunk (more records and the padding follow
    // it, up to the chunk end), and the last one of the file (END_OF_FILE follows).
    let last_framed_before = |limit: usize| {
        *units
            .iter()
            .rev()
            .find(|u| matches!(u.kind, Kind::Record(THREAD_FORK | THREAD_JOIN)) && u.end < limit)
            .unwrap()
    };
    for (unit, limit) in [
        (last_framed_before(CHUNK), CHUNK),
        (last_framed_before(bytes.len()), bytes.len()),
    ] {
        let a = pristine("errors-length");
        let path = a.evt(0);
        // One byte more than there is up to the end of the chunk.
        let too_long = limit - (unit.at + 2) + 1;
        assert!(too_long < 255, "{too_long}");
        a.patch(&path, unit.at + 1, bytes[unit.at + 1], too_long as u8);
        let outcome = read_with_deadline(&a);
        let err = outcome.error();
        assert_error(err, &path, unit.at as u64 + 1, &["runs past"]);
        assert!(err.message.contains(&too_long.to_string()), "{err}");
        assert_prefix(&a, &outcome, 0, events_before(&units, unit.at));
    }
}

#[test]
fn invalid_compressed_length_byte() {
    let a = pristine("errors-cu32");
    let path = a.evt(0);
    let units = walk(&a.read(&path), true);
    let enter = *units
        .iter()
        .find(|u| u.at > CHUNK + CHUNK / 2 && u.kind == Kind::Record(ENTER))
        .unwrap();
    let was = a.read(&path)[enter.at + 1];
    assert!(was == 1 || was == 2, "Enter's region length byte {was}");
    a.patch(&path, enter.at + 1, was, 7);
    let outcome = read_with_deadline(&a);
    assert_error(
        outcome.error(),
        &path,
        enter.at as u64 + 1,
        &["invalid length byte 7"],
    );
    assert_prefix(&a, &outcome, 0, events_before(&units, enter.at));
    // Same in a ThreadFork's number of requested threads (a framed record).
    let a = pristine("errors-cu32");
    let path = a.evt(0);
    let fork = *units
        .iter()
        .find(|u| u.at > CHUNK && u.kind == Kind::Record(THREAD_FORK))
        .unwrap();
    // id, length, model, then the compressed u32.
    a.patch(&path, fork.at + 3, 1, 7);
    let outcome = read_with_deadline(&a);
    assert_error(
        outcome.error(),
        &path,
        fork.at as u64 + 3,
        &["invalid length byte 7"],
    );
    assert_prefix(&a, &outcome, 0, events_before(&units, fork.at));
}

#[test]
fn attribute_list_with_a_repeated_attribute_id() {
    let a = pristine("errors-attributes");
    let path = a.evt(1);
    let bytes = a.read(&path);
    let list = *walk(&bytes, true)
        .iter()
        .find(|u| u.kind == Kind::AttributeList)
        .unwrap();
    // id, length, count 2 (01 02), attribute 0 (00), UINT64, 0x1234 (02 34 12), then
    // attribute 1 (01 01), UINT32, 7 (01 07).
    let at = list.at;
    assert_eq!(
        bytes[at..list.end],
        [0x06, 12, 0x01, 0x02, 0x00, 0x04, 0x02, 0x34, 0x12, 0x01, 0x01, 0x03, 0x01, 0x07]
    );
    // Second entry names attribute 0 again (a valid, if long, encoding of 0).
    a.patch(&path, at + 10, 0x01, 0x00);
    let outcome = read_with_deadline(&a);
    let err = outcome.error();
    assert_error(err, &path, at as u64 + 9, &["repeated"]);
    assert!(err.message.contains("attribute 0"), "{err}");
    assert_prefix(&a, &outcome, 1, 0);
    assert_otf2_print_rejects(&a);
}

/// Single damaged bytes anywhere in the event and definition files: whatever the reader
/// makes of them, it answers in time, without a panic, with no more events than there are
/// bytes, and any error names the damaged file and an offset inside it.
#[test]
fn random_byte_damage_never_panics_or_hangs() {
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let files = [
        ("traces/0.evt", 40),
        ("traces/1.evt", 60),
        ("traces.def", 60),
        ("traces.otf2", 40),
    ];
    for (file, trials) in files {
        for _ in 0..trials {
            let a = pristine("errors-random");
            let path = a.scratch.join(file);
            let mut bytes = a.read(&path);
            let at = (next() % bytes.len() as u64) as usize;
            let value = match next() % 4 {
                0 => 0x00,
                1 => 0xff,
                2 => bytes[at] ^ (1 << (next() % 8)),
                _ => next() as u8,
            };
            bytes[at] = value;
            a.write(&path, &bytes);
            let outcome = read_with_deadline(&a);
            if let Some(err) = &outcome.error {
                // A damaged anchor may show in another file (a different but valid chunk
                // size, say).
                if file != "traces.otf2" {
                    assert_eq!(
                        err.file, path,
                        "byte {at} of {file} set to {value:#04x}: {err}"
                    );
                }
                let len = std::fs::metadata(&err.file).map_or(0, |m| m.len());
                assert!(
                    err.offset <= len,
                    "byte {at} of {file} set to {value:#04x}: {err}"
                );
                assert!(!err.message.is_empty());
            }
        }
    }
}
