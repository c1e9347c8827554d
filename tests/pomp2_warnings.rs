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
