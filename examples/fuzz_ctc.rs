//! Runs generated and mutated CTC strings through the CTC parser (`src/ctc.rs`): no input may
//! make it panic or hang (a case over 1 s aborts, naming the case to replay).
//!
//! Usage: `cargo run --release --example fuzz_ctc -- N [SEED [FIRST_CASE]]` (default N = 10^7)

#[path = "fuzz_harness/ctc_cases.rs"]
mod ctc_cases;
#[path = "fuzz_harness/harness.rs"]
mod harness;

fn main() {
    let (cases, seed, first) = harness::arguments(10_000_000);
    let report = ctc_cases::run(cases, seed, first);
    harness::print_report("fuzz_ctc", "strings", seed, first, &report);
}
