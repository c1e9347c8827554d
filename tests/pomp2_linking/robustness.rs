//! Robustness against direct calls: malformed CTC strings, a start inside a parallel region,
//! NULL handles, calls before the start.

use super::*;

fn robust_calls(scratch: &Scratch) -> PathBuf {
    std::fs::copy(
        support::repo_root().join("c-tests/robust_calls.c"),
        scratch.join("robust_calls.c"),
    )
    .unwrap();
    Build {
        dir: &scratch.path,
        compiler: "cc",
        init_file: false,
        link: Link::Shared,
    }
    .executable(&[scratch.join("robust_calls.c")], "robust_calls")
}

fn run_calls(exe: &Path, mode: &str) -> (Output, PathBuf) {
    let experiment = exe.parent().unwrap().join(mode);
    let out = run(Command::new(exe)
        .arg(mode)
        .env("OMP_NUM_THREADS", "2")
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", &experiment)
        .env_remove("POMPTRACE_ENABLE")
        .env_remove("LD_PRELOAD"));
    assert_eq!(stdout_of(&out), format!("{mode} done\n"));
    (out, experiment)
}

/// robust_calls.c: how often each construct is entered.
const REPEAT: usize = 100;

#[test]
fn malformed_ctc_strings_warn_once_each_and_their_events_are_still_recorded() {
    let scratch = Scratch::new("robust-malformed");
    let exe = robust_calls(&scratch);
    let (out, experiment) = run_calls(&exe, "malformed");
    let stderr = stderr_of(&out);
    assert_only_pomptrace_lines(&stderr);
    assert!(!stderr.contains('\u{1b}'), "a raw escape reached stderr");
    let lines = |needle: &str| stderr.lines().filter(|l| l.contains(needle)).count();
    // One warning per malformed string, although each is entered REPEAT times.
    for needle in [
        "m_no_stars.c",
        "m_unknown_key.c",
        "m_no_type.c",
        "m_bad_type.c",
        "m_huge_line.c",
        "m_bytes_",
        "m_newline.c",
        "m_user_unnamed.c",
        "m_user_omp.c",
        "m_user_cut.c",
        "m_assigned.c",
        "malformed CTC string \"\": ",
        "malformed CTC string \"12\": ",
        "malformed CTC string \"***===***\": ",
    ] {
        assert_eq!(lines(needle), 1, "warnings about {needle:?}:\n{stderr}");
        let line = stderr.lines().find(|l| l.contains(needle)).unwrap();
        assert!(
            line.starts_with("pomptrace: malformed CTC string \""),
            "{line}"
        );
    }
    assert!(
        stderr.contains(r"bad\nkey\u{1b}[1m"),
        "control characters are shown escaped:\n{stderr}"
    );
    // A wrong length and a single final `*` are no defects (nobody checks the length).
    assert_eq!(lines("ok_wrong_length.c"), 0, "{stderr}");
    assert_eq!(lines("ok_one_star.c"), 0, "{stderr}");
    // NULL strings: one notice for the handle that could not be assigned.
    assert_eq!(lines("unassigned region handle"), 1, "{stderr}");
    assert_eq!(stderr.lines().count(), 14 + 1 + 1, "{stderr}");

    let view = View::read(&experiment.join("traces.otf2"));
    view.assert_well_formed();
    check_summary(&stderr, &view, &experiment, None);
    let region_of = |string: &str| -> Vec<String> {
        vec![format!("Enter {string}"), format!("Leave {string}")]
    };
    let round: Vec<String> = [
        "!$omp for @m_no_stars.c:10",
        "!$omp for @m_unknown_key.c:20",
        "unknown region @m_no_type.c:30",
        "bogus @m_bad_type.c:35",
        "!$omp for @m_huge_line.c:0",
        "!$omp for @m_bytes_\u{fffd}\u{fffd}.c:50",
        "unknown region",
        "!$omp for @m_newline.c:60",
        "unknown region",
        "unknown region",
        "!$omp for @ok_wrong_length.c:70",
        "!$omp for @ok_one_star.c:80",
        "!$pomp user() @m_user_unnamed.c:90",
        "!$omp atomic @m_user_omp.c:95",
        "!$pomp user(cut) @m_user_cut.c:97",
        "!$omp atomic @m_assigned.c:100",
    ]
    .iter()
    .flat_map(|s| region_of(s))
    .collect();
    let master = view.texts("Master thread", &["ProgramBegin", "ProgramEnd"]);
    assert_eq!(master.len(), REPEAT * round.len());
    for (i, chunk) in master.chunks(round.len()).enumerate() {
        assert_eq!(chunk, round.as_slice(), "round {i}");
    }
    // The well-formed strings are defined completely.
    let ok = view.region("!$omp for @ok_wrong_length.c:70");
    assert_eq!(
        (ok.role.as_str(), ok.file.as_str(), ok.begin, ok.end),
        ("LOOP", "ok_wrong_length.c", 70, 72)
    );
}

#[test]
fn a_start_from_inside_an_unseen_parallel_region_gives_every_thread_its_own_location() {
    let scratch = Scratch::new("robust-threads");
    let exe = robust_calls(&scratch);
    // Whichever thread is first starts the measurement: repeat to meet several orders.
    for attempt in 0..5 {
        let (out, experiment) = run_calls(&exe, "threads");
        let stderr = stderr_of(&out);
        assert_only_pomptrace_lines(&stderr);
        // The handle is assigned once however many threads race for it.
        assert_eq!(
            stderr.lines().filter(|l| l.contains("m_threads.c")).count(),
            1,
            "attempt {attempt}: {stderr}"
        );
        assert_eq!(stderr.lines().count(), 2, "attempt {attempt}: {stderr}");
        let view = View::read(&experiment.join("traces.otf2"));
        view.assert_well_formed();
        check_summary(&stderr, &view, &experiment, None);
        let names: Vec<&str> = view.locations.values().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "Master thread",
                "OMP thread 1",
                "OMP thread 2",
                "OMP thread 3"
            ],
            "attempt {attempt}"
        );
        for name in names {
            let texts = view.texts(name, &["ProgramBegin", "ProgramEnd"]);
            let expected: Vec<String> = (0..REPEAT)
                .flat_map(|_| {
                    [
                        "Enter !$omp for @m_threads.c:300".to_string(),
                        "Leave !$omp for @m_threads.c:300".to_string(),
                    ]
                })
                .collect();
            assert_eq!(texts, expected, "attempt {attempt}: {name}");
        }
        std::fs::remove_dir_all(&experiment).unwrap();
    }
}

#[test]
fn null_handle_pointers_never_crash_and_record_only_the_team_structure() {
    let scratch = Scratch::new("robust-null");
    let exe = robust_calls(&scratch);
    let (out, experiment) = run_calls(&exe, "null");
    let stderr = stderr_of(&out);
    assert_only_pomptrace_lines(&stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let view = View::read(&experiment.join("traces.otf2"));
    view.assert_well_formed();
    check_summary(&stderr, &view, &experiment, None);
    let kinds: Vec<&str> = view
        .events_of("Master thread")
        .iter()
        .map(|e| e.kind.as_str())
        .collect();
    let region = [
        "ThreadFork",
        "ThreadTeamBegin",
        "ThreadTeamEnd",
        "ThreadJoin",
    ];
    let expected: Vec<&str> = std::iter::once("ProgramBegin")
        .chain(region)
        .chain(region)
        .chain(std::iter::once("ProgramEnd"))
        .collect();
    assert_eq!(kinds, expected);
}

#[test]
fn exit_and_end_calls_before_the_start_record_nothing() {
    let scratch = Scratch::new("robust-early");
    let exe = robust_calls(&scratch);
    let (out, experiment) = run_calls(&exe, "early");
    let stderr = stderr_of(&out);
    assert_only_pomptrace_lines(&stderr);
    // At most the notice about unassigned handles, besides the summary.
    assert!(
        stderr
            .lines()
            .all(|l| l.starts_with(SUMMARY) || l.contains("came with an unassigned region handle")),
        "{stderr}"
    );
    assert!(stderr.lines().count() <= 2, "{stderr}");
    let view = View::read(&experiment.join("traces.otf2"));
    view.assert_well_formed();
    check_summary(&stderr, &view, &experiment, None);
    assert_eq!(
        view.texts("Master thread", &["ProgramBegin"]),
        [
            "Enter !$pomp user(calls) @robust_calls.c:220",
            "Enter !$omp for @robust_calls.c:201",
            "Enter !$omp implicit barrier @robust_calls.c:202",
            "Leave !$omp implicit barrier @robust_calls.c:202",
            "Leave !$omp for @robust_calls.c:201",
            "Leave !$pomp user(calls) @robust_calls.c:220",
            "ProgramEnd 0",
        ]
    );
    assert_eq!(view.events_of("Master thread")[0].kind, "ProgramBegin");
}
