//! OpenMP tasks, locks and nested parallelism, traced exactly.
//!
//! Each program in `c-tests/` is instrumented with the real `opari2`, built against pomptrace, run
//! with 1, 2 and 4 OpenMP threads (the nested one also with nesting enabled through
//! `OMP_MAX_ACTIVE_LEVELS=2` or `omp_set_nested(1)`, and disabled), and read back through the
//! reference readers. Every trace is checked for
//!
//! * the number of records of every kind and of Enters per region, computed here from the
//!   program's parameters (the `#define`s, which the tests compare with their own constants);
//! * per-location consistency: Enter/Leave nesting, each region left by the task that entered it,
//!   task switches only to live tasks (begins right before the task region, resumes only at the
//!   scheduling points OPARI2 instruments, back to the task that entered the waiting region),
//!   every created task begun and completed exactly once, implicit tasks named after their
//!   location, task records carrying the location's current team;
//! * locks: per lock id, acquisition orders 1, 2, ... without gaps, acquire and release
//!   alternating in time, nest locks repeating the order for inner acquisitions, a failed test
//!   writing no acquire record;
//! * thread teams: ThreadTeamBegin/End nested per location, forks and joins on the team's
//!   master, one Comm per team with the right members (by thread number) and parent Comm, and no
//!   location ever joining a team in two positions at once.

mod support;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;

use support::pomp2::{instrument, run_traced, Build, Ev, View};
use support::Scratch;

const THREADS: [u32; 3] = [1, 2, 4];

// ---- building and running ----------------------------------------------------------------

/// A program of `c-tests/`, instrumented and built.
struct Program {
    name: &'static str,
    source: String,
    exe: PathBuf,
    _scratch: Scratch,
}

impl Program {
    fn build(name: &'static str, opari_args: &[&str]) -> Self {
        let scratch = Scratch::new(name);
        let file = format!("{name}.c");
        let instrumented = instrument(&file, &scratch.path, opari_args);
        let exe = Build::c(&scratch.path).executable(&[instrumented], name);
        let source = std::fs::read_to_string(support::repo_root().join("c-tests").join(&file))
            .expect("read the test program");
        Self {
            name,
            source,
            exe,
            _scratch: scratch,
        }
    }

    /// The value of `#define NAME <value>` in the program.
    fn define(&self, name: &str) -> u64 {
        let prefix = format!("#define {name} ");
        self.source
            .lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no #define {name} in {}.c", self.name))
    }

    /// 1-based number of the one source line that contains `pattern` (only `#pragma` lines
    /// with `pragma_only`).
    fn line_of(&self, pattern: &str, pragma_only: bool) -> usize {
        let lines: Vec<usize> = self
            .source
            .lines()
            .enumerate()
            .filter(|(_, l)| l.contains(pattern))
            .filter(|(_, l)| !pragma_only || l.trim_start().starts_with("#pragma"))
            .map(|(i, _)| i + 1)
            .collect();
        assert_eq!(
            lines.len(),
            1,
            "{pattern:?} in {}.c on lines {lines:?}",
            self.name
        );
        lines[0]
    }

    /// 1-based number of the one `#pragma` line that contains `pattern`.
    fn line(&self, pattern: &str) -> usize {
        self.line_of(pattern, true)
    }

    /// Name of the region `!$omp <word>` of the construct on the `#pragma` line containing
    /// `pattern`.
    fn region(&self, word: &str, pattern: &str) -> String {
        format!("!$omp {word} @{}.c:{}", self.name, self.line(pattern))
    }

    /// Name of the region `!$omp <word>` of the directive right above the statement line that
    /// contains `statement` (an `atomic` and its statement).
    fn region_above(&self, word: &str, statement: &str) -> String {
        let line = self.line_of(statement, false) - 1;
        let pragma = self.source.lines().nth(line - 1).unwrap_or_default();
        assert!(
            pragma.contains(&format!("#pragma omp {word}")),
            "{pragma:?}"
        );
        format!("!$omp {word} @{}.c:{line}", self.name)
    }

    /// Runs the program traced and reads the trace back; checks everything that holds for any
    /// program (see `analyse`).
    fn run(&self, threads: u32, env: &[(&str, &str)], untied: bool) -> Traced {
        let mut label = format!("t{threads}");
        for (k, v) in env {
            label.push_str(&format!("-{k}={v}"));
        }
        let run = run_traced(&self.exe, threads, &label, env);
        let view = View::read(&run.anchor());
        let analysis = analyse(&view, untied);
        Traced {
            label: format!("{} {label}", self.name),
            stdout: run.stdout(),
            anchor: run.anchor(),
            view,
            a: analysis,
        }
    }
}

/// One traced run.
struct Traced {
    label: String,
    stdout: String,
    anchor: PathBuf,
    view: View,
    a: Analysis,
}

impl Traced {
    /// The `key=<number>` the program printed.
    fn printed(&self, key: &str) -> i64 {
        let prefix = format!("{key}=");
        self.stdout
            .split_whitespace()
            .find_map(|w| w.strip_prefix(&prefix))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{}: no {key}= in {:?}", self.label, self.stdout))
    }

    /// Location names, in location order.
    fn location_names(&self) -> Vec<String> {
        self.view
            .locations
            .values()
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// One location per thread of a single top-level team of `n`, numbered by thread number.
    fn assert_team_locations(&self, n: u32) {
        let want: Vec<String> = std::iter::once("Master thread".to_string())
            .chain((1..n).map(|k| format!("OMP thread {k}")))
            .collect();
        assert_eq!(self.location_names(), want, "{}: locations", self.label);
    }

    fn location_id(&self, name: &str) -> u64 {
        *self
            .view
            .locations
            .iter()
            .find(|(_, (n, _))| n == name)
            .unwrap_or_else(|| panic!("{}: no location {name:?}", self.label))
            .0
    }

    /// The implicit barrier region that ends the construct whose region is `construct` (it
    /// spans the construct's last lines: E1..E2, where the construct spans S1..E2).
    fn implicit_barrier_of(&self, construct: &str) -> String {
        let c = self.view.region(construct);
        let found: Vec<&str> = self
            .view
            .regions
            .values()
            .filter(|r| r.role == "IMPLICIT_BARRIER" && r.file == c.file && r.end == c.end)
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(found.len(), 1, "implicit barrier of {construct}: {found:?}");
        found[0].to_string()
    }

    /// Event texts of a location with Comm ids replaced by `labels` (team records only), without
    /// ProgramBegin/End and BufferFlush.
    fn symbolic(&self, location: &str, labels: &HashMap<u64, String>) -> Vec<String> {
        self.view
            .events_of(location)
            .iter()
            .filter(|e| {
                !matches!(
                    e.kind.as_str(),
                    "ProgramBegin" | "ProgramEnd" | "BufferFlush"
                )
            })
            .map(|e| match e.kind.as_str() {
                "ThreadTeamBegin" | "ThreadTeamEnd" => {
                    let comm = num(e, 0);
                    let label = labels.get(&comm).cloned().unwrap_or(comm.to_string());
                    format!("{} {label}", e.kind)
                }
                _ => e.text(),
            })
            .collect()
    }

    /// The record kinds must be exactly `expected` (BufferFlush, which only says that the
    /// writer stalled, excepted); zero counts may be left out.
    fn assert_kinds(&self, expected: &[(&str, usize)]) {
        let mut want: BTreeMap<String, usize> = BTreeMap::new();
        for (k, n) in expected {
            if *n > 0 {
                *want.entry(k.to_string()).or_default() += n;
            }
        }
        let mut have = self.view.kind_counts();
        have.remove("BufferFlush");
        assert_eq!(have, want, "{}: records per kind", self.label);
    }

    /// Records per kind of a program with one parallel region of `n` threads that creates
    /// `tasks` tasks: one fork and join, a team begin and end per thread, `enters` Enter/Leave
    /// pairs, each task created and completed once, one switch per task begin and per resume.
    fn assert_one_team_task_kinds(&self, n: usize, enters: usize, tasks: usize) {
        self.assert_kinds(&[
            ("ProgramBegin", 1),
            ("ProgramEnd", 1),
            ("ThreadFork", 1),
            ("ThreadJoin", 1),
            ("ThreadTeamBegin", n),
            ("ThreadTeamEnd", n),
            ("Enter", enters),
            ("Leave", enters),
            ("ThreadTaskCreate", tasks),
            ("ThreadTaskComplete", tasks),
            ("ThreadTaskSwitch", tasks + self.a.task_resumes),
        ]);
    }

    /// Enters per region name must be exactly `expected` (zero counts may be left out).
    fn assert_enters(&self, expected: &[(&str, usize)]) {
        let mut want: BTreeMap<String, usize> = BTreeMap::new();
        for (k, n) in expected {
            if *n > 0 {
                *want.entry(k.to_string()).or_default() += n;
            }
        }
        assert_eq!(self.a.enters, want, "{}: Enters per region", self.label);
    }

    /// The common task assertions: `tasks` created, begun and completed, at most
    /// `restore_points` resumes; the switch count in the kind counts is begins + resumes.
    fn assert_tasks(&self, tasks: usize, restore_points: usize) {
        let a = &self.a;
        assert_eq!(a.tasks_created, tasks, "{}: tasks created", self.label);
        assert_eq!(a.tasks_completed, tasks, "{}: tasks completed", self.label);
        assert_eq!(a.task_begins, tasks, "{}: task begins", self.label);
        assert!(
            a.task_resumes <= restore_points,
            "{}: {} resumes, but only {restore_points} restore points",
            self.label,
            a.task_resumes
        );
    }

    /// The Comm used by ThreadTeamBegin records whose members (by thread number) are these
    /// locations and whose parent is `parent`.
    fn used_comm(&self, members: &[&str], parent: Option<u64>) -> u64 {
        let ids: Vec<u64> = members.iter().map(|m| self.location_id(m)).collect();
        let found: Vec<u64> = self
            .a
            .team_begins
            .keys()
            .copied()
            .filter(|c| self.view.comms[&(*c as u32)].members == ids)
            .filter(|c| self.parent_of(*c) == parent)
            .collect();
        assert_eq!(
            found.len(),
            1,
            "{}: Comms used with members {members:?} and parent {parent:?}: {found:?} (used: {:?})",
            self.label,
            self.used_comms()
        );
        found[0]
    }

    fn parent_of(&self, comm: u64) -> Option<u64> {
        self.view.comms[&(comm as u32)].parent.map(u64::from)
    }

    /// Used Comms with member names and parent, for messages.
    fn used_comms(&self) -> Vec<(u64, Vec<String>, Option<u32>)> {
        self.a
            .team_begins
            .keys()
            .map(|c| {
                let comm = &self.view.comms[&(*c as u32)];
                let names = comm
                    .members
                    .iter()
                    .map(|m| self.view.locations[m].0.clone())
                    .collect();
                (*c, names, comm.parent)
            })
            .collect()
    }
}

fn num(e: &Ev, i: usize) -> u64 {
    e.detail[i]
        .parse()
        .unwrap_or_else(|_| panic!("field {i} of {e:?} is not a number"))
}

// ---- what holds for every trace ----------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Task {
    /// The implicit task of the location with this number.
    Implicit(u64),
    /// (thread team Comm, creating thread, generation number).
    Explicit(u64, u64, u64),
}

/// An explicit task in task records: (thread team Comm, creating thread, generation number).
type TaskKey = (u64, u64, u64);

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum TaskStep {
    Create,
    Begin,
    Resume,
    Complete,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LockKind {
    Plain,
    Nest,
    Critical,
}

#[derive(Debug)]
struct LockUse {
    kind: LockKind,
    /// Successful (outermost) acquisitions: the last acquisition order.
    acquisitions: u64,
    acquire_records: usize,
    release_records: usize,
}

#[derive(Debug, Default)]
struct Analysis {
    enters: BTreeMap<String, usize>,
    tasks_created: usize,
    tasks_completed: usize,
    task_begins: usize,
    task_resumes: usize,
    /// Role of the region a task began in (the scheduling point) → how many.
    begun_in: BTreeMap<String, usize>,
    locks: BTreeMap<u64, LockUse>,
    /// (lock API region, whether it acquired the lock) → how often.
    lock_calls: BTreeMap<(String, bool), usize>,
    /// Comm → ThreadTeamBegin records with it.
    team_begins: BTreeMap<u64, usize>,
    /// (location name, requested threads) of every ThreadFork.
    forks: Vec<(String, u64)>,
}

/// The roles of the regions where a task switch may resume a suspended task: the scheduling
/// points OPARI2 instruments (barriers, taskwait, and task creation, where an undeferred task
/// may have run).
const RESTORE_ROLES: [&str; 4] = ["BARRIER", "IMPLICIT_BARRIER", "TASK_WAIT", "TASK_CREATE"];
const TASK_ROLES: [&str; 2] = ["TASK", "TASK_UNTIED"];

fn analyse(view: &View, untied: bool) -> Analysis {
    view.assert_well_formed();
    let mut a = Analysis::default();
    let mut roles: HashMap<&str, &str> = HashMap::new();
    for r in view.regions.values() {
        if let Some(old) = roles.insert(&r.name, &r.role) {
            assert_eq!(old, r.role, "region {} defined with two roles", r.name);
        }
    }
    let role = |e: &Ev| -> &str { roles.get(e.detail[0].as_str()).copied().unwrap_or("?") };
    let numbers: HashMap<u64, u64> = view
        .locations
        .keys()
        .enumerate()
        .map(|(n, id)| (*id, n as u64))
        .collect();
    let master_of = |comm: u64| -> u64 {
        *view.comms[&(comm as u32)]
            .members
            .first()
            .unwrap_or_else(|| panic!("Comm {comm} has no members"))
    };

    // (time, step, location, index, task)
    let mut task_steps: Vec<(u64, TaskStep, u64, usize, TaskKey)> = Vec::new();
    let mut lock_events: Vec<(u64, u64, u8, u64, usize, u64)> = Vec::new(); // time, order, 0=acquire/1=release, loc, idx, id
    let mut lock_kinds: HashMap<u64, LockKind> = HashMap::new();
    let mut team_locations: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();

    for (&loc, events) in &view.events {
        let name = &view.locations[&loc].0;
        let number = numbers[&loc];
        let at = |i: usize| format!("{name} event {i} {:?}", events[i]);
        let mut current: Option<Task> = (number == 0).then_some(Task::Implicit(0));
        // Open regions with the task that entered them.
        let mut open: Vec<(&str, Option<Task>)> = Vec::new();
        // Open teams: (Comm, task at the begin, whether this location is the team's master).
        let mut teams: Vec<(u64, Option<Task>, bool)> = Vec::new();
        // Forks waiting for their team, and teams waiting for their join.
        let mut forked: Option<u64> = None;
        let mut joinable: Vec<u64> = Vec::new();
        // Lock records inside the lock API region that is open.
        let mut api_records: Vec<&str> = Vec::new();
        for (i, e) in events.iter().enumerate() {
            let next = events.get(i + 1).filter(|n| n.time == e.time);
            let prev = i
                .checked_sub(1)
                .map(|j| &events[j])
                .filter(|p| p.time == e.time);
            let team = || teams.last().map(|t| t.0);
            match e.kind.as_str() {
                "Enter" => {
                    assert!(current.is_some(), "{}: Enter without a current task", at(i));
                    assert!(
                        forked.is_none(),
                        "{}: Enter between a fork and its team",
                        at(i)
                    );
                    *a.enters.entry(e.detail[0].clone()).or_default() += 1;
                    open.push((&e.detail[0], current));
                    if e.detail[0].starts_with("omp_") {
                        api_records.clear();
                    }
                }
                "Leave" => {
                    let (region, task) = open.pop().expect("well formed");
                    assert_eq!(
                        task,
                        current,
                        "{}: {region} left by another task than the one that entered it",
                        at(i)
                    );
                    if let Some(call) = e.detail[0].strip_prefix("omp_") {
                        let acquired = api_records == ["acquire"];
                        let expected: &[&[&str]] = match call {
                            "set_lock" | "set_nest_lock" => &[&["acquire"]],
                            "test_lock" | "test_nest_lock" => &[&["acquire"], &[]],
                            "unset_lock" | "unset_nest_lock" => &[&["release"]],
                            _ => &[&[]],
                        };
                        assert!(
                            expected.contains(&api_records.as_slice()),
                            "{}: lock records {api_records:?} inside omp_{call}",
                            at(i)
                        );
                        *a.lock_calls
                            .entry((e.detail[0].clone(), acquired))
                            .or_default() += 1;
                        api_records.clear();
                    }
                }
                "ThreadFork" => {
                    assert!(forked.is_none(), "{}: fork after fork", at(i));
                    forked = Some(num(e, 0));
                    a.forks.push((name.clone(), num(e, 0)));
                }
                "ThreadJoin" => {
                    assert!(
                        joinable.pop().is_some(),
                        "{}: join without a team that ended on this location",
                        at(i)
                    );
                }
                "ThreadTeamBegin" => {
                    let comm = num(e, 0);
                    let members = &view.comms[&(comm as u32)].members;
                    assert!(
                        members.contains(&loc),
                        "{}: not a member of Comm {comm} {members:?}",
                        at(i)
                    );
                    let master = master_of(comm) == loc;
                    if master {
                        let requested = forked.take().unwrap_or_else(|| {
                            panic!("{}: the master begins a team it did not fork", at(i))
                        });
                        assert!(
                            requested >= members.len() as u64,
                            "{}: team of {} after a fork of {requested}",
                            at(i),
                            members.len()
                        );
                        // A one-thread team in a one-thread team reuses its Comm.
                        let reused = team() == Some(comm) && members.len() == 1;
                        assert!(
                            reused || view.comms[&(comm as u32)].parent.map(u64::from) == team(),
                            "{}: parent Comm is not the master's enclosing team {:?}",
                            at(i),
                            team()
                        );
                        assert!(current.is_some(), "{}: master without a task", at(i));
                    } else {
                        assert!(
                            teams.is_empty() && open.is_empty() && current.is_none(),
                            "{}: a worker joins a team while in another one (teams {teams:?}, open {open:?})",
                            at(i)
                        );
                        current = Some(Task::Implicit(number));
                    }
                    teams.push((comm, current, master));
                    team_locations.entry(comm).or_default().insert(loc);
                    *a.team_begins.entry(comm).or_default() += 1;
                    assert!(
                        next.is_some_and(|n| n.kind == "Enter" && role(n) == "PARALLEL"),
                        "{}: the team does not begin with its parallel region",
                        at(i)
                    );
                }
                "ThreadTeamEnd" => {
                    let comm = num(e, 0);
                    let (begun, task, master) = teams.pop().unwrap_or_else(|| {
                        panic!("{}: team end without a team", at(i));
                    });
                    assert_eq!(begun, comm, "{}: ends another team", at(i));
                    assert_eq!(
                        current,
                        task,
                        "{}: the team ends on another task than it began",
                        at(i)
                    );
                    assert!(
                        prev.is_some_and(|p| p.kind == "Leave" && role(p) == "PARALLEL"),
                        "{}: the team does not end with its parallel region",
                        at(i)
                    );
                    if master {
                        joinable.push(comm);
                    } else {
                        current = None;
                    }
                }
                "ThreadTaskCreate" | "ThreadTaskSwitch" | "ThreadTaskComplete" => {
                    let key = (num(e, 0), num(e, 1), num(e, 2));
                    assert_eq!(
                        Some(key.0),
                        team(),
                        "{}: task record with another Comm than the location's team",
                        at(i)
                    );
                    match e.kind.as_str() {
                        "ThreadTaskCreate" => {
                            assert_ne!(key.2, 0, "{}: generation 0 is for implicit tasks", at(i));
                            assert!(current.is_some(), "{}: created by no task", at(i));
                            task_steps.push((e.time, TaskStep::Create, loc, i, key));
                        }
                        "ThreadTaskSwitch" => {
                            let target = if key.2 == 0 {
                                assert_eq!(
                                    key.1,
                                    number,
                                    "{}: a switch to an implicit task names another location",
                                    at(i)
                                );
                                Task::Implicit(number)
                            } else {
                                Task::Explicit(key.0, key.1, key.2)
                            };
                            assert_ne!(
                                current,
                                Some(target),
                                "{}: switch to the running task",
                                at(i)
                            );
                            if next
                                .is_some_and(|n| n.kind == "Enter" && TASK_ROLES.contains(&role(n)))
                            {
                                assert!(
                                    matches!(target, Task::Explicit(..)),
                                    "{}: an implicit task begins",
                                    at(i)
                                );
                                let point = open.last().map_or("", |o| roles[o.0]);
                                assert!(
                                    RESTORE_ROLES.contains(&point),
                                    "{}: a task begins outside a scheduling point ({point:?})",
                                    at(i)
                                );
                                *a.begun_in.entry(point.to_string()).or_default() += 1;
                                a.task_begins += 1;
                                task_steps.push((e.time, TaskStep::Begin, loc, i, key));
                            } else {
                                let n = next.unwrap_or_else(|| {
                                    panic!("{}: a switch neither begins nor resumes a task", at(i))
                                });
                                assert!(
                                    n.kind == "Leave" && RESTORE_ROLES.contains(&role(n)),
                                    "{}: a task resumes outside a scheduling point",
                                    at(i)
                                );
                                let (region, entered_by) = open.last().expect("well formed");
                                assert_eq!(*region, n.detail[0]);
                                assert_eq!(
                                    *entered_by,
                                    Some(target),
                                    "{}: resumes another task than the one waiting in {region}",
                                    at(i)
                                );
                                a.task_resumes += 1;
                                if target != Task::Implicit(number) {
                                    task_steps.push((e.time, TaskStep::Resume, loc, i, key));
                                }
                            }
                            current = Some(target);
                        }
                        _ => {
                            assert_eq!(
                                current,
                                Some(Task::Explicit(key.0, key.1, key.2)),
                                "{}: completes another task than the running one",
                                at(i)
                            );
                            assert!(
                                prev.is_some_and(
                                    |p| p.kind == "Leave" && TASK_ROLES.contains(&role(p))
                                ),
                                "{}: completion not right after the task region",
                                at(i)
                            );
                            current = None;
                            task_steps.push((e.time, TaskStep::Complete, loc, i, key));
                        }
                    }
                }
                "ThreadAcquireLock" | "ThreadReleaseLock" => {
                    let acquire = e.kind == "ThreadAcquireLock";
                    let (id, order) = (num(e, 0), num(e, 1));
                    let context = open.last().map_or("", |o| o.0);
                    let kind = match context {
                        "omp_set_lock" | "omp_test_lock" if acquire => LockKind::Plain,
                        "omp_unset_lock" if !acquire => LockKind::Plain,
                        "omp_set_nest_lock" | "omp_test_nest_lock" if acquire => LockKind::Nest,
                        "omp_unset_nest_lock" if !acquire => LockKind::Nest,
                        r if roles.get(r) == Some(&"CRITICAL") => {
                            let sblock = if acquire { next } else { prev };
                            assert!(
                                sblock.is_some_and(|s| role(s) == "CRITICAL_SBLOCK"),
                                "{}: critical lock record not next to the critical block",
                                at(i)
                            );
                            LockKind::Critical
                        }
                        other => panic!("{}: lock record inside {other:?}", at(i)),
                    };
                    let known = *lock_kinds.entry(id).or_insert(kind);
                    assert_eq!(known, kind, "{}: lock {id} used as two kinds", at(i));
                    api_records.push(if acquire { "acquire" } else { "release" });
                    lock_events.push((e.time, order, u8::from(!acquire), loc, i, id));
                }
                _ => {}
            }
        }
        assert!(teams.is_empty(), "{name}: teams left open");
        assert!(
            forked.is_none() && joinable.is_empty(),
            "{name}: fork/join unbalanced"
        );
    }

    // Task life cycles across locations, in time order (creation before the first switch to a
    // task, completion after the last one, when timestamps tie).
    task_steps.sort();
    // Live tasks: the last step and the location that began the task (a tied task stays there;
    // ids are unique only while a task lives, so the map forgets completed ones).
    let mut alive: HashMap<TaskKey, (TaskStep, u64)> = HashMap::new();
    for (time, step, loc, i, key) in task_steps {
        let at = format!(
            "{} event {i} (t={time}) task {key:?}",
            view.locations[&loc].0
        );
        let state = alive.get(&key).copied();
        let on_runner = || {
            let runner = state.map(|s| s.1);
            assert!(
                untied || runner == Some(loc),
                "{at}: a tied task continues on another location than it began on ({:?})",
                runner.map(|r| &view.locations[&r].0)
            );
        };
        match step {
            TaskStep::Create => {
                assert!(
                    state.is_none(),
                    "{at}: created again while alive ({state:?})"
                );
                a.tasks_created += 1;
                alive.insert(key, (TaskStep::Create, loc));
            }
            TaskStep::Begin => {
                assert_eq!(
                    state.map(|s| s.0),
                    Some(TaskStep::Create),
                    "{at}: begins, but is {state:?}"
                );
                alive.insert(key, (TaskStep::Begin, loc));
            }
            TaskStep::Resume => {
                assert_eq!(
                    state.map(|s| s.0),
                    Some(TaskStep::Begin),
                    "{at}: resumes, but is {state:?}"
                );
                on_runner();
            }
            TaskStep::Complete => {
                assert_eq!(
                    state.map(|s| s.0),
                    Some(TaskStep::Begin),
                    "{at}: completes, but is {state:?}"
                );
                on_runner();
                a.tasks_completed += 1;
                alive.remove(&key);
            }
        }
    }
    assert!(alive.is_empty(), "tasks never completed: {alive:?}");

    // Locks: per id, in time order (releases before the next acquisition, acquisitions before
    // their release, when timestamps tie).
    lock_events.sort();
    let mut held: HashMap<u64, (u64, u64, u32)> = HashMap::new(); // id → (location, order, depth)
    for (time, order, release, loc, i, id) in lock_events {
        let at = format!("{} event {i} (t={time}) lock {id}", view.locations[&loc].0);
        let kind = lock_kinds[&id];
        let usage = a.locks.entry(id).or_insert(LockUse {
            kind,
            acquisitions: 0,
            acquire_records: 0,
            release_records: 0,
        });
        if release == 0 {
            usage.acquire_records += 1;
            match held.get_mut(&id) {
                None => {
                    assert_eq!(order, usage.acquisitions + 1, "{at}: acquisition order");
                    usage.acquisitions = order;
                    held.insert(id, (loc, order, 1));
                }
                Some((owner, o, depth)) => {
                    assert!(
                        kind == LockKind::Nest && *owner == loc && *o == order,
                        "{at}: acquired (order {order}) while held by {} with order {o}",
                        view.locations[owner].0
                    );
                    *depth += 1;
                }
            }
        } else {
            usage.release_records += 1;
            let (owner, o, depth) = held
                .get_mut(&id)
                .unwrap_or_else(|| panic!("{at}: released (order {order}) while not held"));
            assert!(
                *owner == loc && *o == order,
                "{at}: release of order {order} by another holder or acquisition ({o})"
            );
            *depth -= 1;
            if *depth == 0 {
                held.remove(&id);
            }
        }
    }
    assert!(held.is_empty(), "locks still held at the end: {held:?}");

    // Every team's Comm lists exactly the locations that worked in it, each once.
    for (comm, locations) in &team_locations {
        let members = &view.comms[&(*comm as u32)].members;
        let set: BTreeSet<u64> = members.iter().copied().collect();
        assert_eq!(set.len(), members.len(), "Comm {comm}: repeated members");
        assert_eq!(&set, locations, "Comm {comm}: members");
    }
    for (id, comm) in &view.comms {
        if let Some(p) = comm.parent {
            assert!(
                view.comms.contains_key(&p),
                "Comm {id}: parent {p} undefined"
            );
        }
    }
    a
}

// ---- tasks -------------------------------------------------------------------------------

const FIB_N: u64 = 20;
const FIB_CUTOFF: u64 = 8;

fn fib(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

/// Calls of the task version of fib (n > CUTOFF): each creates two tasks and waits once.
fn fib_task_calls(n: u64) -> usize {
    if n <= FIB_CUTOFF {
        0
    } else {
        1 + fib_task_calls(n - 1) + fib_task_calls(n - 2)
    }
}

#[test]
fn fibonacci_tasks_are_created_run_and_completed_once() {
    let p = Program::build("task_fib", &[]);
    assert_eq!((p.define("N"), p.define("CUTOFF")), (FIB_N, FIB_CUTOFF));
    let calls = fib_task_calls(FIB_N);
    let tasks = 2 * calls;
    assert!(tasks > 500, "a real recursion: {tasks} tasks");
    let parallel = p.region("parallel", "omp parallel");
    let single = p.region("single", "omp single");
    let (create_a, create_b) = (
        p.region("create task", "shared(a)"),
        p.region("create task", "shared(b)"),
    );
    let (task_a, task_b) = (p.region("task", "shared(a)"), p.region("task", "shared(b)"));
    let taskwait = p.region("taskwait", "omp taskwait");
    for t in THREADS {
        let r = p.run(t, &[], false);
        r.assert_team_locations(t);
        let n = t as usize;
        assert_eq!(r.printed("fib"), fib(FIB_N) as i64);
        r.assert_enters(&[
            (&parallel, n),
            (&r.implicit_barrier_of(&parallel), n),
            (&single, n),
            (
                &format!("!$omp single sblock @task_fib.c:{}", p.line("omp single")),
                1,
            ),
            (&r.implicit_barrier_of(&single), n),
            (&create_a, calls),
            (&create_b, calls),
            (&task_a, calls),
            (&task_b, calls),
            (&taskwait, calls),
        ]);
        // Resumes: at most one per create end, taskwait, and implicit barrier.
        r.assert_tasks(tasks, tasks + calls + 2 * n);
        let enters = 4 * n + 1 + 5 * calls;
        r.assert_one_team_task_kinds(n, enters, tasks);
        assert_eq!(r.a.forks, [("Master thread".to_string(), t as u64)]);
    }
}

const PRODUCER_ROUNDS: u64 = 4;
const PRODUCER_BATCH: u64 = 300;

#[test]
fn producer_tasks_from_a_single_nowait_are_consumed_by_the_team() {
    let p = Program::build("task_producer", &[]);
    let task_line = "omp task firstprivate";
    assert_eq!(
        (p.define("ROUNDS"), p.define("BATCH")),
        (PRODUCER_ROUNDS, PRODUCER_BATCH)
    );
    let rounds = PRODUCER_ROUNDS as usize;
    let tasks = (PRODUCER_ROUNDS * PRODUCER_BATCH) as usize;
    let parallel = p.region("parallel", "omp parallel");
    let single = p.region("single", "omp single nowait");
    let barrier = p.region("barrier", "omp barrier");
    for t in THREADS {
        let r = p.run(t, &[], false);
        r.assert_team_locations(t);
        let n = t as usize;
        assert_eq!(r.printed("sum"), (tasks * (tasks + 1) / 2) as i64);
        // single nowait: no implicit barrier of the single is entered.
        r.assert_enters(&[
            (&parallel, n),
            (&r.implicit_barrier_of(&parallel), n),
            (&single, n),
            (&p.region("single sblock", "omp single nowait"), 1),
            (&p.region("create task", task_line), tasks),
            (&p.region("task", task_line), tasks),
            (&p.region("atomic", "omp atomic"), tasks),
            (&p.region("taskwait", "omp taskwait"), rounds),
            (&barrier, n),
        ]);
        // Resumes: at most one per create end, taskwait, barrier and implicit barrier.
        r.assert_tasks(tasks, tasks + rounds + 2 * n);
        if n == 1 {
            // One thread cannot queue a whole batch (libgomp runs a task at once beyond 64
            // queued per thread, libomp beyond 256): tasks run inside their creation, the
            // rest at the taskwait.
            let at = |role: &str| r.a.begun_in.get(role).copied().unwrap_or(0);
            assert!(
                at("TASK_CREATE") > 0 && at("TASK_WAIT") > 0,
                "{}: tasks begun in {:?}",
                r.label,
                r.a.begun_in
            );
        }
        // Per thread: parallel, its barrier, single, the explicit barrier; the single block;
        // per task: creation, task, atomic; the taskwaits.
        let enters = 4 * n + 1 + 3 * tasks + rounds;
        r.assert_one_team_task_kinds(n, enters, tasks);
    }
}

const UNTIED_OUTER: u64 = 8;
const UNTIED_INNER: u64 = 5;

#[test]
fn untied_tasks_kept_by_opari2_still_complete_once_and_nest() {
    let p = Program::build("task_untied", &["--omp-task-untied=keep"]);
    assert_eq!(
        (p.define("OUTER"), p.define("INNER")),
        (UNTIED_OUTER, UNTIED_INNER)
    );
    let (outer, inner) = (UNTIED_OUTER as usize, UNTIED_INNER as usize);
    let children = outer * inner;
    let tasks = outer + children;
    let parallel = p.region("parallel", "omp parallel");
    let single = p.region("single", "omp single");
    let outer_line = "untied firstprivate(i) private(j)";
    let inner_line = "untied firstprivate(i, j)";
    for t in THREADS {
        let r = p.run(t, &[], true);
        r.assert_team_locations(t);
        let n = t as usize;
        // sum over (i, j) of i * INNER + j + 1, plus 1000 per outer task.
        assert_eq!(
            r.printed("sum"),
            (children * (children + 1) / 2 + 1000 * outer) as i64
        );
        r.assert_enters(&[
            (&parallel, n),
            (&r.implicit_barrier_of(&parallel), n),
            (&single, n),
            (&p.region("single sblock", "omp single"), 1),
            (&r.implicit_barrier_of(&single), n),
            (&p.region("create task", outer_line), outer),
            (&p.region("task", outer_line), outer),
            (&p.region("create task", inner_line), children),
            (&p.region("task", inner_line), children),
            (&p.region_above("atomic", "sum += i * INNER"), children),
            (&p.region_above("atomic", "sum += 1000"), outer),
            (&p.region("taskwait", "omp taskwait"), outer),
        ]);
        r.assert_tasks(tasks, tasks + outer + 2 * n);
        let enters = 4 * n + 1 + 3 * tasks + outer;
        r.assert_one_team_task_kinds(n, enters, tasks);
    }
}

const IF0_N: u64 = 16;
const IF0_INCLUDED: u64 = 4;

#[test]
fn if0_tasks_record_nothing_and_included_tasks_run_inside_their_creation() {
    let p = Program::build("task_if0", &[]);
    assert_eq!((p.define("N"), p.define("INCLUDED")), (IF0_N, IF0_INCLUDED));
    let (count, included) = (IF0_N as usize, IF0_INCLUDED as usize);
    // if(i % 2): the odd i give tasks; the even ones run undeferred, with no POMP2 call.
    let deferred = (0..count).filter(|i| i % 2 != 0).count();
    let undeferred = count - deferred;
    // + the final task and its included children + the task created inside the if(0) task.
    let tasks = deferred + 1 + included + 1;
    let parallel = p.region("parallel", "omp parallel");
    let single = p.region("single", "omp single");
    let sblock = p.region("single sblock", "omp single");
    let conditional = "if(i % 2)";
    let final_task = "final(1)";
    let child = "task firstprivate(k)";
    let if0 = "task if(0)";
    let nested_in_if0 = "nested in if0";
    let odd_atomic = p.region_above("atomic", "sum += i + 1");
    for t in THREADS {
        let r = p.run(t, &[], false);
        r.assert_team_locations(t);
        let n = t as usize;
        assert_eq!(
            r.printed("sum"),
            (count * (count + 1) / 2 + 100 * included * (included + 1) / 2 + 10000) as i64
        );
        assert!(r
            .view
            .regions
            .values()
            .any(|g| g.name == p.region("task", if0)));
        r.assert_enters(&[
            (&parallel, n),
            (&r.implicit_barrier_of(&parallel), n),
            (&single, n),
            (&sblock, 1),
            (&r.implicit_barrier_of(&single), n),
            (&p.region("create task", conditional), deferred),
            (&p.region("task", conditional), deferred),
            (&odd_atomic, count),
            (&p.region("create task", final_task), 1),
            (&p.region("task", final_task), 1),
            (&p.region("create task", child), included),
            (&p.region("task", child), included),
            (&p.region_above("atomic", "100 * (k + 1)"), included),
            (&p.region("create task", nested_in_if0), 1),
            (&p.region("task", nested_in_if0), 1),
            (&p.region_above("atomic", "sum += 10000"), 1),
            (&p.region("taskwait", "for the nested task"), 1),
            (&p.region("taskwait", "for all"), 1),
        ]);
        // Tasks run at create end (included) resume the creator there: at most one resume
        // per create end, taskwait and implicit barrier.
        r.assert_tasks(tasks, tasks + 2 + 2 * n);
        let enters = 4 * n + 1 + 2 * tasks + count + included + 1 + 2;
        r.assert_one_team_task_kinds(n, enters, tasks);
        // The undeferred (if(0)) bodies are part of the encountering task: their atomics sit
        // directly in the single block; the included children run inside their creation:
        // Enter(create) Create Switch Enter(task) ... Leave(task) Complete Switch(back)
        // Leave(create), all on one location.
        let mut in_sblock = 0;
        let mut nested_runs = 0;
        let child_create = p.region("create task", child);
        let child_task = p.region("task", child);
        for events in r.view.events.values() {
            let mut open: Vec<&str> = Vec::new();
            for (i, e) in events.iter().enumerate() {
                match e.kind.as_str() {
                    "Enter" => {
                        if e.detail[0] == odd_atomic && open.last() == Some(&sblock.as_str()) {
                            in_sblock += 1;
                        }
                        if e.detail[0] == child_create {
                            let kinds: Vec<String> = events[i..i + 8]
                                .iter()
                                .map(|e| match e.kind.as_str() {
                                    "Enter" | "Leave" => e.text(),
                                    k => k.to_string(),
                                })
                                .collect();
                            assert_eq!(
                                kinds,
                                [
                                    format!("Enter {child_create}"),
                                    "ThreadTaskCreate".into(),
                                    "ThreadTaskSwitch".into(),
                                    format!("Enter {child_task}"),
                                    format!("Enter {}", p.region_above("atomic", "100 * (k + 1)")),
                                    format!("Leave {}", p.region_above("atomic", "100 * (k + 1)")),
                                    format!("Leave {child_task}"),
                                    "ThreadTaskComplete".into(),
                                ],
                                "{}: an included task does not run inside its creation",
                                r.label
                            );
                            let (created, switched, completed, back) = (
                                &events[i + 1],
                                &events[i + 2],
                                &events[i + 7],
                                &events[i + 8],
                            );
                            assert_eq!(created.detail, switched.detail);
                            assert_eq!(created.detail, completed.detail);
                            assert_eq!(back.kind, "ThreadTaskSwitch", "{}", r.label);
                            assert_eq!(events[i + 9].text(), format!("Leave {child_create}"));
                            nested_runs += 1;
                        }
                        open.push(&e.detail[0]);
                    }
                    "Leave" => {
                        open.pop();
                    }
                    _ => {}
                }
            }
        }
        assert_eq!(in_sblock, undeferred, "{}: undeferred task bodies", r.label);
        assert_eq!(nested_runs, included, "{}: included tasks", r.label);
    }
}

// ---- locks -------------------------------------------------------------------------------

const LOCK_ITER: u64 = 10_000;

#[test]
fn a_contended_lock_is_acquired_in_order_and_released_alternately() {
    let p = Program::build("lock_counter", &[]);
    assert_eq!(p.define("ITER"), LOCK_ITER);
    let parallel = p.region("parallel", "omp parallel");
    for t in THREADS {
        let r = p.run(t, &[], false);
        r.assert_team_locations(t);
        let n = t as usize;
        let sets = n * LOCK_ITER as usize;
        assert_eq!(r.printed("counter"), sets as i64);
        r.assert_enters(&[
            (&parallel, n),
            (&r.implicit_barrier_of(&parallel), n),
            ("omp_init_lock", 1),
            ("omp_destroy_lock", 1),
            ("omp_set_lock", sets),
            ("omp_unset_lock", sets),
        ]);
        let enters = 2 * n + 2 + 2 * sets;
        r.assert_kinds(&[
            ("ProgramBegin", 1),
            ("ProgramEnd", 1),
            ("ThreadFork", 1),
            ("ThreadJoin", 1),
            ("ThreadTeamBegin", n),
            ("ThreadTeamEnd", n),
            ("Enter", enters),
            ("Leave", enters),
            ("ThreadAcquireLock", sets),
            ("ThreadReleaseLock", sets),
        ]);
        let locks: Vec<&LockUse> = r.a.locks.values().collect();
        assert_eq!(locks.len(), 1, "{}: {:?}", r.label, r.a.locks);
        assert_eq!(locks[0].kind, LockKind::Plain);
        assert_eq!(locks[0].acquisitions, sets as u64);
        assert_eq!(
            (locks[0].acquire_records, locks[0].release_records),
            (sets, sets)
        );
        // Every thread did its share on its own location.
        for name in r.location_names() {
            let sets_here = r
                .view
                .events_of(&name)
                .iter()
                .filter(|e| e.kind == "ThreadAcquireLock")
                .count();
            assert_eq!(sets_here, LOCK_ITER as usize, "{}: {name}", r.label);
        }
    }
}

#[test]
fn nest_locks_and_test_lock_failures_and_successes() {
    let p = Program::build("lock_nest_test", &[]);
    let parallel = p.region("parallel", "omp parallel");
    let critical = p.region("critical", "omp critical");
    let masters: Vec<usize> = p
        .source
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("omp master"))
        .map(|(i, _)| i + 1)
        .collect();
    let barriers: Vec<usize> = p
        .source
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("omp barrier"))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!((masters.len(), barriers.len()), (2, 3));
    for t in THREADS {
        let r = p.run(t, &[], false);
        r.assert_team_locations(t);
        let n = t as usize;
        let others = n - 1;
        assert_eq!((r.printed("ok"), r.printed("bad")), (n as i64, 0));
        let mut enters: Vec<(String, usize)> = vec![
            (parallel.clone(), n),
            (r.implicit_barrier_of(&parallel), n),
            (critical.clone(), n),
            (p.region("critical sblock", "omp critical"), n),
            // The lock is initialised and destroyed twice.
            ("omp_init_lock".into(), 2),
            ("omp_destroy_lock".into(), 2),
            ("omp_init_nest_lock".into(), 1),
            ("omp_destroy_nest_lock".into(), 1),
            // master: set both; the others: test both (fail); each thread in the critical:
            // test the lock, set the nest lock twice, test it, unset it three times, unset
            // the lock; at the end the re-initialised lock: set and unset once.
            ("omp_set_lock".into(), 1 + 1),
            ("omp_test_lock".into(), others + n),
            ("omp_unset_lock".into(), 1 + n + 1),
            ("omp_set_nest_lock".into(), 1 + 2 * n),
            ("omp_test_nest_lock".into(), others + n),
            ("omp_unset_nest_lock".into(), 1 + 3 * n),
        ];
        for line in &masters {
            enters.push((format!("!$omp master @lock_nest_test.c:{line}"), 1));
        }
        for line in &barriers {
            enters.push((format!("!$omp barrier @lock_nest_test.c:{line}"), n));
        }
        let enters: Vec<(&str, usize)> = enters.iter().map(|(s, k)| (s.as_str(), *k)).collect();
        r.assert_enters(&enters);
        let total: usize = enters.iter().map(|(_, k)| k).sum();
        // Acquisitions: lock 1 + n, nest lock 1 + 3n records, critical n, the lock again 1.
        let acquires = (1 + n) + (1 + 3 * n) + n + 1;
        r.assert_kinds(&[
            ("ProgramBegin", 1),
            ("ProgramEnd", 1),
            ("ThreadFork", 1),
            ("ThreadJoin", 1),
            ("ThreadTeamBegin", n),
            ("ThreadTeamEnd", n),
            ("Enter", total),
            ("Leave", total),
            ("ThreadAcquireLock", acquires),
            ("ThreadReleaseLock", acquires),
        ]);
        // A failed test writes no acquire record; a successful one writes one.
        let calls = |name: &str, ok: bool| {
            r.a.lock_calls
                .get(&(name.to_string(), ok))
                .copied()
                .unwrap_or(0)
        };
        assert_eq!(calls("omp_test_lock", false), others, "{}", r.label);
        assert_eq!(calls("omp_test_lock", true), n, "{}", r.label);
        assert_eq!(calls("omp_test_nest_lock", false), others, "{}", r.label);
        assert_eq!(calls("omp_test_nest_lock", true), n, "{}", r.label);
        // Per lock id: (kind, last acquisition order, acquire records, release records). The
        // lock and the nest lock: orders 1..=n+1, the nest lock repeating its order for the two
        // inner acquisitions of each thread; the critical: 1..=n; the lock variable initialised
        // again: a new id, order 1.
        let mut uses: Vec<(LockKind, u64, usize, usize)> =
            r.a.locks
                .values()
                .map(|l| (l.kind, l.acquisitions, l.acquire_records, l.release_records))
                .collect();
        uses.sort_by_key(|u| (format!("{:?}", u.0), u.1));
        let m = n as u64;
        assert_eq!(
            uses,
            [
                (LockKind::Critical, m, n, n),
                (LockKind::Nest, m + 1, 1 + 3 * n, 1 + 3 * n),
                (LockKind::Plain, 1, 1, 1),
                (LockKind::Plain, m + 1, n + 1, n + 1),
            ],
            "{}: lock uses",
            r.label
        );
        let (last_id, last) = r.a.locks.iter().next_back().unwrap();
        assert_eq!(
            (last.kind, last.acquisitions),
            (LockKind::Plain, 1),
            "{}: the re-initialised lock has the newest id {last_id}",
            r.label
        );
        // The failed tests happen on the other threads, between the first two barriers.
        for name in r.location_names().iter().skip(1) {
            let texts = r.view.texts(name, &[]);
            let first_test = texts
                .iter()
                .position(|s| s == "Enter omp_test_lock")
                .unwrap();
            assert_eq!(
                texts[first_test + 1],
                "Leave omp_test_lock",
                "{}: {name}",
                r.label
            );
            assert_eq!(texts[first_test + 2], "Enter omp_test_nest_lock");
            assert_eq!(texts[first_test + 3], "Leave omp_test_nest_lock");
        }
    }
}

// ---- nested parallelism ------------------------------------------------------------------

const NESTED_REPS: usize = 2;
const OUTER_THREADS: usize = 2;
const INNER_THREADS: usize = 3;

/// The nested program in one configuration: checks locations, Comms and every location's
/// events exactly.
fn check_nested(p: &Program, threads: u32, env: &[(&str, &str)], nested: bool) {
    let r = p.run(threads, env, false);
    let inner = if nested { INNER_THREADS } else { 1 };
    let sum: usize = (0..OUTER_THREADS)
        .flat_map(|o| (0..inner).map(move |i| 10 * o + i + 1))
        .sum();
    assert_eq!(r.printed("sum"), (NESTED_REPS * sum) as i64, "{}", r.label);

    // Locations: the outer team's threads, then, per outer thread k, the inner threads k:j.
    let mut names = vec!["Master thread".to_string(), "OMP thread 1".to_string()];
    let inner_names = |k: usize| -> Vec<String> {
        let head = if k == 0 {
            "Master thread".to_string()
        } else {
            format!("OMP thread {k}")
        };
        std::iter::once(head)
            .chain((1..inner).map(|j| format!("OMP thread {k}:{j}")))
            .collect()
    };
    for k in 0..OUTER_THREADS {
        names.extend(inner_names(k).into_iter().skip(1));
    }
    let mut have = r.location_names();
    have.sort();
    names.sort();
    assert_eq!(have, names, "{}: locations", r.label);

    // Comms: one for the outer team (top level), one per inner team (parent: the outer one),
    // reused by every repetition.
    let outer = r.used_comm(&["Master thread", "OMP thread 1"], None);
    let mut labels = HashMap::from([(outer, "outer".to_string())]);
    for k in 0..OUTER_THREADS {
        let members = inner_names(k);
        let members: Vec<&str> = members.iter().map(String::as_str).collect();
        let c = r.used_comm(&members, Some(outer));
        labels.insert(c, format!("inner{k}"));
    }
    assert_eq!(
        r.a.team_begins.len(),
        1 + OUTER_THREADS,
        "{}: {:?}",
        r.label,
        r.used_comms()
    );

    let par_outer = p.region("parallel", "num_threads(2)");
    let par_inner = p.region("parallel", "num_threads(3)");
    let create = p.region("create task", "omp task");
    let task = p.region("task", "omp task");
    let atomic = p.region("atomic", "omp atomic");
    let ibar_outer = r.implicit_barrier_of(&par_outer);
    let ibar_inner = r.implicit_barrier_of(&par_inner);
    let inner_team = |k: usize, fork: bool| -> Vec<String> {
        let mut v = Vec::new();
        if fork {
            v.push(format!("ThreadFork {INNER_THREADS}"));
        }
        v.extend([
            format!("ThreadTeamBegin inner{k}"),
            format!("Enter {par_inner}"),
            format!("Enter {create}"),
            format!("Leave {create}"),
            format!("Enter {ibar_inner}"),
            format!("Leave {ibar_inner}"),
            format!("Leave {par_inner}"),
            format!("ThreadTeamEnd inner{k}"),
        ]);
        if fork {
            v.push("ThreadJoin".into());
        }
        v
    };
    let outer_member = |k: usize| -> Vec<String> {
        let mut v = Vec::new();
        if k == 0 {
            v.push(format!("ThreadFork {OUTER_THREADS}"));
        }
        v.extend([
            "ThreadTeamBegin outer".to_string(),
            format!("Enter {par_outer}"),
        ]);
        v.extend(inner_team(k, true));
        v.extend([
            format!("Enter {ibar_outer}"),
            format!("Leave {ibar_outer}"),
            format!("Leave {par_outer}"),
            "ThreadTeamEnd outer".to_string(),
        ]);
        if k == 0 {
            v.push("ThreadJoin".into());
        }
        v
    };
    // Each location's events, without the tasks (which any thread of the inner team may run,
    // at its barrier): the checks of `analyse` cover those.
    let without_tasks = |location: &str| -> Vec<String> {
        let task_regions = [
            format!("Enter {task}"),
            format!("Leave {task}"),
            format!("Enter {atomic}"),
            format!("Leave {atomic}"),
        ];
        r.symbolic(location, &labels)
            .into_iter()
            .filter(|e| !e.starts_with("ThreadTask") && !task_regions.contains(e))
            .collect()
    };
    for k in 0..OUTER_THREADS {
        let members = inner_names(k);
        assert_eq!(
            without_tasks(&members[0]),
            vec![outer_member(k); NESTED_REPS].concat(),
            "{}: {}",
            r.label,
            members[0]
        );
        for m in &members[1..] {
            assert_eq!(
                without_tasks(m),
                vec![inner_team(k, false); NESTED_REPS].concat(),
                "{}: {m}",
                r.label
            );
        }
    }
    let locations = names.len();
    // Per repetition: outer threads enter their parallel region and barrier; inner threads
    // theirs, the creation of their task, a task and its atomic.
    let tasks = NESTED_REPS * OUTER_THREADS * inner;
    let enters = NESTED_REPS * OUTER_THREADS * 2 + 5 * tasks;
    r.assert_enters(&[
        (&par_outer, NESTED_REPS * OUTER_THREADS),
        (&ibar_outer, NESTED_REPS * OUTER_THREADS),
        (&par_inner, tasks),
        (&ibar_inner, tasks),
        (&create, tasks),
        (&task, tasks),
        (&atomic, tasks),
    ]);
    // Resumes: at most one per task creation and inner or outer barrier.
    r.assert_tasks(tasks, tasks + tasks + NESTED_REPS * OUTER_THREADS);
    r.assert_kinds(&[
        ("ProgramBegin", 1),
        ("ProgramEnd", 1),
        ("ThreadTaskCreate", tasks),
        ("ThreadTaskComplete", tasks),
        ("ThreadTaskSwitch", tasks + r.a.task_resumes),
        ("ThreadFork", NESTED_REPS * (1 + OUTER_THREADS)),
        ("ThreadJoin", NESTED_REPS * (1 + OUTER_THREADS)),
        (
            "ThreadTeamBegin",
            NESTED_REPS * (OUTER_THREADS + OUTER_THREADS * inner),
        ),
        (
            "ThreadTeamEnd",
            NESTED_REPS * (OUTER_THREADS + OUTER_THREADS * inner),
        ),
        ("Enter", enters),
        ("Leave", enters),
    ]);
    assert_eq!(locations, OUTER_THREADS * inner);
}

#[test]
fn nested_teams_of_2x3_with_max_active_levels_2() {
    let p = Program::build("nested_2x3", &[]);
    assert_eq!(p.define("REPS") as usize, NESTED_REPS);
    for t in THREADS {
        check_nested(&p, t, &[("OMP_MAX_ACTIVE_LEVELS", "2")], true);
    }
    // The same through omp_set_nested(1) in the program.
    check_nested(&p, 2, &[("NESTED_API", "1")], true);
}

#[test]
fn nested_teams_are_singletons_when_nesting_is_disabled() {
    let p = Program::build("nested_2x3", &[]);
    for t in THREADS {
        check_nested(&p, t, &[], false);
    }
    check_nested(&p, 4, &[("OMP_MAX_ACTIVE_LEVELS", "1")], false);
}

// ---- parallel edge cases -----------------------------------------------------------------

const EDGE_N: usize = 10;
/// The num_threads of the parallel region inside the task and of the last, top-level one.
const PAIR: usize = 2;

#[test]
fn one_thread_teams_orphaned_worksharing_and_a_parallel_region_inside_a_task() {
    let p = Program::build("parallel_edge", &[]);
    assert_eq!(p.define("N") as usize, EDGE_N);
    let for_ = p.region("for", "omp for");
    let single = p.region("single", "single /* orphaned */");
    let sblock = p.region("single sblock", "single /* orphaned */");
    let master = p.region("master", "omp master");
    let atomic_for = p.region_above("atomic", "sum += scale;");
    let atomic_single = p.region_above("atomic", "sum += 100 * scale");
    let atomic_master = p.region_above("atomic", "sum += 1000 * scale");
    let par_one = p.region("parallel", "/* one thread */");
    let par_one_in_one = p.region("parallel", "singleton in singleton");
    let atomic_one_in_one = p.region_above("atomic", "sum += 100000;");
    let par_if0 = p.region("parallel", "if(0)");
    let par_main = p.region("parallel", "parallel /* main */");
    let main_single = p.region("single", "single /* creates the task */");
    let par_task = p.region("parallel", "/* in the task */");
    let task = p.region("task", "omp task");
    let atomic_task = p.region_above("atomic", "sum += 10000;");
    let par_pair = p.region("parallel", "top-level pair");
    let atomic_pair = p.region_above("atomic", "sum += 1000000;");
    for (t, levels) in [(1, 1), (2, 1), (4, 1), (2, 2)] {
        let env: &[(&str, &str)] = if levels == 2 {
            &[("OMP_MAX_ACTIVE_LEVELS", "2")]
        } else {
            &[]
        };
        let r = p.run(t, env, false);
        let n = t as usize;
        // The region in the task is nested in the main team, so it has one thread unless the
        // main team has one (then it is the only active level) or nesting is enabled.
        let inner = if n == 1 || levels > 1 { PAIR } else { 1 };
        let work_sum: usize = (1..=3).map(|s| EDGE_N * s + 100 * s + 1000 * s).sum();
        assert_eq!(
            r.printed("sum"),
            (work_sum + 100_000 + 10_000 * inner + 1_000_000 * PAIR) as i64,
            "{}",
            r.label
        );

        // Teams and their Comms. S: the one-thread team at top level, reused by the nested
        // one-thread team inside it, by if(0), and by the main region when it has one thread.
        let singleton = r.used_comm(&["Master thread"], None);
        let mut labels = HashMap::from([(singleton, "S".to_string())]);
        let team_names: Vec<String> = std::iter::once("Master thread".to_string())
            .chain((1..n).map(|k| format!("OMP thread {k}")))
            .collect();
        let team_members: Vec<&str> = team_names.iter().map(String::as_str).collect();
        let main_team = if n == 1 {
            singleton
        } else {
            r.used_comm(&team_members, None)
        };
        if n > 1 {
            labels.insert(main_team, "M".into());
        }
        // The last region's team of two (the main team's Comm again when that has two).
        let pair = r.used_comm(&["Master thread", "OMP thread 1"], None);
        labels.insert(pair, "P".into());

        // Orphaned worksharing, as it runs outside any team and in one-thread teams.
        let ibar_for = r.implicit_barrier_of(&for_);
        let ibar_single = r.implicit_barrier_of(&single);
        let mut work = vec![format!("Enter {for_}")];
        for _ in 0..EDGE_N {
            work.extend([format!("Enter {atomic_for}"), format!("Leave {atomic_for}")]);
        }
        work.extend([
            format!("Enter {ibar_for}"),
            format!("Leave {ibar_for}"),
            format!("Leave {for_}"),
            format!("Enter {single}"),
            format!("Enter {sblock}"),
            format!("Enter {atomic_single}"),
            format!("Leave {atomic_single}"),
            format!("Leave {sblock}"),
            format!("Enter {ibar_single}"),
            format!("Leave {ibar_single}"),
            format!("Leave {single}"),
            format!("Enter {master}"),
            format!("Enter {atomic_master}"),
            format!("Leave {atomic_master}"),
            format!("Leave {master}"),
        ]);
        // A whole parallel region on one location: fork, team, body, barrier, join.
        let region = |fork: usize, team: &str, par: &str, body: &[String]| -> Vec<String> {
            let ibar = r.implicit_barrier_of(par);
            let mut v = vec![
                format!("ThreadFork {fork}"),
                format!("ThreadTeamBegin {team}"),
                format!("Enter {par}"),
            ];
            v.extend(body.iter().cloned());
            v.extend([
                format!("Enter {ibar}"),
                format!("Leave {ibar}"),
                format!("Leave {par}"),
                format!("ThreadTeamEnd {team}"),
                "ThreadJoin".to_string(),
            ]);
            v
        };
        let atomic = |name: &str| [format!("Enter {name}"), format!("Leave {name}")];
        let mut one_body = work.clone();
        one_body.extend(region(1, "S", &par_one_in_one, &atomic(&atomic_one_in_one)));
        let mut expected = work.clone();
        expected.extend(region(1, "S", &par_one, &one_body));
        expected.extend(region(n, "S", &par_if0, &work));
        expected.push(format!("ThreadFork {n}"));
        let master_events = r.symbolic("Master thread", &labels);
        assert_eq!(
            master_events[..expected.len()],
            expected[..],
            "{}: orphaned constructs and one-thread teams",
            r.label
        );
        // The last region: a top-level team of two, whatever came before.
        let pair_body = region(PAIR, "P", &par_pair, &atomic(&atomic_pair));
        assert_eq!(
            master_events[master_events.len() - pair_body.len()..],
            pair_body[..],
            "{}: the top-level pair on the master",
            r.label
        );
        let pair_worker = pair_body[1..pair_body.len() - 1].to_vec();
        let thread1 = r.symbolic("OMP thread 1", &labels);
        assert_eq!(
            thread1[thread1.len() - pair_worker.len()..],
            pair_worker[..],
            "{}: the top-level pair on OMP thread 1",
            r.label
        );

        // The task with the parallel region: whoever runs it forks the inner team from
        // inside the task, and continues the task after the join.
        let runners: Vec<String> = r
            .location_names()
            .into_iter()
            .filter(|l| r.view.texts(l, &[]).contains(&format!("Enter {task}")))
            .collect();
        assert_eq!(runners.len(), 1, "{}: {runners:?}", r.label);
        let runner = &runners[0];
        let runner_thread = if runner == "Master thread" {
            0
        } else {
            runner["OMP thread ".len()..].parse::<usize>().unwrap()
        };
        let worker = if inner == 1 {
            None
        } else if n == 1 {
            // The first team of more than one thread: its worker is top-level thread 1.
            Some("OMP thread 1".to_string())
        } else {
            Some(format!("OMP thread {runner_thread}:1"))
        };
        let inner_members: Vec<&str> = std::iter::once(runner.as_str())
            .chain(worker.as_deref())
            .collect();
        let inner_team = r.used_comm(&inner_members, Some(main_team));
        labels.insert(inner_team, "I".into());
        let in_task = region(inner, "I", &par_task, &atomic(&atomic_task));
        let in_task = &in_task[1..in_task.len() - 1];
        let runner_events = r.symbolic(runner, &labels);
        let start = runner_events
            .iter()
            .position(|s| s == &format!("Enter {task}"))
            .unwrap();
        let begin = runner_events[start - 1].clone();
        assert!(
            begin.starts_with(&format!("ThreadTaskSwitch {main_team} ")),
            "{}: {begin}",
            r.label
        );
        let mut want = vec![format!("Enter {task}"), format!("ThreadFork {PAIR}")];
        want.extend(in_task.iter().cloned());
        want.extend([
            "ThreadJoin".to_string(),
            format!("Leave {task}"),
            begin.replace("ThreadTaskSwitch", "ThreadTaskComplete"),
        ]);
        assert_eq!(
            runner_events[start..start + want.len()],
            want[..],
            "{}: the task with the parallel region, on {runner}",
            r.label
        );
        if let Some(w) = &worker {
            let events = r.symbolic(w, &labels);
            assert_eq!(events[..in_task.len()], in_task[..], "{}: {w}", r.label);
        }
        let mut want_locations = team_names.clone();
        for extra in worker.iter().chain(Some(&"OMP thread 1".to_string())) {
            if !want_locations.contains(extra) {
                want_locations.push(extra.clone());
            }
        }
        want_locations.sort();
        let mut have = r.location_names();
        have.sort();
        assert_eq!(have, want_locations, "{}: locations", r.label);
        // S, the main team (S itself with one thread), the team in the task, the pair (the
        // main team with two threads).
        let comms = 1 + usize::from(n > 1) + 1 + usize::from(n != PAIR);
        assert_eq!(
            r.a.team_begins.len(),
            comms,
            "{}: {:?}",
            r.label,
            r.used_comms()
        );

        r.assert_tasks(1, 1 + 2 * n);
        // for, its atomics and barrier; single, block, atomic, barrier; master, atomic.
        let work_enters = (1 + EDGE_N + 1) + 4 + 2;
        // num_threads(1), the one inside it and if(0), with their barriers; one atomic.
        let one_thread_enters = 3 * 2 + 1;
        // Per thread: parallel, its barrier, single, its barrier; the single block, the task's
        // creation and the task; per thread of the team in the task: parallel, atomic, barrier.
        let main_enters = 4 * n + 3 + 3 * inner;
        let pair_enters = 3 * PAIR;
        let enters = 3 * work_enters + one_thread_enters + main_enters + pair_enters;
        r.assert_enters(&[
            (&for_, 3),
            (&atomic_for, 3 * EDGE_N),
            (&ibar_for, 3),
            (&single, 3),
            (&sblock, 3),
            (&atomic_single, 3),
            (&ibar_single, 3),
            (&master, 3),
            (&atomic_master, 3),
            (&par_one, 1),
            (&r.implicit_barrier_of(&par_one), 1),
            (&par_one_in_one, 1),
            (&r.implicit_barrier_of(&par_one_in_one), 1),
            (&atomic_one_in_one, 1),
            (&par_if0, 1),
            (&r.implicit_barrier_of(&par_if0), 1),
            (&par_main, n),
            (&r.implicit_barrier_of(&par_main), n),
            (&main_single, n),
            (
                &p.region("single sblock", "single /* creates the task */"),
                1,
            ),
            (&r.implicit_barrier_of(&main_single), n),
            (&p.region("create task", "omp task"), 1),
            (&task, 1),
            (&par_task, inner),
            (&atomic_task, inner),
            (&r.implicit_barrier_of(&par_task), inner),
            (&par_pair, PAIR),
            (&atomic_pair, PAIR),
            (&r.implicit_barrier_of(&par_pair), PAIR),
        ]);
        let teams = 1 + 1 + 1 + n + inner + PAIR;
        r.assert_kinds(&[
            ("ProgramBegin", 1),
            ("ProgramEnd", 1),
            ("ThreadFork", 6),
            ("ThreadJoin", 6),
            ("ThreadTeamBegin", teams),
            ("ThreadTeamEnd", teams),
            ("Enter", enters),
            ("Leave", enters),
            ("ThreadTaskCreate", 1),
            ("ThreadTaskComplete", 1),
            ("ThreadTaskSwitch", 1 + r.a.task_resumes),
        ]);
        let mut forks: Vec<u64> = r.a.forks.iter().map(|f| f.1).collect();
        forks.sort();
        let mut want = vec![1, 1, n as u64, n as u64, PAIR as u64, PAIR as u64];
        want.sort();
        assert_eq!(forks, want, "{}: requested threads", r.label);
    }
}

// ---- the checks themselves ---------------------------------------------------------------

/// Reads the trace again, breaks it with `mutate`, and requires `analyse` to reject it with a
/// message containing one of `expect`.
fn must_reject(r: &Traced, untied: bool, expect: &[&str], mutate: impl FnOnce(&mut View)) {
    let mut view = View::read(&r.anchor);
    mutate(&mut view);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| analyse(&view, untied)));
    let Err(e) = result else {
        panic!(
            "{}: a trace broken for {expect:?} passed the checks",
            r.label
        );
    };
    let message = e
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(
        expect.iter().any(|x| message.contains(x)),
        "{}: rejected for another reason than {expect:?}: {message}",
        r.label
    );
}

/// (location id, index) of the events of `kind` matching `pick`.
fn find(view: &View, kind: &str, pick: impl Fn(&[Ev], usize) -> bool) -> Vec<(u64, usize)> {
    let mut found = Vec::new();
    for (loc, events) in &view.events {
        for (i, e) in events.iter().enumerate() {
            if e.kind == kind && pick(events, i) {
                found.push((*loc, i));
            }
        }
    }
    found
}

fn remove(view: &mut View, (loc, i): (u64, usize)) {
    view.events.get_mut(&loc).unwrap().remove(i);
    view.locations.get_mut(&loc).unwrap().1 -= 1;
}

fn event(view: &mut View, (loc, i): (u64, usize)) -> &mut Ev {
    &mut view.events.get_mut(&loc).unwrap()[i]
}

#[test]
fn the_checks_reject_broken_traces() {
    let p = Program::build("task_if0", &[]);
    let r = p.run(2, &[], false);
    let is_begin = |ev: &[Ev], i: usize| ev.get(i + 1).is_some_and(|n| n.kind == "Enter");
    let is_restore = |ev: &[Ev], i: usize| ev.get(i + 1).is_some_and(|n| n.kind == "Leave");
    // A switch back to an implicit task that names another location.
    must_reject(&r, false, &["names another location"], |v| {
        let at = find(v, "ThreadTaskSwitch", |ev, i| ev[i].detail[2] == "0")[0];
        event(v, at).detail[1] = "7".into();
    });
    // A task that never completes.
    must_reject(&r, false, &["never completed"], |v| {
        let at = find(v, "ThreadTaskComplete", |_, _| true)[0];
        remove(v, at);
    });
    // A task that begins without having been created.
    must_reject(
        &r,
        false,
        &["begins, but is None", "completes another task"],
        |v| {
            let at = find(v, "ThreadTaskSwitch", is_begin)[0];
            event(v, at).detail[2] = "999".into();
        },
    );
    // A task record with another team than the location's.
    must_reject(&r, false, &["another Comm"], |v| {
        let at = find(v, "ThreadTaskCreate", |_, _| true)[0];
        event(v, at).detail[0] = "0".into();
    });
    // A resume of another task than the one waiting in the scheduling point.
    must_reject(&r, false, &["resumes another task"], |v| {
        let at = find(v, "ThreadTaskSwitch", |ev, i| is_restore(ev, i))[0];
        let other = find(v, "ThreadTaskCreate", |_, _| true)[0];
        let detail = v.events[&other.0][other.1].detail.clone();
        let loc_number = v.locations.keys().position(|l| *l == at.0).unwrap();
        let e = event(v, at);
        if e.detail[2] == "0" {
            e.detail = detail;
        } else {
            e.detail[1] = loc_number.to_string();
            e.detail[2] = "0".into();
        }
    });
    // Events recorded on a completed task (between its completion and the switch back).
    must_reject(&r, false, &["Enter without a current task"], |v| {
        let (loc, i) = find(v, "ThreadTaskComplete", |ev, i| {
            ev.get(i + 1).is_some_and(|n| n.kind == "ThreadTaskSwitch")
        })[0];
        let events = v.events.get_mut(&loc).unwrap();
        let leave = events[i - 1].clone();
        let enter = Ev {
            kind: "Enter".into(),
            ..leave.clone()
        };
        let time = events[i].time;
        for (k, mut e) in [enter, leave].into_iter().enumerate() {
            e.time = time;
            events.insert(i + 1 + k, e);
        }
        v.locations.get_mut(&loc).unwrap().1 += 2;
    });

    let p = Program::build("lock_nest_test", &[]);
    let r = p.run(2, &[], false);
    let in_region = |name: &'static str| {
        move |ev: &[Ev], i: usize| {
            ev[..i]
                .iter()
                .rev()
                .find(|e| e.kind == "Enter")
                .is_some_and(|e| e.detail[0] == name)
        }
    };
    // An acquisition order that skips one.
    must_reject(&r, false, &["acquisition order", "release of order"], |v| {
        let at = find(v, "ThreadAcquireLock", in_region("omp_set_lock"))[0];
        let e = event(v, at);
        e.detail[1] = (e.detail[1].parse::<u64>().unwrap() + 1).to_string();
    });
    // A release that is missing.
    must_reject(&r, false, &["inside omp_unset_lock"], |v| {
        let at = find(v, "ThreadReleaseLock", in_region("omp_unset_lock"))[0];
        remove(v, at);
    });
    // A failed test that acquires.
    must_reject(&r, false, &["while held by"], |v| {
        let failed = find(v, "Leave", |ev, i| {
            ev[i].detail[0] == "omp_test_lock" && ev[i - 1].kind == "Enter"
        })[0];
        let acquire = find(v, "ThreadAcquireLock", in_region("omp_set_lock"))[0];
        let mut copy = v.events[&acquire.0][acquire.1].clone();
        copy.time = v.events[&failed.0][failed.1].time;
        v.events.get_mut(&failed.0).unwrap().insert(failed.1, copy);
        v.locations.get_mut(&failed.0).unwrap().1 += 1;
    });

    let p = Program::build("nested_2x3", &[]);
    let r = p.run(2, &[("OMP_MAX_ACTIVE_LEVELS", "2")], false);
    let outer = r.used_comm(&["Master thread", "OMP thread 1"], None);
    let inner0 = r.location_id("OMP thread 0:1");
    // A location in a team it is not a member of.
    must_reject(&r, false, &["not a member"], |v| {
        let events = v.events.get_mut(&inner0).unwrap();
        events[0].detail[0] = outer.to_string();
    });
    // A nested team whose Comm has no parent.
    must_reject(&r, false, &["parent Comm"], |v| {
        let c = v.events[&inner0][0].detail[0].parse::<u32>().unwrap();
        v.comms.get_mut(&c).unwrap().parent = None;
    });
    // Two logical threads mixed on one location: a worker's team begins inside another team.
    must_reject(&r, false, &["while in another one", "not a member"], |v| {
        let thread1 = r.location_id("OMP thread 1");
        let moved: Vec<Ev> = v.events.get_mut(&inner0).unwrap().drain(..).collect();
        v.locations.get_mut(&inner0).unwrap().1 = 0;
        let events = v.events.get_mut(&thread1).unwrap();
        let at = events.iter().position(|e| e.kind == "Enter").unwrap() + 1;
        let n = moved.len();
        for (k, mut e) in moved.into_iter().enumerate() {
            e.time = events[at - 1].time;
            events.insert(at + k, e);
        }
        v.locations.get_mut(&thread1).unwrap().1 += n as u64;
    });
}
