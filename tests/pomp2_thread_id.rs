//! As in the reference, ProgramBegin and every ThreadTeamBegin carry the `ThreadId` attribute
//! (UINT64): the id of the OS thread behind the location at that moment. Checked in otf2-print's
//! view, where each such event is followed by its ADDITIONAL ATTRIBUTES line.

mod support;

use std::collections::{BTreeMap, BTreeSet};

use support::pomp2::*;
use support::{otf2_print, Scratch};

#[test]
fn program_begin_and_team_begins_carry_the_os_thread_id() {
    let scratch = Scratch::new("thread-id");
    let source = instrument("fam_parallel.c", &scratch.path, &[]);
    let exe = Build::c(&scratch.path).executable(&[source], "fam_parallel");
    for n in [2u32, 4] {
        let run = run_traced(&exe, n, &format!("t{n}"), &[]);
        let printed = otf2_print(&[], &run.anchor(), &[]);
        let lines: Vec<&str> = printed.lines().collect();
        // Thread ids seen per location, and how many events carried one.
        let mut ids: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
        let mut carried = 0;
        for (i, line) in lines.iter().enumerate() {
            if !(line.starts_with("THREAD_TEAM_BEGIN") || line.starts_with("PROGRAM_BEGIN")) {
                continue;
            }
            let location: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
            let attributes = lines.get(i + 1).copied().unwrap_or("");
            let value = attributes
                .trim()
                .strip_prefix("ADDITIONAL ATTRIBUTES: (\"ThreadId\" <0>; UINT64; ")
                .and_then(|rest| rest.strip_suffix(')'))
                .unwrap_or_else(|| {
                    panic!("{line}\nis not followed by its ThreadId:\n{attributes}")
                });
            let tid: u64 = value.parse().unwrap();
            assert!(tid > 0);
            ids.entry(location).or_default().insert(tid);
            carried += 1;
        }
        let view = View::read(&run.anchor());
        let expected = view.kind_counts()["ThreadTeamBegin"] + view.kind_counts()["ProgramBegin"];
        assert_eq!(
            carried, expected,
            "every ProgramBegin and ThreadTeamBegin carries a ThreadId"
        );
        // The master runs ProgramBegin and all its team begins on one OS thread; the workers are
        // other threads.
        assert_eq!(
            ids[&0].len(),
            1,
            "the master location changed OS thread: {ids:?}"
        );
        let master = *ids[&0].iter().next().unwrap();
        for (location, tids) in &ids {
            if *location != 0 {
                assert!(
                    !tids.contains(&master),
                    "location {location} ran on the master's thread: {ids:?}"
                );
            }
        }
        assert_eq!(
            ids.len(),
            view.locations.len(),
            "every location has a team begin"
        );
    }
}
