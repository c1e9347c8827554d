//! A short run of both fuzzers, for every test run; the long ones are
//! `cargo run --release --example fuzz_ctc` (10^7 strings) and `... fuzz_reader` (10^6
//! archives). Here in the debug build, where integer overflow panics too. A case that runs for
//! more than a second aborts the test process, naming the case.

#[path = "../examples/fuzz_harness/archive_cases.rs"]
mod archive_cases;
#[path = "../examples/fuzz_harness/ctc_cases.rs"]
mod ctc_cases;
#[allow(dead_code)] // its command-line parsing serves the examples
#[path = "../examples/fuzz_harness/harness.rs"]
mod harness;

#[test]
fn the_ctc_parser_survives_100_000_generated_and_mutated_strings() {
    let report = ctc_cases::run(100_000, 0x05ee_dc7c, 0);
    eprintln!("{} CTC strings in {:?}", report.cases, report.elapsed);
    assert_eq!(report.cases, 100_000);
    assert_eq!(report.panics, 0, "see the PANIC lines above for the cases");
}

#[test]
fn the_reader_survives_10_000_damaged_archives() {
    let report = archive_cases::run(10_000, 0x05ee_d0f2, 0).expect("write the base archives");
    eprintln!("{} archives in {:?}", report.cases, report.elapsed);
    assert_eq!(report.cases, 10_000);
    assert_eq!(report.panics, 0, "see the PANIC lines above for the cases");
}

#[test]
fn a_panicking_case_is_counted_and_the_run_goes_on() {
    let mut seen = 0;
    let report = harness::run_cases("self-test", 10, 1, 0, |rng| {
        seen += 1;
        if seen == 4 {
            panic!("case {seen} fails on purpose ({})", rng.next());
        }
    });
    assert_eq!((report.cases, report.panics, seen), (10, 1, 10));
}
