//! CTC strings for the parser: generated from OPARI2's grammar (`LEN*key=value*...**`), then,
//! in most cases, mutated.

use crate::harness::{mutate, run_cases, Report, Rng};
use pomptrace::ctc::{self, RegionType};

/// Bytes that matter to the grammar, for mutations to insert.
const ALPHABET: &[u8] = b"*=:@0123456789-+ \t\n\x00\xff\xc3abc.";

const KEYS: &[&str] = &[
    "regionType",
    "sscl",
    "escl",
    "criticalName",
    "numSections",
    "userRegionName",
    "userGroupName",
    "hasSchedule",
    "hasDefault",
    "hasIf",
    "hasNumThreads",
    "hasReduction",
    "hasCollapse",
    "hasOrdered",
    "hasUntied",
    "has",
    "colour",
    "",
];

const FILES: &[&str] = &["a.c", "dir/b.f90", "c:d.c", "", "x y.cpp", "\u{e9}.c"];

fn number(rng: &mut Rng) -> String {
    match rng.below(8) {
        0 => rng.interesting_u64().to_string(),
        1 => "-1".into(),
        2 => "99999999999999999999999".into(),
        3 => String::new(),
        4 => "0x10".into(),
        _ => rng.below(5000).to_string(),
    }
}

fn source_range(rng: &mut Rng) -> String {
    let file = rng.pick(FILES);
    match rng.below(6) {
        0 => file.to_string(),
        1 => format!("{file}:{}", number(rng)),
        2 => format!("{file}:{}:{}:{}", number(rng), number(rng), number(rng)),
        _ => {
            let first = rng.below(2000);
            format!("{file}:{first}:{}", first + rng.below(50))
        }
    }
}

fn value(rng: &mut Rng, key: &str) -> String {
    match key {
        "regionType" => {
            if rng.one_in(10) {
                (*rng.pick(&["", "bogus", "Parallel", "user", "parallel for"])).into()
            } else {
                rng.pick(&RegionType::ALL).ctc_name().into()
            }
        }
        "sscl" | "escl" => source_range(rng),
        "numSections" => number(rng),
        "hasSchedule" => (*rng.pick(&["static", "dynamic@4", "guided@@", "", "auto"])).into(),
        k if k.starts_with("has") && k != "hasDefault" => {
            (*rng.pick(&["1", "0", "1", "", "2", "yes"])).into()
        }
        _ => (*rng.pick(&["name", "", "crit_1", "a*b", "x=y", "\u{fffd}"])).into(),
    }
}

/// A CTC string as OPARI2 writes it, or close to it: most fields right, some off.
pub fn generate(rng: &mut Rng) -> Vec<u8> {
    let mut body = String::new();
    let fields = 1 + rng.below(7);
    for i in 0..fields {
        let key = if i == 0 && !rng.one_in(8) {
            "regionType"
        } else if i == 1 && !rng.one_in(8) {
            "sscl"
        } else if i == 2 && !rng.one_in(8) {
            "escl"
        } else {
            rng.pick(KEYS)
        };
        body.push('*');
        body.push_str(key);
        if !rng.one_in(20) {
            body.push('=');
        }
        body.push_str(&value(rng, key));
    }
    body.push_str(match rng.below(10) {
        0 => "*",
        1 => "",
        2 => "***",
        _ => "**",
    });
    let length = if rng.one_in(10) {
        number(rng)
    } else {
        (body.len() + 3).to_string()
    };
    format!("{length}{body}").into_bytes()
}

/// One case: a generated string, mutated in 3 cases of 4 (with another generated string as
/// the splice donor), through both entry points of the parser.
pub fn one_case(rng: &mut Rng) {
    let mut text = generate(rng);
    if !rng.one_in(4) {
        let donor = generate(rng);
        mutate(rng, &mut text, &donor, ALPHABET);
    }
    let (info, problems) = ctc::parse(&text);
    std::hint::black_box((info, problems));
    std::hint::black_box(ctc::parse_lossy_name(&text));
}

pub fn run(cases: u64, seed: u64, first: u64) -> Report {
    run_cases("ctc", cases, seed, first, one_case)
}
