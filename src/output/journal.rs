//! The definition journal `DIR/traces.journal`: every definition is appended as a [`Fact`] as it
//! is created, so that `pomptrace recover` can rebuild the global definitions of a run that was
//! killed or ran out of space (event chunks reach the disk only after every fact they may refer
//! to, see `Measurement::new`).
//!
//! Facts are collected in memory as they happen (any thread, under the registry lock or the
//! team tables' locks: a few stores) and appended in batches by the writer thread before each
//! event chunk, and at the end of the run, with one write each. A record is
//! `length (u32) | body | FNV-1a of body (u32)`, so a write cut short by a kill or a full disk
//! leaves at most a torn last record, which replaying drops. Every batch written is also
//! decoded and applied to the in-memory [`Definitions`] the end of the run writes from: the
//! normal end and recovery read the same facts the same way.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use crate::base::clock::{ClockKind, Sample};
use crate::base::signal_safe_mutex::SignalSafeMutex as Mutex;
use crate::output::facts::RegionDef;
use crate::output::facts::{Definitions, Fact, Start};
use otf2::wire::{put_u32, put_u64, put_u8, DecodeResult, Decoder};
use otf2::{ArchiveConfig, Directory, Paradigm, RegionRole};

/// First bytes of every journal file.
const MAGIC: &[u8] = b"pomptrace journal 1\n";

const START: u8 = 1;
const STRING: u8 = 2;
const REGION: u8 = 3;
const LOCATION: u8 = 4;
const TEAM: u8 = 5;
const MEMBER: u8 = 6;
const CLOCK: u8 = 7;
const REGIONS_DROPPED: u8 = 8;
const METRICS: u8 = 9;
const MPI_WORLD_SIZE: u8 = 10;
const MPI_COMMUNICATOR: u8 = 11;
const MPI_CLOCK_OFFSET: u8 = 12;
const THROTTLED: u8 = 13;

/// The journal file's name in an experiment directory: the ranks of an MPI job share the
/// directory, so each has its own.
pub fn journal_name(rank: Option<u32>) -> String {
    match rank {
        Some(rank) => format!("traces.rank{rank}.journal"),
        None => "traces.journal".to_string(),
    }
}

/// [`journal_name`] in `experiment_dir`.
pub fn journal_path(experiment_dir: &Path, rank: Option<u32>) -> PathBuf {
    experiment_dir.join(journal_name(rank))
}

pub struct Journal {
    dir: Directory,
    name: String,
    path: PathBuf,
    /// Encoded facts not yet on disk. Both locks block the asynchronous fatal signals while
    /// held: the end of the run that such a signal starts flushes the journal, and must never
    /// wait for a lock the interrupted thread holds.
    pending: Mutex<Vec<u8>>,
    saved: Mutex<Saved>,
}

struct Saved {
    definitions: Definitions,
    /// Why the file could not be written (then nothing more is written to it).
    broken: Option<String>,
}

static JOURNAL: std::sync::OnceLock<Journal> = std::sync::OnceLock::new();

/// Creates the journal `name` in `dir` with the start of the measurement and every string and
/// region defined so far (the registry's), then `facts`. The file appears whole (written, then
/// renamed into place), so a journal on disk always holds its start. The caller holds the
/// registry lock, so nothing defined meanwhile is missed: later definitions come through
/// [`record`].
pub fn start(
    dir: &Directory,
    name: &str,
    start: Start,
    strings: &[String],
    regions: &[RegionDef],
    facts: &[Fact],
) -> io::Result<&'static Journal> {
    let mut first = MAGIC.to_vec();
    encode(&Fact::Start(start), &mut first);
    for (id, text) in strings.iter().enumerate() {
        encode_string(id as u32, text, &mut first);
    }
    for (id, def) in regions.iter().enumerate() {
        encode(
            &Fact::Region {
                id: id as u32,
                def: def.clone(),
            },
            &mut first,
        );
    }
    for fact in facts {
        encode(fact, &mut first);
    }
    let (written, _) = decode_records(&first[MAGIC.len()..]);
    let mut definitions = Definitions::default();
    for fact in written {
        definitions.apply(fact);
    }
    dir.write_file_atomically(name, &first)?;
    let journal = Journal {
        dir: dir.clone(),
        name: name.to_string(),
        path: dir.join(name),
        pending: Mutex::new(Vec::new()),
        saved: Mutex::new(Saved {
            definitions,
            broken: None,
        }),
    };
    if JOURNAL.set(journal).is_err() {
        return Err(io::Error::other("a journal was already started"));
    }
    Ok(JOURNAL.get().expect("just set"))
}

/// Notes a new definition (nothing before the journal started: [`start`] catches up).
pub fn record(fact: &Fact) {
    if let Some(j) = JOURNAL.get() {
        encode(fact, &mut j.pending.lock());
    }
}

/// Writes what was recorded so far now, from the calling thread (at the few moments after
/// which a process that dies should still be recoverable as far as it got: MPI_Init and
/// MPI_Finalize). A failure shows where the journal is next flushed.
pub fn flush_now() {
    if let Some(j) = JOURNAL.get() {
        let _ = j.flush();
    }
}

/// [`record`] of a new string, without copying it first.
pub fn record_string(id: u32, text: &str) {
    if let Some(j) = JOURNAL.get() {
        encode_string(id, text, &mut j.pending.lock());
    }
}

impl Journal {
    /// Appends what was recorded since the last flush and applies it to the definitions. An
    /// error means the journal on disk is incomplete from now on (the definitions in memory
    /// stay complete).
    pub fn flush(&self) -> io::Result<()> {
        self.flush_to(&mut None)
    }

    /// `flush` through `file`, the journal opened for appending by an earlier call (opened now
    /// if None). The writer thread flushes before every chunk it writes: opening and closing
    /// the file each time cost it about 15% of its CPU time. A descriptor belongs to the thread's
    /// descriptor table (the writer has its own), so each thread keeps its own `file`.
    pub fn flush_to(&self, file: &mut Option<File>) -> io::Result<()> {
        let mut saved = self.saved.lock();
        let bytes = std::mem::take(&mut *self.pending.lock());
        if !bytes.is_empty() {
            if saved.broken.is_none() {
                if let Err(e) = self.append(file, &bytes) {
                    saved.broken = Some(e.to_string());
                }
            }
            let (facts, _) = decode_records(&bytes);
            for fact in facts {
                saved.definitions.apply(fact);
            }
        }
        match &saved.broken {
            None => Ok(()),
            Some(why) => Err(io::Error::other(format!(
                "cannot write {}: {why}",
                self.path.display()
            ))),
        }
    }

    /// Runs `f` on every definition flushed so far.
    pub fn with_definitions<R>(&self, f: impl FnOnce(&mut Definitions) -> R) -> R {
        f(&mut self.saved.lock().definitions)
    }

    /// The trace is complete: the journal is no longer needed.
    pub fn remove(&self) {
        let _ = self.dir.remove_file(&self.name);
        self.saved
            .lock()
            .broken
            .get_or_insert_with(|| "the trace was written".into());
    }
}

impl Journal {
    /// One write at the end of the file (through `file`, opened if None); a failed write is
    /// cut back so no torn record stays.
    fn append(&self, file: &mut Option<File>, bytes: &[u8]) -> io::Result<()> {
        let file = match file {
            Some(file) => file,
            None => file.insert(self.dir.open_file(
                &self.name,
                libc::O_WRONLY | libc::O_APPEND,
                0,
            )?),
        };
        let len = file.metadata()?.len();
        let result = file.write_all(bytes);
        if result.is_err() {
            let _ = file.set_len(len);
        }
        result
    }
}

/// What a journal file holds.
pub struct Replayed {
    pub definitions: Definitions,
    /// Bytes after the last whole record (a torn or damaged tail), dropped.
    pub dropped_bytes: usize,
}

/// Reads a journal held in memory back into definitions.
#[cfg(test)]
fn replay(bytes: &[u8]) -> Result<Replayed, String> {
    replay_from(bytes, bytes.len() as u64)
}

/// Reads a journal back into definitions from `input`, `len` bytes long (a file's length when
/// it was opened: what is appended later is not read), one record at a time: no more than one
/// record is held in memory, however long the journal.
pub fn replay_from(mut input: impl Read, len: u64) -> Result<Replayed, String> {
    let mut magic = [0u8; MAGIC.len()];
    if len < MAGIC.len() as u64 {
        return Err("not a pomptrace journal".into());
    }
    input
        .read_exact(&mut magic)
        .map_err(|e| format!("cannot read it: {e}"))?;
    if magic != MAGIC {
        return Err("not a pomptrace journal".into());
    }
    let records_len = len - MAGIC.len() as u64;
    let mut definitions = Definitions::default();
    let mut used = 0;
    read_facts(&mut input, records_len, &mut used, |fact| {
        definitions.apply(fact)
    })
    .map_err(|e| format!("cannot read it at byte {}: {e}", MAGIC.len() as u64 + used))?;
    Ok(Replayed {
        definitions,
        dropped_bytes: (records_len - used) as usize,
    })
}

fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// Frames the body that `write_body` appends.
fn framed(out: &mut Vec<u8>, write_body: impl FnOnce(&mut Vec<u8>)) {
    let at = out.len();
    put_u32(out, 0);
    write_body(out);
    let body_len = out.len() - at - 4;
    out[at..at + 4].copy_from_slice(&(body_len as u32).to_le_bytes());
    let sum = fnv1a(&out[at + 4..]);
    put_u32(out, sum);
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u32(out, s.len() as u32);
    out.extend_from_slice(s.as_bytes());
}

fn encode_string(id: u32, text: &str, out: &mut Vec<u8>) {
    framed(out, |b| {
        put_u8(b, STRING);
        put_u32(b, id);
        put_str(b, text);
    });
}

pub fn encode(fact: &Fact, out: &mut Vec<u8>) {
    if let Fact::String { id, text } = fact {
        return encode_string(*id, text, out);
    }
    framed(out, |b| match fact {
        Fact::Start(s) => {
            put_u8(b, START);
            put_u8(b, u8::from(s.clock == ClockKind::Tsc));
            put_u64(b, s.sample.ticks);
            put_u64(b, s.sample.ns);
            put_u64(b, s.realtime_ns);
            put_u64(b, s.memory_chunk_size);
            put_u64(b, s.archive.event_chunk_size as u64);
            put_u64(b, s.archive.def_chunk_size as u64);
            put_str(b, &s.archive.machine_name);
            put_str(b, &s.archive.creator);
            put_str(b, &s.archive.description);
            put_u32(b, s.archive.properties.len() as u32);
            for (name, value) in &s.archive.properties {
                put_str(b, name);
                put_str(b, value);
            }
            put_u64(b, s.archive.trace_id);
            put_str(b, &s.hostname);
            put_u8(b, u8::from(s.rank.is_some()));
            put_u32(b, s.rank.unwrap_or(0));
        }
        Fact::String { .. } => unreachable!("encoded above"),
        Fact::Region { id, def } => {
            put_u8(b, REGION);
            for v in [*id, def.name, def.file, def.begin_line, def.end_line] {
                put_u32(b, v);
            }
            put_u8(b, def.role.0);
            put_u8(b, def.paradigm.0);
        }
        Fact::RegionsDropped { from } => {
            put_u8(b, REGIONS_DROPPED);
            put_u32(b, *from);
        }
        Fact::Location { id, name } => {
            put_u8(b, LOCATION);
            put_u32(b, *id);
            put_u32(b, *name);
        }
        Fact::Team {
            comm,
            size,
            parent_comm,
        } => {
            put_u8(b, TEAM);
            for v in [*comm, *size, *parent_comm] {
                put_u32(b, v);
            }
        }
        Fact::Member {
            comm,
            thread,
            location,
        } => {
            put_u8(b, MEMBER);
            for v in [*comm, *thread, *location] {
                put_u32(b, v);
            }
        }
        Fact::Clock(sample) => {
            put_u8(b, CLOCK);
            put_u64(b, sample.ticks);
            put_u64(b, sample.ns);
        }
        Fact::Metrics(names) => {
            put_u8(b, METRICS);
            put_u32(b, names.len() as u32);
            for name in names {
                put_str(b, name);
            }
        }
        Fact::MpiWorldSize(size) => {
            put_u8(b, MPI_WORLD_SIZE);
            put_u32(b, *size);
        }
        Fact::MpiCommunicator {
            name,
            world_ranks,
            parent,
        } => {
            put_u8(b, MPI_COMMUNICATOR);
            put_str(b, name);
            put_u32(b, *parent);
            put_u32(b, world_ranks.len() as u32);
            for &rank in world_ranks {
                put_u32(b, rank);
            }
        }
        Fact::MpiClockOffset {
            time,
            offset,
            standard_deviation,
        } => {
            put_u8(b, MPI_CLOCK_OFFSET);
            put_u64(b, *time);
            put_u64(b, *offset as u64);
            put_u64(b, standard_deviation.to_bits());
        }
        Fact::Throttled { location, region } => {
            put_u8(b, THROTTLED);
            put_u32(b, *location);
            put_u32(b, *region);
        }
    });
}

/// The whole, intact records at the start of `bytes`, and how many bytes they take.
fn decode_records(bytes: &[u8]) -> (Vec<Fact>, usize) {
    let mut facts = Vec::new();
    let mut used = 0;
    // Reading from memory only ends where the records do: the length check comes first.
    let _ = read_facts(&mut &bytes[..], bytes.len() as u64, &mut used, |fact| {
        facts.push(fact)
    });
    (facts, used as usize)
}

/// Hands every whole, intact record among the next `len` bytes of `input` to `each`, in order,
/// up to the first torn or damaged one, counting the bytes they take in `used`. A record's
/// length is checked against the bytes left before its body is read, so a damaged length
/// cannot make it read (or allocate) more than there is.
fn read_facts(
    input: &mut impl Read,
    len: u64,
    used: &mut u64,
    mut each: impl FnMut(Fact),
) -> io::Result<()> {
    let mut frame = Vec::new();
    loop {
        let left = len - *used;
        if left < 8 {
            return Ok(());
        }
        let mut head = [0u8; 4];
        input.read_exact(&mut head)?;
        let body_len = u64::from(u32::from_le_bytes(head));
        if left - 8 < body_len {
            return Ok(());
        }
        frame.clear();
        frame.resize(body_len as usize + 4, 0);
        input.read_exact(&mut frame)?;
        let (body, sum) = frame.split_at(body_len as usize);
        if fnv1a(body).to_le_bytes() != sum {
            return Ok(());
        }
        match decode_body(body) {
            Ok(fact) => each(fact),
            Err(_) => return Ok(()),
        }
        *used += 8 + body_len;
    }
}

fn get_str(d: &mut Decoder) -> DecodeResult<String> {
    let len = d.u32()? as usize;
    Ok(String::from_utf8_lossy(d.bytes(len)?).into_owned())
}

fn decode_body(body: &[u8]) -> DecodeResult<Fact> {
    let mut d = Decoder::new(body, 0);
    Ok(match d.u8()? {
        START => {
            let clock = if d.u8()? == 1 {
                ClockKind::Tsc
            } else {
                ClockKind::Monotonic
            };
            let sample = Sample {
                ticks: d.u64()?,
                ns: d.u64()?,
            };
            let realtime_ns = d.u64()?;
            let memory_chunk_size = d.u64()?;
            let event_chunk_size = d.u64()? as usize;
            let def_chunk_size = d.u64()? as usize;
            let machine_name = get_str(&mut d)?;
            let creator = get_str(&mut d)?;
            let description = get_str(&mut d)?;
            let mut properties = Vec::new();
            for _ in 0..d.u32()? {
                properties.push((get_str(&mut d)?, get_str(&mut d)?));
            }
            let trace_id = d.u64()?;
            let hostname = get_str(&mut d)?;
            let in_job = d.u8()? != 0;
            let rank = d.u32()?;
            Fact::Start(Start {
                clock,
                sample,
                realtime_ns,
                memory_chunk_size,
                archive: ArchiveConfig {
                    event_chunk_size,
                    def_chunk_size,
                    machine_name,
                    creator,
                    description,
                    properties,
                    trace_id,
                },
                hostname,
                rank: in_job.then_some(rank),
            })
        }
        STRING => Fact::String {
            id: d.u32()?,
            text: get_str(&mut d)?,
        },
        REGION => {
            let id = d.u32()?;
            let def = RegionDef {
                name: d.u32()?,
                file: d.u32()?,
                begin_line: d.u32()?,
                end_line: d.u32()?,
                role: RegionRole(d.u8()?),
                paradigm: Paradigm(d.u8()?),
            };
            Fact::Region { id, def }
        }
        REGIONS_DROPPED => Fact::RegionsDropped { from: d.u32()? },
        LOCATION => Fact::Location {
            id: d.u32()?,
            name: d.u32()?,
        },
        TEAM => Fact::Team {
            comm: d.u32()?,
            size: d.u32()?,
            parent_comm: d.u32()?,
        },
        MEMBER => Fact::Member {
            comm: d.u32()?,
            thread: d.u32()?,
            location: d.u32()?,
        },
        CLOCK => Fact::Clock(Sample {
            ticks: d.u64()?,
            ns: d.u64()?,
        }),
        METRICS => {
            let count = d.u32()?;
            let mut names = Vec::new();
            for _ in 0..count {
                names.push(get_str(&mut d)?);
            }
            Fact::Metrics(names)
        }
        MPI_WORLD_SIZE => Fact::MpiWorldSize(d.u32()?),
        MPI_COMMUNICATOR => {
            let name = get_str(&mut d)?;
            let parent = d.u32()?;
            let mut world_ranks = Vec::new();
            for _ in 0..d.u32()? {
                world_ranks.push(d.u32()?);
            }
            Fact::MpiCommunicator {
                name,
                world_ranks,
                parent,
            }
        }
        MPI_CLOCK_OFFSET => Fact::MpiClockOffset {
            time: d.u64()?,
            offset: d.u64()? as i64,
            standard_deviation: f64::from_bits(d.u64()?),
        },
        THROTTLED => Fact::Throttled {
            location: d.u32()?,
            region: d.u32()?,
        },
        other => return d.error(format!("unknown journal record kind {other}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> Vec<Fact> {
        vec![
            Fact::Start(Start {
                clock: ClockKind::Tsc,
                sample: Sample { ticks: 7, ns: 9 },
                realtime_ns: 11,
                memory_chunk_size: 4096,
                archive: ArchiveConfig {
                    description: "prog -x".into(),
                    properties: vec![("POMPTRACE::VERSION".into(), "1".into())],
                    ..ArchiveConfig::default()
                },
                hostname: "host".into(),
                rank: Some(3),
            }),
            Fact::String {
                id: 0,
                text: "Master thread".into(),
            },
            Fact::Region {
                id: 0,
                def: RegionDef {
                    name: 0,
                    file: 0,
                    begin_line: 3,
                    end_line: 4,
                    role: RegionRole::PARALLEL,
                    paradigm: Paradigm::OPENMP,
                },
            },
            Fact::RegionsDropped { from: 0 },
            Fact::Region {
                id: 0,
                def: RegionDef {
                    name: 0,
                    file: 0,
                    begin_line: 5,
                    end_line: 6,
                    role: RegionRole::LOOP,
                    paradigm: Paradigm::OPENMP,
                },
            },
            Fact::Location { id: 0, name: 0 },
            Fact::Team {
                comm: 0,
                size: 2,
                parent_comm: u32::MAX,
            },
            Fact::Member {
                comm: 0,
                thread: 1,
                location: 0,
            },
            Fact::Metrics(vec!["task-clock".into(), "ru_utime".into()]),
            Fact::MpiWorldSize(4),
            Fact::MpiCommunicator {
                name: "MPI_COMM_WORLD".into(),
                world_ranks: vec![0, 1, 2, 3],
                parent: u32::MAX,
            },
            Fact::MpiClockOffset {
                time: 60,
                offset: -12,
                standard_deviation: 0.5,
            },
            Fact::Throttled {
                location: 1,
                region: 0,
            },
            Fact::Clock(Sample { ticks: 70, ns: 90 }),
        ]
    }

    #[test]
    fn flushes_through_a_kept_file_and_through_new_ones_append_in_order() {
        let dir = std::env::temp_dir().join(format!("pomptrace-journal-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("journal");
        std::fs::write(&path, MAGIC).unwrap();
        let journal = Journal {
            dir: Directory::open(&dir).unwrap(),
            name: "journal".into(),
            path: path.clone(),
            pending: Mutex::new(Vec::new()),
            saved: Mutex::new(Saved {
                definitions: Definitions::default(),
                broken: None,
            }),
        };
        let all = facts();
        let mut kept = None;
        for (i, fact) in all.iter().enumerate() {
            encode(fact, &mut journal.pending.lock());
            // The writer's kept file, and now and then another thread's own.
            if i % 3 == 2 {
                journal.flush().unwrap();
            } else {
                journal.flush_to(&mut kept).unwrap();
                assert!(kept.is_some(), "the file is kept open for the next flush");
            }
        }
        let bytes = std::fs::read(&path).unwrap();
        let (read, used) = decode_records(&bytes[MAGIC.len()..]);
        assert_eq!(read, all);
        assert_eq!(used, bytes.len() - MAGIC.len());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn every_fact_reads_back_as_written() {
        let mut bytes = MAGIC.to_vec();
        for f in facts() {
            encode(&f, &mut bytes);
        }
        let (read, used) = decode_records(&bytes[MAGIC.len()..]);
        assert_eq!(read, facts());
        assert_eq!(used, bytes.len() - MAGIC.len());
    }

    #[test]
    fn a_torn_or_damaged_last_record_is_dropped_and_the_rest_kept() {
        let mut bytes = MAGIC.to_vec();
        for f in facts() {
            encode(&f, &mut bytes);
        }
        let whole = bytes.len();
        for cut in [whole - 1, whole - 5, whole - 20] {
            let r = replay(&bytes[..cut]).unwrap();
            let (read, _) = decode_records(&bytes[MAGIC.len()..cut]);
            assert_eq!(read.len(), facts().len() - 1, "cut at {cut}");
            assert!(r.dropped_bytes > 0);
            assert_eq!(r.definitions.last_clock, None);
            assert_eq!(r.definitions.locations(), 1);
        }
        let mut damaged = bytes.clone();
        damaged[whole - 6] ^= 0x40;
        let (read, _) = decode_records(&damaged[MAGIC.len()..]);
        assert_eq!(read, facts()[..facts().len() - 1]);
        assert!(replay(&damaged).unwrap().dropped_bytes > 0);
        assert!(replay(b"something else").is_err());
    }

    #[test]
    fn a_damaged_tail_is_not_read_further_than_its_first_record() {
        let mut whole = MAGIC.to_vec();
        for f in facts() {
            encode(&f, &mut whole);
        }
        // A terabyte of zeros (a sparse file's hole): its first "record" fails its checksum,
        // and nothing after it is read.
        let hole = 1u64 << 40;
        let r = replay_from(
            whole.as_slice().chain(io::repeat(0).take(hole)),
            whole.len() as u64 + hole,
        )
        .unwrap();
        assert_eq!(r.dropped_bytes as u64, hole);
        assert_eq!(r.definitions.locations(), 1);
        // A length longer than what is left is neither read nor allocated.
        let mut claim = whole.clone();
        claim.extend_from_slice(&(u32::MAX - 8).to_le_bytes());
        claim.extend_from_slice(&[0; 100]);
        let r = replay(&claim).unwrap();
        assert_eq!(r.dropped_bytes, 104);
        assert_eq!(r.definitions.locations(), 1);
    }

    /// A run the size budget cut short and that never ended: its recovered definitions hold the
    /// parameter its markers name and say in the region's description that it stopped.
    #[test]
    fn recovered_definitions_mark_what_the_budget_stopped() {
        let mut bytes = MAGIC.to_vec();
        for f in facts() {
            encode(&f, &mut bytes);
        }
        let mut definitions = replay(&bytes).unwrap().definitions;
        let dir = crate::test_dir("journal-throttled");
        let _ = std::fs::remove_dir_all(dir.join("traces"));
        let _ = std::fs::remove_file(dir.join("traces.otf2"));
        let archive =
            otf2::ArchiveWriter::create(&dir, "traces", ArchiveConfig::default()).unwrap();
        let mut defs = archive.global_def_writer();
        definitions
            .write_global_defs(
                &mut defs,
                &[0],
                1_000_000_000,
                100,
                &mut crate::output::metric_definitions::MetricDefinitions::named(&[]),
            )
            .unwrap();
        let anchor = archive.anchor_path();
        archive.finish(defs, &[]).unwrap();
        let read = otf2::ArchiveReader::open(&anchor)
            .unwrap()
            .global_defs()
            .unwrap();
        let string = |id: u32| {
            read.iter().find_map(|d| match d {
                otf2::GlobalDef::String { id: i, string } if *i == id => Some(string.clone()),
                _ => None,
            })
        };
        let parameter = read.iter().find_map(|d| match d {
            otf2::GlobalDef::Parameter { id, name, .. } => Some((*id, *name)),
            _ => None,
        });
        let (id, name) = parameter.expect("the marker's parameter");
        assert_eq!(id, crate::output::facts::THROTTLE_PARAMETER);
        assert_eq!(
            string(name).as_deref(),
            Some("pomptrace: not recorded from here")
        );
        let description = read.iter().find_map(|d| match d {
            otf2::GlobalDef::Region {
                id: 0, description, ..
            } => string(*description),
            _ => None,
        });
        assert!(
            description.is_some_and(|d| d.contains("size budget")),
            "{read:?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
