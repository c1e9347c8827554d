//! Runs mutated OTF2 archives through pomptrace's reader (`crates/otf2/src/reader.rs`): starting from
//! small valid archives written by its writer, one file per case is damaged (bytes flipped or
//! set to edge values, runs inserted, deleted, duplicated, the file truncated or spliced with
//! another) and the whole archive read back. No input may make the reader panic or hang (a
//! case over 1 s aborts, naming the case to replay).
//!
//! Usage: `cargo run --release --example fuzz_reader -- N [SEED [FIRST_CASE]]` (default 10^6)

#[path = "fuzz_harness/archive_cases.rs"]
mod archive_cases;
#[path = "fuzz_harness/harness.rs"]
mod harness;

fn main() {
    let (cases, seed, first) = harness::arguments(1_000_000);
    let report = match archive_cases::run(cases, seed, first) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("fuzz_reader: cannot write the archives to damage: {e}");
            std::process::exit(2);
        }
    };
    harness::print_report("fuzz_reader", "archives", seed, first, &report);
}
