//! The pristine archive: what is written and what must read back.

use super::*;

pub(crate) struct Archive {
    pub(crate) scratch: Scratch,
    /// What was written, per location.
    pub(crate) expected: Vec<Vec<EventRecord>>,
}

impl Archive {
    pub(crate) fn anchor(&self) -> PathBuf {
        self.scratch.join("traces.otf2")
    }
    pub(crate) fn global_defs(&self) -> PathBuf {
        self.scratch.join("traces.def")
    }
    pub(crate) fn evt(&self, location: u64) -> PathBuf {
        self.scratch.join(&format!("traces/{location}.evt"))
    }
    pub(crate) fn read(&self, path: &Path) -> Vec<u8> {
        std::fs::read(path).unwrap()
    }
    pub(crate) fn write(&self, path: &Path, bytes: &[u8]) {
        std::fs::write(path, bytes).unwrap()
    }
    pub(crate) fn truncate(&self, path: &Path, len: usize) {
        let mut bytes = self.read(path);
        assert!(len <= bytes.len());
        bytes.truncate(len);
        self.write(path, &bytes);
    }
    /// Sets one byte, checking that it held `was`.
    pub(crate) fn patch(&self, path: &Path, at: usize, was: u8, now: u8) {
        let mut bytes = self.read(path);
        assert_eq!(bytes[at], was, "{} byte {at}", path.display());
        bytes[at] = now;
        self.write(path, &bytes);
    }
}

pub(crate) fn write_location0(w: &mut EventWriter<FileSink>) -> Vec<EventRecord> {
    let mut expected = Vec::new();
    let mut push = |time, event| {
        expected.push(EventRecord {
            time,
            attributes: AttributeList::new(),
            event,
        })
    };
    let mut time = 1_000;
    for k in 0..PAIRS {
        let region = (k % u64::from(REGIONS)) as u32;
        let forked = k % 4 == 0;
        if forked {
            w.thread_fork(time, Paradigm::OPENMP, 4);
            push(
                time,
                Event::ThreadFork {
                    model: Paradigm::OPENMP,
                    number_of_requested_threads: 4,
                },
            );
            time += 1;
        }
        w.enter(time, region);
        push(time, Event::Enter { region });
        // Some Leaves share their Enter's time, so the writer leaves out their TIMESTAMP.
        time += k % 3;
        w.leave(time, region);
        push(time, Event::Leave { region });
        time += 1 + k % 2;
        if forked {
            w.thread_join(time, Paradigm::OPENMP);
            push(
                time,
                Event::ThreadJoin {
                    model: Paradigm::OPENMP,
                },
            );
        }
    }
    expected
}

/// Location 1: an Enter with a two-entry attribute list (attributes 0 and 1), then a few
/// more events.
pub(crate) fn write_location1(w: &mut EventWriter<FileSink>) -> Vec<EventRecord> {
    let mut attributes = AttributeList::new();
    attributes.add(0, TypedValue::u64(0x1234));
    attributes.add(1, TypedValue::u32(7));
    let events = vec![
        EventRecord {
            time: 500,
            attributes,
            event: Event::Enter { region: 1 },
        },
        EventRecord {
            time: 600,
            attributes: AttributeList::new(),
            event: Event::ThreadFork {
                model: Paradigm::OPENMP,
                number_of_requested_threads: 2,
            },
        },
        EventRecord {
            time: 700,
            attributes: AttributeList::new(),
            event: Event::ThreadJoin {
                model: Paradigm::OPENMP,
            },
        },
        EventRecord {
            time: 800,
            attributes: AttributeList::new(),
            event: Event::Leave { region: 1 },
        },
    ];
    for e in &events {
        let attributes = Some(&e.attributes).filter(|a| !a.is_empty());
        w.write(e.time, attributes, &e.event);
    }
    events
}

pub(crate) fn write_global_defs(defs: &mut GlobalDefWriter, counts: &[u64]) {
    defs.write(&GlobalDef::ClockProperties {
        timer_resolution: 1_000_000_000,
        global_offset: 0,
        trace_length: 1_000_000,
        realtime_timestamp: UNDEFINED_U64,
    });
    let mut strings: Vec<String> = [
        "", "process", "machine", "node", "thread 0", "thread 1", "attr_u64", "attr_u32",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    strings.extend((0..REGIONS).map(|r| format!("region_{r}")));
    for (id, string) in strings.into_iter().enumerate() {
        defs.write(&GlobalDef::String {
            id: id as u32,
            string,
        });
    }
    for (id, name, attribute_type) in [(0, 6, Type::UINT64), (1, 7, Type::UINT32)] {
        defs.write(&GlobalDef::Attribute {
            id,
            name,
            description: 0,
            attribute_type,
        });
    }
    let locations: Vec<(u32, u64)> = counts
        .iter()
        .enumerate()
        .map(|(l, &c)| (4 + l as u32, c))
        .collect();
    write_process_and_locations(defs, (2, 3), 1, &locations);
    for r in 0..REGIONS {
        write_user_region(defs, r, 8 + r);
    }
}

pub(crate) fn pristine(label: &str) -> Archive {
    let scratch = Scratch::new(label);
    let config = ArchiveConfig {
        event_chunk_size: CHUNK,
        def_chunk_size: CHUNK,
        ..Default::default()
    };
    let archive = ArchiveWriter::create(&scratch.path, "traces", config).unwrap();
    let mut expected = Vec::new();
    let mut counts = Vec::new();
    for location in 0..2 {
        let mut w = archive.event_writer(location).unwrap();
        let events = if location == 0 {
            write_location0(&mut w)
        } else {
            write_location1(&mut w)
        };
        assert_eq!(w.events(), events.len() as u64);
        counts.push(w.events());
        w.finish().1.unwrap();
        expected.push(events);
    }
    let mut defs = archive.global_def_writer();
    write_global_defs(&mut defs, &counts);
    archive.finish(defs, &[0, 1]).unwrap();
    Archive { scratch, expected }
}
