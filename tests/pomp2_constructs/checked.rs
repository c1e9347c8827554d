//! One traced run of a program, its locations matched one by one, and the trace-wide checks
//! of paired timestamps and lock acquisitions.

use super::*;

/// One traced run of a program, its locations matched one by one.
pub(crate) struct Checked<'a> {
    pub(crate) p: &'a Program,
    pub(crate) v: View,
    pub(crate) matched: BTreeMap<String, Matched>,
}

impl<'a> Checked<'a> {
    pub(crate) fn run(p: &'a Program, threads: u32, env: &[(&str, &str)]) -> Checked<'a> {
        let traced = run_traced(&p.exe, threads, &format!("t{threads}"), env);
        let v = View::read(&traced.anchor());
        v.assert_well_formed();
        assert_paired_timestamps(&v);
        Checked {
            p,
            v,
            matched: BTreeMap::new(),
        }
    }

    /// The trace has exactly the locations of threads 0..count, and defines exactly `defs`.
    pub(crate) fn definitions(&self, count: u32, defs: BTreeSet<Def>) {
        let names: BTreeSet<String> = self.v.locations.values().map(|(n, _)| n.clone()).collect();
        let want: BTreeSet<String> = (0..count).map(loc_name).collect();
        assert_eq!(names, want, "{}: locations", self.p.base);
        assert_eq!(self.v.locations.len(), count as usize);
        let have: Vec<Def> = self
            .v
            .regions
            .values()
            .map(|r| def(&r.name, &r.role, &r.paradigm, &r.file, r.begin, r.end))
            .collect();
        let have_set: BTreeSet<Def> = have.iter().cloned().collect();
        assert_eq!(
            have.len(),
            have_set.len(),
            "{}: a region is defined twice",
            self.p.base
        );
        let missing: Vec<&Def> = defs.difference(&have_set).collect();
        let extra: Vec<&Def> = have_set.difference(&defs).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{}: region definitions differ\nmissing: {missing:#?}\nunexpected: {extra:#?}",
            self.p.base
        );
    }

    pub(crate) fn id(&self, location: &str) -> u64 {
        *self
            .v
            .locations
            .iter()
            .find(|(_, (n, _))| n == location)
            .unwrap_or_else(|| panic!("no location {location}"))
            .0
    }

    /// The location's number (its position in creation order), as implicit task ids use it.
    pub(crate) fn number(&self, location: &str) -> usize {
        let id = self.id(location);
        self.v.locations.keys().position(|&k| k == id).unwrap()
    }

    /// Matches the records of thread `thread`'s location (program name and buffer flushes
    /// left out).
    pub(crate) fn expect(&mut self, thread: u32, seq: Seq) {
        let name = loc_name(thread);
        let texts: Vec<String> = self
            .v
            .texts(&name, &["BufferFlush"])
            .into_iter()
            .map(|t| {
                if t.starts_with("ProgramBegin ") {
                    "ProgramBegin".to_string()
                } else {
                    t
                }
            })
            .collect();
        let m = match_seq(&format!("{} {name}", self.p.base), &texts, &seq);
        self.matched.insert(name, m);
    }

    /// The captures under `tag` of all locations.
    pub(crate) fn values(&self, tag: &str) -> Vec<String> {
        self.matched
            .values()
            .flat_map(|m| m.values(tag))
            .map(String::from)
            .collect()
    }

    /// Block repetitions under `tag`, over all locations.
    pub(crate) fn reps(&self, tag: &str) -> usize {
        self.matched.values().map(|m| m.reps(tag)).sum()
    }

    /// The one value captured under `tag` (on any number of locations).
    pub(crate) fn one(&self, tag: &str) -> String {
        let values: BTreeSet<String> = self.values(tag).into_iter().collect();
        assert_eq!(
            values.len(),
            1,
            "{}: {tag} takes the values {values:?}",
            self.p.base
        );
        values.into_iter().next().unwrap()
    }

    /// The team recorded under `team:<mark>` is one Comm for all members (TeamBegin and
    /// TeamEnd), whose group is threads 0..size in thread order, with no parent (a top-level
    /// team). Returns the Comm id.
    pub(crate) fn team(&self, mark: &str, size: u32) -> u32 {
        let tag = format!("team:{mark}");
        let comm: u32 = self.one(&tag).parse().unwrap();
        assert_eq!(self.values(&tag).len(), 2 * size as usize, "{tag}");
        let c = self
            .v
            .comms
            .get(&comm)
            .unwrap_or_else(|| panic!("{}: {tag}: no Comm {comm}", self.p.base));
        let members: Vec<u64> = (0..size).map(|k| self.id(&loc_name(k))).collect();
        assert_eq!(c.members, members, "{}: members of {tag}", self.p.base);
        assert_eq!(c.parent, None, "{}: parent of {tag}", self.p.base);
        comm
    }
}

/// Records that one POMP2 call writes together share its timestamp (doc 4.2, 8.22): task
/// creation, task begin (switch and Enter), task end (Leave and completion), the switch back
/// at a restore point and the Leave after it, team begin and end, and a critical section's
/// lock records with its block.
pub(crate) fn assert_paired_timestamps(v: &View) {
    const PAIRS: [(&str, &str, &str, &str); 8] = [
        ("Enter", "!$omp create task ", "ThreadTaskCreate", ""),
        ("ThreadTaskSwitch", "", "Enter", "!$omp task "),
        ("Leave", "!$omp task ", "ThreadTaskComplete", ""),
        ("ThreadTaskSwitch", "", "Leave", ""),
        ("ThreadTeamBegin", "", "Enter", "!$omp parallel "),
        ("Leave", "!$omp parallel ", "ThreadTeamEnd", ""),
        ("ThreadAcquireLock", "", "Enter", "!$omp critical sblock "),
        ("Leave", "!$omp critical sblock ", "ThreadReleaseLock", ""),
    ];
    let is = |e: &Ev, kind: &str, region: &str| {
        e.kind == kind && e.detail.first().map_or(true, |d| d.starts_with(region))
    };
    for (loc, events) in &v.events {
        for w in events.windows(2) {
            for (k1, r1, k2, r2) in PAIRS {
                if is(&w[0], k1, r1) && is(&w[1], k2, r2) {
                    assert_eq!(
                        w[0].time,
                        w[1].time,
                        "location {loc}: {} and {} come from one call",
                        w[0].text(),
                        w[1].text()
                    );
                }
            }
        }
    }
}

/// The lock records of the whole trace (doc 4.4): per lock the acquisition orders are 1..=m;
/// all records of one acquisition are on one location, start with an acquire and nest
/// (acquire/release balanced, depth 0 only at the end); acquisition k ends before k+1 begins.
/// Returns m per lock id.
pub(crate) fn lock_acquisitions(v: &View) -> BTreeMap<u32, u32> {
    /// (location, [(time, +1 acquire / -1 release)]) of one acquisition.
    type Records = (u64, Vec<(u64, i32)>);
    let mut acquisitions: BTreeMap<(u32, u32), Records> = BTreeMap::new();
    for (loc, events) in &v.events {
        for e in events {
            let step = match e.kind.as_str() {
                "ThreadAcquireLock" => 1,
                "ThreadReleaseLock" => -1,
                _ => continue,
            };
            let lock: u32 = e.detail[0].parse().unwrap();
            let order: u32 = e.detail[1].parse().unwrap();
            let a = acquisitions
                .entry((lock, order))
                .or_insert((*loc, Vec::new()));
            assert_eq!(
                a.0, *loc,
                "lock {lock} acquisition {order} on two locations"
            );
            a.1.push((e.time, step));
        }
    }
    let mut counts: BTreeMap<u32, u32> = BTreeMap::new();
    let mut last_end: BTreeMap<u32, u64> = BTreeMap::new();
    for ((lock, order), (_, records)) in &acquisitions {
        let want = counts.get(lock).map_or(1, |m| m + 1);
        assert_eq!(*order, want, "lock {lock}: acquisition orders are not 1..m");
        counts.insert(*lock, *order);
        let mut depth = 0;
        for (i, (_, step)) in records.iter().enumerate() {
            depth += step;
            assert!(
                depth > 0 || (depth == 0 && i == records.len() - 1),
                "lock {lock} acquisition {order}: acquire/release do not nest: {records:?}"
            );
        }
        assert_eq!(depth, 0, "lock {lock} acquisition {order} not released");
        if let Some(&end) = last_end.get(lock) {
            assert!(
                end <= records[0].0,
                "lock {lock}: acquisition {order} starts before the previous one ended"
            );
        }
        last_end.insert(*lock, records.last().unwrap().0);
    }
    counts
}
