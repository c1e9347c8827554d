//! User regions around and inside parallel regions.

use super::*;

fn check_user(p: &Program, n: u32) {
    let mut r = Checked::run(p, n, &[]);
    r.definitions(
        n,
        p.defs(&[
            (C::User("early"), "early"),
            (C::User("outer"), "outer"),
            (C::Parallel, "par"),
            (C::User("inner"), "inner"),
        ]),
    );
    for k in 0..n {
        let master = k == 0;
        // early(1) leaves through `altend`, early(0) through `end`: the same records.
        let early = |s: Seq| s.region(p.user("early", "early"), |s| s);
        let body = Seq::new()
            .region(p.user("inner", "inner"), |s| early(early(s)))
            .then(p.ibar("par"));
        let team = p.team("par", master, n, body);
        let seq = if master {
            // `inst init` starts the measurement; `inst finalize` ends it after the region.
            Seq::new()
                .is("ProgramBegin")
                .region(p.user("outer", "outer"), |s| s.then(team))
                // `inst finalize` ends the measurement before the program's exit: no status yet
                // (OTF2_UNDEFINED_INT64).
                .is("ProgramEnd -9223372036854775808")
        } else {
            team
        };
        r.expect(k, seq);
    }
    r.team("par", n);
}

#[test]
fn user_regions_nest_around_and_inside_parallel_regions() {
    let p = Program::build("fam_user.c");
    for n in THREAD_COUNTS {
        check_user(&p, n);
    }
}
