//! The parallel family: fork, team and join on every thread.

use super::*;

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
