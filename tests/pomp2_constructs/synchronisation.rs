//! The synchronisation family: criticals, locks and ordered.

use super::*;

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
