//! Synchronous metrics (`POMPTRACE_METRICS`): counters read on the recording thread at every
//! Enter and Leave and written as an OTF2 Metric event just before the region event, with the
//! same timestamp (as Score-P writes them). One metric class holds all selected counters.
//!
//! Sources: Linux perf events of the thread ([`perf`]) and `getrusage(RUSAGE_THREAD)`
//! ([`rusage`]). What the machine or the kernel refuses is reported once, by name and reason,
//! and left out; the run is traced without it.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};

use super::perf::{PerfEvent, ThreadPerf, TYPE_HARDWARE, TYPE_SOFTWARE};
use super::rusage::{self, RusageField};
use otf2::{
    Base, ChunkSink, EventWriter, GlobalDef, GlobalDefWriter, MetricMode, MetricOccurrence,
    MetricType, RecorderKind, Type, TypedValue,
};

/// Where a metric's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Perf(PerfEvent),
    Rusage(RusageField),
}

/// What a reader needs to know of a metric: the MetricMember definition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member {
    pub name: &'static str,
    pub description: &'static str,
    pub unit: &'static str,
    pub metric_type: MetricType,
    pub mode: MetricMode,
}

impl Member {
    /// A running total since the start (`ACCUMULATED_START`), the common kind.
    pub const fn counter(
        name: &'static str,
        description: &'static str,
        unit: &'static str,
        metric_type: MetricType,
    ) -> Self {
        Self {
            name,
            description,
            unit,
            metric_type,
            mode: MetricMode::ACCUMULATED_START,
        }
    }
}

/// A metric `POMPTRACE_METRICS` can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Metric {
    pub member: Member,
    pub source: Source,
}

const fn perf_metric(
    name: &'static str,
    description: &'static str,
    unit: &'static str,
    kind: u32,
    config: u64,
) -> Metric {
    Metric {
        member: Member::counter(name, description, unit, MetricType::OTHER),
        source: Source::Perf(PerfEvent { kind, config }),
    }
}

const fn rusage_metric(
    name: &'static str,
    description: &'static str,
    unit: &'static str,
    mode: MetricMode,
    field: RusageField,
) -> Metric {
    Metric {
        member: Member {
            mode,
            ..Member::counter(name, description, unit, MetricType::RUSAGE)
        },
        source: Source::Rusage(field),
    }
}

/// Every metric by name, perf names as `perf stat` spells them, rusage names as Score-P does.
pub const CATALOG: &[Metric] = &[
    perf_metric("cycles", "CPU cycles (hardware)", "#", TYPE_HARDWARE, 0),
    perf_metric(
        "instructions",
        "Retired instructions (hardware)",
        "#",
        TYPE_HARDWARE,
        1,
    ),
    perf_metric(
        "cache-references",
        "Cache accesses (hardware)",
        "#",
        TYPE_HARDWARE,
        2,
    ),
    perf_metric(
        "cache-misses",
        "Cache misses (hardware)",
        "#",
        TYPE_HARDWARE,
        3,
    ),
    perf_metric(
        "branch-instructions",
        "Retired branch instructions (hardware)",
        "#",
        TYPE_HARDWARE,
        4,
    ),
    perf_metric(
        "branch-misses",
        "Mispredicted branches (hardware)",
        "#",
        TYPE_HARDWARE,
        5,
    ),
    perf_metric(
        "cpu-clock",
        "CPU clock of the thread (software)",
        "ns",
        TYPE_SOFTWARE,
        0,
    ),
    perf_metric(
        "task-clock",
        "Time the thread ran on a CPU (software)",
        "ns",
        TYPE_SOFTWARE,
        1,
    ),
    perf_metric(
        "page-faults",
        "Page faults of the thread (software)",
        "#",
        TYPE_SOFTWARE,
        2,
    ),
    perf_metric(
        "context-switches",
        "Context switches of the thread (software)",
        "#",
        TYPE_SOFTWARE,
        3,
    ),
    perf_metric(
        "cpu-migrations",
        "Moves of the thread to another CPU (software)",
        "#",
        TYPE_SOFTWARE,
        4,
    ),
    perf_metric(
        "minor-faults",
        "Minor page faults of the thread (software)",
        "#",
        TYPE_SOFTWARE,
        5,
    ),
    perf_metric(
        "major-faults",
        "Major page faults of the thread (software)",
        "#",
        TYPE_SOFTWARE,
        6,
    ),
    rusage_metric(
        "ru_utime",
        "User CPU time of the thread",
        "usec",
        MetricMode::ACCUMULATED_START,
        RusageField::UserTime,
    ),
    rusage_metric(
        "ru_stime",
        "System CPU time of the thread",
        "usec",
        MetricMode::ACCUMULATED_START,
        RusageField::SystemTime,
    ),
    rusage_metric(
        "ru_maxrss",
        "Maximum resident set size of the process",
        "KiB",
        MetricMode::ABSOLUTE_POINT,
        RusageField::MaxResidentSize,
    ),
    rusage_metric(
        "ru_minflt",
        "Page faults served without I/O (thread)",
        "#",
        MetricMode::ACCUMULATED_START,
        RusageField::MinorFaults,
    ),
    rusage_metric(
        "ru_majflt",
        "Page faults served with I/O (thread)",
        "#",
        MetricMode::ACCUMULATED_START,
        RusageField::MajorFaults,
    ),
    rusage_metric(
        "ru_nvcsw",
        "Voluntary context switches (thread)",
        "#",
        MetricMode::ACCUMULATED_START,
        RusageField::VoluntarySwitches,
    ),
    rusage_metric(
        "ru_nivcsw",
        "Involuntary context switches (thread)",
        "#",
        MetricMode::ACCUMULATED_START,
        RusageField::InvoluntarySwitches,
    ),
];

/// The OTF2 Metric event holds at most this many values below libotf2's short length form.
pub const MAX_VALUES: usize = 24;
const _: () = assert!(CATALOG.len() <= MAX_VALUES);

/// The names `list` (comma or space separated) selects, in order, each once. Unknown names are
/// reported with the valid ones and skipped; so are counters this machine or kernel refuses
/// (`probe` opens one on the calling thread and says why not).
pub fn select(
    list: &str,
    probe: impl Fn(&Metric) -> Result<(), String>,
    mut warn: impl FnMut(String),
) -> Vec<&'static Metric> {
    let mut chosen: Vec<&'static Metric> = Vec::new();
    for name in list
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|n| !n.is_empty())
    {
        let Some(metric) = CATALOG
            .iter()
            .find(|m| m.member.name.eq_ignore_ascii_case(name))
        else {
            let valid: Vec<&str> = CATALOG.iter().map(|m| m.member.name).collect();
            warn(format!(
                "POMPTRACE_METRICS: unknown metric {name:?}; valid names are {}",
                valid.join(", ")
            ));
            continue;
        };
        if chosen.iter().any(|m| std::ptr::eq(*m, metric)) {
            continue;
        }
        match probe(metric) {
            Ok(()) => chosen.push(metric),
            Err(why) => warn(format!(
                "POMPTRACE_METRICS: cannot count {:?}: {why}; tracing without it",
                metric.member.name
            )),
        }
    }
    chosen
}

/// Opens the metric's counter once on the calling thread.
pub fn probe_on_this_thread(metric: &Metric) -> Result<(), String> {
    match metric.source {
        Source::Perf(event) => super::perf::probe(event).map_err(|e| super::perf::explain(&e)),
        Source::Rusage(_) => rusage::thread_usage()
            .map(|_| ())
            .ok_or_else(|| "getrusage(RUSAGE_THREAD) failed".to_string()),
    }
}

/// The metric class id of the synchronous metrics (the first metric definition).
pub const SYNCHRONOUS_CLASS: u32 = 0;

static SELECTED: std::sync::OnceLock<Vec<&'static Metric>> = std::sync::OnceLock::new();
/// Read on every Enter/Leave: one predictable branch when no metric is configured.
static SYNCHRONOUS_ON: AtomicBool = AtomicBool::new(false);

/// Selects the synchronous metrics of this process (once, at measurement start).
pub fn configure(list: Option<&str>, warn: impl FnMut(String)) {
    let Some(list) = list else { return };
    let chosen = select(list, probe_on_this_thread, warn);
    let on = !chosen.is_empty();
    if SELECTED.set(chosen).is_ok() {
        SYNCHRONOUS_ON.store(on, Ordering::Release);
    }
}

/// Whether Enter/Leave carry metric values.
#[inline(always)]
pub fn synchronous() -> bool {
    SYNCHRONOUS_ON.load(Ordering::Relaxed)
}

/// The synchronous metrics, in value order.
pub fn selected() -> &'static [&'static Metric] {
    SELECTED.get().map_or(&[], Vec::as_slice)
}

/// One thread's open counters.
struct ThreadCounters {
    perf: Option<ThreadPerf>,
    rusage: Vec<(RusageField, usize)>,
    values: [u64; MAX_VALUES],
}

impl ThreadCounters {
    fn open(metrics: &[&'static Metric]) -> Self {
        let mut perf_events = Vec::new();
        let mut rusage = Vec::new();
        for (slot, m) in metrics.iter().enumerate() {
            match m.source {
                Source::Perf(event) => perf_events.push((event, slot)),
                Source::Rusage(field) => rusage.push((field, slot)),
            }
        }
        let perf = if perf_events.is_empty() {
            None
        } else {
            match ThreadPerf::open(&perf_events) {
                Ok(p) => Some(p),
                Err(e) => {
                    crate::base::diagnostics::warn_once("metrics-thread", || {
                        format!(
                            "cannot open the perf counters of a thread ({}); its perf metrics read 0",
                            super::perf::explain(&e)
                        )
                    });
                    None
                }
            }
        };
        Self {
            perf,
            rusage,
            values: [0; MAX_VALUES],
        }
    }

    #[inline]
    fn read(&mut self) {
        if let Some(p) = self.perf.as_mut() {
            p.read(&mut self.values);
        }
        if !self.rusage.is_empty() {
            if let Some(usage) = rusage::thread_usage() {
                for &(field, slot) in &self.rusage {
                    self.values[slot] = field.value(&usage);
                }
            }
        }
    }
}

thread_local! {
    /// Counters count the OS thread that opened them, so they belong to the OS thread, not to
    /// the location it records into; opened on the thread's first metric read.
    static COUNTERS: RefCell<Option<ThreadCounters>> = const { RefCell::new(None) };
}

/// Reads the calling thread's counters into `out` as plain numbers (one per selected metric:
/// the trace's Metric event and the profile's sums take the same reading); returns how many.
pub fn read_values(out: &mut [u64; MAX_VALUES]) -> usize {
    let metrics = selected();
    COUNTERS.with(|cell| {
        let mut cell = cell.borrow_mut();
        let counters = cell.get_or_insert_with(|| ThreadCounters::open(metrics));
        counters.read();
        out[..metrics.len()].copy_from_slice(&counters.values[..metrics.len()]);
    });
    metrics.len()
}

/// Writes `values` (from [`read_values`]) as a Metric event at `time`.
pub fn write_values<S: ChunkSink>(writer: &mut EventWriter<S>, time: u64, values: &[u64]) {
    let mut typed = [TypedValue::u64(0); MAX_VALUES];
    for (slot, v) in typed.iter_mut().zip(values) {
        *slot = TypedValue::u64(*v);
    }
    writer.metric(time, SYNCHRONOUS_CLASS, &typed[..values.len()]);
}

/// A metric class to define: its id, occurrence, members and (for asynchronous ones) the
/// location that records it.
pub struct ClassDefinition<'a> {
    pub id: u32,
    pub occurrence: MetricOccurrence,
    pub members: &'a [Member],
    pub recorder: Option<u64>,
}

/// Writes MetricMember definitions (ids from `first_member`), the MetricClass and, for an
/// asynchronous class, its MetricClassRecorder. `string` interns a string (all strings must
/// already be defined, so the caller registers them first with the same function).
pub fn write_class(
    defs: &mut GlobalDefWriter,
    class: &ClassDefinition,
    first_member: u32,
    mut string: impl FnMut(&str) -> u32,
) -> u32 {
    let mut ids = Vec::new();
    for (i, m) in class.members.iter().enumerate() {
        let id = first_member + i as u32;
        defs.write(&GlobalDef::MetricMember {
            id,
            name: string(m.name),
            description: string(m.description),
            metric_type: m.metric_type,
            metric_mode: m.mode,
            value_type: Type::UINT64,
            base: Base::DECIMAL,
            exponent: 0,
            unit: string(m.unit),
        });
        ids.push(id);
    }
    defs.write(&GlobalDef::MetricClass {
        id: class.id,
        members: ids,
        occurrence: class.occurrence,
        recorder_kind: if class.recorder.is_some() {
            RecorderKind::ABSTRACT
        } else {
            RecorderKind::CPU
        },
    });
    if let Some(recorder) = class.recorder {
        defs.write(&GlobalDef::MetricClassRecorder {
            metric: class.id,
            recorder,
        });
    }
    first_member + class.members.len() as u32
}

/// Strings every metric definition of `members` needs.
pub fn member_strings(members: &[Member]) -> impl Iterator<Item = &'static str> + '_ {
    members.iter().flat_map(|m| [m.name, m.description, m.unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(chosen: &[&Metric]) -> Vec<&'static str> {
        chosen.iter().map(|m| m.member.name).collect()
    }

    #[test]
    fn names_are_selected_in_order_once() {
        let mut warnings = Vec::new();
        let chosen = select(
            "page-faults, task-clock,ru_utime page-faults",
            |_| Ok(()),
            |w| warnings.push(w),
        );
        assert_eq!(names(&chosen), ["page-faults", "task-clock", "ru_utime"]);
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn an_unknown_name_lists_the_valid_ones() {
        let mut warnings = Vec::new();
        let chosen = select("task-clock,bogus", |_| Ok(()), |w| warnings.push(w));
        assert_eq!(names(&chosen), ["task-clock"]);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("\"bogus\""), "{}", warnings[0]);
        for m in CATALOG {
            assert!(warnings[0].contains(m.member.name), "{}", warnings[0]);
        }
    }

    #[test]
    fn a_refused_counter_is_named_with_its_reason_and_left_out() {
        let mut warnings = Vec::new();
        let chosen = select(
            "cycles,task-clock",
            |m| match m.source {
                Source::Perf(e) if e.kind == TYPE_HARDWARE => Err("no PMU".into()),
                _ => Ok(()),
            },
            |w| warnings.push(w),
        );
        assert_eq!(names(&chosen), ["task-clock"]);
        assert_eq!(
            warnings,
            ["POMPTRACE_METRICS: cannot count \"cycles\": no PMU; tracing without it"]
        );
    }

    #[test]
    fn software_counters_and_rusage_probe_fine_here() {
        for name in [
            "task-clock",
            "page-faults",
            "context-switches",
            "cpu-migrations",
            "ru_utime",
        ] {
            let m = CATALOG.iter().find(|m| m.member.name == name).unwrap();
            assert_eq!(probe_on_this_thread(m), Ok(()), "{name}");
        }
    }
}
