//! Per-location record sequences checked against patterns with optional and repeated parts,
//! for constructs where the runtime decides which thread does what (sections, single, tasks,
//! lock retries), and whole-trace checks of lock and task records. Included with
//! `#[path = "support/sequence.rs"] mod sequence;` next to `mod support;`.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::support::pomp2::{run_traced, Ev, View};

/// A pattern over event texts ([`Ev::text`]).
#[derive(Clone, Debug)]
pub enum Pat {
    /// One event whose text is this; a text ending in `*` matches every text with that prefix.
    Lit(String),
    Seq(Vec<Pat>),
    Opt(Box<Pat>),
    /// Zero or more.
    Star(Box<Pat>),
    /// One of these.
    Alt(Vec<Pat>),
}

pub fn lit(text: impl Into<String>) -> Pat {
    Pat::Lit(text.into())
}
pub fn seq(parts: impl IntoIterator<Item = Pat>) -> Pat {
    Pat::Seq(parts.into_iter().collect())
}
pub fn opt(p: Pat) -> Pat {
    Pat::Opt(Box::new(p))
}
pub fn star(p: Pat) -> Pat {
    Pat::Star(Box::new(p))
}
pub fn alt(parts: impl IntoIterator<Item = Pat>) -> Pat {
    Pat::Alt(parts.into_iter().collect())
}
/// Nothing.
pub fn empty() -> Pat {
    Pat::Seq(Vec::new())
}
pub fn enter(region: &str) -> Pat {
    lit(format!("Enter {region}"))
}
pub fn leave(region: &str) -> Pat {
    lit(format!("Leave {region}"))
}
/// `Enter region`, `inner`, `Leave region`.
pub fn region(name: &str, inner: impl IntoIterator<Item = Pat>) -> Pat {
    seq(std::iter::once(enter(name))
        .chain(inner)
        .chain(std::iter::once(leave(name))))
}
/// `count` times `p`.
pub fn times(count: usize, p: Pat) -> Pat {
    seq(std::iter::repeat(p).take(count))
}

fn lit_matches(pattern: &str, text: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => text.starts_with(prefix),
        None => pattern == text,
    }
}

struct State {
    /// The furthest position any partial match reached (for the failure message).
    best: usize,
    steps: usize,
}

const STEP_LIMIT: usize = 50_000_000;

fn go(
    p: &Pat,
    s: &[String],
    i: usize,
    st: &mut State,
    k: &mut dyn FnMut(usize, &mut State) -> bool,
) -> bool {
    st.steps += 1;
    assert!(st.steps < STEP_LIMIT, "pattern matching does not terminate");
    match p {
        Pat::Lit(l) => {
            if i < s.len() && lit_matches(l, &s[i]) {
                st.best = st.best.max(i + 1);
                k(i + 1, st)
            } else {
                false
            }
        }
        Pat::Seq(parts) => go_seq(parts, s, i, st, k),
        Pat::Opt(q) => go(q, s, i, st, k) || k(i, st),
        Pat::Star(q) => {
            // Greedy; an iteration must consume something.
            go(q, s, i, st, &mut |j, st: &mut State| {
                j > i && go(p, s, j, st, k)
            }) || k(i, st)
        }
        Pat::Alt(parts) => parts.iter().any(|q| go(q, s, i, st, k)),
    }
}

fn go_seq(
    parts: &[Pat],
    s: &[String],
    i: usize,
    st: &mut State,
    k: &mut dyn FnMut(usize, &mut State) -> bool,
) -> bool {
    match parts.split_first() {
        None => k(i, st),
        Some((first, rest)) => go(first, s, i, st, &mut |j, st: &mut State| {
            go_seq(rest, s, j, st, k)
        }),
    }
}

/// Whether all of `texts` matches `p`; on failure a message showing where matching stopped.
/// The matcher recurses once per matched record, so it runs on a thread with a stack large
/// enough for long sequences (a test thread has 2 MiB; the pages are only used as needed).
pub fn check(p: &Pat, texts: &[String]) -> Result<(), String> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(1 << 30)
            .spawn_scoped(scope, || check_here(p, texts))
            .expect("start the matcher thread")
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

fn check_here(p: &Pat, texts: &[String]) -> Result<(), String> {
    let mut st = State { best: 0, steps: 0 };
    if go(p, texts, 0, &mut st, &mut |j, _| j == texts.len()) {
        return Ok(());
    }
    let mut message = format!(
        "the sequence does not match the pattern; the longest match ends before event {}:\n",
        st.best
    );
    for (i, t) in texts.iter().enumerate() {
        let mark = if i == st.best { ">>" } else { "  " };
        message.push_str(&format!("{mark} {i:4} {t}\n"));
    }
    if st.best == texts.len() {
        message.push_str(">> (end of sequence)\n");
    }
    Err(message)
}

/// A location's event texts without ProgramBegin/End and BufferFlush.
pub fn texts(view: &View, location: &str) -> Vec<String> {
    view.events_of(location)
        .iter()
        .filter(|e| {
            !matches!(
                e.kind.as_str(),
                "ProgramBegin" | "ProgramEnd" | "BufferFlush"
            )
        })
        .map(Ev::text)
        .collect()
}

/// Checks a location against a pattern, panicking with the sequence on failure.
pub fn assert_location(view: &View, location: &str, p: &Pat, what: &str) {
    if let Err(message) = check(p, &texts(view, location)) {
        panic!("{what}, location {location:?}: {message}");
    }
}

/// Enters per region name over the whole trace.
pub fn enters(view: &View) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for e in view.events.values().flatten() {
        if e.kind == "Enter" {
            *counts.entry(e.detail[0].clone()).or_insert(0) += 1;
        }
    }
    counts
}

fn numbers(e: &Ev) -> Vec<u64> {
    e.detail.iter().map(|d| d.parse().unwrap()).collect()
}

/// Lock records: on every location each release names the lock and order of the latest
/// acquisition of that lock there; per lock, the acquisition orders are 1, 2, ... without gaps
/// (nest locks repeat an order for inner acquisitions). Returns acquisitions per lock id.
pub fn assert_locks_consistent(view: &View) -> BTreeMap<u64, usize> {
    let mut acquisitions: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for (location, events) in &view.events {
        let mut held: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        for e in events {
            match e.kind.as_str() {
                "ThreadAcquireLock" => {
                    let n = numbers(e);
                    held.entry(n[0]).or_default().push(n[1]);
                    acquisitions.entry(n[0]).or_default().push(n[1]);
                }
                "ThreadReleaseLock" => {
                    let n = numbers(e);
                    let last = held.get_mut(&n[0]).and_then(Vec::pop);
                    assert_eq!(
                        last,
                        Some(n[1]),
                        "location {location}: release of lock {} order {} without that acquisition",
                        n[0],
                        n[1]
                    );
                }
                _ => {}
            }
        }
        for (lock, orders) in held {
            assert!(
                orders.is_empty(),
                "location {location}: lock {lock} still held"
            );
        }
    }
    acquisitions
        .into_iter()
        .map(|(lock, mut orders)| {
            let count = orders.len();
            orders.sort_unstable();
            orders.dedup();
            let expected: Vec<u64> = (1..=orders.len() as u64).collect();
            assert_eq!(orders, expected, "lock {lock}: acquisition orders");
            (lock, count)
        })
        .collect()
}

/// Task records: every created task (creating thread, generation) is switched to at least once
/// and completed exactly once, and nothing else is completed. Returns the number of tasks.
pub fn assert_tasks_consistent(view: &View) -> usize {
    let mut created: BTreeMap<(u64, u64), usize> = BTreeMap::new();
    let mut switched: BTreeMap<(u64, u64), usize> = BTreeMap::new();
    let mut completed: BTreeMap<(u64, u64), usize> = BTreeMap::new();
    for e in view.events.values().flatten() {
        let map = match e.kind.as_str() {
            "ThreadTaskCreate" => &mut created,
            "ThreadTaskSwitch" => &mut switched,
            "ThreadTaskComplete" => &mut completed,
            _ => continue,
        };
        let n = numbers(e);
        *map.entry((n[1], n[2])).or_insert(0) += 1;
    }
    for (task, count) in &created {
        assert_eq!(*count, 1, "task {task:?} created {count} times");
        assert!(switched.contains_key(task), "task {task:?} never began");
        assert_eq!(completed.get(task), Some(&1), "task {task:?} completions");
    }
    assert_eq!(
        completed.len(),
        created.len(),
        "completed tasks that were not created: {completed:?} / {created:?}"
    );
    created.len()
}

// ---- running, and checks shared by the language tests --------------------------------------

/// The lock API regions every trace defines.
pub const LOCK_API_REGIONS: [&str; 10] = [
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
];

/// Runs `exe` traced and reads the trace; the run must print nothing on stderr but pomptrace's
/// closing line, and the trace must be well formed with one location per thread.
pub fn traced(exe: &Path, threads: u32, label: &str, env: &[(&str, &str)]) -> (String, View) {
    let r = run_traced(exe, threads, label, env);
    assert_eq!(
        r.stderr().lines().count(),
        1,
        "{label}: stderr:\n{}",
        r.stderr()
    );
    assert!(r.stderr().starts_with("pomptrace: trace written to "));
    let view = View::read(&r.anchor());
    view.assert_well_formed();
    assert_eq!(
        view.locations
            .values()
            .map(|(n, _)| n.clone())
            .collect::<Vec<_>>(),
        location_names(threads),
        "{label}"
    );
    (r.stdout(), view)
}

pub fn location_names(threads: u32) -> Vec<String> {
    (0..threads)
        .map(|k| {
            if k == 0 {
                "Master thread".to_string()
            } else {
                format!("OMP thread {k}")
            }
        })
        .collect()
}

/// The regions defined must be exactly `names` and the lock API regions.
pub fn assert_regions(view: &View, names: &[String], what: &str) {
    let mut want: BTreeSet<String> = names.iter().cloned().collect();
    want.extend(LOCK_API_REGIONS.iter().map(|s| s.to_string()));
    let have: BTreeSet<String> = view.region_names().into_iter().collect();
    assert_eq!(have, want, "{what}: regions");
}

pub fn assert_region(view: &View, name: &str, role: &str, file: &str, lines: (usize, usize)) {
    let r = view.region(name);
    assert_eq!(
        (r.role.as_str(), r.begin as usize, r.end as usize),
        (role, lines.0, lines.1),
        "{name}"
    );
    assert!(
        r.file.ends_with(&format!("/{file}")),
        "{name}: source file {}",
        r.file
    );
}

/// Enters per region must be exactly `expected` (zero counts may be left out).
pub fn assert_enters(view: &View, expected: &[(String, usize)], what: &str) {
    let mut want: BTreeMap<String, usize> = BTreeMap::new();
    for (name, n) in expected {
        if *n > 0 {
            *want.entry(name.clone()).or_default() += n;
        }
    }
    assert_eq!(enters(view), want, "{what}: Enters per region");
}

pub fn team_begin() -> Pat {
    lit("ThreadTeamBegin *")
}
pub fn team_end() -> Pat {
    lit("ThreadTeamEnd *")
}
pub fn acquire() -> Pat {
    lit("ThreadAcquireLock *")
}
pub fn release() -> Pat {
    lit("ThreadReleaseLock *")
}
pub fn fork(threads: u32) -> Pat {
    lit(format!("ThreadFork {threads}"))
}
pub fn join() -> Pat {
    lit("ThreadJoin")
}

/// A source of `c-tests/`, for finding the lines of its directives.
pub struct Source {
    pub file: &'static str,
    lines: Vec<String>,
}

impl Source {
    pub fn new(file: &'static str) -> Self {
        let text = std::fs::read_to_string(crate::support::repo_root().join("c-tests").join(file))
            .unwrap();
        Self {
            file,
            lines: text.lines().map(|l| l.trim().to_string()).collect(),
        }
    }

    /// 1-based number of the first line after line `after` whose trimmed text is `text`.
    pub fn line_after(&self, text: &str, after: usize) -> usize {
        self.lines
            .iter()
            .enumerate()
            .skip(after)
            .find(|(_, l)| *l == text)
            .map(|(i, _)| i + 1)
            .unwrap_or_else(|| panic!("no line {text:?} after line {after} in {}", self.file))
    }

    /// 1-based number of the one line whose trimmed text is `text`.
    pub fn line(&self, text: &str) -> usize {
        let n = self.lines.iter().filter(|l| *l == text).count();
        assert_eq!(n, 1, "{text:?} occurs {n} times in {}", self.file);
        self.line_after(text, 0)
    }

    /// `!$omp <word> @<file>:<line>`.
    pub fn omp(&self, word: &str, line: usize) -> String {
        format!("!$omp {word} @{}:{line}", self.file)
    }
}

/// An explicit task run on a location: the switch to it, its region around `body`, its
/// completion.
pub fn task_run(task: &str, body: Pat) -> Pat {
    seq([
        lit("ThreadTaskSwitch *"),
        region(task, [body]),
        lit("ThreadTaskComplete *"),
    ])
}

/// A region where the thread may run tasks (`run`), then switches back to the waiting task.
pub fn waiting(name: &str, run: &Pat) -> Pat {
    seq([
        enter(name),
        star(run.clone()),
        opt(lit("ThreadTaskSwitch *")),
        leave(name),
    ])
}

/// The creation of a task; the runtime may run tasks (`run`, the new one included) right there.
pub fn creating(create: &str, run: &Pat) -> Pat {
    seq([
        enter(create),
        lit("ThreadTaskCreate *"),
        star(run.clone()),
        opt(lit("ThreadTaskSwitch *")),
        leave(create),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn patterns() {
        let p = seq([
            lit("a"),
            star(alt([lit("b"), lit("c*")])),
            opt(lit("d")),
            lit("e"),
        ]);
        assert!(check(&p, &s(&["a", "e"])).is_ok());
        assert!(check(&p, &s(&["a", "b", "cx", "c", "d", "e"])).is_ok());
        assert!(check(&p, &s(&["a", "d", "d", "e"])).is_err());
        assert!(check(&p, &s(&["a", "b"])).is_err());
        // Backtracking into a star.
        let p = seq([star(lit("x")), lit("x"), lit("y")]);
        assert!(check(&p, &s(&["x", "x", "y"])).is_ok());
    }
}
