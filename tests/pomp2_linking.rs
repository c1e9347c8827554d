mod support;

// The ways a program gets pomptrace (shared, static, without an init file, LD_PRELOAD into an
// instrumented shared library), the measurement lifecycle (where the trace goes, the closing
// summary line, finalize, exit, POMPTRACE_ENABLE=0), and robustness: malformed CTC strings,
// NULL handles, calls before the start, an unwritable output directory, and 10^6 events per
// thread through 64 KiB chunks.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use pomptrace::otf2::{ArchiveReader, Event, GlobalDef};
use support::pomp2::*;
use support::{run, Scratch};

// ---- helpers ----------------------------------------------------------------------------------

const SUMMARY: &str = "pomptrace: trace written to ";

/// The numbers of the one closing summary line: (anchor path, locations, events, bytes).
fn summary(stderr: &str) -> (PathBuf, u64, u64, u64) {
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with(SUMMARY)).collect();
    assert_eq!(
        lines.len(),
        1,
        "expected exactly one summary line:\n{stderr}"
    );
    let rest = &lines[0][SUMMARY.len()..];
    let (path, numbers) = rest
        .rsplit_once(" (")
        .unwrap_or_else(|| panic!("summary line without numbers: {rest}"));
    let numbers = numbers
        .strip_suffix(" bytes)")
        .unwrap_or_else(|| panic!("summary line does not end in ` bytes)`: {rest}"));
    let fields: Vec<&str> = numbers.split(", ").collect();
    let number = |i: usize, unit: &str| -> u64 {
        fields
            .get(i)
            .and_then(|f| f.strip_suffix(unit))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("field {i} ({unit}) of summary line: {rest}"))
    };
    (
        PathBuf::from(path),
        number(0, " locations"),
        number(1, " events"),
        fields
            .get(2)
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("bytes of summary line: {rest}")),
    )
}

/// Total size of the files below `dir`.
fn dir_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let e = e.unwrap();
            let md = e.metadata().unwrap();
            if md.is_dir() {
                dir_size(&e.path())
            } else {
                md.len()
            }
        })
        .sum()
}

/// Checks the one summary line against the trace in `experiment` (as the reference reader saw
/// it); `cwd` resolves a relative path in the line.
fn check_summary(stderr: &str, view: &View, experiment: &Path, cwd: Option<&Path>) {
    let (anchor, locations, events, bytes) = summary(stderr);
    let anchor = match cwd {
        Some(cwd) if anchor.is_relative() => cwd.join(anchor),
        _ => anchor,
    };
    assert_eq!(anchor, experiment.join("traces.otf2"), "summary path");
    assert_eq!(
        locations as usize,
        view.locations.len(),
        "summary locations"
    );
    assert_eq!(events as usize, view.total_events(), "summary events");
    assert_eq!(bytes, dir_size(experiment), "summary bytes");
}

fn stdout_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every stderr line is pomptrace's, and none reports an internal error.
fn assert_only_pomptrace_lines(stderr: &str) {
    for line in stderr.lines() {
        assert!(
            line.starts_with("pomptrace: "),
            "stray line on stderr: {line:?}\nfull stderr:\n{stderr}"
        );
        assert!(!line.contains("internal error"), "{stderr}");
    }
}

/// Names of the entries of a directory, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Local time as `YYYYmmdd_HHMMSS`, as the default directory name has it.
fn local_timestamp() -> String {
    let out = run(Command::new("date").arg("+%Y%m%d_%H%M%S"));
    stdout_of(&out).trim().to_string()
}

/// Count of each event text (kind and region) on all locations.
fn text_counts(view: &View) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for e in view.events.values().flatten() {
        *counts.entry(e.text()).or_insert(0) += 1;
    }
    counts
}

/// As `run_traced`, with command-line arguments.
fn run_traced_with(
    exe: &Path,
    args: &[&str],
    threads: u32,
    label: &str,
    env: &[(&str, &str)],
) -> Run {
    let experiment = exe.parent().unwrap().join(label);
    let _ = std::fs::remove_dir_all(&experiment);
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .env("OMP_NUM_THREADS", threads.to_string())
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", &experiment)
        .env_remove("POMPTRACE_ENABLE")
        .env_remove("LD_PRELOAD");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let output = run(&mut cmd);
    Run { output, experiment }
}

fn count(view: &View, kind: &str) -> usize {
    view.kind_counts().get(kind).copied().unwrap_or(0)
}

// ---- 1. ways of linking -----------------------------------------------------------------------

/// link_program.c: loop rounds and iterations.
const ROUNDS: usize = 3;
const ITERATIONS: usize = 40;

/// Builds the instrumented link_program.c as a shared library (no init file, not linked against
/// pomptrace) and an uninstrumented main program using it (not linked against pomptrace
/// either); returns the main program.
fn build_preload_variant(dir: &Path, instrumented: &Path) -> PathBuf {
    let object = dir.join("link_program_pic.o");
    run(Command::new("cc")
        .args([
            "-fopenmp",
            "-fPIC",
            "-O1",
            "-g",
            "-DLINK_PROGRAM_NO_MAIN",
            "-I",
        ])
        .arg(include_dir())
        .arg("-c")
        .arg(instrumented)
        .arg("-o")
        .arg(&object));
    let library = dir.join("liblinkprogram.so");
    run(Command::new("cc")
        .args(["-shared", "-fopenmp", "-o"])
        .arg(&library)
        .arg(&object));
    let main_src = dir.join("link_main.c");
    std::fs::copy(support::repo_root().join("c-tests/link_main.c"), &main_src).unwrap();
    let exe = dir.join("preload_main");
    // The library's POMP2_* references stay undefined until LD_PRELOAD provides them.
    run(Command::new("cc")
        .arg(&main_src)
        .arg("-o")
        .arg(&exe)
        .arg("-L")
        .arg(dir)
        .arg("-llinkprogram")
        .arg(format!("-Wl,-rpath,{}", dir.display()))
        .arg("-Wl,--allow-shlib-undefined"));
    for file in [&exe, &library] {
        let dynamic = stdout_of(&run(Command::new("readelf").arg("-d").arg(file)));
        assert!(
            dynamic.contains("NEEDED") && !dynamic.contains("pomptrace"),
            "{} must not need libpomptrace:\n{dynamic}",
            file.display()
        );
    }
    exe
}

#[test]
fn every_way_of_linking_gives_the_same_regions_and_event_counts() {
    let scratch = Scratch::new("linking");
    let source = instrument("link_program.c", &scratch.path, &[]);
    let build = |init_file, link, name| {
        Build {
            dir: &scratch.path,
            compiler: "cc",
            init_file,
            link,
        }
        .executable(std::slice::from_ref(&source), name)
    };
    let preload = library_dir().join("libpomptrace.so");
    let preload = preload.to_str().unwrap();
    // (what, program, environment)
    let variants = [
        ("init file", build(true, Link::Shared, "with_init"), None),
        ("no init file", build(false, Link::Shared, "lazy"), None),
        (
            "LD_PRELOAD",
            build_preload_variant(&scratch.path, &source),
            Some(("LD_PRELOAD", preload)),
        ),
        ("static", build(true, Link::Static, "static"), None),
    ];
    let expected_stdout = format!(
        "sum={} crit={} tasks={ROUNDS} masters={ROUNDS}\n",
        ROUNDS * ITERATIONS * (ITERATIONS - 1) / 2,
        ROUNDS * ITERATIONS
    );
    for threads in [1u32, 2, 4] {
        let t = threads as usize;
        let mut reference: Option<(BTreeMap<String, usize>, Vec<String>)> = None;
        for (what, exe, env) in &variants {
            let label = format!("{}-{threads}", exe.file_name().unwrap().to_string_lossy());
            let env: Vec<(&str, &str)> = env.iter().copied().collect();
            let r = run_traced(exe, threads, &label, &env);
            assert_eq!(r.stdout(), expected_stdout, "{what}, {threads} threads");
            let view = View::read(&r.anchor());
            view.assert_well_formed();
            // Nothing but the summary: no warning in any variant.
            assert_eq!(r.stderr().lines().count(), 1, "{what}: {}", r.stderr());
            check_summary(&r.stderr(), &view, &r.experiment, None);
            assert_eq!(view.locations.len(), t, "{what}, {threads} threads");

            let kinds = view.kind_counts();
            let names = view.region_names();
            // Counts that follow from the program (the same for every variant).
            let enters = ROUNDS * (7 * t + 2 * ITERATIONS + 6) + 2 * t + 3;
            for (kind, n) in [
                ("Enter", enters),
                ("Leave", enters),
                ("ThreadFork", 1),
                ("ThreadJoin", 1),
                ("ThreadTeamBegin", t),
                ("ThreadTeamEnd", t),
                ("ThreadAcquireLock", ROUNDS * ITERATIONS + ROUNDS * t),
                ("ThreadReleaseLock", ROUNDS * ITERATIONS + ROUNDS * t),
                ("ThreadTaskCreate", ROUNDS),
                ("ThreadTaskComplete", ROUNDS),
                ("ThreadTaskSwitch", 2 * ROUNDS),
                ("ProgramBegin", 1),
                ("ProgramEnd", 1),
            ] {
                assert_eq!(
                    kinds.get(kind).copied().unwrap_or(0),
                    n,
                    "{what}, {threads} threads: {kind} in {kinds:?}"
                );
            }
            for name in [
                "!$pomp user(workload) @link_program.c:13",
                "!$omp parallel @link_program.c:14",
                "!$omp for @link_program.c:19",
                "!$omp critical (link_crit) @link_program.c:22",
                "!$omp critical sblock @link_program.c:22",
                "!$omp create task @link_program.c:27",
                "!$omp task @link_program.c:27",
                "!$omp atomic @link_program.c:29",
                "!$omp taskwait @link_program.c:32",
                "!$omp master @link_program.c:37",
                "!$omp barrier @link_program.c:39",
                "omp_set_lock",
            ] {
                assert!(
                    names.iter().any(|n| n == name),
                    "{what}: no {name} in {names:?}"
                );
            }
            assert_eq!(names.len(), 26, "{what}: {names:?}");
            match &reference {
                None => reference = Some((kinds, names)),
                Some((ref_kinds, ref_names)) => {
                    assert_eq!(&kinds, ref_kinds, "{what}, {threads} threads: event counts");
                    assert_eq!(&names, ref_names, "{what}, {threads} threads: regions");
                }
            }
        }
    }
}

#[test]
fn a_program_without_pomp2_calls_under_ld_preload_writes_and_prints_nothing() {
    let scratch = Scratch::new("preload-plain");
    std::fs::copy(
        support::repo_root().join("c-tests/link_plain.c"),
        scratch.join("link_plain.c"),
    )
    .unwrap();
    let exe = Build {
        dir: &scratch.path,
        compiler: "cc",
        init_file: false,
        link: Link::None,
    }
    .executable(&[scratch.join("link_plain.c")], "link_plain");
    let cwd = scratch.join("cwd");
    std::fs::create_dir(&cwd).unwrap();
    for with_directory in [false, true] {
        let experiment = scratch.join("experiment");
        let mut cmd = Command::new(&exe);
        cmd.current_dir(&cwd)
            .env("OMP_NUM_THREADS", "2")
            .env("LD_PRELOAD", library_dir().join("libpomptrace.so"))
            .env_remove("POMPTRACE_ENABLE")
            .env_remove("POMPTRACE_EXPERIMENT_DIRECTORY");
        if with_directory {
            cmd.env("POMPTRACE_EXPERIMENT_DIRECTORY", &experiment);
        }
        let out = run(&mut cmd);
        assert_eq!(stdout_of(&out), "sum=499500\n");
        assert_eq!(stderr_of(&out), "", "nothing on stderr");
        assert!(entries(&cwd).is_empty(), "{:?}", entries(&cwd));
        assert!(!experiment.exists(), "no experiment directory");
    }
    // Nor in a program without any OpenMP runtime.
    let out = run(Command::new("sh")
        .args(["-c", "echo plain"])
        .current_dir(&cwd)
        .env("LD_PRELOAD", library_dir().join("libpomptrace.so")));
    assert_eq!(stdout_of(&out), "plain\n");
    assert_eq!(stderr_of(&out), "", "nothing on stderr");
    assert!(entries(&cwd).is_empty(), "{:?}", entries(&cwd));
}

// ---- 2. lifecycle -----------------------------------------------------------------------------

/// robust_lifecycle.c: lock-protected increments per call of `locked_count`.
const LOCKED: usize = 20000;

fn lifecycle_program(scratch: &Scratch, init_file: bool) -> PathBuf {
    let source = instrument("robust_lifecycle.c", &scratch.path, &[]);
    Build {
        dir: &scratch.path,
        compiler: "cc",
        init_file,
        link: Link::Shared,
    }
    .executable(
        &[source],
        if init_file {
            "robust_lifecycle"
        } else {
            "robust_lifecycle_lazy"
        },
    )
}

#[test]
fn the_trace_goes_to_the_experiment_directory_with_one_matching_summary_line() {
    let scratch = Scratch::new("lifecycle-dir");
    let exe = lifecycle_program(&scratch, true);
    for threads in [1, 3] {
        let r = run_traced(&exe, threads, &format!("run-{threads}"), &[]);
        assert_eq!(r.stdout(), format!("counter={LOCKED} second=0\n"));
        assert!(r.anchor().is_file());
        let view = View::read(&r.anchor());
        view.assert_well_formed();
        assert_eq!(r.stderr().lines().count(), 1, "{}", r.stderr());
        check_summary(&r.stderr(), &view, &r.experiment, None);
        assert_eq!(count(&view, "ThreadAcquireLock"), LOCKED);
        assert_eq!(view.locations.len(), threads as usize);
    }
}

#[test]
fn without_a_directory_the_trace_goes_to_a_new_timestamped_directory_in_the_cwd() {
    let scratch = Scratch::new("lifecycle-default");
    let exe = lifecycle_program(&scratch, true);
    let cwd = scratch.join("cwd");
    std::fs::create_dir(&cwd).unwrap();
    let before = local_timestamp();
    let child = Command::new(&exe)
        .current_dir(&cwd)
        .env("OMP_NUM_THREADS", "2")
        .env_remove("POMPTRACE_EXPERIMENT_DIRECTORY")
        .env_remove("POMPTRACE_ENABLE")
        .env_remove("LD_PRELOAD")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let after = local_timestamp();
    assert!(out.status.success(), "{out:?}");

    let names = entries(&cwd);
    assert_eq!(names.len(), 1, "one new directory: {names:?}");
    let name = &names[0];
    let rest = name
        .strip_prefix("pomptrace-robust_lifecycle-")
        .unwrap_or_else(|| panic!("{name}"));
    let (stamp, pid_text) = rest.rsplit_once('-').unwrap_or_else(|| panic!("{name}"));
    assert_eq!(pid_text, pid.to_string(), "{name}: pid");
    assert!(
        stamp.len() == 15
            && stamp.char_indices().all(|(i, c)| if i == 8 {
                c == '_'
            } else {
                c.is_ascii_digit()
            }),
        "{name}: YYYYmmdd_HHMMSS"
    );
    assert!(
        before.as_str() <= stamp && stamp <= after.as_str(),
        "{stamp} not within {before}..{after}"
    );
    let experiment = cwd.join(name);
    assert!(experiment.is_dir());
    let view = View::read(&experiment.join("traces.otf2"));
    view.assert_well_formed();
    check_summary(&stderr_of(&out), &view, &experiment, Some(&cwd));
}

#[test]
fn a_relative_directory_stays_where_the_program_started_when_it_changes_directory() {
    let scratch = Scratch::new("lifecycle-chdir");
    let exe = lifecycle_program(&scratch, true);
    let threads = 3;
    for relative in [Some("exp"), None] {
        let cwd = scratch.join("cwd");
        let _ = std::fs::remove_dir_all(&cwd);
        std::fs::create_dir(&cwd).unwrap();
        let mut cmd = Command::new(&exe);
        cmd.arg("chdir")
            .current_dir(&cwd)
            .env("OMP_NUM_THREADS", threads.to_string())
            .env_remove("POMPTRACE_EXPERIMENT_DIRECTORY")
            .env_remove("POMPTRACE_ENABLE")
            .env_remove("LD_PRELOAD");
        if let Some(dir) = relative {
            cmd.env("POMPTRACE_EXPERIMENT_DIRECTORY", dir);
        }
        let out = run(&mut cmd);
        assert_eq!(stdout_of(&out), format!("counter={LOCKED} second=0\n"));
        let stderr = stderr_of(&out);
        assert_eq!(stderr.lines().count(), 1, "{relative:?}: {stderr}");
        // The program's threads (created after the chdir) write into the same trace.
        assert!(
            entries(&cwd.join("elsewhere")).is_empty(),
            "{relative:?}: {:?}",
            entries(&cwd.join("elsewhere"))
        );
        let names = entries(&cwd);
        assert_eq!(names.len(), 2, "{relative:?}: {names:?}");
        let experiment = match relative {
            Some(dir) => cwd.join(dir),
            None => cwd.join(names.iter().find(|n| n.starts_with("pomptrace-")).unwrap()),
        };
        let view = View::read(&experiment.join("traces.otf2"));
        view.assert_well_formed();
        check_summary(&stderr, &view, &experiment, Some(&cwd));
        assert_eq!(view.locations.len(), threads);
        assert_eq!(count(&view, "ThreadAcquireLock"), LOCKED);
    }
}

#[test]
fn finalize_writes_the_trace_once_and_later_events_are_ignored() {
    let scratch = Scratch::new("lifecycle-finalize");
    for init_file in [true, false] {
        let exe = lifecycle_program(&scratch, init_file);
        let threads = 3;
        let r = run_traced_with(
            &exe,
            &["finalize"],
            threads,
            "finalize",
            &[("POMPTRACE_CHUNK_SIZE", "4K")],
        );
        // Both calls to POMP2_Finalize and the exit handler: one line.
        assert_eq!(
            r.stdout(),
            format!(
                "counter={LOCKED} second={}\n",
                LOCKED + threads as usize + 1
            ),
            "the program still works after finalize"
        );
        assert_eq!(r.stderr().lines().count(), 1, "{}", r.stderr());
        let view = View::read(&r.anchor());
        view.assert_well_formed();
        check_summary(&r.stderr(), &view, &r.experiment, None);
        let texts = text_counts(&view);
        // Only the work before the finalize: one user region, one parallel loop's locks.
        assert_eq!(
            texts.get("Enter !$pomp user(before) @robust_lifecycle.c:34"),
            Some(&1),
            "{texts:?}"
        );
        assert!(
            !texts.keys().any(|t| t.contains("after_finalize")
                || t.contains("critical")
                || t.contains("task")),
            "events after finalize: {texts:?}"
        );
        assert_eq!(count(&view, "ThreadAcquireLock"), LOCKED);
        assert_eq!(count(&view, "ThreadFork"), 1);
        // Ended by POMP2_Finalize, before exit: the status is not known yet (undefined).
        assert_eq!(
            view.events_of("Master thread").last().map(Ev::text),
            Some("ProgramEnd -9223372036854775808".to_string())
        );
    }
}

#[test]
fn exit_without_finalize_still_leaves_a_complete_trace_with_regions_closed() {
    let scratch = Scratch::new("lifecycle-exit");
    let exe = lifecycle_program(&scratch, true);
    let experiment = scratch.join("exit");
    let out = Command::new(&exe)
        .arg("exit")
        .env("OMP_NUM_THREADS", "2")
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", &experiment)
        .env_remove("POMPTRACE_ENABLE")
        .env_remove("LD_PRELOAD")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert_eq!(stdout_of(&out), format!("counter={LOCKED} threads=2\n"));
    let stderr = stderr_of(&out);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let view = View::read(&experiment.join("traces.otf2"));
    // Every region closed, the open user region included.
    view.assert_well_formed();
    check_summary(&stderr, &view, &experiment, None);
    let master = view.texts("Master thread", &[]);
    let unclosed = "!$pomp user(unclosed) @robust_lifecycle.c:40";
    assert!(master.contains(&format!("Enter {unclosed}")), "{master:?}");
    assert!(master.contains(&format!("Leave {unclosed}")), "{master:?}");
    // The status exit() was given.
    assert_eq!(master.last().map(String::as_str), Some("ProgramEnd 3"));
    assert_eq!(count(&view, "ThreadFork"), 2);
    assert_eq!(count(&view, "ThreadJoin"), 2);
    let atomic = text_counts(&view)
        .into_iter()
        .filter(|(t, _)| t.starts_with("Enter !$omp atomic"))
        .map(|(_, n)| n)
        .sum::<usize>();
    assert_eq!(atomic, 2, "the atomic of both threads");
}

#[test]
fn a_disabled_measurement_writes_nothing_and_locks_still_lock() {
    let scratch = Scratch::new("lifecycle-off");
    let exe = lifecycle_program(&scratch, true);
    let cwd = scratch.join("cwd");
    std::fs::create_dir(&cwd).unwrap();
    let experiment = scratch.join("off");
    let threads = 4;
    for (mode, expected) in [
        ("run", format!("counter={LOCKED} second=0\n")),
        (
            "finalize",
            format!("counter={LOCKED} second={}\n", LOCKED + threads + 1),
        ),
    ] {
        let out = run(Command::new(&exe)
            .arg(mode)
            .current_dir(&cwd)
            .env("OMP_NUM_THREADS", threads.to_string())
            .env("POMPTRACE_ENABLE", "0")
            .env("POMPTRACE_EXPERIMENT_DIRECTORY", &experiment)
            .env_remove("LD_PRELOAD"));
        assert_eq!(stdout_of(&out), expected, "{mode}");
        assert_eq!(stderr_of(&out), "", "{mode}: nothing on stderr");
        assert!(!experiment.exists(), "{mode}: no experiment directory");
        assert!(entries(&cwd).is_empty(), "{mode}: {:?}", entries(&cwd));
    }
}

#[test]
fn an_unwritable_experiment_directory_falls_back_to_the_temporary_directory() {
    let scratch = Scratch::new("lifecycle-fallback");
    let exe = lifecycle_program(&scratch, true);
    // Root may write anywhere, but not below a regular file.
    std::fs::write(scratch.join("afile"), "not a directory").unwrap();
    let wanted = scratch.join("afile/exp");
    let tmp = scratch.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let out = run(Command::new(&exe)
        .env("OMP_NUM_THREADS", "2")
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", &wanted)
        .env("TMPDIR", &tmp)
        .env_remove("POMPTRACE_ENABLE")
        .env_remove("LD_PRELOAD"));
    assert_eq!(stdout_of(&out), format!("counter={LOCKED} second=0\n"));
    let stderr = stderr_of(&out);
    assert_only_pomptrace_lines(&stderr);
    assert_eq!(stderr.lines().count(), 2, "{stderr}");
    let message = stderr
        .lines()
        .find(|l| l.contains("cannot write the trace to"))
        .unwrap_or_else(|| panic!("no fallback message: {stderr}"));
    assert!(
        message.contains(&format!("cannot write the trace to {}", wanted.display())),
        "{message}"
    );
    let fallback = PathBuf::from(
        message
            .rsplit_once("writing it to ")
            .and_then(|(_, rest)| rest.strip_suffix(" instead"))
            .unwrap_or_else(|| panic!("the message must say where: {message}")),
    );
    let cleanup = Cleanup(fallback.clone());
    assert_eq!(fallback.parent(), Some(tmp.as_path()), "{message}");
    assert!(
        fallback
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("pomptrace-robust_lifecycle-"),
        "{message}"
    );
    let view = View::read(&fallback.join("traces.otf2"));
    view.assert_well_formed();
    check_summary(&stderr, &view, &fallback, None);
    assert_eq!(count(&view, "ThreadAcquireLock"), LOCKED);
    drop(cleanup);
    assert!(!fallback.exists());

    // Neither place writable: one message, nothing recorded, the program unharmed.
    let out = run(Command::new(&exe)
        .env("OMP_NUM_THREADS", "2")
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", &wanted)
        .env("TMPDIR", scratch.join("afile/tmp"))
        .env_remove("POMPTRACE_ENABLE")
        .env_remove("LD_PRELOAD"));
    assert_eq!(stdout_of(&out), format!("counter={LOCKED} second=0\n"));
    let stderr = stderr_of(&out);
    assert_only_pomptrace_lines(&stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("nothing will be recorded") && stderr.contains("afile/exp"),
        "{stderr}"
    );
}

/// Removes a directory when dropped (also when the test fails).
struct Cleanup(PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

// ---- 3. robustness: direct calls --------------------------------------------------------------

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

// ---- 4. many events through small chunks ------------------------------------------------------

/// robust_many_events.c: iterations per thread, four events each.
const PER_THREAD: u64 = 250_000;

#[test]
fn no_event_is_lost_with_64k_chunks_and_a_million_events_per_thread() {
    let scratch = Scratch::new("robust-many");
    let source = instrument("robust_many_events.c", &scratch.path, &[]);
    let exe = Build::c(&scratch.path).executable(&[source], "robust_many_events");
    for threads in [2u64, 4] {
        let r = run_traced(
            &exe,
            threads as u32,
            &format!("many-{threads}"),
            &[("POMPTRACE_CHUNK_SIZE", "64K")],
        );
        assert_eq!(r.stdout(), format!("total={}\n", PER_THREAD * threads));
        assert_eq!(r.stderr().lines().count(), 1, "{}", r.stderr());
        // The other reference reader, which is fast enough for this size.
        support::otf2_print(&["--silent"], &r.anchor(), &[]);

        let reader = ArchiveReader::open(r.anchor()).unwrap();
        assert_eq!(reader.anchor().event_chunk_size, 256 * 1024);
        let defs = reader.global_defs().unwrap();
        let strings: BTreeMap<u32, String> = defs
            .iter()
            .filter_map(|d| match d {
                GlobalDef::String { id, string } => Some((*id, string.clone())),
                _ => None,
            })
            .collect();
        let region_names: BTreeMap<u32, String> = defs
            .iter()
            .filter_map(|d| match d {
                GlobalDef::Region { id, name, .. } => Some((*id, strings[name].clone())),
                _ => None,
            })
            .collect();
        let defined: BTreeMap<u64, u64> = defs
            .iter()
            .filter_map(|d| match d {
                GlobalDef::Location {
                    id,
                    number_of_events,
                    ..
                } => Some((*id, *number_of_events)),
                _ => None,
            })
            .collect();
        assert_eq!(defined.len() as u64, threads);

        let (mut total, mut total_flushes) = (0u64, 0u64);
        for (&location, &number_of_events) in &defined {
            let mut events = 0u64;
            let mut flushes = 0u64;
            let mut enters: BTreeMap<&str, u64> = BTreeMap::new();
            let mut open: Vec<u32> = Vec::new();
            let mut last = 0;
            for record in reader.events(location).unwrap() {
                let record = record.unwrap_or_else(|e| panic!("location {location}: {e}"));
                events += 1;
                assert!(record.time >= last, "location {location}: time goes back");
                last = record.time;
                match record.event {
                    Event::BufferFlush { .. } => flushes += 1,
                    Event::Enter { region } => {
                        *enters.entry(region_names[&region].as_str()).or_default() += 1;
                        open.push(region);
                    }
                    Event::Leave { region } => {
                        assert_eq!(open.pop(), Some(region), "location {location}");
                    }
                    _ => {}
                }
            }
            assert!(open.is_empty(), "location {location}: open regions");
            assert_eq!(
                events, number_of_events,
                "location {location}: defined count"
            );
            // Per iteration: Enter/Leave of the user region and of the atomic. Per thread:
            // team begin/end, the parallel region and its implicit barrier. The master also
            // has ProgramBegin/End and ThreadFork/Join.
            let expected = 4 * PER_THREAD + 6 + if location == 0 { 4 } else { 0 };
            assert_eq!(events - flushes, expected, "location {location}");
            let iterations = |prefix: &str| {
                enters
                    .iter()
                    .filter(|(n, _)| n.starts_with(prefix))
                    .map(|(_, c)| *c)
                    .sum::<u64>()
            };
            assert_eq!(iterations("!$pomp user(iteration)"), PER_THREAD);
            assert_eq!(iterations("!$omp atomic"), PER_THREAD);
            total += events - flushes;
            total_flushes += flushes;
        }
        assert_eq!(total, threads * (4 * PER_THREAD + 6) + 4);
        let (_, locations, events, _) = summary(&r.stderr());
        assert_eq!(locations, threads);
        assert_eq!(events, total + total_flushes);
    }
}

// ---- 5. processes that fork, threads still running at exit --------------------------------------

/// A command running `exe` under `timeout`, so that a hang fails the test instead of blocking it.
fn with_timeout(seconds: u32, exe: &Path) -> Command {
    let mut cmd = Command::new("timeout");
    cmd.arg("-k").arg("5").arg(seconds.to_string()).arg(exe);
    cmd
}

#[test]
fn a_forked_child_that_exits_neither_hangs_nor_touches_the_parents_trace() {
    let scratch = Scratch::new("robust-fork");
    let source = instrument("robust_fork.c", &scratch.path, &[]);
    let exe = Build::c(&scratch.path).executable(&[source], "robust_fork");
    let experiment = scratch.join("fork");
    let out = with_timeout(60, &exe)
        .env("OMP_NUM_THREADS", "2")
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", &experiment)
        .env_remove("POMPTRACE_ENABLE")
        .env_remove("LD_PRELOAD")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "hung or failed: {out:?}");
    assert_eq!(
        stdout_of(&out),
        "child v=42\nparent before=2 after=2 child=7\n"
    );
    // The parent's summary only: the child writes nothing.
    let stderr = stderr_of(&out);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let view = View::read(&experiment.join("traces.otf2"));
    view.assert_well_formed();
    check_summary(&stderr, &view, &experiment, None);
    assert_eq!(count(&view, "ThreadFork"), 2);
    assert_eq!(count(&view, "ThreadJoin"), 2);
    assert!(
        !text_counts(&view).keys().any(|t| t.contains("user(child)")),
        "the child's events are not in the parent's trace"
    );
}

#[test]
fn exit_inside_a_parallel_region_while_others_record_leaves_a_clean_trace() {
    let scratch = Scratch::new("robust-exit-inside");
    let source = instrument("robust_exit_inside.c", &scratch.path, &[]);
    let exe = Build::c(&scratch.path).executable(&[source], "robust_exit_inside");
    for attempt in 0..20 {
        let experiment = scratch.join(&format!("exit-{attempt}"));
        let out = with_timeout(60, &exe)
            .env("OMP_NUM_THREADS", "8")
            .env("POMPTRACE_EXPERIMENT_DIRECTORY", &experiment)
            .env_remove("POMPTRACE_ENABLE")
            .env_remove("LD_PRELOAD")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "attempt {attempt}: {out:?}");
        let stderr = stderr_of(&out);
        assert_eq!(stderr.lines().count(), 1, "attempt {attempt}: {stderr}");
        // No "; but N timestamps ... went backwards": the summary ends with the byte count.
        let view = View::read(&experiment.join("traces.otf2"));
        view.assert_well_formed();
        check_summary(&stderr, &view, &experiment, None);
        let _ = std::fs::remove_dir_all(&experiment);
    }
}
