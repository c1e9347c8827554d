//! The shared library exports exactly the symbols listed in `tests/exported_symbols.txt`: every
//! POMP2 entry point in its C and four Fortran spellings, the lock wrappers, `pomp_tpd`, and
//! nothing by accident (a refactoring of `src/ffi` that drops or adds a symbol fails here; a
//! deliberate change updates the list).

mod support;

use std::collections::BTreeSet;
use std::process::Command;

use support::run;

#[test]
fn the_shared_library_exports_the_listed_symbols() {
    let listed: BTreeSet<String> =
        std::fs::read_to_string(support::repo_root().join("tests/exported_symbols.txt"))
            .unwrap()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect();
    let library = support::pomp2::library_dir().join("libpomptrace.so");
    let out = run(Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(&library));
    let exported: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .map(String::from)
        .collect();
    let missing: Vec<&String> = listed.difference(&exported).collect();
    let extra: Vec<&String> = exported.difference(&listed).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{}: missing {missing:?}, not listed {extra:?}",
        library.display()
    );
    assert!(listed.len() > 300, "{} symbols listed", listed.len());
}
