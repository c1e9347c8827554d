//! Ways of linking: shared, static, without an init file, LD_PRELOAD into an instrumented
//! shared library.

use super::*;

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
