//! `pomptrace export --chrome`: the trace as Chrome trace-event JSON, which Perfetto
//! (ui.perfetto.dev) and chrome://tracing load. One process per location group, one thread per
//! location, a complete ("X") event per region visit, instant events for fork/join and locks,
//! flow events from a task's creation to where it runs. Written while the events are read
//! (visits in the order they end; the viewers sort), so memory does not grow with the trace.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use flate2::write::GzEncoder;
use flate2::Compression;

use crate::progress::Progress;
use crate::region_visits::{walk, Mark, MarkKind, NestingDamage, Visit, VisitSink};
use crate::terminal_text::escape_controls;
use crate::trace_definitions::{self, TraceDefinitions};
use crate::Failure;

/// Convert a trace for other viewers.
#[derive(clap::Args)]
#[command(override_usage = "pomptrace export --chrome ARCHIVE.otf2 [-o trace.json[.gz]]")]
pub struct ExportArgs {
    /// Chrome trace-event JSON (Perfetto, chrome://tracing); the only format so far.
    #[arg(long, required = true)]
    chrome: bool,
    /// The trace's anchor file (traces.otf2).
    #[arg(value_name = "ARCHIVE.otf2")]
    archive: PathBuf,
    /// Where to write it; a name ending in .gz is gzip-compressed. Default: traces.json next to
    /// the anchor file.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

pub fn run(args: &ExportArgs) -> Result<(), Failure> {
    let _ = args.chrome;
    let output = trace_definitions::output_path(&args.archive, &args.output, "json");
    let (reader, defs) = trace_definitions::open(&args.archive).map_err(Failure::Error)?;
    let progress = Progress::new(defs.total_events(), "export");
    let failed_write =
        |e: std::io::Error| Failure::Error(format!("cannot write {}: {e}", output.display()));
    let file = File::create(&output).map_err(failed_write)?;
    let mut out = if output.extension().is_some_and(|e| e == "gz") {
        OutputFile::Gzip(GzEncoder::new(BufWriter::new(file), Compression::fast()))
    } else {
        OutputFile::Plain(BufWriter::new(file))
    };
    let mut damage = NestingDamage::default();
    let written = write_chrome_json(&mut out, &reader, &defs, &mut damage, &progress)
        .and_then(|events| Ok((events, out.finish()?)));
    let events = match written {
        Ok((events, ())) => events,
        Err(ExportError::Read(message)) => return Err(Failure::Error(message)),
        Err(ExportError::Write(e)) => return Err(failed_write(e)),
    };
    drop(progress);
    for note in defs.notes.iter().chain(&damage.warnings()) {
        eprintln!("pomptrace: warning: {}", escape_controls(note));
    }
    eprintln!(
        "pomptrace: wrote {} ({events} trace events)",
        escape_controls(&output.display().to_string())
    );
    Ok(())
}

enum OutputFile {
    Plain(BufWriter<File>),
    Gzip(GzEncoder<BufWriter<File>>),
}

impl OutputFile {
    /// Flushes and, for gzip, writes the trailer (dropping a GzEncoder would hide its errors).
    fn finish(self) -> std::io::Result<()> {
        match self {
            Self::Plain(mut file) => file.flush(),
            Self::Gzip(encoder) => encoder.finish()?.flush(),
        }
    }
}

impl Write for OutputFile {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        match self {
            Self::Plain(file) => file.write(data),
            Self::Gzip(encoder) => encoder.write(data),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Self::Plain(file) => file.flush(),
            Self::Gzip(encoder) => encoder.flush(),
        }
    }
}

enum ExportError {
    Read(String),
    Write(std::io::Error),
}

impl From<std::io::Error> for ExportError {
    fn from(e: std::io::Error) -> Self {
        Self::Write(e)
    }
}

/// Writes the whole document; returns the number of trace events written.
fn write_chrome_json(
    out: &mut dyn Write,
    reader: &otf2::ArchiveReader,
    defs: &TraceDefinitions,
    damage: &mut NestingDamage,
    progress: &Progress,
) -> Result<u64, ExportError> {
    out.write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
    let mut writer = EventWriter {
        out,
        defs,
        pid: 0,
        tid: 0,
        events: 0,
        error: None,
        region_json: HashMap::new(),
    };
    let mut groups: Vec<&str> = Vec::new();
    for (index, location) in defs.locations.iter().enumerate() {
        let pid = match groups.iter().position(|g| *g == location.group) {
            Some(pid) => pid,
            None => {
                groups.push(&location.group);
                let name = format!("{} ({})", location.group, location.system_tree);
                writer.metadata(groups.len() - 1, None, "process_name", &name)?;
                groups.len() - 1
            }
        };
        writer.pid = pid;
        writer.tid = index + 1;
        writer.metadata(pid, Some(index + 1), "thread_name", &location.name)?;
        writer.sort_index(pid, index + 1, index)?;
        walk(reader, location, damage, &mut writer, &mut |n| {
            progress.add(n)
        })
        .map_err(ExportError::Read)?;
        if let Some(e) = writer.error.take() {
            return Err(ExportError::Write(e));
        }
    }
    writer.out.write_all(b"\n]}\n")?;
    Ok(writer.events)
}

struct EventWriter<'a> {
    out: &'a mut dyn Write,
    defs: &'a TraceDefinitions,
    pid: usize,
    tid: usize,
    events: u64,
    /// The first write error; the walk's sink methods cannot return it.
    error: Option<std::io::Error>,
    /// Per region, the JSON of a complete event before and after its times (escaped once).
    region_json: HashMap<u32, (String, String)>,
}

impl EventWriter<'_> {
    /// Microseconds since the start of the trace, to the nanosecond.
    fn micros(&self, time: u64) -> String {
        format!("{:.3}", self.defs.seconds(time) * 1e6)
    }

    fn record(&mut self, json: &str) -> std::io::Result<()> {
        if self.events > 0 {
            self.out.write_all(b",\n")?;
        }
        self.events += 1;
        self.out.write_all(json.as_bytes())
    }

    fn keep_error(&mut self, result: std::io::Result<()>) {
        if let Err(e) = result {
            self.error.get_or_insert(e);
        }
    }

    fn metadata(
        &mut self,
        pid: usize,
        tid: Option<usize>,
        what: &str,
        name: &str,
    ) -> std::io::Result<()> {
        let tid = tid.map(|t| format!(",\"tid\":{t}")).unwrap_or_default();
        let json = format!(
            "{{\"name\":\"{what}\",\"ph\":\"M\",\"pid\":{pid}{tid},\"args\":{{\"name\":{}}}}}",
            json_string(name)
        );
        self.record(&json)
    }

    fn sort_index(&mut self, pid: usize, tid: usize, index: usize) -> std::io::Result<()> {
        let json = format!(
            "{{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":{pid},\"tid\":{tid},\
             \"args\":{{\"sort_index\":{index}}}}}"
        );
        self.record(&json)
    }
}

impl VisitSink for EventWriter<'_> {
    fn visit(&mut self, visit: Visit) {
        let defs = self.defs;
        let (head, tail) = self.region_json.entry(visit.region).or_insert_with(|| {
            let (name, kind, position) = match defs.region(visit.region) {
                Some(info) => (
                    info.name.clone(),
                    info.kind.label(),
                    (!info.file.is_empty()).then(|| format!("{}:{}", info.file, info.line)),
                ),
                None => (defs.region_name(visit.region), "other", None),
            };
            let args = position
                .map(|p| format!(",\"args\":{{\"source\":{}}}", json_string(&p)))
                .unwrap_or_default();
            (
                format!(
                    "{{\"name\":{},\"cat\":\"{kind}\",\"ph\":\"X\"",
                    json_string(&name)
                ),
                format!("{args}}}"),
            )
        });
        let duration = defs.duration_seconds(u128::from(visit.end - visit.start)) * 1e6;
        let json = format!(
            "{head},\"ts\":{:.3},\"dur\":{duration:.3},\"pid\":{},\"tid\":{}{tail}",
            defs.seconds(visit.start) * 1e6,
            self.pid,
            self.tid
        );
        let result = self.record(&json);
        self.keep_error(result);
    }

    fn mark(&mut self, mark: Mark) {
        let ts = self.micros(mark.time);
        let (pid, tid) = (self.pid, self.tid);
        let task = |ph: &str, extra: &str| {
            format!(
                "{{\"name\":\"task\",\"cat\":\"task\",\"ph\":\"{ph}\",\"id\":\"{}.{}.{}\",\
                 \"ts\":{ts},\"pid\":{pid},\"tid\":{tid}{extra}}}",
                mark.detail,
                mark.id >> 32,
                mark.id & 0xffff_ffff
            )
        };
        let instant = |name: String, cat: &str| {
            format!(
                "{{\"name\":{},\"cat\":\"{cat}\",\"ph\":\"i\",\"s\":\"t\",\"ts\":{ts},\
                 \"pid\":{pid},\"tid\":{tid}}}",
                json_string(&name)
            )
        };
        let json = match mark.kind {
            MarkKind::Fork => instant(format!("fork ({} threads)", mark.detail), "fork/join"),
            MarkKind::Join => instant("join".to_string(), "fork/join"),
            MarkKind::LockAcquire => instant(format!("acquire lock {}", mark.id), "lock"),
            MarkKind::LockRelease => instant(format!("release lock {}", mark.id), "lock"),
            MarkKind::TaskCreate => task("s", ""),
            MarkKind::TaskSwitch => task("f", ",\"bp\":\"e\""),
            MarkKind::TaskComplete => instant(
                format!("task {}.{} complete", mark.id >> 32, mark.id & 0xffff_ffff),
                "task",
            ),
        };
        let result = self.record(&json);
        self.keep_error(result);
    }
}

/// A JSON string literal.
fn json_string(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}
