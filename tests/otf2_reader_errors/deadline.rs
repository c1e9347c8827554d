//! Reading with a deadline, and the assertions on what a damaged archive reads back as.

use super::*;

/// Everything read before the first error, and that error.
pub(crate) struct Outcome {
    pub(crate) events: Vec<Vec<EventRecord>>,
    pub(crate) error: Option<ReadError>,
}

impl Outcome {
    pub(crate) fn error(&self) -> &ReadError {
        self.error
            .as_ref()
            .expect("the damaged archive was read without an error")
    }
}

pub(crate) fn read_everything(anchor: &Path, max_events: usize) -> Outcome {
    let mut outcome = Outcome {
        events: Vec::new(),
        error: None,
    };
    let reader = match ArchiveReader::open(anchor) {
        Ok(r) => r,
        Err(e) => {
            outcome.error = Some(e);
            return outcome;
        }
    };
    let locations: Vec<u64> = match reader.global_defs() {
        Ok(defs) => defs
            .iter()
            .filter_map(|d| match d {
                GlobalDef::Location { id, .. } => Some(*id),
                _ => None,
            })
            .collect(),
        Err(e) => {
            outcome.error = Some(e);
            return outcome;
        }
    };
    for location in locations {
        if let Err(e) = reader.local_defs(location) {
            outcome.error = Some(e);
            return outcome;
        }
        outcome.events.push(Vec::new());
        let events = match reader.events(location) {
            Ok(events) => events,
            Err(e) => {
                outcome.error = Some(e);
                return outcome;
            }
        };
        for event in events {
            match event {
                Ok(event) => {
                    let list = outcome.events.last_mut().unwrap();
                    assert!(
                        list.len() < max_events,
                        "location {location}: more than {max_events} events (phantom events?)"
                    );
                    list.push(event);
                }
                Err(e) => {
                    outcome.error = Some(e);
                    return outcome;
                }
            }
        }
    }
    outcome
}

/// Reads the archive in a thread; fails the test if the reader panics or takes longer than
/// the deadline.
pub(crate) fn read_with_deadline(archive: &Archive) -> Outcome {
    let anchor = archive.anchor();
    let max_events = 2 * archive.expected.iter().map(Vec::len).max().unwrap();
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        let _ = tx.send(read_everything(&anchor, max_events));
    });
    match rx.recv_timeout(DEADLINE) {
        Ok(outcome) => {
            handle.join().unwrap();
            outcome
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("the reader did not finish within {DEADLINE:?}: it hangs")
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            let payload = handle.join().unwrap_err();
            let message = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("?");
            panic!("the reader panicked: {message}")
        }
    }
}

/// What was read must be exactly the first `n` events of `location` (and all events of the
/// locations before it); no phantom or altered events.
pub(crate) fn assert_prefix(archive: &Archive, outcome: &Outcome, location: usize, n: usize) {
    assert_eq!(outcome.events.len(), location + 1, "locations reached");
    for l in 0..location {
        assert!(
            outcome.events[l] == archive.expected[l],
            "location {l} read differently"
        );
    }
    let got = &outcome.events[location];
    assert_eq!(got.len(), n, "events read from location {location}");
    assert!(
        got[..] == archive.expected[location][..n],
        "events read from location {location} differ from those written"
    );
}

pub(crate) fn assert_error(err: &ReadError, file: &Path, offset: u64, words: &[&str]) {
    assert_eq!(err.file, file, "wrong file in {err}");
    assert_eq!(err.offset, offset, "wrong offset in {err}");
    assert_message(err, words);
}

pub(crate) fn assert_message(err: &ReadError, words: &[&str]) {
    assert!(
        words.iter().any(|w| err.message.contains(w)),
        "message of {err} mentions none of {words:?}"
    );
    let shown = err.to_string();
    assert!(
        shown.contains(&err.file.display().to_string())
            && shown.contains(&format!("offset {}", err.offset)),
        "{shown}"
    );
}

/// The reference reader must reject the damaged archive too (a cross-check that the damage is
/// real); run under `timeout` since damaged files can make it loop.
pub(crate) fn assert_otf2_print_rejects(archive: &Archive) {
    let out = Command::new("timeout")
        .arg("20")
        .arg("otf2-print")
        .arg("--silent")
        .arg(archive.anchor())
        .output()
        .unwrap();
    assert!(
        !out.status.success() && out.status.code() != Some(124),
        "otf2-print did not reject the archive ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}
