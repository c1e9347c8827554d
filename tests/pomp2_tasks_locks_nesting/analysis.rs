//! What holds for every trace: per-location nesting, tasks, locks and thread teams,
//! collected into an `Analysis` or reported as violations.

use super::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Task {
    /// The implicit task of the location with this number.
    Implicit(u64),
    /// (thread team Comm, creating thread, generation number).
    Explicit(u64, u64, u64),
}

/// An explicit task in task records: (thread team Comm, creating thread, generation number).
pub(crate) type TaskKey = (u64, u64, u64);

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum TaskStep {
    Create,
    Begin,
    Resume,
    Complete,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LockKind {
    Plain,
    Nest,
    Critical,
}

#[derive(Debug)]
pub(crate) struct LockUse {
    pub(crate) kind: LockKind,
    /// Successful (outermost) acquisitions: the last acquisition order.
    pub(crate) acquisitions: u64,
    pub(crate) acquire_records: usize,
    pub(crate) release_records: usize,
}

#[derive(Debug, Default)]
pub(crate) struct Analysis {
    pub(crate) enters: BTreeMap<String, usize>,
    pub(crate) tasks_created: usize,
    pub(crate) tasks_completed: usize,
    pub(crate) task_begins: usize,
    pub(crate) task_resumes: usize,
    /// Role of the region a task began in (the scheduling point) → how many.
    pub(crate) begun_in: BTreeMap<String, usize>,
    pub(crate) locks: BTreeMap<u64, LockUse>,
    /// (lock API region, whether it acquired the lock) → how often.
    pub(crate) lock_calls: BTreeMap<(String, bool), usize>,
    /// Comm → ThreadTeamBegin records with it.
    pub(crate) team_begins: BTreeMap<u64, usize>,
    /// (location name, requested threads) of every ThreadFork.
    pub(crate) forks: Vec<(String, u64)>,
}

/// The roles of the regions where a task switch may resume a suspended task: the scheduling
/// points OPARI2 instruments (barriers, taskwait, and task creation, where an undeferred task
/// may have run).
pub(crate) const RESTORE_ROLES: [&str; 4] =
    ["BARRIER", "IMPLICIT_BARRIER", "TASK_WAIT", "TASK_CREATE"];
pub(crate) const TASK_ROLES: [&str; 2] = ["TASK", "TASK_UNTIED"];

pub(crate) fn analyse(view: &View, untied: bool) -> Analysis {
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
