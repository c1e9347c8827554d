//! Requests for threads the runtime does not give: every team instance in the trace has as
//! many members as the runtime gave it, and each member records that team. Under
//! `OMP_THREAD_LIMIT=3` the top-level teams of `c-tests/team_sizes.c` that ask for four get
//! three; in `c-tests/thread_limit_teams.c` nested teams under `OMP_THREAD_LIMIT=4` get 1, 2 or
//! 3 threads for the same request, by which of them starts first, while pthreads open teams of
//! their own. Both instrumentation routes (see `support/routes.rs`).

#[path = "support/routes.rs"]
mod routes;
mod support;

use std::collections::BTreeMap;

use routes::ROUTES;
use support::pomp2::{run_traced, run_traced_with_args, View};
use support::Scratch;

/// team_sizes.c under a thread limit: per region instance (between the master's fork and
/// join), every member's team begin names one Comm with exactly the members the runtime gave.
#[test]
fn top_level_teams_get_the_size_the_thread_limit_leaves_them() {
    let scratch = Scratch::new("thread-limit-top");
    for route in ROUTES {
        let exe = routes::build(route, &scratch.path, "team_sizes.c", &[]);
        let run = run_traced(
            &exe,
            4,
            route.label(),
            &[("OMP_THREAD_LIMIT", "3"), ("OMP_WAIT_POLICY", "passive")],
        );
        let sizes: Vec<usize> = run
            .stdout()
            .lines()
            .filter_map(|l| l.strip_prefix("team "))
            .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
            .collect();
        assert!(
            sizes.contains(&3) && !sizes.iter().any(|&s| s > 3),
            "{route:?}: requests for four threads get three: {sizes:?}"
        );
        let view = View::read(&run.anchor());
        view.assert_well_formed();
        let forks = view.times_of("Master thread", "ThreadFork");
        let joins = view.times_of("Master thread", "ThreadJoin");
        assert_eq!((forks.len(), joins.len()), (sizes.len(), sizes.len()));
        let mut instances: Vec<Vec<(String, u32)>> = vec![Vec::new(); sizes.len()];
        for (name, _) in view.locations.values() {
            for (time, comm) in view.team_begins(name) {
                let i = forks
                    .iter()
                    .zip(&joins)
                    .position(|(&f, &j)| f <= time && time <= j)
                    .unwrap_or_else(|| panic!("{name}: team begin at {time} outside every region"));
                instances[i].push((name.clone(), comm));
            }
        }
        for (i, (members, &size)) in instances.iter().zip(&sizes).enumerate() {
            assert_eq!(members.len(), size, "{route:?} region {i}: {members:?}");
            let comm = members[0].1;
            assert!(
                members.iter().all(|(_, c)| *c == comm),
                "{route:?} region {i} of {size} threads: its members recorded different teams: \
                 {members:?}"
            );
            assert_eq!(
                view.comms[&comm].members.len(),
                size,
                "{route:?} region {i}"
            );
        }
    }
}

/// Team instances per size: `<size>:<count>` words after `name` on a line of the program.
fn tally(words: &[&str], name: &str) -> BTreeMap<usize, usize> {
    let start = words.iter().position(|w| *w == name).unwrap() + 1;
    words[start..]
        .iter()
        .map_while(|w| w.split_once(':'))
        .map(|(s, n)| (s.parse().unwrap(), n.parse().unwrap()))
        .collect()
}

/// (outer, nested) team instances per size of one thread of control.
type Tallies = (BTreeMap<usize, usize>, BTreeMap<usize, usize>);

/// The thread of control a location belongs to: its root location's name.
fn control_of(location: &str) -> String {
    match location.strip_prefix("Pthread ") {
        Some(rest) => format!("Pthread {}", rest.split(' ').next().unwrap()),
        None => "Master thread".into(),
    }
}

#[test]
fn nested_teams_get_the_size_the_thread_limit_leaves_them() {
    let scratch = Scratch::new("thread-limit-nested");
    let (pthreads, regions) = (2usize, 150usize);
    for route in ROUTES {
        let exe = routes::build(route, &scratch.path, "thread_limit_teams.c", &[]);
        let mut varied = false;
        for round in 0..2 {
            let run = run_traced_with_args(
                &exe,
                &[&pthreads.to_string(), &regions.to_string()],
                2,
                &format!("{}-{round}", route.label()),
                &[("OMP_THREAD_LIMIT", "4"), ("OMP_WAIT_POLICY", "passive")],
            );
            let stderr = run.stderr();
            assert!(!stderr.contains("internal error"), "{stderr}");
            // What the program saw, per thread of control (0: the initial thread).
            let program: Vec<Tallies> = run
                .stdout()
                .lines()
                .map(|line| {
                    let words: Vec<&str> = line.split_whitespace().collect();
                    (tally(&words, "outer"), tally(&words, "inner"))
                })
                .collect();
            assert_eq!(program.len(), pthreads + 1);
            varied |= program.iter().any(|(_, inner)| inner.len() > 1);

            // What the trace says: per Comm, the team begins that name it, which must come in
            // whole instances of the Comm's size, each from one of its members.
            let view = View::read(&run.anchor());
            view.assert_well_formed();
            let mut begins: BTreeMap<u32, usize> = BTreeMap::new();
            for (id, (name, _)) in &view.locations {
                for (_, comm) in view.team_begins(name) {
                    assert!(
                        view.comms[&comm].members.contains(id),
                        "{route:?}: {name} began team {comm}, whose members are {:?}",
                        view.comms[&comm].members
                    );
                    *begins.entry(comm).or_default() += 1;
                }
            }
            let mut traced: BTreeMap<String, Tallies> = BTreeMap::new();
            for (comm, count) in begins {
                let def = &view.comms[&comm];
                let size = def.members.len();
                assert_eq!(
                    count % size,
                    0,
                    "{route:?}: team {comm} of {size} threads began {count} times"
                );
                let first = &view.locations[&def.members[0]].0;
                let entry = traced.entry(control_of(first)).or_default();
                let per_size = if def.parent.is_none() {
                    &mut entry.0
                } else {
                    &mut entry.1
                };
                *per_size.entry(size).or_default() += count / size;
            }
            assert_eq!(
                traced["Master thread"], program[0],
                "{route:?}: the initial thread's teams per size, traced against seen"
            );
            let mut traced_pthreads: Vec<Tallies> = traced
                .iter()
                .filter(|(name, _)| name.starts_with("Pthread"))
                .map(|(_, t)| t.clone())
                .collect();
            let mut seen_pthreads = program[1..].to_vec();
            traced_pthreads.sort();
            seen_pthreads.sort();
            assert_eq!(
                traced_pthreads, seen_pthreads,
                "{route:?}: the pthreads' teams"
            );
        }
        assert!(
            varied,
            "{route:?}: no request got two different sizes; the test needs them"
        );
    }
}
