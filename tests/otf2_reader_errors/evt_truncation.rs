//! The pristine archive read back whole, and event files truncated or without their end.

use super::*;

#[test]
fn the_pristine_archive_reads_back_whole_and_is_valid() {
    let a = pristine("errors-pristine");
    let outcome = read_with_deadline(&a);
    assert!(outcome.error.is_none(), "{}", outcome.error());
    assert!(outcome.events == a.expected);
    otf2_print(&["--silent"], &a.anchor(), &[]);
    let evt = a.read(&a.evt(0));
    assert!(
        evt.len() > 2 * CHUNK && evt.len() % CHUNK != 0,
        "{}",
        evt.len()
    );
    let units = walk(&evt, true);
    assert_eq!(
        units.iter().filter(|u| u.kind == Kind::ChunkHeader).count(),
        3
    );
    assert_eq!(
        units.iter().filter(|u| is_event(u.kind)).count(),
        a.expected[0].len()
    );
}

#[test]
fn evt_truncated_exactly_at_a_chunk_boundary() {
    for chunks in [1, 2] {
        let a = pristine("errors-chunk-boundary");
        let path = a.evt(0);
        let units = walk(&a.read(&path), true);
        let cut = chunks * CHUNK;
        a.truncate(&path, cut);
        let outcome = read_with_deadline(&a);
        let err = outcome.error();
        assert_error(err, &path, cut as u64, &["truncated"]);
        // Every event of the complete chunks, nothing more.
        assert_prefix(&a, &outcome, 0, events_before(&units, cut));
    }
}

#[test]
fn evt_truncated_inside_a_chunk_at_a_record_boundary() {
    let a = pristine("errors-inside-chunk");
    let path = a.evt(0);
    let bytes = a.read(&path);
    let units = walk(&bytes, true);
    // Record boundaries in the middle of the second (full) and third (last) chunk. Among them
    // one right after a TIMESTAMP record where the previous chunk holds a TIMESTAMP byte at the
    // same position: a reader looking past the end of the data there sees stale bytes.
    let boundary = |lo: usize| {
        units
            .iter()
            .find(|u| u.at >= lo && is_event(u.kind))
            .unwrap()
            .end
    };
    let stale = units
        .iter()
        .find(|u| {
            u.kind == Kind::Timestamp
                && u.at > CHUNK + CHUNK / 3
                && u.end < 2 * CHUNK
                && bytes[u.end - CHUNK] == TIMESTAMP_ID
        })
        .expect("no TIMESTAMP with a stale TIMESTAMP byte behind it")
        .end;
    for cut in [
        boundary(CHUNK + CHUNK / 2),
        stale,
        boundary(2 * CHUNK + 1000),
        CHUNK + HEADER,
    ] {
        let a = pristine("errors-inside-chunk");
        let path = a.evt(0);
        a.truncate(&path, cut);
        let outcome = read_with_deadline(&a);
        let err = outcome.error();
        assert_error(err, &path, cut as u64, &["truncated"]);
        assert_prefix(&a, &outcome, 0, events_before(&units, cut));
    }
}

#[test]
fn evt_truncated_in_the_middle_of_a_record() {
    let a = pristine("errors-mid-record");
    let path = a.evt(0);
    let units = walk(&a.read(&path), true);
    let after =
        |lo: usize, kind: Kind| *units.iter().find(|u| u.at >= lo && u.kind == kind).unwrap();
    let cases = [
        // Inside a TIMESTAMP's 8 time bytes.
        (after(CHUNK + 5000, Kind::Timestamp), 4),
        // After an Enter's id, and after its length byte.
        (after(CHUNK + 7000, Kind::Record(ENTER)), 1),
        (after(CHUNK + 9000, Kind::Record(LEAVE)), 2),
        // Inside a ThreadFork's payload, in the last chunk.
        (after(2 * CHUNK + 100, Kind::Record(THREAD_FORK)), 3),
    ];
    for (unit, into) in cases {
        let a = pristine("errors-mid-record");
        let path = a.evt(0);
        let cut = unit.at + into;
        assert!(cut < unit.end);
        a.truncate(&path, cut);
        let outcome = read_with_deadline(&a);
        let err = outcome.error();
        assert_eq!(err.file, path);
        assert!(
            (unit.at as u64..=cut as u64).contains(&err.offset),
            "{unit:?} cut at {cut}: {err}"
        );
        assert_message(err, &["truncated"]);
        assert_prefix(&a, &outcome, 0, events_before(&units, cut));
    }
}

/// Truncation anywhere: an error at the cut (or inside the record the cut splits), after
/// exactly the events that lie wholly before the cut.
#[test]
fn evt_truncated_anywhere_gives_an_error_at_the_cut() {
    let a = pristine("errors-sweep-evt");
    let path = a.evt(0);
    let bytes = a.read(&path);
    let units = walk(&bytes, true);
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut cuts: Vec<usize> = (0..3)
        .flat_map(|k| {
            let c = k * CHUNK;
            [
                c + 1,
                c + HEADER - 1,
                c + HEADER,
                c + HEADER + 1,
                c + CHUNK - 1,
            ]
        })
        .filter(|&c| c < bytes.len() - 1)
        .collect();
    for _ in 0..60 {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        cuts.push((rng % (bytes.len() as u64 - 1)) as usize);
    }
    // The last END_OF_CHUNK of the first chunk and the padding after it.
    let eoc = units
        .iter()
        .find(|u| u.kind == Kind::EndOfChunk)
        .unwrap()
        .at;
    cuts.extend([eoc, eoc + 1, CHUNK - 1]);
    for cut in cuts {
        let a = pristine("errors-sweep-evt");
        let path = a.evt(0);
        a.truncate(&path, cut);
        let outcome = read_with_deadline(&a);
        let err = outcome.error();
        assert_eq!(err.file, path, "cut at {cut}: {err}");
        // The piece the cut falls in; a cut on a boundary or in padding is reported exactly.
        let unit = units.iter().find(|u| u.at < cut && cut < u.end);
        let lowest = match unit {
            Some(u) if !matches!(u.kind, Kind::EndOfChunk | Kind::ChunkHeader) => u.at,
            _ => cut,
        };
        assert!(
            (lowest as u64..=cut as u64).contains(&err.offset),
            "cut at {cut} (in {unit:?}): {err}"
        );
        assert_message(err, &["truncated"]);
        assert_prefix(&a, &outcome, 0, events_before(&units, cut));
    }
}

#[test]
fn evt_without_end_of_file() {
    let a = pristine("errors-no-eof");
    let path = a.evt(0);
    let bytes = a.read(&path);
    // The file ends END_OF_FILE, END_OF_BUFFER: removing only the latter is harmless ...
    assert_eq!(bytes[bytes.len() - 2..], [0x02, 0x01]);
    a.truncate(&path, bytes.len() - 1);
    let outcome = read_with_deadline(&a);
    assert!(outcome.error.is_none(), "{}", outcome.error());
    assert!(outcome.events == a.expected);
    // ... removing END_OF_FILE too is an error where the file now ends ...
    let cut = bytes.len() - 2;
    a.truncate(&path, cut);
    let outcome = read_with_deadline(&a);
    assert_error(outcome.error(), &path, cut as u64, &["truncated"]);
    assert_prefix(&a, &outcome, 0, a.expected[0].len());
    // ... and so is END_OF_FILE overwritten with END_OF_CHUNK.
    let a = pristine("errors-no-eof");
    let path = a.evt(0);
    a.patch(&path, cut, 0x02, 0x00);
    let outcome = read_with_deadline(&a);
    let err = outcome.error();
    assert_eq!(err.file, path);
    assert!(
        (cut as u64..=bytes.len() as u64).contains(&err.offset),
        "{err}"
    );
    assert_message(err, &["END_OF_FILE", "truncated"]);
    assert_prefix(&a, &outcome, 0, a.expected[0].len());
}
