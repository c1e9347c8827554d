//! Acceptance tests for the OpenMP construct families (semantics doc 1.10, 4.1-4.4, 5.3).
//!
//! Each program `c-tests/fam_*.c` is instrumented with the real `opari2`, built with the init
//! file against the shared library, run with 1, 2 and 4 threads, and its trace read back through
//! the reference reader. Asserted per run: the exact set of region definitions (names, roles,
//! paradigms, source file, lines), the locations, and per location the exact sequence of records.
//! Where OpenMP scheduling decides (which thread runs a section, a single block or a task), a
//! location's sequence is asserted modulo that choice and the choices are counted over the team.
//!
//! Line numbers come from `/*@name*/` (directive line) and `/*@name.end*/` (end of the
//! structured block) markers in the C sources, so the programs can be edited freely.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use support::pomp2::*;
use support::Scratch;

const THREAD_COUNTS: [u32; 3] = [1, 2, 4];

// ---- the programs -------------------------------------------------------------------------

/// A program from `c-tests/`, instrumented and built once.
struct Program {
    exe: PathBuf,
    /// The file name, as region names show it (`@<base>:<line>`).
    base: String,
    /// The path opari2 was given: the regions' source file.
    path: String,
    marks: BTreeMap<String, u32>,
    _scratch: Scratch,
}

/// A construct of a program, for the region definitions it must produce (doc 4.1).
#[derive(Clone, Copy)]
enum C {
    Parallel,
    For,
    ParallelFor,
    Sections,
    ParallelSections,
    Single,
    Master,
    Critical(Option<&'static str>),
    Ordered,
    Atomic,
    Flush,
    Barrier,
    Taskwait,
    Task,
    User(&'static str),
}

/// A region definition: name, role, paradigm, source file, begin line, end line.
type Def = (String, String, String, String, u32, u32);

impl Program {
    fn build(name: &str) -> Program {
        let stem = name.trim_end_matches(".c");
        let text = std::fs::read_to_string(support::repo_root().join("c-tests").join(name))
            .unwrap_or_else(|e| panic!("read {name}: {e}"));
        let mut marks = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            let mut rest = line;
            while let Some(p) = rest.find("/*@") {
                let after = &rest[p + 3..];
                let end = after.find("*/").expect("marker comment is closed");
                let mark = after[..end].trim().to_string();
                let again = marks.insert(mark.clone(), i as u32 + 1);
                assert!(again.is_none(), "marker {mark} twice in {name}");
                rest = &after[end..];
            }
        }
        let scratch = Scratch::new(stem);
        let source = instrument(name, &scratch.path, &[]);
        let exe = Build::c(&scratch.path).executable(&[source], stem);
        Program {
            exe,
            base: name.to_string(),
            path: scratch.join(name).display().to_string(),
            marks,
            _scratch: scratch,
        }
    }

    fn line(&self, mark: &str) -> u32 {
        *self
            .marks
            .get(mark)
            .unwrap_or_else(|| panic!("no marker /*@{mark}*/ in {}", self.base))
    }
    /// The directive's line (sscl).
    fn s(&self, mark: &str) -> u32 {
        self.line(mark)
    }
    /// The line where the structured block ends (escl).
    fn e(&self, mark: &str) -> u32 {
        self.line(&format!("{mark}.end"))
    }

    /// `!$omp <word> @<file>:<directive line>`
    fn omp(&self, word: &str, mark: &str) -> String {
        format!("!$omp {word} @{}:{}", self.base, self.s(mark))
    }
    /// `!$omp implicit barrier @<file>:<end line>`
    fn ibar_name(&self, mark: &str) -> String {
        format!("!$omp implicit barrier @{}:{}", self.base, self.e(mark))
    }
    fn user(&self, name: &str, mark: &str) -> String {
        format!("!$pomp user({name}) @{}:{}", self.base, self.s(mark))
    }

    /// Enter and Leave of the implicit barrier of the construct at `mark`, with no task run.
    fn ibar(&self, mark: &str) -> Seq {
        Seq::new().region(self.ibar_name(mark), |s| s)
    }

    /// Enter and Leave of `!$omp <word>` at `mark`, as a block for [`Seq::rep`].
    fn pair(&self, word: &str, mark: &str) -> Vec<Tok> {
        let name = self.omp(word, mark);
        vec![
            Tok::Is(format!("Enter {name}")),
            Tok::Is(format!("Leave {name}")),
        ]
    }

    /// One team member's view of the parallel region at `mark` (doc 4.3): the master forks and
    /// joins; everyone records the team (captured under `team:<mark>`) around the region.
    fn team(&self, mark: &str, master: bool, size: u32, body: Seq) -> Seq {
        let tag = format!("team:{mark}");
        Seq::new()
            .when(master, |s| s.is(format!("ThreadFork {size}")))
            .cap(&tag, "ThreadTeamBegin ")
            .region(self.omp("parallel", mark), |s| s.then(body))
            .cap(&tag, "ThreadTeamEnd ")
            .when(master, |s| s.is("ThreadJoin"))
    }

    /// The region definitions of these constructs plus the ten lock API regions: the complete
    /// set a trace of this program must define. All directives here fit on one line and so do
    /// the block ends, hence S1 = S2 and E1 = E2.
    fn defs(&self, constructs: &[(C, &str)]) -> BTreeSet<Def> {
        let mut defs: BTreeSet<Def> = [
            "omp_init_lock",
            "omp_destroy_lock",
            "omp_set_lock",
            "omp_unset_lock",
            "omp_test_lock",
            "omp_init_nest_lock",
            "omp_destroy_nest_lock",
            "omp_set_nest_lock",
            "omp_unset_nest_lock",
            "omp_test_nest_lock",
        ]
        .iter()
        .map(|n| def(n, "WRAPPER", "OPENMP", "OMP", 0, 0))
        .collect();
        for &(c, m) in constructs {
            let file = self.path.as_str();
            let (s, e) = match c {
                // No block: escl = sscl.
                C::Flush | C::Barrier | C::Taskwait => (self.s(m), self.s(m)),
                _ => (self.s(m), self.e(m)),
            };
            let omp = |word: &str, role: &str| def(&self.omp(word, m), role, "OPENMP", file, s, e);
            let ibar = || def(&self.ibar_name(m), "IMPLICIT_BARRIER", "OPENMP", file, e, e);
            let new: Vec<Def> = match c {
                C::Parallel => vec![omp("parallel", "PARALLEL"), ibar()],
                C::For => vec![omp("for", "LOOP"), ibar()],
                C::ParallelFor => vec![omp("parallel", "PARALLEL"), omp("for", "LOOP"), ibar()],
                C::Sections => vec![
                    omp("sections", "SECTIONS"),
                    omp("section", "SECTION"),
                    ibar(),
                ],
                C::ParallelSections => vec![
                    omp("parallel", "PARALLEL"),
                    omp("sections", "SECTIONS"),
                    omp("section", "SECTION"),
                    ibar(),
                ],
                C::Single => vec![
                    omp("single", "SINGLE"),
                    omp("single sblock", "SINGLE_SBLOCK"),
                    ibar(),
                ],
                C::Master => vec![omp("master", "MASTER")],
                C::Critical(name) => vec![
                    match name {
                        Some(n) => omp(&format!("critical ({n})"), "CRITICAL"),
                        None => omp("critical", "CRITICAL"),
                    },
                    omp("critical sblock", "CRITICAL_SBLOCK"),
                ],
                C::Ordered => vec![
                    omp("ordered", "ORDERED"),
                    omp("ordered sblock", "ORDERED_SBLOCK"),
                ],
                C::Atomic => vec![omp("atomic", "ATOMIC")],
                C::Flush => vec![omp("flush", "FLUSH")],
                C::Barrier => vec![omp("barrier", "BARRIER")],
                C::Taskwait => vec![omp("taskwait", "TASK_WAIT")],
                C::Task => vec![omp("create task", "TASK_CREATE"), omp("task", "TASK")],
                C::User(name) => vec![def(&self.user(name, m), "FUNCTION", "USER", file, s, e)],
            };
            defs.extend(new);
        }
        defs
    }
}

fn def(name: &str, role: &str, paradigm: &str, file: &str, begin: u32, end: u32) -> Def {
    (
        name.into(),
        role.into(),
        paradigm.into(),
        file.into(),
        begin,
        end,
    )
}

fn loc_name(thread: u32) -> String {
    if thread == 0 {
        "Master thread".into()
    } else {
        format!("OMP thread {thread}")
    }
}

// ---- expected record sequences ------------------------------------------------------------

/// One expected record text.
#[derive(Clone, Debug)]
enum Tok {
    /// Exactly this text.
    Is(String),
    /// A text starting with the prefix; the rest is captured under the tag.
    Cap(String, String),
}

#[derive(Clone, Debug)]
enum Pat {
    One(Tok),
    /// The block as often as it occurs here (none included); counted under the tag.
    Rep(String, Vec<Tok>),
}

/// The expected records of one location.
#[derive(Clone, Debug, Default)]
struct Seq(Vec<Pat>);

impl Seq {
    fn new() -> Seq {
        Seq::default()
    }
    fn is(mut self, text: impl Into<String>) -> Seq {
        self.0.push(Pat::One(Tok::Is(text.into())));
        self
    }
    fn cap(mut self, tag: &str, prefix: &str) -> Seq {
        self.0.push(Pat::One(Tok::Cap(tag.into(), prefix.into())));
        self
    }
    fn rep(mut self, tag: &str, block: Vec<Tok>) -> Seq {
        self.0.push(Pat::Rep(tag.into(), block));
        self
    }
    fn then(mut self, other: Seq) -> Seq {
        self.0.extend(other.0);
        self
    }
    fn when(self, cond: bool, f: impl FnOnce(Seq) -> Seq) -> Seq {
        if cond {
            f(self)
        } else {
            self
        }
    }
    /// Enter `name`, what `body` adds, Leave `name`.
    fn region(self, name: impl Into<String>, body: impl FnOnce(Seq) -> Seq) -> Seq {
        let name = name.into();
        body(self.is(format!("Enter {name}"))).is(format!("Leave {name}"))
    }
}

impl Tok {
    /// The capture, if `text` matches.
    fn matches(&self, text: &str) -> Option<Option<(String, String)>> {
        match self {
            Tok::Is(want) => (want == text).then_some(None),
            Tok::Cap(tag, prefix) => text
                .strip_prefix(prefix.as_str())
                .map(|rest| Some((tag.clone(), rest.to_string()))),
        }
    }
    fn show(&self) -> String {
        match self {
            Tok::Is(t) => t.clone(),
            Tok::Cap(tag, prefix) => format!("{prefix}<{tag}>"),
        }
    }
}

/// What a location's records matched: captures in record order, and block repetitions.
#[derive(Debug, Default)]
struct Matched {
    caps: Vec<(String, String)>,
    reps: BTreeMap<String, usize>,
}

impl Matched {
    fn values(&self, tag: &str) -> Vec<&str> {
        self.caps
            .iter()
            .filter(|(t, _)| t == tag)
            .map(|(_, v)| v.as_str())
            .collect()
    }
    fn reps(&self, tag: &str) -> usize {
        self.reps.get(tag).copied().unwrap_or(0)
    }
}

/// Matches a location's record texts against the expected sequence (blocks greedily).
fn match_seq(location: &str, actual: &[String], seq: &Seq) -> Matched {
    let fail = |at: usize, what: String| -> ! {
        let expected: Vec<String> = seq
            .0
            .iter()
            .map(|p| match p {
                Pat::One(t) => t.show(),
                Pat::Rep(tag, block) => format!(
                    "( {} )* <{tag}>",
                    block.iter().map(Tok::show).collect::<Vec<_>>().join(" ; ")
                ),
            })
            .collect();
        let numbered: Vec<String> = actual
            .iter()
            .enumerate()
            .map(|(i, t)| format!("{i:4}{} {t}", if i == at { " >>" } else { "   " }))
            .collect();
        panic!(
            "{location}: {what} at record {at}\nexpected:\n  {}\nactual:\n{}",
            expected.join("\n  "),
            numbered.join("\n")
        )
    };
    let mut m = Matched::default();
    let mut i = 0;
    for p in &seq.0 {
        match p {
            Pat::One(tok) => match actual.get(i).and_then(|t| tok.matches(t)) {
                Some(cap) => {
                    m.caps.extend(cap);
                    i += 1;
                }
                None => fail(i, format!("expected `{}`", tok.show())),
            },
            Pat::Rep(tag, block) => loop {
                let caps: Option<Vec<_>> = block
                    .iter()
                    .enumerate()
                    .map(|(j, tok)| actual.get(i + j).and_then(|t| tok.matches(t)))
                    .collect();
                match caps {
                    Some(caps) => {
                        m.caps.extend(caps.into_iter().flatten());
                        *m.reps.entry(tag.clone()).or_insert(0) += 1;
                        i += block.len();
                    }
                    None => break,
                }
            },
        }
    }
    if i != actual.len() {
        fail(i, "unexpected record".into());
    }
    m
}

// ---- one run ------------------------------------------------------------------------------

/// One traced run of a program, its locations matched one by one.
struct Checked<'a> {
    p: &'a Program,
    v: View,
    matched: BTreeMap<String, Matched>,
}

impl<'a> Checked<'a> {
    fn run(p: &'a Program, threads: u32, env: &[(&str, &str)]) -> Checked<'a> {
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
    fn definitions(&self, count: u32, defs: BTreeSet<Def>) {
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

    fn id(&self, location: &str) -> u64 {
        *self
            .v
            .locations
            .iter()
            .find(|(_, (n, _))| n == location)
            .unwrap_or_else(|| panic!("no location {location}"))
            .0
    }

    /// The location's number (its position in creation order), as implicit task ids use it.
    fn number(&self, location: &str) -> usize {
        let id = self.id(location);
        self.v.locations.keys().position(|&k| k == id).unwrap()
    }

    /// Matches the records of thread `thread`'s location (program name and buffer flushes
    /// left out).
    fn expect(&mut self, thread: u32, seq: Seq) {
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
    fn values(&self, tag: &str) -> Vec<String> {
        self.matched
            .values()
            .flat_map(|m| m.values(tag))
            .map(String::from)
            .collect()
    }

    /// Block repetitions under `tag`, over all locations.
    fn reps(&self, tag: &str) -> usize {
        self.matched.values().map(|m| m.reps(tag)).sum()
    }

    /// The one value captured under `tag` (on any number of locations).
    fn one(&self, tag: &str) -> String {
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
    fn team(&self, mark: &str, size: u32) -> u32 {
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
fn assert_paired_timestamps(v: &View) {
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
fn lock_acquisitions(v: &View) -> BTreeMap<u32, u32> {
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

// ---- parallel ----------------------------------------------------------------------------

fn check_parallel(p: &Program, n: u32) {
    let mut r = Checked::run(p, n, &[]);
    // num_threads(2) makes a team of two whatever OMP_NUM_THREADS says.
    let locations = n.max(2);
    r.definitions(
        locations,
        p.defs(&[
            (C::For, "orph"),
            (C::Parallel, "par"),
            (C::Parallel, "par2"),
            (C::ParallelFor, "pfor"),
            (C::ParallelSections, "psec"),
            (C::Parallel, "pmas"),
            (C::Master, "mas"),
        ]),
    );
    for k in 0..locations {
        let master = k == 0;
        let member = k < n;
        let section = p.pair("section", "psec");
        let seq = Seq::new()
            .when(master, |s| s.is("ProgramBegin"))
            .when(member, |s| s.then(p.team("par", master, n, p.ibar("par"))))
            .when(k < 2, |s| s.then(p.team("par2", master, 2, p.ibar("par2"))))
            .when(member, |s| {
                let body = Seq::new().region(p.omp("for", "pfor"), |s| s.then(p.ibar("pfor")));
                s.then(p.team("pfor", master, n, body))
            })
            .when(member, |s| {
                let body = Seq::new().region(p.omp("sections", "psec"), |s| {
                    s.rep("section", section).then(p.ibar("psec"))
                });
                s.then(p.team("psec", master, n, body))
            })
            .when(member, |s| {
                let body = Seq::new()
                    .when(master, |s| s.region(p.omp("master", "mas"), |s| s))
                    .then(p.ibar("pmas"));
                s.then(p.team("pmas", master, n, body))
            })
            // The orphaned loop, called serially: on the master, no team (doc 8.5).
            .when(master, |s| {
                s.region(p.omp("for", "orph"), |s| s.then(p.ibar("orph")))
                    .is("ProgramEnd 0")
            });
        r.expect(k, seq);
    }
    let full = r.team("par", n);
    assert_eq!(r.team("pfor", n), full, "same team shape, same Comm");
    assert_eq!(r.team("psec", n), full);
    assert_eq!(r.team("pmas", n), full);
    let two = r.team("par2", 2);
    assert_eq!(two == full, n == 2, "a team of 2 is its own Comm");
    assert_eq!(r.reps("section"), 3, "sections executed");
}

#[test]
fn parallel_family_records_fork_team_and_join_on_every_thread() {
    let p = Program::build("fam_parallel.c");
    for n in THREAD_COUNTS {
        check_parallel(&p, n);
    }
}

// ---- worksharing --------------------------------------------------------------------------

fn check_worksharing(p: &Program, n: u32) {
    let mut r = Checked::run(p, n, &[]);
    r.definitions(
        n,
        p.defs(&[
            (C::Parallel, "par"),
            (C::For, "for"),
            (C::For, "fornw"),
            (C::Sections, "secs"),
            (C::Single, "sgl"),
            (C::Single, "sglnw"),
            (C::Single, "sglcp"),
        ]),
    );
    for k in 0..n {
        let body = Seq::new()
            .region(p.omp("for", "for"), |s| s.then(p.ibar("for")))
            // nowait: no implicit barrier, although its region is defined.
            .region(p.omp("for", "fornw"), |s| s)
            .region(p.omp("sections", "secs"), |s| {
                s.rep("section", p.pair("section", "secs"))
                    .then(p.ibar("secs"))
            })
            .region(p.omp("single", "sgl"), |s| {
                s.rep("sblock:sgl", p.pair("single sblock", "sgl"))
                    .then(p.ibar("sgl"))
            })
            .region(p.omp("single", "sglnw"), |s| {
                s.rep("sblock:sglnw", p.pair("single sblock", "sglnw"))
            })
            // copyprivate: OPARI2 leaves the runtime's own barrier alone, so no implicit
            // barrier either (doc 1.6).
            .region(p.omp("single", "sglcp"), |s| {
                s.rep("sblock:sglcp", p.pair("single sblock", "sglcp"))
            })
            .then(p.ibar("par"));
        let seq = Seq::new()
            .when(k == 0, |s| s.is("ProgramBegin"))
            .then(p.team("par", k == 0, n, body))
            .when(k == 0, |s| s.is("ProgramEnd 0"));
        r.expect(k, seq);
    }
    r.team("par", n);
    assert_eq!(r.reps("section"), 2, "sections executed");
    for single in ["sgl", "sglnw", "sglcp"] {
        assert_eq!(
            r.reps(&format!("sblock:{single}")),
            1,
            "threads that executed the single block at line {}",
            p.s(single)
        );
    }
}

#[test]
fn worksharing_family_records_loops_sections_and_singles() {
    let p = Program::build("fam_worksharing.c");
    for n in THREAD_COUNTS {
        check_worksharing(&p, n);
    }
}

// ---- synchronisation ----------------------------------------------------------------------

fn check_sync(p: &Program, n: u32) {
    let mut r = Checked::run(p, n, &[]);
    r.definitions(
        n,
        p.defs(&[
            (C::Critical(Some("acc")), "crit2"),
            (C::Parallel, "par"),
            (C::Critical(None), "crit"),
            (C::Critical(Some("acc")), "crit1"),
            (C::Atomic, "atom"),
            (C::Flush, "flush"),
            (C::Barrier, "bar"),
            (C::For, "ford"),
            (C::Ordered, "ord"),
        ]),
    );
    let critical = |word: &str, mark: &str| {
        let tag = format!("lock:{mark}");
        Seq::new().region(p.omp(word, mark), |s| {
            s.cap(&tag, "ThreadAcquireLock ")
                .region(p.omp("critical sblock", mark), |s| s)
                .cap(&tag, "ThreadReleaseLock ")
        })
    };
    for k in 0..n {
        // schedule(static, 1): thread k runs iterations k, k + n, ... of 8.
        let iterations = (0..8).filter(|i| i % n == k).count();
        let mut ordered = Seq::new();
        for _ in 0..iterations {
            ordered = ordered.region(p.omp("ordered", "ord"), |s| {
                s.region(p.omp("ordered sblock", "ord"), |s| s)
            });
        }
        let body = Seq::new()
            .then(critical("critical", "crit"))
            .then(critical("critical (acc)", "crit1"))
            .then(critical("critical (acc)", "crit2"))
            .region(p.omp("atomic", "atom"), |s| s)
            .region(p.omp("flush", "flush"), |s| s)
            .region(p.omp("barrier", "bar"), |s| s)
            .region(p.omp("for", "ford"), |s| {
                s.then(ordered).then(p.ibar("ford"))
            })
            .then(p.ibar("par"));
        let seq = Seq::new()
            .when(k == 0, |s| s.is("ProgramBegin"))
            .then(p.team("par", k == 0, n, body))
            .when(k == 0, |s| s.is("ProgramEnd 0"));
        r.expect(k, seq);
    }
    r.team("par", n);
    // Lock id per critical: the same for each record of one construct; the same for both
    // `critical(acc)`; ids allocated at registration, in the init file's (textual) order:
    // add_named's critical(acc) comes first.
    let lock_of = |mark: &str| -> u32 {
        let ids: BTreeSet<String> = r
            .values(&format!("lock:{mark}"))
            .iter()
            .map(|v| v.split(' ').next().unwrap().to_string())
            .collect();
        assert_eq!(ids.len(), 1, "{mark}: lock ids {ids:?}");
        ids.into_iter().next().unwrap().parse().unwrap()
    };
    let acc = lock_of("crit2");
    assert_eq!(lock_of("crit1"), acc, "same name, same lock");
    let unnamed = lock_of("crit");
    assert_eq!((acc, unnamed), (0, 1), "lock ids in registration order");
    let counts = lock_acquisitions(&r.v);
    let want: BTreeMap<u32, u32> = [(acc, 2 * n), (unnamed, n)].into_iter().collect();
    assert_eq!(counts, want, "acquisitions per lock");
}

#[test]
fn synchronisation_family_records_criticals_locks_and_ordered() {
    let p = Program::build("fam_sync.c");
    for n in THREAD_COUNTS {
        check_sync(&p, n);
    }
}

// ---- tasks --------------------------------------------------------------------------------

/// Tasks that may run on this thread at this point, each as Switch(task) Enter(task)
/// Leave(task) Complete(task) (captured as `run` and `done`), then a switch back (`back`).
fn tasks_here(p: &Program, at: &str) -> Seq {
    let task = p.omp("task", "task");
    Seq::new()
        .rep(
            &format!("run@{at}"),
            vec![
                Tok::Cap("run".into(), "ThreadTaskSwitch ".into()),
                Tok::Is(format!("Enter {task}")),
                Tok::Is(format!("Leave {task}")),
                Tok::Cap("done".into(), "ThreadTaskComplete ".into()),
            ],
        )
        .rep(
            &format!("back@{at}"),
            vec![Tok::Cap("back".into(), "ThreadTaskSwitch ".into())],
        )
}

const NTASKS: usize = 4;

fn check_tasks(p: &Program, n: u32) {
    let mut r = Checked::run(p, n, &[]);
    r.definitions(
        n,
        p.defs(&[
            (C::Task, "serial"),
            (C::Parallel, "par"),
            (C::Single, "sgl"),
            (C::Task, "task"),
            (C::Taskwait, "tw"),
        ]),
    );
    let sblock = format!("Enter {}", p.omp("single sblock", "sgl"));
    let executors: Vec<u32> = (0..n)
        .filter(|&k| r.v.texts(&loc_name(k), &[]).contains(&sblock))
        .collect();
    assert_eq!(executors.len(), 1, "threads that executed the single block");
    let executor = executors[0];
    let wait_points: Vec<String> = (0..NTASKS)
        .map(|i| format!("create{i}"))
        .chain(["taskwait".into(), "ibar".into()])
        .collect();
    for k in 0..n {
        let body = Seq::new()
            .region(p.omp("single", "sgl"), |s| {
                s.when(k == executor, |s| {
                    s.region(p.omp("single sblock", "sgl"), |mut s| {
                        for i in 0..NTASKS {
                            // A task may also run at once, inside its creation (doc 4.3).
                            s = s.region(p.omp("create task", "task"), |s| {
                                s.cap("create", "ThreadTaskCreate ")
                                    .then(tasks_here(p, &format!("create{i}")))
                            });
                        }
                        s.region(p.omp("taskwait", "tw"), |s| {
                            s.then(tasks_here(p, "taskwait"))
                        })
                    })
                })
                // The others may run tasks while they wait at the single's barrier.
                .region(p.ibar_name("sgl"), |s| s.then(tasks_here(p, "ibar")))
            })
            .then(p.ibar("par"));
        // The task created outside any parallel region runs at once on the initial thread.
        let serial = Seq::new().region(p.omp("create task", "serial"), |s| {
            s.cap("serial:create", "ThreadTaskCreate ")
                .cap("serial:run", "ThreadTaskSwitch ")
                .region(p.omp("task", "serial"), |s| s)
                .cap("serial:done", "ThreadTaskComplete ")
                .cap("serial:back", "ThreadTaskSwitch ")
        });
        let seq = Seq::new()
            .when(k == 0, |s| s.is("ProgramBegin").then(serial))
            .then(p.team("par", k == 0, n, body))
            .when(k == 0, |s| s.is("ProgramEnd 0"));
        r.expect(k, seq);
    }
    let team = r.team("par", n);

    // The serial task: thread 0's first task id (0, 1), in a team of the initial thread only;
    // the switch back names the initial thread's implicit task (location 0, generation 0).
    let serial = r.one("serial:create");
    assert_eq!(r.one("serial:run"), serial);
    assert_eq!(r.one("serial:done"), serial);
    let serial_team: u32 = serial.split(' ').next().unwrap().parse().unwrap();
    assert_eq!(serial, format!("{serial_team} 0 1"), "serial task id");
    assert_eq!(r.one("serial:back"), format!("{serial_team} 0 0"));
    let master_only = vec![r.id("Master thread")];
    assert_eq!(
        r.v.comms[&serial_team].members, master_only,
        "serial task team"
    );

    // Created: ids (executor's thread number, that thread's counter), all in the team.
    let created: BTreeSet<String> = r.values("create").into_iter().collect();
    assert_eq!(r.values("create").len(), NTASKS);
    // The initial thread's counter already gave 1 to the serial task.
    let first = if executor == 0 { 2 } else { 1 };
    let want: BTreeSet<String> = (first..first + NTASKS)
        .map(|g| format!("{team} {executor} {g}"))
        .collect();
    assert_eq!(created, want, "created task ids");

    // Every task runs exactly once, is completed where it ran, and each wait point where
    // tasks ran switches back to the implicit task of the location before it is left.
    let mut ran = Vec::new();
    for k in 0..n {
        let name = loc_name(k);
        let m = &r.matched[&name];
        let (run, done) = (m.values("run"), m.values("done"));
        assert_eq!(run, done, "{name}: completed tasks are the ones that ran");
        ran.extend(run.into_iter().map(String::from));
        for at in &wait_points {
            let tasks = m.reps(&format!("run@{at}"));
            assert_eq!(
                m.reps(&format!("back@{at}")),
                usize::from(tasks > 0),
                "{name}: a switch back at {at} iff tasks ran there ({tasks})"
            );
        }
        let implicit = format!("{team} {} 0", r.number(&name));
        for back in m.values("back") {
            assert_eq!(back, implicit, "{name}: switch back to the implicit task");
        }
    }
    ran.sort();
    assert_eq!(
        ran,
        created.into_iter().collect::<Vec<_>>(),
        "tasks that ran"
    );
}

#[test]
fn task_family_records_creation_execution_and_switches() {
    let p = Program::build("fam_tasks.c");
    for n in THREAD_COUNTS {
        check_tasks(&p, n);
    }
}

// ---- locks --------------------------------------------------------------------------------

/// Enter and Leave of a lock API region, with a lock record (captured under `tag`) between.
fn api(s: Seq, function: &str, record: Option<(&str, &str)>) -> Seq {
    s.region(function, |s| match record {
        Some((tag, prefix)) => s.cap(tag, prefix),
        None => s,
    })
}

fn check_locks(p: &Program, n: u32, nest_owner: bool) {
    let env: &[(&str, &str)] = if nest_owner {
        &[("FAM_LOCKS_NEST_OWNER", "1")]
    } else {
        &[]
    };
    let mut r = Checked::run(p, n, env);
    r.definitions(n, p.defs(&[(C::Parallel, "busy"), (C::Parallel, "use")]));
    let acquire = |tag| Some((tag, "ThreadAcquireLock "));
    let release = |tag| Some((tag, "ThreadReleaseLock "));
    for k in 0..n {
        let master = k == 0;
        // Both locks are held by the initial task: every test fails, recording no acquire.
        let busy = api(Seq::new(), "omp_test_lock", None)
            .when(nest_owner, |s| api(s, "omp_test_nest_lock", None))
            .then(p.ibar("busy"));
        let mut used = api(Seq::new(), "omp_set_lock", acquire("L"));
        used = api(used, "omp_unset_lock", release("L"));
        used = api(used, "omp_set_nest_lock", acquire("N"));
        used = api(used, "omp_set_nest_lock", acquire("N"));
        used = api(used, "omp_test_nest_lock", acquire("N"));
        for _ in 0..3 {
            used = api(used, "omp_unset_nest_lock", release("N"));
        }
        used = used.then(p.ibar("use"));
        let seq = Seq::new()
            .when(master, |s| {
                let s = api(s.is("ProgramBegin"), "omp_init_lock", None);
                let s = api(s, "omp_init_nest_lock", None);
                let s = api(s, "omp_test_lock", acquire("L"));
                s.when(nest_owner, |s| api(s, "omp_set_nest_lock", acquire("N")))
            })
            .then(p.team("busy", master, n, busy))
            .when(master, |s| {
                let s = s.when(nest_owner, |s| api(s, "omp_unset_nest_lock", release("N")));
                api(s, "omp_unset_lock", release("L"))
            })
            .then(p.team("use", master, n, used))
            .when(master, |s| {
                let s = api(s, "omp_destroy_nest_lock", None);
                api(s, "omp_destroy_lock", None).is("ProgramEnd 0")
            });
        r.expect(k, seq);
    }
    assert_eq!(r.team("busy", n), r.team("use", n));
    // Ids from one counter starting at 0, allocated by the init wrappers in call order.
    let id_of = |tag: &str| -> u32 {
        let ids: BTreeSet<&str> = r
            .matched
            .values()
            .flat_map(|m| m.values(tag))
            .map(|v| v.split(' ').next().unwrap())
            .collect();
        assert_eq!(ids.len(), 1, "{tag}: lock ids {ids:?}");
        ids.into_iter().next().unwrap().parse().unwrap()
    };
    let (lock, nest) = (id_of("L"), id_of("N"));
    assert_eq!((lock, nest), (0, 1), "lock ids");
    // The lock: the successful test, then one set per thread. The nest lock: one outermost
    // acquisition per thread (inner sets and the successful test repeat its order).
    let counts = lock_acquisitions(&r.v);
    let want: BTreeMap<u32, u32> = [(lock, 1 + n), (nest, n + u32::from(nest_owner))]
        .into_iter()
        .collect();
    assert_eq!(counts, want, "acquisitions per lock");
}

#[test]
fn lock_api_records_acquisitions_in_order_and_failed_tests_without_acquire() {
    let p = Program::build("fam_locks.c");
    for n in THREAD_COUNTS {
        check_locks(&p, n, false);
    }
}

#[test]
fn nest_lock_ownership_belongs_to_the_task_not_the_thread() {
    let p = Program::build("fam_locks.c");
    for n in THREAD_COUNTS {
        check_locks(&p, n, true);
    }
}

// ---- user regions -------------------------------------------------------------------------

fn check_user(p: &Program, n: u32) {
    let mut r = Checked::run(p, n, &[]);
    r.definitions(
        n,
        p.defs(&[
            (C::User("early"), "early"),
            (C::User("outer"), "outer"),
            (C::Parallel, "par"),
            (C::User("inner"), "inner"),
        ]),
    );
    for k in 0..n {
        let master = k == 0;
        // early(1) leaves through `altend`, early(0) through `end`: the same records.
        let early = |s: Seq| s.region(p.user("early", "early"), |s| s);
        let body = Seq::new()
            .region(p.user("inner", "inner"), |s| early(early(s)))
            .then(p.ibar("par"));
        let team = p.team("par", master, n, body);
        let seq = if master {
            // `inst init` starts the measurement; `inst finalize` ends it after the region.
            Seq::new()
                .is("ProgramBegin")
                .region(p.user("outer", "outer"), |s| s.then(team))
                // `inst finalize` ends the measurement before the program's exit: no status yet
                // (OTF2_UNDEFINED_INT64).
                .is("ProgramEnd -9223372036854775808")
        } else {
            team
        };
        r.expect(k, seq);
    }
    r.team("par", n);
}

#[test]
fn user_regions_nest_around_and_inside_parallel_regions() {
    let p = Program::build("fam_user.c");
    for n in THREAD_COUNTS {
        check_user(&p, n);
    }
}
