//! The trace-size budget (`POMPTRACE_MAX_TRACE_SIZE`) and the event-rate note.
//!
//! Nothing of it is on the hot path until it is needed. A location looks at the budget when it
//! has filled a chunk, which is a slow path already: the full chunk is reserved in the process's
//! budget. Once half the budget is reserved (or what is left comes within twice the point where
//! regions start to stop), the location starts *counting*: from then on its Enters and Leaves
//! take the counting arm of the fast path, which keeps one [`Tally`] per region (visits, and the
//! sum of Leave times less Enter times, so the inclusive time). When what is left of the budget
//! comes near its end, the location stops recording the region that cost the most bytes for the
//! least time since its last full chunk, structure (barriers, tasks, the lock API, MPI) only when
//! nothing else is left, the parallel region never. The Enter and Leave of such a region are not
//! written any more (its tally still counts them); a visit that was open when it stopped is still
//! left in the trace, so Enter and Leave stay balanced. When the budget is used up, the location
//! stops recording altogether (it closes what is open first). A trace that grows faster than
//! 100 MB/s makes the locations count for one chunk, to name what causes it.
//!
//! Each stop is a ParameterString event (`pomptrace: not recorded from here`, the region's
//! name) in the location's events and a fact in the journal (the region's description in the
//! definitions says where it stopped); the end of the run names the regions and how many of
//! their visits were left out, and writes a filter file that would have kept the run under the
//! budget (`Report`). What each region cost before its location started counting is estimated
//! from what it cost after: the counted events stand for all the location's events.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::base::diagnostics::warn;
use crate::filter_suggest::{self, Candidate};
use crate::output::facts::Fact;
use crate::output::journal;
use crate::output::registry::REGISTRY;
use otf2::{region_event_bytes, RegionRole};

/// One region on one location, written by the location's owner only.
#[repr(C, align(32))]
#[derive(Clone, Copy, Default, Debug)]
pub(crate) struct Tally {
    /// Enters, recorded or not.
    pub(crate) visits: u64,
    /// Visits entered since the region stopped being recorded and not yet left.
    pub(crate) unrecorded_open: u32,
    /// Nonzero: the region's Enter and Leave are not written on this location any more.
    pub(crate) throttled: u32,
    /// Σ Leave times − Σ Enter times, wrapping: the inclusive time of the visits that ended,
    /// less the start times of those still open. (Not next to `visits`: two counters side by
    /// side are updated with vector instructions, twice as many as two plain adds.)
    pub(crate) time: u64,
}

impl Tally {
    /// An Enter at `time` that is written (the caller checked `throttled`).
    #[inline(always)]
    pub(crate) fn count_enter(&mut self, time: u64) {
        self.visits += 1;
        self.time = self.time.wrapping_sub(time);
    }

    /// A Leave at `time` that is written (the caller checked `unrecorded_open`).
    #[inline(always)]
    pub(crate) fn count_leave(&mut self, time: u64) {
        self.time = self.time.wrapping_add(time);
    }

    /// An Enter at `time`; true if it is to be written.
    #[inline(always)]
    pub(crate) fn enter(&mut self, time: u64) -> bool {
        self.count_enter(time);
        if self.throttled == 0 {
            true
        } else {
            self.unrecorded_open += 1;
            false
        }
    }

    /// A Leave at `time`; true if it is to be written (its Enter was).
    #[inline(always)]
    pub(crate) fn leave(&mut self, time: u64) -> bool {
        self.time = self.time.wrapping_add(time);
        if self.unrecorded_open == 0 {
            true
        } else {
            self.unrecorded_open -= 1;
            false
        }
    }
}

/// Region ids the tallies are sized for from the start (8 KiB per location).
const PRESIZED_REGIONS: usize = 256;
/// Region ids past this are not tallied (a construct per region id would be defined first).
const MAX_TALLIED_REGIONS: usize = 1 << 24;

/// A location's tallies, by region id: kept only while the location counts (see the module's
/// comment); until then every event is written and nothing is counted.
pub(crate) struct Tallies {
    by_region: Vec<Tally>,
    /// Stands in for a region past `MAX_TALLIED_REGIONS`.
    spare: Tally,
    /// Regions first seen from now on start as not recorded (the location has stopped).
    stopped: bool,
    /// The tallies are kept. Only ever true while something is throttled or stopped.
    counting: bool,
}

impl Tallies {
    pub(crate) fn new() -> Self {
        Self {
            by_region: Vec::new(),
            spare: Tally::default(),
            stopped: false,
            counting: false,
        }
    }

    /// Whether the tallies are kept (and a region may be throttled).
    #[inline(always)]
    pub(crate) fn counting(&self) -> bool {
        self.counting
    }

    /// Starts counting at `time`, from zero, with the regions `open` (recorded, outermost
    /// first) open since `time`: their Leaves then count the time from here.
    pub(crate) fn start(&mut self, open: &[u32], time: u64) {
        if self.by_region.is_empty() {
            self.by_region = vec![Tally::default(); PRESIZED_REGIONS];
        }
        self.by_region.fill(Tally::default());
        self.spare = Tally::default();
        self.counting = true;
        for &region in open {
            let tally = self.slot(region);
            tally.time = tally.time.wrapping_sub(time);
        }
    }

    /// Stops counting (nothing may be throttled: every event is written again).
    pub(crate) fn stop(&mut self) {
        debug_assert!(!self.stopped && self.by_region.iter().all(|t| t.throttled == 0));
        self.counting = false;
    }

    /// An Enter of `region` at `time` outside the fast path; true if it is to be written.
    #[inline(always)]
    pub(crate) fn enter(&mut self, region: u32, time: u64) -> bool {
        !self.counting || self.slot(region).enter(time)
    }

    /// A Leave of `region` at `time` outside the fast path; true if it is to be written.
    #[inline(always)]
    pub(crate) fn leave(&mut self, region: u32, time: u64) -> bool {
        !self.counting || self.slot(region).leave(time)
    }

    /// An Enter of a region that is never throttled (a team's parallel region), written.
    #[inline(always)]
    pub(crate) fn count_enter(&mut self, region: u32, time: u64) {
        if self.counting {
            self.slot(region).count_enter(time);
        }
    }

    /// The Leave of a region that is never throttled, written.
    #[inline(always)]
    pub(crate) fn count_leave(&mut self, region: u32, time: u64) {
        if self.counting {
            self.slot(region).count_leave(time);
        }
    }

    /// What a fast path counts into: `Some(None)` when not counting, `Some(tally)` of
    /// `region`, or None when counting and `region` has no tally yet (its general path makes
    /// one).
    #[inline(always)]
    pub(crate) fn for_fast_path(&mut self, region: u32) -> Option<Option<&mut Tally>> {
        if self.counting {
            self.get(region).map(Some)
        } else {
            Some(None)
        }
    }

    /// The tally of `region` if it has one yet (the fast paths: no call, no allocation).
    #[inline(always)]
    pub(crate) fn get(&mut self, region: u32) -> Option<&mut Tally> {
        self.by_region.get_mut(region as usize)
    }

    /// The tally of `region`, made if it is the first of its id on this location.
    #[inline(always)]
    pub(crate) fn slot(&mut self, region: u32) -> &mut Tally {
        if (region as usize) < self.by_region.len() {
            &mut self.by_region[region as usize]
        } else {
            self.grow(region)
        }
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, region: u32) -> &mut Tally {
        let needed = region as usize + 1;
        if needed > MAX_TALLIED_REGIONS {
            return &mut self.spare;
        }
        let fresh = Tally {
            throttled: u32::from(self.stopped),
            ..Tally::default()
        };
        self.by_region.resize(needed.next_power_of_two(), fresh);
        &mut self.by_region[region as usize]
    }

    /// Frees the tallies past the last region this location entered, and at least `keep`
    /// of them (a location that records no more: a retired thread's keeps its counts for the
    /// end, not the room to grow).
    pub(crate) fn compact(&mut self, keep: usize) {
        let used = self
            .by_region
            .iter()
            .rposition(|t| t.visits != 0 || t.unrecorded_open != 0)
            .map_or(0, |i| i + 1);
        self.by_region.truncate(used.max(keep));
        self.by_region.shrink_to_fit();
    }

    /// `region` is not written on this location from now on.
    pub(crate) fn throttle(&mut self, region: u32) {
        self.slot(region).throttled = 1;
    }

    /// No region is written on this location from now on.
    pub(crate) fn throttle_all(&mut self) {
        self.stopped = true;
        for tally in &mut self.by_region {
            tally.throttled = 1;
        }
    }

    fn iter(&self) -> impl Iterator<Item = (u32, &Tally)> {
        self.by_region
            .iter()
            .enumerate()
            .map(|(region, tally)| (region as u32, tally))
    }

    /// Inclusive time of `region`'s visits, those still open counted up to `now`; `open`: the
    /// recorded visits open on the location.
    fn inclusive(&self, region: u32, tally: &Tally, open: &[u32], now: u64) -> u64 {
        let open =
            open.iter().filter(|&&r| r == region).count() as u64 + u64::from(tally.unrecorded_open);
        let time = tally.time.wrapping_add(open.wrapping_mul(now));
        // A visit whose Leave never came (misnested) would make it negative.
        (time as i64).max(0) as u64
    }
}

/// Bytes a visit of `region` takes in a trace: an Enter and a Leave, each with its timestamp.
pub(crate) fn visit_bytes(region: u32) -> u64 {
    2 * region_event_bytes(region) as u64
}

// ---- the process's budget ----------------------------------------------------------------

/// The budget of the process, shared by its locations (touched when a chunk is full).
struct Pool {
    /// Bytes the trace may take (0: no limit).
    limit: AtomicU64,
    /// Bytes one chunk takes in an event file.
    chunk: AtomicU64,
    /// Chunks reserved so far (every full one and each location's current one), in bytes.
    reserved: AtomicU64,
    /// Full chunks so far, in bytes.
    written: AtomicU64,
    locations: AtomicU64,
}

static POOL: Pool = Pool {
    limit: AtomicU64::new(0),
    chunk: AtomicU64::new(0),
    reserved: AtomicU64::new(0),
    written: AtomicU64::new(0),
    locations: AtomicU64::new(0),
};

/// Sets the budget of this process's trace (0: none) and the bytes of an event file's chunk.
/// Called once, when the measurement starts, before any location exists.
pub(crate) fn configure(limit: u64, file_chunk_size: u64) {
    POOL.limit.store(limit, Ordering::Relaxed);
    POOL.chunk.store(file_chunk_size, Ordering::Relaxed);
}

/// The budget (0: none).
pub(crate) fn limit() -> u64 {
    POOL.limit.load(Ordering::Relaxed)
}

/// What is left of the budget when the locations start giving up their most costly regions:
/// an eighth of it, but at least four chunks per location.
fn near(limit: u64, chunk: u64, locations: u64) -> u64 {
    (limit / 8).max(4 * chunk * locations)
}

/// A trace that grows faster than this for longer than `RATE_WINDOW_NS` is noted (once).
const RATE_NOTE_BYTES_PER_SECOND: f64 = 100e6;
const RATE_WINDOW_NS: u64 = 1_000_000_000;

/// Watches how fast the trace grows: `observe` is given the bytes written so far and the time.
#[derive(Default)]
pub(crate) struct RateWatch {
    since: Option<(u64, u64)>,
}

impl RateWatch {
    /// The growth in bytes per second over the last window, when a window of at least
    /// `RATE_WINDOW_NS` has ended with more than `RATE_NOTE_BYTES_PER_SECOND`.
    pub(crate) fn observe(&mut self, now_ns: u64, written: u64) -> Option<f64> {
        let Some((start_ns, start_bytes)) = self.since else {
            self.since = Some((now_ns, written));
            return None;
        };
        let elapsed = now_ns.saturating_sub(start_ns);
        if elapsed < RATE_WINDOW_NS {
            return None;
        }
        self.since = Some((now_ns, written));
        let rate = written.saturating_sub(start_bytes) as f64 / (elapsed as f64 / 1e9);
        (rate > RATE_NOTE_BYTES_PER_SECOND).then_some(rate)
    }
}

static RATE: parking_lot::Mutex<RateWatch> = parking_lot::Mutex::new(RateWatch { since: None });
/// The trace grew faster than the note's threshold for a window: its growth, in bytes per
/// second; the locations count their next chunk to say what causes it.
static RATE_SEEN: AtomicBool = AtomicBool::new(false);
static RATE_BYTES_PER_SECOND: AtomicU64 = AtomicU64::new(0);
static RATE_NOTED: AtomicBool = AtomicBool::new(false);

/// What a location does after a chunk filled up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    Nothing,
    /// Stop recording `region` here; `name`: the string id of its name (for the marker).
    Throttle {
        region: u32,
        name: u32,
    },
    /// Stop recording anything here; `marker`: the string id the marker shows.
    Stop {
        marker: u32,
    },
}

/// The ParameterString marker's text when a location stops recording altogether.
const EVERYTHING: &str = "(every region: the trace size budget is used up)";

/// A location's part of the budget, touched only when it has filled a chunk.
pub(crate) struct LocationBudget {
    /// `chunks_filled` of the location's writer when it was last looked at.
    pub(crate) chunks_seen: u64,
    /// The budget is in sight: the location counts until the end (see the module's comment).
    in_sight: bool,
    /// When the tallies started, in the location's chunks filled and events written.
    counted_from: (u64, u64),
    /// Visits of each region when the location filled its last chunk.
    visits_then: Vec<u64>,
    /// Regions that stopped being recorded here: (region, its visits at that moment).
    throttled: Vec<(u32, u64)>,
    /// Recording stopped altogether: the visits of each region at that moment.
    stopped_at: Option<Vec<u64>>,
    /// Recording stopped altogether: the location's writer, kept until the end.
    pub(crate) stopped: Option<otf2::EventWriter<otf2::BackgroundSink>>,
}

/// Where a location's writer stands when it has filled a chunk.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Filled {
    /// Chunks filled so far.
    pub(crate) chunks: u64,
    /// Events written so far.
    pub(crate) events: u64,
    /// Now, in the clock's ticks.
    pub(crate) time: u64,
}

impl LocationBudget {
    /// A location's part; `writes`: it has a writer (it takes its first chunk from the budget).
    pub(crate) fn new(writes: bool) -> Self {
        if writes {
            POOL.locations.fetch_add(1, Ordering::Relaxed);
            POOL.reserved
                .fetch_add(POOL.chunk.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        Self {
            chunks_seen: 0,
            in_sight: false,
            counted_from: (0, 0),
            visits_then: Vec::new(),
            throttled: Vec::new(),
            stopped_at: None,
            stopped: None,
        }
    }

    /// Tallies this location's budget account reads at the end (see `Tallies::compact`).
    pub(crate) fn tallies_read(&self) -> usize {
        let throttled = self.throttled.iter().map(|t| t.0 as usize + 1).max();
        let stopped = self.stopped_at.as_ref().map(Vec::len);
        throttled.max(stopped).unwrap_or(0)
    }

    /// After the location `location` (named `name`) filled chunks up to `filled.chunks`: the
    /// new chunks are taken from the budget, the tallies start or stop, and what to stop
    /// recording is decided. `open`: the recorded regions open on it.
    pub(crate) fn on_chunk_filled(
        &mut self,
        filled: Filled,
        tallies: &mut Tallies,
        open: &[u32],
        (location, name): (u32, &str),
    ) -> Decision {
        let new_chunks = filled.chunks.saturating_sub(self.chunks_seen);
        self.chunks_seen = filled.chunks;
        let chunk = POOL.chunk.load(Ordering::Relaxed);
        let grown = new_chunks * chunk;
        let written = POOL.written.fetch_add(grown, Ordering::Relaxed) + grown;
        // A window: the tallies have counted since an earlier full chunk.
        let window = tallies.counting() && self.counted_from.0 < filled.chunks;
        let rate_wants_counts = self.watch_rate(written, window, tallies, name);
        let decision = self.decide(grown, chunk, tallies, open, filled, location);
        let counts_wanted = self.in_sight || rate_wants_counts;
        if counts_wanted && !tallies.counting() {
            self.start_counting(tallies, open, filled);
        } else if !counts_wanted && tallies.counting() {
            tallies.stop();
        }
        self.visits_then.resize(tallies.by_region.len(), 0);
        for (then, tally) in self.visits_then.iter_mut().zip(&tallies.by_region) {
            *then = tally.visits;
        }
        decision
    }

    fn start_counting(&mut self, tallies: &mut Tallies, open: &[u32], filled: Filled) {
        tallies.start(open, filled.time);
        self.counted_from = (filled.chunks, filled.events);
        self.visits_then.clear();
    }

    fn decide(
        &mut self,
        grown: u64,
        chunk: u64,
        tallies: &mut Tallies,
        open: &[u32],
        filled: Filled,
        location: u32,
    ) -> Decision {
        let limit = POOL.limit.load(Ordering::Relaxed);
        if limit == 0 || self.stopped_at.is_some() {
            return Decision::Nothing;
        }
        let reserved = POOL.reserved.fetch_add(grown, Ordering::Relaxed) + grown;
        if reserved > limit {
            if !tallies.counting() {
                // What is not recorded from here on is counted.
                self.start_counting(tallies, open, filled);
            }
            self.in_sight = true;
            self.stopped_at = Some(tallies.by_region.iter().map(|t| t.visits).collect());
            journal::record(&Fact::Throttled {
                location,
                region: crate::output::registry::NO_REGION,
            });
            return Decision::Stop {
                marker: REGISTRY.lock().string(EVERYTHING),
            };
        }
        let locations = POOL.locations.load(Ordering::Relaxed);
        let near = near(limit, chunk, locations);
        let left = limit - reserved;
        self.in_sight |= reserved >= limit / 2 || left < 2 * near;
        if left >= near || !tallies.counting() || self.counted_from.0 >= filled.chunks {
            // Not near yet, or no full chunk counted to tell what costs most.
            return Decision::Nothing;
        }
        let registry = REGISTRY.lock();
        let regions = registry.regions();
        // (structure, bytes per time, region) of the region to stop: no structure while
        // anything else is left, then the most bytes per time.
        let mut best: Option<(bool, f64, u32)> = None;
        for (region, tally) in tallies.iter() {
            let then = self.visits_then.get(region as usize).copied().unwrap_or(0);
            if tally.throttled != 0 || tally.visits <= then {
                continue;
            }
            let Some(def) = regions.get(region as usize) else {
                continue;
            };
            if def.role == RegionRole::PARALLEL {
                continue;
            }
            let structure = filter_suggest::is_structure(def.role, def.paradigm);
            let bytes = tally.visits * visit_bytes(region);
            let density =
                bytes as f64 / (tallies.inclusive(region, tally, open, filled.time) as f64 + 1.0);
            let better = match best {
                None => true,
                Some((s, d, _)) => (structure, -density) < (s, -d),
            };
            if better {
                best = Some((structure, density, region));
            }
        }
        let Some((_, _, region)) = best else {
            return Decision::Nothing;
        };
        let name = regions[region as usize].name;
        drop(registry);
        self.throttled
            .push((region, tallies.by_region[region as usize].visits));
        journal::record(&Fact::Throttled { location, region });
        Decision::Throttle { region, name }
    }

    /// The event-rate note: once, when the trace grew faster than 100 MB/s for a second,
    /// naming what this location recorded most in its last full chunk. `window`: the tallies
    /// counted that chunk. True while the note wants this location's counts.
    #[cold]
    fn watch_rate(
        &self,
        written: u64,
        window: bool,
        tallies: &Tallies,
        location_name: &str,
    ) -> bool {
        if RATE_NOTED.load(Ordering::Relaxed) {
            return false;
        }
        if !RATE_SEEN.load(Ordering::Relaxed) {
            let Some(mut watch) = RATE.try_lock() else {
                return false;
            };
            let Some(rate) = watch.observe(crate::base::clock::monotonic_ns(), written) else {
                return false;
            };
            RATE_BYTES_PER_SECOND.store(rate as u64, Ordering::Relaxed);
            RATE_SEEN.store(true, Ordering::Relaxed);
        }
        if !window {
            // Counted from the next chunk on, to say what fills it.
            return true;
        }
        if RATE_NOTED.swap(true, Ordering::Relaxed) {
            return false;
        }
        let rate = RATE_BYTES_PER_SECOND.load(Ordering::Relaxed) as f64;
        let registry = REGISTRY.lock();
        let mut busiest: Vec<(u64, u32, u64)> = tallies
            .iter()
            .filter(|(region, tally)| {
                tally.throttled == 0
                    && tally.visits > self.visits_then.get(*region as usize).copied().unwrap_or(0)
            })
            .filter_map(|(region, tally)| {
                let def = registry.regions().get(region as usize)?;
                (!filter_suggest::is_structure(def.role, def.paradigm))
                    .then(|| (tally.visits * visit_bytes(region), region, tally.visits))
            })
            .collect();
        busiest.sort_unstable_by(|a, b| b.cmp(a));
        busiest.truncate(3);
        let mut named = Vec::new();
        let mut patterns = Vec::new();
        for &(_, region, visits) in &busiest {
            let def = &registry.regions()[region as usize];
            let text = registry.region_name(region).unwrap_or("?");
            named.push(format!("\"{text}\" ({visits} visits on {location_name})"));
            patterns.extend(filter_suggest::exclude_pattern(
                text,
                def.role,
                def.paradigm,
            ));
        }
        drop(registry);
        let what = if named.is_empty() {
            "structure events (parallel regions, barriers, tasks, locks)".to_string()
        } else {
            named.join(", ")
        };
        let how = if patterns.is_empty() {
            "`pomptrace score DIR --suggest -o FILE` after the run suggests a filter".to_string()
        } else {
            format!(
                "a filter file (POMPTRACE_FILTERING_FILE) of the lines SCOREP_REGION_NAMES_BEGIN / \
                 EXCLUDE {} / SCOREP_REGION_NAMES_END leaves {} out",
                patterns.join(" "),
                if patterns.len() == 1 { "it" } else { "them" }
            )
        };
        warn(&format!(
            "the trace grows by {:.0} MB/s, most of it from {what}; {how} \
             (POMPTRACE_MAX_TRACE_SIZE bounds the trace: {})",
            rate / 1e6,
            match limit() {
                0 => "now off".to_string(),
                n => format!("now {n} bytes"),
            }
        ));
        false
    }
}

// ---- the end of the run ------------------------------------------------------------------

/// A region that stopped being recorded on some locations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Throttled {
    pub(crate) region: u32,
    /// Visits whose Enter and Leave were not written.
    pub(crate) unrecorded: u64,
    /// Locations where it stopped.
    pub(crate) locations: u32,
}

/// What the budget did in a run, collected at its end from every location.
#[derive(Default)]
pub(crate) struct Report {
    pub(crate) throttled: Vec<Throttled>,
    /// (location number, visits not recorded there), for locations that left any out.
    pub(crate) per_location: Vec<(u32, u64)>,
    /// Locations that stopped recording altogether.
    pub(crate) stopped: u32,
    /// Every region over the locations that counted, by region id, each location's counts
    /// scaled up to all its events.
    totals: Vec<RegionTotal>,
}

/// A region over all locations.
#[derive(Clone, Copy, Default)]
struct RegionTotal {
    /// Visits, estimated where a location counted part of its run.
    visits: f64,
    /// Inclusive time, in ticks, estimated alike.
    time: f64,
    /// Visits whose events were not written (the region stopped, or everything did).
    unrecorded: u64,
    /// Whether any location counted only part of its run.
    estimated: bool,
}

/// A location at the end, for the report: its number, tallies, budget, and the events its
/// writer wrote.
pub(crate) struct LocationAccount<'a> {
    pub(crate) number: u32,
    pub(crate) tallies: &'a Tallies,
    pub(crate) budget: &'a LocationBudget,
    pub(crate) events: u64,
}

impl Report {
    /// Collects from the locations, after recording ended at `end_time` and their open regions
    /// were closed. Only locations whose budget was in sight counted to the end.
    pub(crate) fn collect<'a>(
        locations: impl IntoIterator<Item = LocationAccount<'a>>,
        end_time: u64,
    ) -> Self {
        let mut report = Report::default();
        for LocationAccount {
            number,
            tallies,
            budget,
            events,
        } in locations
        {
            if !budget.in_sight || !tallies.counting() {
                continue;
            }
            if budget.stopped_at.is_some() {
                report.stopped += 1;
            }
            // Visits of each region that were recorded: those before it stopped being recorded
            // here (or before everything stopped).
            let recorded = |region: u32| {
                let index = region as usize;
                let throttled = budget.throttled.iter().find(|t| t.0 == region).map(|t| t.1);
                let stopped = budget
                    .stopped_at
                    .as_ref()
                    .map(|v| v.get(index).copied().unwrap_or(0));
                match (throttled, stopped) {
                    (Some(a), Some(b)) => a.min(b),
                    (a, b) => a.or(b).unwrap_or(tallies.by_region[index].visits),
                }
            };
            let unrecorded_here: u64 = tallies
                .iter()
                .map(|(region, tally)| tally.visits - recorded(region))
                .sum();
            // The counted events stand for all of the location's: Enters and Leaves of the
            // written events and the left-out visits.
            let counted = events.saturating_sub(budget.counted_from.1) + 2 * unrecorded_here;
            let scale = (events + 2 * unrecorded_here) as f64 / counted.max(1) as f64;
            for (region, tally) in tallies.iter() {
                if tally.visits == 0 {
                    continue;
                }
                let index = region as usize;
                if report.totals.len() <= index {
                    report.totals.resize(index + 1, RegionTotal::default());
                }
                let total = &mut report.totals[index];
                let unrecorded = tally.visits - recorded(region);
                total.visits += tally.visits as f64 * scale;
                total.time += tallies.inclusive(region, tally, &[], end_time) as f64 * scale;
                total.unrecorded += unrecorded;
                total.estimated |= budget.counted_from.1 > 0;
            }
            for &(region, _) in &budget.throttled {
                let unrecorded = tallies.by_region[region as usize].visits - recorded(region);
                match report.throttled.iter_mut().find(|t| t.region == region) {
                    Some(t) => {
                        t.unrecorded += unrecorded;
                        t.locations += 1;
                    }
                    None => report.throttled.push(Throttled {
                        region,
                        unrecorded,
                        locations: 1,
                    }),
                }
            }
            if unrecorded_here > 0 {
                report.per_location.push((number, unrecorded_here));
            }
        }
        report
            .throttled
            .sort_by_key(|t| std::cmp::Reverse(t.unrecorded));
        report
    }

    /// Whether the budget changed anything in the trace.
    pub(crate) fn acted(&self) -> bool {
        !self.throttled.is_empty() || self.stopped > 0
    }

    /// The description of each throttled region in the definitions.
    pub(crate) fn region_notes(&self) -> Vec<(u32, String)> {
        self.throttled
            .iter()
            .map(|t| {
                (
                    t.region,
                    format!(
                        "pomptrace: not recorded on {} location{} after the trace came near its \
                         size budget; {} visits left out",
                        t.locations,
                        if t.locations == 1 { "" } else { "s" },
                        t.unrecorded,
                    ),
                )
            })
            .collect()
    }

    /// A filter file that would have kept a run whose trace took `trace_bytes` under the
    /// budget, with the throttled regions first; None when no filter could (only structure).
    pub(crate) fn filter_file(&self, trace_bytes: u64) -> Option<String> {
        let limit = limit();
        let registry = REGISTRY.lock();
        let mut candidates = Vec::new();
        let mut labels = Vec::new();
        let mut missing = 0;
        for (region, total) in self.totals.iter().enumerate() {
            let region = region as u32;
            let Some(def) = registry.regions().get(region as usize) else {
                continue;
            };
            let throttled = self.throttled.iter().any(|t| t.region == region);
            missing += total.unrecorded * visit_bytes(region);
            let (visits, time) = (total.visits.round() as u64, total.time.round() as u64);
            let name = registry.region_name(region).unwrap_or("");
            let Some(pattern) = filter_suggest::exclude_pattern(name, def.role, def.paradigm)
            else {
                continue;
            };
            candidates.push(Candidate {
                pattern,
                bytes: visits * visit_bytes(region),
                time,
                first: throttled,
            });
            let about = if total.estimated { "about " } else { "" };
            labels.push(format!("{name}: {about}{visits} visits"));
        }
        drop(registry);
        // The patterns of a construct's inner and outer regions are the same.
        let mut merged: Vec<(Candidate, String)> = Vec::new();
        for (candidate, label) in candidates.into_iter().zip(labels) {
            match merged
                .iter_mut()
                .find(|(c, _)| c.pattern == candidate.pattern)
            {
                Some((c, l)) => {
                    c.bytes += candidate.bytes;
                    c.time = c.time.max(candidate.time);
                    c.first |= candidate.first;
                    l.push_str("; ");
                    l.push_str(&label);
                }
                None => merged.push((candidate, label)),
            }
        }
        let candidates: Vec<Candidate> = merged.iter().map(|(c, _)| c.clone()).collect();
        let unlimited = trace_bytes + missing;
        // A tenth of the budget to spare: the rest of the next run may differ a little.
        let (chosen, left) = filter_suggest::choose(&candidates, unlimited, limit / 10 * 9);
        if chosen.is_empty() {
            return None;
        }
        let mut comments = vec![
            format!(
                "pomptrace: what would have kept this run's trace under its size budget of {limit} \
                 bytes (POMPTRACE_MAX_TRACE_SIZE)"
            ),
            format!(
                "estimated trace size: {unlimited} bytes without a filter, {left} bytes with this one"
            ),
        ];
        if left > limit {
            comments.push(
                "the regions no filter can leave out (parallel regions, barriers, tasks, locks, \
                 MPI) take more than the budget by themselves"
                    .to_string(),
            );
        }
        comments.push("use it with POMPTRACE_FILTERING_FILE=<this file>".to_string());
        let patterns: Vec<(String, String)> = chosen
            .iter()
            .map(|&i| (merged[i].0.pattern.clone(), merged[i].1.clone()))
            .collect();
        Some(filter_suggest::filter_file(&comments, &patterns))
    }

    /// The line the end of the run says when the budget acted; `filter`: where the filter
    /// file went, if one was written.
    pub(crate) fn line(&self, filter: Option<&std::path::Path>) -> String {
        let registry = REGISTRY.lock();
        let regions: Vec<String> = self
            .throttled
            .iter()
            .map(|t| {
                format!(
                    "\"{}\" ({} visits not recorded, on {} location{})",
                    registry.region_name(t.region).unwrap_or("?"),
                    t.unrecorded,
                    t.locations,
                    if t.locations == 1 { "" } else { "s" }
                )
            })
            .collect();
        drop(registry);
        let mut line = format!(
            "the trace came near its size budget (POMPTRACE_MAX_TRACE_SIZE={} bytes)",
            limit()
        );
        if !regions.is_empty() {
            line.push_str(&format!(" and stopped recording {}", regions.join(", ")));
        }
        if self.stopped > 0 {
            line.push_str(&format!(
                "; {} location{} stopped recording altogether when it was used up",
                self.stopped,
                if self.stopped == 1 { "" } else { "s" }
            ));
        }
        match filter {
            Some(path) => line.push_str(&format!(
                "; {} would have kept the run under it (POMPTRACE_FILTERING_FILE)",
                path.display()
            )),
            None => line.push_str("; no filter can leave out its structure events"),
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tallies_count_every_visit_and_skip_the_events_of_a_throttled_region() {
        let mut tallies = Tallies::new();
        assert!(tallies.slot(3).enter(10));
        assert!(tallies.slot(3).leave(15));
        // Open when it stops: its Leave is still written, the next visits' events are not.
        assert!(tallies.slot(3).enter(20));
        tallies.throttle(3);
        assert!(!tallies.slot(3).enter(21));
        assert!(!tallies.slot(3).leave(22));
        assert!(tallies.slot(3).leave(30));
        let t = *tallies.slot(3);
        assert_eq!((t.visits, t.time, t.unrecorded_open), (3, 5 + 1 + 10, 0));
        // Recursion: the inner visits are the unrecorded ones.
        assert!(!tallies.slot(3).enter(40));
        assert!(!tallies.slot(3).enter(41));
        assert_eq!(tallies.slot(3).unrecorded_open, 2);
        assert_eq!(
            tallies.inclusive(3, &tallies.by_region[3], &[], 50),
            16 + 10 + 9
        );
        // Regions past the presized ones grow the array; after a stop they start stopped.
        assert!(tallies.get(1000).is_none());
        assert!(tallies.slot(1000).enter(1));
        tallies.throttle_all();
        assert!(!tallies.slot(5000).enter(2));
        assert!(!tallies.slot(0).enter(2));
    }

    #[test]
    fn nothing_is_counted_until_counting_starts_and_open_visits_count_from_there() {
        let mut tallies = Tallies::new();
        // Not counting: every event is written, nothing kept.
        assert!(tallies.enter(3, 10));
        assert!(tallies.leave(3, 20));
        assert!(tallies.by_region.is_empty());
        // Region 3 open since 30; counting from 40: its time runs from 40.
        assert!(tallies.enter(3, 30));
        tallies.start(&[3], 40);
        assert!(tallies.counting());
        assert!(tallies.leave(3, 45));
        assert!(tallies.enter(5, 50));
        assert!(tallies.leave(5, 52));
        let (t3, t5) = (tallies.by_region[3], tallies.by_region[5]);
        assert_eq!((t3.visits, t3.time), (0, 5));
        assert_eq!((t5.visits, t5.time), (1, 2));
        // Stopped again (nothing throttled), and started afresh later.
        tallies.stop();
        assert!(tallies.enter(5, 60) && tallies.leave(5, 70));
        tallies.start(&[], 80);
        assert_eq!(tallies.by_region[5].visits, 0);
    }

    #[test]
    fn the_rate_is_noted_after_a_second_above_100_mb_per_second() {
        let mut watch = RateWatch::default();
        let s = 1_000_000_000;
        assert_eq!(watch.observe(0, 0), None);
        // Fast, but not a second yet.
        assert_eq!(watch.observe(s / 2, 200_000_000), None);
        // 150 MB in 1.5 s: 100 MB/s is not more than 100 MB/s.
        assert_eq!(watch.observe(3 * s / 2, 150_000_000), None);
        // The next window: 300 MB in 1.2 s.
        let rate = watch.observe(27 * s / 10, 450_000_000).unwrap();
        assert!((rate - 250e6).abs() < 1.0, "{rate}");
    }

    #[test]
    fn the_budget_comes_near_at_an_eighth_or_four_chunks_per_location() {
        assert_eq!(near(2 << 30, 1 << 20, 2), 256 << 20);
        assert_eq!(near(50 << 20, 1 << 20, 2), 8 << 20);
        assert_eq!(near(50 << 20, 1 << 20, 16), 64 << 20);
    }
}
