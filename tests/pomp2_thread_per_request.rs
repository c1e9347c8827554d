//! A program that starts a thread per request (`c-tests/thread_per_request.c`: 10 000 short
//! pthreads, at most 4 at once, each opening a team of two) runs in memory bounded by the
//! threads alive at once: an ended thread's locations are retired and their buffers go to the
//! threads that come after, so 10 000 requests peak within a small margin of 100. Every
//! location stays in the trace with its events, which the reference readers read back:
//! otf2-print (the definitions, and the events of locations spread over the run) and the python
//! `otf2` module (the definitions, and the events of every 50th location; for one route). They take a buffer
//! of the archive's chunk size per location they read at once (and python's definitions take
//! time quadratic in the teams), so the events of every location are also read with this
//! crate's own reader. Both instrumentation routes (see `support/routes.rs`).

#[path = "support/routes.rs"]
mod routes;
mod support;

use std::collections::BTreeMap;
use std::process::Command;

use otf2::{ArchiveReader, Event};
use routes::{Route, ROUTES};
use support::pomp2::run_traced_with_args;
use support::{repo_root, run, Scratch};

const REQUESTS: usize = 10_000;
const ALIVE: &str = "4";
/// Peak memory the 10 000-request run may have beyond the 100-request run's: what the
/// definitions of 20 000 locations and 10 000 teams take, with room to spare (each location
/// keeps a few hundred bytes of its own and in the definitions). Keeping every ended thread's
/// buffers instead costs at least one touched 4 KiB page per location (about 150 MiB).
const MARGIN_KIB: u64 = 56 * 1024;

/// (requests served, their results' sum, peak resident KiB) as the program printed them.
fn served(stdout: &str) -> (usize, u64, u64) {
    let f: Vec<&str> = stdout.split_whitespace().collect();
    assert_eq!(
        (f[0], f[2], f[4]),
        ("requests", "sum", "peak_rss_kib"),
        "{stdout}"
    );
    (
        f[1].parse().unwrap(),
        f[3].parse().unwrap(),
        f[5].parse().unwrap(),
    )
}

/// The event kinds of a location whose thread opened one team (its root, or thread 0 of the
/// initial team), and of its team's other member.
const FORKING: &[&str] = &[
    "ThreadFork",
    "ThreadTeamBegin",
    "Enter",
    "Enter",
    "Leave",
    "Leave",
    "ThreadTeamEnd",
    "ThreadJoin",
];
const MEMBER: &[&str] = &[
    "ThreadTeamBegin",
    "Enter",
    "Enter",
    "Leave",
    "Leave",
    "ThreadTeamEnd",
];

/// The kinds a location named `name` must hold: the first request's thread started the
/// measurement, so it is the trace's master (ProgramBegin and ProgramEnd around its team).
fn expected_kinds(name: &str) -> Vec<String> {
    let kinds = match name {
        "Master thread" => [&["ProgramBegin"], FORKING, &["ProgramEnd"]].concat(),
        _ if name.ends_with("OMP thread 1") => MEMBER.to_vec(),
        _ => FORKING.to_vec(),
    };
    kinds.into_iter().map(String::from).collect()
}

fn kind(event: &Event) -> &'static str {
    match event {
        Event::ProgramBegin { .. } => "ProgramBegin",
        Event::ProgramEnd { .. } => "ProgramEnd",
        Event::ThreadFork { .. } => "ThreadFork",
        Event::ThreadJoin { .. } => "ThreadJoin",
        Event::ThreadTeamBegin { .. } => "ThreadTeamBegin",
        Event::ThreadTeamEnd { .. } => "ThreadTeamEnd",
        Event::Enter { .. } => "Enter",
        Event::Leave { .. } => "Leave",
        other => panic!("unexpected event {other:?}"),
    }
}

/// An event line of otf2-print's for `location` (`THREAD_TEAM_BEGIN  12  ...`) as a kind
/// (`ThreadTeamBegin`).
fn printed_kind(line: &str, location: u64) -> Option<String> {
    let mut words = line.split_whitespace();
    let word = words.next()?;
    if words.next()? != location.to_string()
        || !word.chars().all(|c| c.is_ascii_uppercase() || c == '_')
    {
        return None;
    }
    Some(
        word.split('_')
            .map(|part| part[..1].to_string() + &part[1..].to_ascii_lowercase())
            .collect(),
    )
}

/// Location names by id, from otf2-print's global definitions.
fn location_names(anchor: &std::path::Path) -> BTreeMap<u64, String> {
    let defs = run(Command::new("otf2-print").arg("-G").arg(anchor));
    String::from_utf8_lossy(&defs.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("LOCATION "))
        .map(|l| {
            let id = l.split_whitespace().next().unwrap().parse().unwrap();
            let name = l.split('"').nth(1).unwrap().to_string();
            (id, name)
        })
        .collect()
}

/// The python `otf2` module's view (`support/otf2_sample.py`): (locations, their events as
/// defined, Comms), and (id, name, event kinds) of every `step`-th location.
type Sample = ((usize, u64, usize), Vec<(u64, String, Vec<String>)>);

fn python_sample(anchor: &std::path::Path, step: usize) -> Sample {
    let out = run(Command::new("/usr/bin/python3")
        .arg(repo_root().join("tests/support/otf2_sample.py"))
        .arg(anchor)
        .arg(step.to_string()));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut totals = (0, 0, 0);
    let mut sample = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        match f[0] {
            "LOCATIONS" => (totals.0, totals.1) = (f[1].parse().unwrap(), f[2].parse().unwrap()),
            "COMMS" => totals.2 = f[1].parse().unwrap(),
            "LOCATION" => sample.push((
                f[1].parse().unwrap(),
                f[2].to_string(),
                f[4].split(',').map(String::from).collect(),
            )),
            other => panic!("unexpected line {other:?}"),
        }
    }
    (totals, sample)
}

#[test]
fn a_thread_per_request_runs_in_the_memory_of_the_threads_alive_at_once() {
    let scratch = Scratch::new("thread-per-request");
    for route in ROUTES {
        let exe = routes::build(route, &scratch.path, "thread_per_request.c", &[]);
        // The readers' smallest chunk: they hold one per location they read.
        let env = [
            ("OMP_WAIT_POLICY", "passive"),
            ("POMPTRACE_CHUNK_SIZE", "256K"),
        ];
        let few = run_traced_with_args(&exe, &["100", ALIVE], 2, &format!("{route:?}-100"), &env);
        let (n, sum, few_peak) = served(&few.stdout());
        assert_eq!((n, sum), (100, 300));

        let label = format!("{route:?}-{REQUESTS}");
        let many = run_traced_with_args(&exe, &[&REQUESTS.to_string(), ALIVE], 2, &label, &env);
        let (n, sum, many_peak) = served(&many.stdout());
        assert_eq!(
            (n, sum),
            (REQUESTS, 3 * REQUESTS as u64),
            "every team had two threads"
        );
        assert!(
            !many.stderr().contains("internal error"),
            "{}",
            many.stderr()
        );
        assert!(
            many_peak <= few_peak + MARGIN_KIB,
            "{route:?}: {REQUESTS} requests peaked at {many_peak} KiB, 100 at {few_peak} KiB"
        );

        // Every location's events, with this crate's reader: one team each, whole.
        let anchor = many.anchor();
        let names = location_names(&anchor);
        assert_eq!(names.len(), 2 * REQUESTS, "{route:?}: locations defined");
        let reader = ArchiveReader::open(&anchor).unwrap();
        let locations = reader.locations().unwrap();
        assert_eq!(locations.len(), 2 * REQUESTS, "{route:?}");
        let mut events = 0;
        for &location in &locations {
            let kinds: Vec<String> = reader
                .events(location)
                .unwrap()
                .map(|r| kind(&r.unwrap().event).to_string())
                .collect();
            let name = &names[&location];
            assert_eq!(
                kinds,
                expected_kinds(name),
                "{route:?}: {name} ({location})"
            );
            events += kinds.len() as u64;
        }

        // The reference readers: all definitions, and the events of locations spread over the
        // run, among them threads that ended first, last, and in between. The python module's
        // definitions take long for 10 000 teams: it reads the wrapper route's trace (the
        // classic one's differs in nothing it checks), otf2-print both.
        let sample: Vec<(u64, String, Vec<String>)> = if route == Route::Wrapper {
            let ((defined, defined_events, comms), sample) = python_sample(&anchor, 50);
            assert_eq!((defined, defined_events), (2 * REQUESTS, events));
            assert_eq!(
                comms,
                REQUESTS + 1,
                "a team per request, and the master's own"
            );
            assert!(sample.len() > 2 * REQUESTS / 50, "{}", sample.len());
            for (id, name, kinds) in &sample {
                assert_eq!(kinds, &expected_kinds(name), "python, {name} ({id})");
            }
            sample
        } else {
            names
                .iter()
                .step_by(50)
                .map(|(id, name)| (*id, name.clone(), Vec::new()))
                .collect()
        };
        for (id, name, _) in sample.iter().step_by(40) {
            let printed = run(Command::new("otf2-print")
                .arg("-L")
                .arg(id.to_string())
                .arg(&anchor));
            let kinds: Vec<String> = String::from_utf8_lossy(&printed.stdout)
                .lines()
                .filter_map(|l| printed_kind(l, *id))
                .collect();
            assert_eq!(kinds, expected_kinds(name), "{route:?}: otf2-print -L {id}");
        }
    }
}
