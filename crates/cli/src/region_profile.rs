//! The profile of a trace: per region and thread visits, inclusive and exclusive time; per
//! region the same aggregated over threads (min/mean/max, imbalance); and the time threads
//! waited in barriers and for locks, against the time they spent in parallel regions.
//! Built from the visits of `region_visits`, so it needs no more memory than those tables.

use std::collections::HashMap;

use crate::region_visits::{Mark, NestingDamage, Visit, VisitSink};
use crate::trace_definitions::{waiting_kind, ConstructKind, TraceDefinitions, WaitKind};

#[derive(Default, Clone, Copy, Debug)]
pub struct ThreadStats {
    pub visits: u64,
    pub inclusive: u128,
    pub exclusive: u128,
}

/// Everything in ticks.
#[derive(Default)]
pub struct Profile {
    /// (region, location index in `TraceDefinitions::locations`) → stats
    pub per_thread: HashMap<(u32, usize), ThreadStats>,
    pub events: u64,
    pub first_time: Option<u64>,
    pub last_time: Option<u64>,
    /// Summed over locations: time inside at least one parallel region.
    pub parallel: u128,
    pub barrier_wait: u128,
    pub lock_wait: u128,
    pub damage: NestingDamage,
}

/// One region aggregated over the threads that visited it; times in ticks.
pub struct RegionRow {
    pub region: u32,
    pub name: String,
    pub kind: ConstructKind,
    pub file: String,
    pub line: u32,
    pub threads: usize,
    pub visits: u64,
    pub inclusive: Spread,
    pub exclusive: Spread,
    /// (max − mean) / max of the inclusive time over threads, in percent.
    pub imbalance_percent: f64,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Spread {
    pub total: u128,
    pub min: u128,
    pub mean: f64,
    pub max: u128,
}

impl Spread {
    fn of(values: &[u128]) -> Self {
        let total: u128 = values.iter().sum();
        Self {
            total,
            min: values.iter().copied().min().unwrap_or(0),
            mean: if values.is_empty() {
                0.0
            } else {
                total as f64 / values.len() as f64
            },
            max: values.iter().copied().max().unwrap_or(0),
        }
    }
}

impl Profile {
    /// Regions by exclusive time (descending), ties by name.
    pub fn rows(&self, defs: &TraceDefinitions) -> Vec<RegionRow> {
        let mut by_region: HashMap<u32, Vec<ThreadStats>> = HashMap::new();
        for (&(region, _), stats) in &self.per_thread {
            by_region.entry(region).or_default().push(*stats);
        }
        let mut rows: Vec<RegionRow> = by_region
            .into_iter()
            .map(|(region, threads)| {
                let info = defs.region(region);
                let inclusive =
                    Spread::of(&threads.iter().map(|t| t.inclusive).collect::<Vec<_>>());
                let exclusive =
                    Spread::of(&threads.iter().map(|t| t.exclusive).collect::<Vec<_>>());
                let imbalance_percent = if inclusive.max == 0 {
                    0.0
                } else {
                    (inclusive.max as f64 - inclusive.mean) / inclusive.max as f64 * 100.0
                };
                RegionRow {
                    region,
                    name: defs.region_name(region),
                    kind: info.map_or(ConstructKind::Other, |i| i.kind),
                    file: info.map(|i| i.file.clone()).unwrap_or_default(),
                    line: info.map_or(0, |i| i.line),
                    threads: threads.len(),
                    visits: threads.iter().map(|t| t.visits).sum(),
                    inclusive,
                    exclusive,
                    imbalance_percent,
                }
            })
            .collect();
        rows.sort_by(|a, b| {
            b.exclusive
                .total
                .cmp(&a.exclusive.total)
                .then_with(|| a.name.cmp(&b.name))
                .then(a.region.cmp(&b.region))
        });
        rows
    }

    pub fn duration(&self) -> u64 {
        match (self.first_time, self.last_time) {
            (Some(first), Some(last)) => last.saturating_sub(first),
            _ => 0,
        }
    }

    /// "threads waited 31.0% of the parallel time in barriers and 2.0% for locks"
    pub fn headline(&self) -> Option<String> {
        if self.parallel == 0 {
            return None;
        }
        let percent = |ticks: u128| ticks as f64 / self.parallel as f64 * 100.0;
        Some(format!(
            "threads waited {:.1}% of the parallel time in barriers and {:.1}% for locks \
             and critical sections",
            percent(self.barrier_wait),
            percent(self.lock_wait)
        ))
    }
}

/// Adds one location's visits to a `Profile`.
pub struct ProfileSink<'a> {
    profile: &'a mut Profile,
    defs: &'a TraceDefinitions,
    location: usize,
    /// Parallel time of visits already reported, collapsed per depth (see `visit`).
    covered_by_depth: Vec<(usize, u128)>,
}

impl<'a> ProfileSink<'a> {
    pub fn new(profile: &'a mut Profile, defs: &'a TraceDefinitions, location: usize) -> Self {
        Self {
            profile,
            defs,
            location,
            covered_by_depth: Vec::new(),
        }
    }

    /// Ends the location: its parallel time goes into the profile.
    pub fn finish(self) {
        self.profile.parallel += self
            .covered_by_depth
            .iter()
            .map(|(_, ticks)| ticks)
            .sum::<u128>();
    }
}

impl VisitSink for ProfileSink<'_> {
    fn visit(&mut self, visit: Visit) {
        let duration = u128::from(visit.end.saturating_sub(visit.start));
        let stats = self
            .profile
            .per_thread
            .entry((visit.region, self.location))
            .or_default();
        stats.visits += 1;
        // Inclusive time counts the outermost visit of a region at a time, as CUBE's does:
        // a nested one's time is inside it already.
        if !visit.nested {
            stats.inclusive += duration;
        }
        stats.exclusive += u128::from(visit.exclusive);
        let info = self.defs.region(visit.region);
        match info.and_then(|i| waiting_kind(i.role, &i.name)) {
            Some(WaitKind::Barrier) => self.profile.barrier_wait += u128::from(visit.exclusive),
            Some(WaitKind::Lock) => self.profile.lock_wait += u128::from(visit.exclusive),
            None => {}
        }
        // Parallel time without counting nested parallel regions twice. Visits arrive after
        // those they enclose: everything reported deeper than this visit lies inside it, so it
        // collapses into one entry at this depth, the whole visit if it is a parallel region.
        let mut inner = 0;
        while let Some(&(depth, ticks)) = self.covered_by_depth.last() {
            if depth <= visit.depth {
                break;
            }
            inner += ticks;
            self.covered_by_depth.pop();
        }
        let is_parallel = info.is_some_and(|i| i.kind == ConstructKind::Parallel);
        let covered = if is_parallel { duration } else { inner };
        match self.covered_by_depth.last_mut() {
            Some((depth, ticks)) if *depth == visit.depth => *ticks += covered,
            _ if covered > 0 => self.covered_by_depth.push((visit.depth, covered)),
            _ => {}
        }
    }

    fn mark(&mut self, _mark: Mark) {}

    fn event(&mut self, time: u64) {
        self.profile.events += 1;
        self.profile.first_time = Some(self.profile.first_time.map_or(time, |t| t.min(time)));
        self.profile.last_time = Some(self.profile.last_time.map_or(time, |t| t.max(time)));
    }
}

/// Both sinks see every visit, mark and event (one pass over the trace for two products).
impl<A: VisitSink, B: VisitSink> VisitSink for (A, B) {
    fn visit(&mut self, visit: Visit) {
        self.0.visit(visit);
        self.1.visit(visit);
    }
    fn mark(&mut self, mark: Mark) {
        self.0.mark(mark);
        self.1.mark(mark);
    }
    fn event(&mut self, time: u64) {
        self.0.event(time);
        self.1.event(time);
    }
    fn event_bytes(&mut self, region: Option<u32>, bytes: usize) {
        self.0.event_bytes(region, bytes);
        self.1.event_bytes(region, bytes);
    }
}

/// One pass over every location of the trace.
pub fn profile_trace(
    reader: &otf2::ArchiveReader,
    defs: &TraceDefinitions,
    progress: &crate::progress::Progress,
) -> Result<Profile, String> {
    let mut profile = Profile::default();
    let mut damage = NestingDamage::default();
    for (index, location) in defs.locations.iter().enumerate() {
        let mut sink = ProfileSink::new(&mut profile, defs, index);
        crate::region_visits::walk(reader, location, &mut damage, &mut sink, &mut |n| {
            progress.add(n)
        })?;
        sink.finish();
    }
    profile.damage = damage;
    Ok(profile)
}
