//! pomptrace's warnings about the program's calls name the region concerned as the trace shows
//! it, not by an internal number.

mod support;

use support::pomp2::*;
use support::Scratch;

#[test]
fn a_region_left_but_never_entered_is_named_in_one_warning() {
    let scratch = Scratch::new("warnings-unbalanced");
    let exe = build_direct_calls(&scratch.path, "robust_unbalanced.c");
    let run = run_traced(&exe, 1, "trace", &[]);
    assert_eq!(run.stdout(), "done\n");
    let stderr = run.stderr();
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("left but not entered"))
        .collect();
    assert_eq!(
        warnings,
        [
            "pomptrace: region \"!$pomp user(stray) @robust_unbalanced.c:30\" was left but not \
          entered; ignoring that leave"
        ],
        "{stderr}"
    );
    // The stray leave is dropped; the rest of the stream stays well nested.
    let view = View::read(&run.anchor());
    view.assert_well_formed();
    let outer_enters = view
        .texts("Master thread", &[])
        .iter()
        .filter(|e| *e == "Enter !$pomp user(outer) @robust_unbalanced.c:20")
        .count();
    assert_eq!(outer_enters, 2);
}

#[test]
fn a_request_that_got_two_team_sizes_is_reported_once() {
    let scratch = Scratch::new("warnings-team-size");
    let exe = build_direct_calls(&scratch.path, "team_size_unannounced.c");
    let run = run_traced(&exe, 2, "trace", &[]);
    assert_eq!(run.stdout(), "done\n");
    let stderr = run.stderr();
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("top-level team got"))
        .collect();
    assert_eq!(
        warnings,
        [
            "pomptrace: a top-level team got 3 threads where the same request (if clause, \
             num_threads) had got 2: its workers may be recorded in a team of 2; from now on \
             every worker asks the OpenMP runtime"
        ],
        "{stderr}"
    );
    // After the report, every team is recorded as the runtime formed it: the last region (3
    // threads) has three team begins, all of one Comm of three members.
    let view = View::read(&run.anchor());
    let last_fork = *view.times_of("Master thread", "ThreadFork").last().unwrap();
    let last: Vec<u32> = view
        .locations
        .values()
        .flat_map(|(name, _)| view.team_begins(name))
        .filter(|&(time, _)| time >= last_fork)
        .map(|(_, comm)| comm)
        .collect();
    assert_eq!(last.len(), 3, "{last:?}");
    assert!(last.iter().all(|&c| c == last[0]), "{last:?}");
    assert_eq!(view.comms[&last[0]].members.len(), 3);
}
