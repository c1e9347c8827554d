//! Top-level teams whose size changes between regions (num_threads and if clauses,
//! omp_set_num_threads, dynamic adjustment, a request that gets one thread while no level may
//! be active): every member of every team instance records the same Comm, whose members are
//! exactly as many as the runtime gave the team. Workers learn a top-level team's size from
//! the master's earlier teams while the forks ask for the same (`TOP_TEAM_SIZE` in
//! `src/model/team.rs`); this checks that they never take a stale one.

mod support;

use support::pomp2::*;
use support::Scratch;

#[test]
fn every_member_of_each_top_level_team_records_that_team() {
    let scratch = Scratch::new("team-sizes");
    let source = instrument("team_sizes.c", &scratch.path, &[]);
    let exe = Build::c(&scratch.path).executable(&[source], "team_sizes");
    for threads in [4u32, 3] {
        let run = run_traced(&exe, threads, &format!("t{threads}"), &[]);
        let stdout = run.stdout();
        let sizes: Vec<usize> = stdout
            .lines()
            .filter_map(|l| l.strip_prefix("team "))
            .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
            .collect();
        assert!(
            stdout.contains(&format!("regions={}", sizes.len())),
            "{stdout}"
        );
        assert!(sizes.contains(&1) && sizes.contains(&4));
        assert!(
            !run.stderr().contains("top-level team got"),
            "a request that gave two sizes was reported:\n{}",
            run.stderr()
        );

        let view = View::read(&run.anchor());
        let forks = view.times_of("Master thread", "ThreadFork");
        let joins = view.times_of("Master thread", "ThreadJoin");
        assert_eq!((forks.len(), joins.len()), (sizes.len(), sizes.len()));
        // Per region instance (between the master's fork and join), the team begins of all
        // locations.
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
            assert_eq!(members.len(), size, "region {i}: {members:?}");
            let comm = members[0].1;
            assert!(
                members.iter().all(|(_, c)| *c == comm),
                "region {i} of {size} threads: its members recorded different teams: {members:?}"
            );
            assert_eq!(
                view.comms[&comm].members.len(),
                size,
                "region {i}: the team's Comm {comm} has {:?}",
                view.comms[&comm].members
            );
        }
    }
}
