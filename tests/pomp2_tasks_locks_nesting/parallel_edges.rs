//! Parallel edge cases: one-thread teams, orphaned worksharing, a parallel region in a task.

use super::*;

pub(crate) const EDGE_N: usize = 10;
/// The num_threads of the parallel region inside the task and of the last, top-level one.
pub(crate) const PAIR: usize = 2;

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
