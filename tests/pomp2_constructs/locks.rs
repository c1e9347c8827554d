//! The lock API: acquisitions in order, failed tests without acquire, nest lock ownership.

use super::*;

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
