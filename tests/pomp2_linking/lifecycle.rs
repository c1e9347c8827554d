//! The measurement lifecycle: where the trace goes, the closing summary line, finalize, exit,
//! POMPTRACE_ENABLE=0, an unwritable experiment directory.

use super::*;

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
            &[("POMPTRACE_CHUNK_SIZE", "256K")],
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
