//! Lock programs: a contended lock, nest locks and test-lock outcomes.

use super::*;

pub(crate) const LOCK_ITER: u64 = 10_000;

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
