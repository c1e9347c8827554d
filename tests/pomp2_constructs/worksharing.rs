//! The worksharing family: loops, sections and singles.

use super::*;

fn check_worksharing(p: &Program, n: u32) {
    let mut r = Checked::run(p, n, &[]);
    r.definitions(
        n,
        p.defs(&[
            (C::Parallel, "par"),
            (C::For, "for"),
            (C::For, "fornw"),
            (C::Sections, "secs"),
            (C::Single, "sgl"),
            (C::Single, "sglnw"),
            (C::Single, "sglcp"),
        ]),
    );
    for k in 0..n {
        let body = Seq::new()
            .region(p.omp("for", "for"), |s| s.then(p.ibar("for")))
            // nowait: no implicit barrier, although its region is defined.
            .region(p.omp("for", "fornw"), |s| s)
            .region(p.omp("sections", "secs"), |s| {
                s.rep("section", p.pair("section", "secs"))
                    .then(p.ibar("secs"))
            })
            .region(p.omp("single", "sgl"), |s| {
                s.rep("sblock:sgl", p.pair("single sblock", "sgl"))
                    .then(p.ibar("sgl"))
            })
            .region(p.omp("single", "sglnw"), |s| {
                s.rep("sblock:sglnw", p.pair("single sblock", "sglnw"))
            })
            // copyprivate: OPARI2 leaves the runtime's own barrier alone, so no implicit
            // barrier either (doc 1.6).
            .region(p.omp("single", "sglcp"), |s| {
                s.rep("sblock:sglcp", p.pair("single sblock", "sglcp"))
            })
            .then(p.ibar("par"));
        let seq = Seq::new()
            .when(k == 0, |s| s.is("ProgramBegin"))
            .then(p.team("par", k == 0, n, body))
            .when(k == 0, |s| s.is("ProgramEnd 0"));
        r.expect(k, seq);
    }
    r.team("par", n);
    assert_eq!(r.reps("section"), 2, "sections executed");
    for single in ["sgl", "sglnw", "sglcp"] {
        assert_eq!(
            r.reps(&format!("sblock:{single}")),
            1,
            "threads that executed the single block at line {}",
            p.s(single)
        );
    }
}

#[test]
fn worksharing_family_records_loops_sections_and_singles() {
    let p = Program::build("fam_worksharing.c");
    for n in THREAD_COUNTS {
        check_worksharing(&p, n);
    }
}
