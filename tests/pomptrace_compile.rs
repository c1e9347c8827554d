//! `pomptrace COMPILER ARGS...` on whole projects (c-tests/projects/): a multi-directory Make
//! project with a static library, C and C++; CMake through its launcher variables or CC; a
//! configure script that runs conftests; Fortran modules. Each is built with the wrapper as its
//! compiler and nothing else changed, run, and its trace read back by the reference readers
//! (the python `otf2` module and otf2-print, through `View`). Also: filter files, the
//! configuration on record, opari2 failures and what the wrapper must leave alone.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::pomp2::{pomptrace_command, View};
use support::{run, Scratch};

/// A copy of `c-tests/projects/<name>` in a scratch directory.
fn project(scratch: &Scratch, name: &str) -> PathBuf {
    let from = support::repo_root().join("c-tests/projects").join(name);
    run(Command::new("cp").arg("-r").arg(&from).arg(&scratch.path));
    scratch.join(name)
}

/// The wrapper with one compiler, as a build system's CC/CXX/FC value.
fn wrapped(compiler: &str) -> String {
    format!("{} {compiler}", pomptrace_command().display())
}

/// A command with no POMPTRACE_* variable nor build setting inherited from the environment.
fn clean(mut command: Command) -> Command {
    for v in pomptrace::settings::VARIABLES {
        command.env_remove(v.name);
    }
    for name in ["NM", "CC", "CXX", "FC", "CFLAGS", "MAKEFLAGS"] {
        command.env_remove(name);
    }
    command
}

/// Runs a program built by the wrapper on 2 threads, its trace in `<dir of exe>/<label>`. The
/// library is the one the wrapper linked (its rpath): cargo's LD_LIBRARY_PATH, which may name
/// an older copy in target/<profile>, is cleared.
fn run_traced(exe: &Path, label: &str, env: &[(&str, &str)]) -> support::pomp2::Run {
    let mut env = env.to_vec();
    env.push(("LD_LIBRARY_PATH", ""));
    support::pomp2::run_traced(exe, 2, label, &env)
}

/// Enter events per region name, over all locations.
fn enters(view: &View) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for e in view.events.values().flatten() {
        if e.kind == "Enter" {
            *counts.entry(e.detail[0].clone()).or_insert(0) += 1;
        }
    }
    counts
}

/// Every file in `files` has regions that were entered, defined with the user's path (never
/// the wrapper's temporary directory).
fn assert_regions_of_every_file(view: &View, dir: &Path, files: &[&str]) {
    let entered = enters(view);
    for region in view.regions.values() {
        assert!(
            !region.file.contains("pomptrace-cc-"),
            "region {} names a temporary file {}",
            region.name,
            region.file
        );
    }
    for file in files {
        let path = dir.join(file).canonicalize().unwrap();
        let regions: Vec<&str> = view
            .regions
            .values()
            .filter(|r| Path::new(&r.file) == path)
            .map(|r| r.name.as_str())
            .collect();
        assert!(
            regions.iter().any(|name| entered.contains_key(*name)),
            "no region of {} was entered; regions: {:?}",
            path.display(),
            view.regions
                .values()
                .map(|r| (&r.name, &r.file))
                .collect::<Vec<_>>()
        );
    }
}

fn make_project(scratch: &Scratch) -> PathBuf {
    let dir = project(scratch, "make_multi");
    let mut make = clean(Command::new("make"));
    make.arg("-s")
        .arg(format!("CC={}", wrapped("gcc")))
        .arg(format!("CXX={}", wrapped("g++")))
        .current_dir(&dir);
    run(&mut make);
    dir
}

#[test]
fn a_make_project_with_a_static_library_c_and_cxx() {
    let scratch = Scratch::new("compile-make");
    let dir = make_project(&scratch);
    let exe = dir.join("app/kernels");
    let traced = run_traced(&exe, "trace", &[]);
    assert!(traced
        .stdout()
        .contains("kernels: sqrt(sum) 499.750, threads 2"));
    let view = View::read(&traced.anchor());
    view.assert_well_formed();
    assert_regions_of_every_file(
        &view,
        &dir,
        &["lib/vec.c", "lib/reduce.c", "app/main.c", "app/report.cpp"],
    );
    let entered = enters(&view);
    // The directive inside a macro (vec.c) and the parallel region whose block opens in two
    // #if branches (reduce.c) were instrumented: opari2 saw the preprocessed code.
    assert_eq!(entered["!$omp for @vec.c:9"], 2);
    assert_eq!(entered["!$omp parallel @reduce.c:11"], 2);
    assert_eq!(entered["!$omp atomic @reduce.c:18"], 2);
    assert_eq!(entered["!$pomp user(checksum) @main.c:11"], 1);
    assert_eq!(entered["!$omp single sblock @report.cpp:8"], 1);
    // -MMD wrote the dependencies of the user's sources, so make finds everything up to date.
    let deps = std::fs::read_to_string(dir.join("lib/vec.d")).unwrap();
    assert_eq!(deps.trim(), "vec.o: vec.c ../include/kernels.h internal.h");
    let up_to_date = clean(Command::new("make"))
        .args(["-q", "kernels"])
        .current_dir(dir.join("app"))
        .status()
        .unwrap();
    assert!(
        up_to_date.success(),
        "make -q: the program is not up to date"
    );
}

#[test]
fn a_cmake_project_through_the_launcher_variables_or_cc() {
    let scratch = Scratch::new("compile-cmake");
    let dir = project(&scratch, "cmake_launcher");
    let launcher = pomptrace_command();
    let mut through_launchers = clean(Command::new("cmake"));
    through_launchers
        .arg(format!(
            "-DCMAKE_C_COMPILER_LAUNCHER={}",
            launcher.display()
        ))
        .arg(format!("-DCMAKE_C_LINKER_LAUNCHER={}", launcher.display()));
    let mut through_cc = clean(Command::new("cmake"));
    through_cc.env("CC", wrapped("gcc"));
    for (build, mut cmake) in [("launchers", through_launchers), ("cc", through_cc)] {
        let build = dir.join(build);
        run(cmake.arg("-S").arg(&dir).arg("-B").arg(&build));
        run(clean(Command::new("cmake")).arg("--build").arg(&build));
        let traced = run_traced(&build.join("stencil_demo"), "trace", &[]);
        assert!(traced
            .stdout()
            .contains("stencil_demo: total 1000.0, rms 31.623"));
        let view = View::read(&traced.anchor());
        view.assert_well_formed();
        assert_regions_of_every_file(&view, &dir, &["src/stencil.c", "src/main.c"]);
        let entered = enters(&view);
        assert_eq!(entered["!$omp for @stencil.c:9"], 2 * 4);
        assert_eq!(entered["!$omp master @main.c:12"], 1);
    }
}

#[test]
fn a_configure_script_with_conftests() {
    let scratch = Scratch::new("compile-configure");
    let dir = project(&scratch, "configure_script");
    let configured = run(clean(Command::new("./configure"))
        .arg(format!("CC={}", wrapped("gcc")))
        .current_dir(&dir));
    let said = String::from_utf8_lossy(&configured.stdout);
    assert!(
        said.contains("option to support OpenMP... -fopenmp"),
        "{said}"
    );
    assert!(said.contains("checking for sqrt in -lm... yes"), "{said}");
    // The conftests that ran wrote no trace (the one without OpenMP was left alone).
    let traces = |dir: &Path| {
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("pomptrace-"))
            .count()
    };
    assert_eq!(traces(&dir), 0);
    run(clean(Command::new("make")).current_dir(&dir));
    let traced = run_traced(&dir.join("histogram"), "trace", &[]);
    assert!(traced
        .stdout()
        .contains("histogram: first bin 50 (seen 100 times), sqrt linked"));
    let view = View::read(&traced.anchor());
    view.assert_well_formed();
    assert_regions_of_every_file(&view, &dir, &["main.c", "bins.c"]);
    let entered = enters(&view);
    assert_eq!(entered["omp_set_lock"], 400);
    assert_eq!(entered["!$omp critical @main.c:17"], 2);
}

#[test]
fn a_fortran_project_with_modules() {
    let scratch = Scratch::new("compile-fortran");
    let dir = project(&scratch, "fortran_modules");
    run(clean(Command::new("make"))
        .arg(format!("FC={}", wrapped("gfortran")))
        .current_dir(&dir));
    assert!(dir.join("grid.mod").is_file() && dir.join("solver.mod").is_file());
    let traced = run_traced(&dir.join("heat_modules"), "trace", &[]);
    assert!(traced.stdout().contains("threads 2"), "{}", traced.stdout());
    let view = View::read(&traced.anchor());
    view.assert_well_formed();
    assert_regions_of_every_file(&view, &dir, &["grid.f90", "solver.f90", "main.f90"]);
    let entered = enters(&view);
    assert_eq!(entered["!$omp do @solver.f90:11"], 2 * 3);
    assert_eq!(entered["!$pomp user(sweeps) @main.f90:9"], 1);
    assert_eq!(entered["!$omp critical sblock @main.f90:15"], 2);
}

/// Everything but `Enter`/`Leave` of the excluded regions is the same in both traces.
fn assert_same_except(unfiltered: &View, filtered: &View, excluded: &[&str]) {
    let mut expected = enters(unfiltered);
    for name in excluded {
        assert!(
            expected.remove(*name).is_some_and(|n| n > 0),
            "{name} was not entered in the unfiltered run"
        );
    }
    assert_eq!(enters(filtered), expected);
    let defined = filtered.region_names();
    for name in excluded {
        assert!(
            !defined.iter().any(|d| d == name),
            "{name} is still defined"
        );
    }
    let mut kinds = unfiltered.kind_counts();
    let mut filtered_kinds = filtered.kind_counts();
    let removed: usize = excluded.iter().map(|n| enters(unfiltered)[*n]).sum();
    for k in ["Enter", "Leave"] {
        *kinds.get_mut(k).unwrap() -= removed;
    }
    // Timings differ between runs; BufferFlush events only appear when the writer lags.
    kinds.remove("BufferFlush");
    filtered_kinds.remove("BufferFlush");
    assert_eq!(filtered_kinds, kinds);
}

#[test]
fn filter_files_exclude_regions_and_the_configuration_is_on_record() {
    let scratch = Scratch::new("compile-filter");
    let dir = make_project(&scratch);
    let exe = dir.join("app/kernels");
    let unfiltered = View::read(&run_traced(&exe, "plain", &[]).anchor());

    // A user region by name, and one construct kind of one file (by its region name).
    let by_name = dir.join("by_name.filter");
    std::fs::write(
        &by_name,
        "# as Score-P reads it\n\
         SCOREP_REGION_NAMES_BEGIN\n\
         \x20 EXCLUDE checksum\n\
         \x20         !$omp\\ atomic\\ @reduce.c:*\n\
         SCOREP_REGION_NAMES_END\n",
    )
    .unwrap();
    let run = run_traced(
        &exe,
        "by_name",
        &[("POMPTRACE_FILTERING_FILE", by_name.to_str().unwrap())],
    );
    let filtered = View::read(&run.anchor());
    filtered.assert_well_formed();
    assert_same_except(
        &unfiltered,
        &filtered,
        &[
            "!$pomp user(checksum) @main.c:11",
            "!$omp atomic @reduce.c:18",
        ],
    );
    // The experiment directory records the configuration that produced it.
    let record = std::fs::read_to_string(run.experiment.join("pomptrace.cfg")).unwrap();
    assert!(record.contains(&format!("POMPTRACE_FILTERING_FILE={}\n", by_name.display())));
    assert!(record.contains(&format!(
        "POMPTRACE_EXPERIMENT_DIRECTORY={}\n",
        run.experiment.display()
    )));
    assert!(record.contains("POMPTRACE_ENABLE=1\n"));

    // A whole file: its worksharing constructs record nothing, its parallel region stays
    // (teams and fork/join are the trace's structure).
    let by_file = dir.join("by_file.filter");
    std::fs::write(
        &by_file,
        "SCOREP_FILE_NAMES_BEGIN\n  EXCLUDE */report.cpp\nSCOREP_FILE_NAMES_END\n",
    )
    .unwrap();
    let filtered = View::read(
        &run_traced(
            &exe,
            "by_file",
            &[("POMPTRACE_FILTERING_FILE", by_file.to_str().unwrap())],
        )
        .anchor(),
    );
    assert_same_except(
        &unfiltered,
        &filtered,
        &[
            "!$omp single @report.cpp:8",
            "!$omp single sblock @report.cpp:8",
        ],
    );
    assert_eq!(enters(&filtered)["!$omp parallel @report.cpp:6"], 2);

    // A malformed file: one line naming it and the line; the program runs unfiltered.
    let bad = dir.join("bad.filter");
    std::fs::write(&bad, "SCOREP_REGION_NAMES_BEGIN\n  checksum\n").unwrap();
    let run = run_traced(
        &exe,
        "bad",
        &[("POMPTRACE_FILTERING_FILE", bad.to_str().unwrap())],
    );
    let warnings: Vec<String> = run
        .stderr()
        .lines()
        .filter(|l| l.contains("filter file"))
        .map(String::from)
        .collect();
    assert_eq!(
        warnings,
        [format!(
            "pomptrace: filter file {}, line 2: pattern `checksum` before EXCLUDE or INCLUDE; \
             nothing is filtered",
            bad.display()
        )]
    );
    assert_eq!(
        enters(&View::read(&run.anchor())),
        enters(&unfiltered),
        "a malformed filter must filter nothing"
    );
}

#[test]
fn config_env_lists_every_variable_with_its_value_default_and_meaning() {
    let out = run(clean(Command::new(pomptrace_command()))
        .args(["config", "--env"])
        .env("POMPTRACE_CLOCK", "monotonic")
        .env_remove("POMPTRACE_BUFFER_SIZE"));
    let text = String::from_utf8(out.stdout).unwrap();
    for v in pomptrace::settings::VARIABLES {
        assert!(
            text.contains(&format!("\n{}=", v.name)),
            "{} missing",
            v.name
        );
        assert!(text.contains(v.meaning), "meaning of {} missing", v.name);
    }
    assert!(text.contains("POMPTRACE_CLOCK=monotonic\n    default: auto\n"));
    assert!(text.contains("POMPTRACE_BUFFER_SIZE=(unset)\n    default: 64M (less where"));
}

fn wrapper_output(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = clean(Command::new(pomptrace_command()));
    command.args(args).current_dir(dir);
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().unwrap()
}

fn defined_symbols(file: &Path) -> String {
    String::from_utf8(run(Command::new("nm").arg(file)).stdout).unwrap()
}

#[test]
fn an_uninstrumentable_file_fails_like_a_compile_error_or_compiles_plain_when_asked() {
    let scratch = Scratch::new("compile-opari2-error");
    // Valid C (gcc ignores the unknown pragma), but an end without a begin for opari2.
    std::fs::write(
        scratch.join("odd.c"),
        "int main(void)\n{\n#pragma pomp inst end(phase)\n    return 0;\n}\n",
    )
    .unwrap();
    let out = wrapper_output(&scratch.path, &["gcc", "-fopenmp", "-c", "odd.c"], &[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let path = scratch.join("odd.c");
    assert!(
        stderr.starts_with(&format!(
            "pomptrace: {}:3: error: opari2 cannot instrument this: unbalanced pragma/directive \
             nesting",
            path.display()
        )),
        "{stderr}"
    );
    assert!(!scratch.join("odd.o").exists());

    for (args, env) in [
        (
            &["--skip-uninstrumentable", "gcc", "-fopenmp", "-c", "odd.c"][..],
            &[][..],
        ),
        (
            &["gcc", "-fopenmp", "-c", "odd.c"][..],
            &[("POMPTRACE_SKIP_UNINSTRUMENTABLE", "1")][..],
        ),
    ] {
        let _ = std::fs::remove_file(scratch.join("odd.o"));
        let out = wrapper_output(&scratch.path, args, env);
        assert!(out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.starts_with("pomptrace: warning: "));
        assert!(stderr.contains("compiling it without instrumentation"));
        let symbols = defined_symbols(&scratch.join("odd.o"));
        assert!(symbols.contains(" T main") && !symbols.contains("POMP2"));
    }
}

/// Whether `line` is one CMake takes for the compiler's link line when it parses `-v` output
/// (its regex `^( *|.*[/\\])(ld|([^/\\]+-)?ld|collect2)[^/\\]*( |$)`, for Unix paths):
/// the last path component of the first word, or the word itself, is `ld…`, `…-ld…` or
/// `collect2…`.
fn cmake_takes_for_a_link_line(line: &str) -> bool {
    let trimmed = line.trim_start_matches(' ');
    let word = trimmed.split(' ').next().unwrap_or("");
    let component = word.rsplit('/').next().unwrap_or(word);
    let after_dash = component
        .split_once('-')
        .map_or(component, |(_, rest)| rest);
    component.starts_with("ld") || after_dash.starts_with("ld") || component.starts_with("collect2")
}

#[test]
fn a_verbose_compile_reports_nothing_cmake_takes_for_a_link_line() {
    // CMake's FindOpenMP compiles and links a test with `-v` in a directory named
    // `TryCompile-<random>` and takes the first line of the output that looks like a link
    // line for the one that lists the OpenMP libraries.
    let scratch = Scratch::new("compile-verbose");
    let dir = scratch.join("TryCompile-ldQ2x9");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("t.c"),
        "#include <omp.h>\nint main(void)\n{\n    int n = 0;\n#pragma omp parallel\n    n = omp_get_num_threads();\n    return n < 1;\n}\n",
    )
    .unwrap();
    // As CMake names it: by its absolute path.
    let source = dir.join("t.c");
    let source = source.to_str().unwrap();
    let compiled = wrapper_output(
        &dir,
        &["gcc", "-fopenmp", "-v", "-MD", "-c", source, "-o", "t.o"],
        &[],
    );
    let stderr = String::from_utf8_lossy(&compiled.stderr);
    assert!(compiled.status.success(), "{stderr}");
    let taken: Vec<&str> = stderr
        .lines()
        .filter(|l| cmake_takes_for_a_link_line(l))
        .collect();
    assert!(taken.is_empty(), "{taken:?}");
    // The user's -v still reaches the compile of the instrumented source.
    assert!(stderr.contains("COLLECT_GCC_OPTIONS="), "{stderr}");
    // And the link's -v output leads with the real link line.
    let linked = wrapper_output(&dir, &["gcc", "-fopenmp", "-v", "t.o", "-o", "t"], &[]);
    let stderr = String::from_utf8_lossy(&linked.stderr);
    assert!(linked.status.success(), "{stderr}");
    let first = stderr
        .lines()
        .find(|l| cmake_takes_for_a_link_line(l))
        .unwrap_or_else(|| panic!("no link line in {stderr}"));
    assert!(
        first.contains("collect2") && first.contains("-lgomp"),
        "{first}"
    );
}

#[test]
fn what_the_wrapper_leaves_alone() {
    let scratch = Scratch::new("compile-pass-through");
    let source = "#include <omp.h>\nint work(void)\n{\n    int n = 0;\n#pragma omp parallel\n    \
                  n = omp_get_num_threads();\n    return n;\n}\n";
    std::fs::write(scratch.join("w.c"), source).unwrap();
    let same = |wrapped: &[&str], plain: &[&str]| {
        let ours = wrapper_output(&scratch.path, wrapped, &[]);
        let theirs = run(Command::new(plain[0])
            .args(&plain[1..])
            .current_dir(&scratch.path));
        assert!(ours.status.success(), "{wrapped:?}");
        assert_eq!(ours.stdout, theirs.stdout, "{wrapped:?}");
    };
    same(&["gcc", "--version"], &["gcc", "--version"]);
    same(
        &["gcc", "-fopenmp", "-E", "w.c"],
        &["gcc", "-fopenmp", "-E", "w.c"],
    );
    same(
        &["gcc", "-fopenmp", "-MM", "w.c"],
        &["gcc", "-fopenmp", "-MM", "w.c"],
    );

    // A compile without an OpenMP flag (a conftest) is not instrumented, unless asked.
    run(clean(Command::new(pomptrace_command()))
        .args(["gcc", "-c", "w.c", "-o", "plain.o"])
        .current_dir(&scratch.path));
    assert!(!defined_symbols(&scratch.join("plain.o")).contains("POMP2"));
    run(clean(Command::new(pomptrace_command()))
        .args(["--instrument-all", "gcc", "-c", "w.c", "-o", "asked.o"])
        .current_dir(&scratch.path));
    assert!(defined_symbols(&scratch.join("asked.o")).contains("POMP2_Init_reg_"));

    // -S and -x: unchanged, so no POMP2 call in the assembler output.
    run(clean(Command::new(pomptrace_command()))
        .args(["gcc", "-fopenmp", "-S", "w.c", "-o", "w.s"])
        .current_dir(&scratch.path));
    assert!(!std::fs::read_to_string(scratch.join("w.s"))
        .unwrap()
        .contains("POMP2"));
    run(clean(Command::new(pomptrace_command()))
        .args(["gcc", "-fopenmp", "-x", "c", "-c", "w.c", "-o", "x.o"])
        .current_dir(&scratch.path));
    assert!(!defined_symbols(&scratch.join("x.o")).contains("POMP2"));

    // -shared: an instrumented library for LD_PRELOAD, without the init file or libpomptrace.
    run(clean(Command::new(pomptrace_command()))
        .args([
            "gcc", "-fopenmp", "-fPIC", "-shared", "w.c", "-o", "libw.so",
        ])
        .current_dir(&scratch.path));
    let library = scratch.join("libw.so");
    let symbols = defined_symbols(&library);
    assert!(symbols.contains("POMP2_Init_reg_"), "{symbols}");
    assert!(!symbols.contains(" T POMP2_Init_regions"), "{symbols}");
    let dynamic =
        String::from_utf8(run(Command::new("readelf").arg("-d").arg(&library)).stdout).unwrap();
    assert!(!dynamic.contains("libpomptrace"), "{dynamic}");
}

#[test]
fn static_links_and_compile_and_link_in_one_command() {
    let scratch = Scratch::new("compile-static");
    std::fs::write(
        scratch.join("one.c"),
        "#include <stdio.h>\nint main(void)\n{\n    int n = 0;\n#pragma omp parallel\n    {\n\
         #pragma omp atomic\n        n++;\n    }\n    printf(\"one: %d\\n\", n);\n    return 0;\n}\n",
    )
    .unwrap();
    run(clean(Command::new(pomptrace_command()))
        .args(["--static", "gcc", "-fopenmp", "one.c", "-o", "one"])
        .current_dir(&scratch.path));
    let exe = scratch.join("one");
    let dynamic =
        String::from_utf8(run(Command::new("readelf").arg("-d").arg(&exe)).stdout).unwrap();
    assert!(!dynamic.contains("libpomptrace"), "{dynamic}");
    let traced = run_traced(&exe, "trace", &[]);
    assert_eq!(traced.stdout(), "one: 2\n");
    let view = View::read(&traced.anchor());
    assert_eq!(enters(&view)["!$omp atomic @one.c:7"], 2);

    // A fully static program (-static) gets the archive without being asked.
    run(clean(Command::new(pomptrace_command()))
        .args(["gcc", "-static", "-fopenmp", "one.c", "-o", "one_static"])
        .current_dir(&scratch.path));
    let exe = scratch.join("one_static");
    let dynamic =
        String::from_utf8(run(Command::new("readelf").arg("-d").arg(&exe)).stdout).unwrap();
    assert!(dynamic.contains("no dynamic section"), "{dynamic}");
    let traced = run_traced(&exe, "trace_static", &[]);
    assert_eq!(traced.stdout(), "one: 2\n");
    let view = View::read(&traced.anchor());
    assert_eq!(enters(&view)["!$omp atomic @one.c:7"], 2);
}

#[test]
fn the_first_region_of_a_program_without_init_file_is_filtered_too() {
    let scratch = Scratch::new("filter-first");
    let source = support::pomp2::instrument("filter_first.c", &scratch.path, &[]);
    let build = support::pomp2::Build {
        init_file: false,
        ..support::pomp2::Build::c(&scratch.path)
    };
    let exe = build.executable(&[source], "filter_first");
    let filter = scratch.join("first.filter");
    std::fs::write(
        &filter,
        "SCOREP_REGION_NAMES_BEGIN\nEXCLUDE first\nSCOREP_REGION_NAMES_END\n",
    )
    .unwrap();
    let plain = View::read(&run_traced(&exe, "plain", &[]).anchor());
    let filtered = View::read(
        &run_traced(
            &exe,
            "filtered",
            &[("POMPTRACE_FILTERING_FILE", filter.to_str().unwrap())],
        )
        .anchor(),
    );
    assert_same_except(&plain, &filtered, &["!$pomp user(first) @filter_first.c:9"]);
}

#[test]
fn the_readme_tables_list_every_variable_as_the_registry_does() {
    let readme = std::fs::read_to_string(support::repo_root().join("README.md")).unwrap();
    for v in pomptrace::settings::VARIABLES {
        let default = if v.default.is_empty() {
            "(none)".to_string()
        } else {
            format!("`{}`", v.default)
        };
        let row = format!("| `{}` | {default} | {} |", v.name, v.meaning);
        assert!(readme.contains(&row), "README.md lacks the row\n{row}");
    }
}

/// Builds `c-tests/projects/<name>` twice with `make`: plainly with `plain` and with the
/// wrapper's `wrapped` make arguments; returns (plain copy, wrapped copy, the wrapped build's
/// output).
fn plain_and_wrapped(
    scratch: &Scratch,
    name: &str,
    plain: &[String],
    wrapped: &[String],
    path: Option<&Path>,
) -> (PathBuf, PathBuf, Output) {
    let build = |label: &str, args: &[String]| {
        let dir = scratch.join(label);
        std::fs::create_dir_all(&dir).unwrap();
        run(Command::new("cp")
            .arg("-r")
            .arg(support::repo_root().join("c-tests/projects").join(name))
            .arg(&dir));
        let dir = dir.join(name);
        let mut make = clean(Command::new("make"));
        make.arg("-s").args(args).current_dir(&dir);
        if let Some(bin) = path {
            let paths = std::env::var_os("PATH").unwrap_or_default();
            let joined = std::env::join_paths(
                std::iter::once(bin.to_path_buf()).chain(std::env::split_paths(&paths)),
            )
            .unwrap();
            make.env("PATH", joined);
        }
        (dir, run(&mut make))
    };
    let (plain_dir, _) = build("plain", plain);
    let (wrapped_dir, out) = build("wrapped", wrapped);
    (plain_dir, wrapped_dir, out)
}

/// The plain build's output of `program`, run on 2 threads.
fn plain_output(exe: &Path) -> String {
    let out = run(support::pomp2::program(exe).env("OMP_NUM_THREADS", "2"));
    String::from_utf8(out.stdout).unwrap()
}

/// The region of `view` named `name`.
fn region<'a>(view: &'a View, name: &str) -> &'a support::pomp2::Region {
    view.regions
        .values()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no region {name}: {:?}", view.region_names()))
}

#[test]
fn constructs_opari2_gets_wrong_build_with_werror_and_run_as_the_plain_build() {
    let scratch = Scratch::new("compile-opari2-limits");
    let args = |cc: String, fc: String| vec![format!("CC={cc}"), format!("FC={fc}")];
    let (plain, dir, built) = plain_and_wrapped(
        &scratch,
        "opari2_limits",
        &args("gcc".into(), "gfortran".into()),
        &args(wrapped("gcc"), wrapped("gfortran")),
        None,
    );
    // One warning, for the taskloop, naming its file and line.
    let stderr = String::from_utf8_lossy(&built.stderr);
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("pomptrace: warning"))
        .collect();
    assert_eq!(
        warnings,
        [format!(
            "pomptrace: warning: {}:31: taskloop is not instrumented by opari2; the tasks it \
             creates are not traced",
            dir.join("tasks.c").display()
        )],
        "{stderr}"
    );

    let traced = run_traced(&dir.join("limits"), "trace", &[]);
    assert_eq!(traced.stdout(), plain_output(&plain.join("limits")));
    assert_eq!(
        traced.stdout(),
        "branches -124500.0\nsimd 13500.0\ntasks 2584 4950\nnested 7668\n"
    );
    let view = View::read(&traced.anchor());
    view.assert_well_formed();
    let entered = enters(&view);
    // The loop in `if ... else` and the `if ... else` loop body.
    assert_eq!(entered["!$omp for @branches.c:11"], 2);
    assert_eq!(entered["!$omp for @branches.c:18"], 2);
    assert_eq!(region(&view, "!$omp for @branches.c:11").end, 13);
    assert_eq!(region(&view, "!$omp for @branches.c:18").end, 23);
    // Constructs as unbraced branches: an atomic (ended by its semicolon) and a critical in
    // `if ... else`, a parallel region with its master as the body of `while`.
    assert_eq!(entered["!$omp atomic @nested.c:22"], 334);
    assert_eq!(entered["!$omp critical @nested.c:19"], 666);
    assert_eq!(region(&view, "!$omp for @nested.c:16").end, 23);
    assert_eq!(entered["!$omp master @nested.c:27"], 1);
    // `parallel for simd` as a parallel region and a `for simd` loop, both at its line.
    assert_eq!(entered["!$omp parallel @simd.c:9"], 2);
    assert_eq!(entered["!$omp for @simd.c:9"], 2);
    // Tasks with an if clause: the deferred ones are traced (the calls of fib(18) with
    // n > 12: 1 + 1 + 2 + 3 + 5 + 8), undeferred ones run as part of their creator.
    assert_eq!(entered["!$omp task @tasks.c:8"], 20);
    // A normal end leaves no lock file behind.
    let leftovers: Vec<String> = std::fs::read_dir(&traced.experiment)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".lock"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    let traced = run_traced(&dir.join("simd_f"), "trace_f", &[]);
    assert_eq!(traced.stdout(), plain_output(&plain.join("simd_f")));
    let view = View::read(&traced.anchor());
    view.assert_well_formed();
    let entered = enters(&view);
    assert_eq!(entered["!$omp parallel @simd_f.f90:10"], 2);
    assert_eq!(entered["!$omp do @simd_f.f90:10"], 2);
    assert_eq!(region(&view, "!$omp do @simd_f.f90:10").end, 14);
    assert_eq!(entered["!$omp do @simd_f.f90:16"], 2);
}

#[test]
fn regions_in_a_header_name_it_and_debug_information_names_no_temporary_file() {
    let scratch = Scratch::new("compile-header");
    let (plain, dir, _) = plain_and_wrapped(
        &scratch,
        "header_regions",
        &["CXX=g++".into()],
        &[format!("CXX={}", wrapped("g++"))],
        None,
    );
    let exe = dir.join("matrix_demo");
    let traced = run_traced(&exe, "trace", &[]);
    assert_eq!(traced.stdout(), plain_output(&plain.join("matrix_demo")));
    assert_eq!(traced.stdout(), "matrix_demo: trace 24570.0\n");
    let view = View::read(&traced.anchor());
    view.assert_well_formed();
    // Included as "./matrix.hpp" through -I. from src/main.cpp.
    assert_regions_of_every_file(&view, &dir, &["matrix.hpp", "src/main.cpp"]);
    assert_eq!(enters(&view)["!$omp for @matrix.hpp:15"], 2);

    // The compile unit and the line table name the user's files.
    for file in [dir.join("src/main.o"), exe] {
        let dump = run(Command::new("readelf")
            .arg("--debug-dump=info")
            .arg("--debug-dump=line")
            .arg(&file));
        let dump = String::from_utf8_lossy(&dump.stdout);
        for temporary in ["pomptrace-cc-", ".opari.", ".prep.", ".input."] {
            assert!(
                !dump.contains(temporary),
                "{} names a temporary file: {}",
                file.display(),
                dump.lines().find(|l| l.contains(temporary)).unwrap_or("")
            );
        }
        // As the plain compile names it: the source as given, in the build's directory.
        for (attribute, value) in [
            ("DW_AT_name", "src/main.cpp".to_string()),
            ("DW_AT_comp_dir", dir.display().to_string()),
        ] {
            assert!(
                dump.lines()
                    .any(|l| l.contains(attribute) && l.ends_with(&format!(": {value}"))),
                "{}: no {attribute} {value}",
                file.display()
            );
        }
        assert!(dump.contains("matrix.hpp"), "{}", file.display());
    }
}

#[test]
fn one_word_compiler_commands_for_a_makefile_that_runs_which_cc() {
    let scratch = Scratch::new("compile-which-cc");
    let bin = scratch.join("bin");
    let made = run(clean(Command::new(pomptrace_command()))
        .args(["wrap", "--create", "gcc", "mpicc", "--dir"])
        .arg(&bin));
    assert_eq!(
        String::from_utf8_lossy(&made.stdout),
        format!("{0}/pomptrace-gcc\n{0}/pomptrace-mpicc\n", bin.display())
    );
    let (plain, dir, _) = plain_and_wrapped(
        &scratch,
        "which_cc",
        &["CC=gcc".into()],
        &["CC=pomptrace-gcc".into()],
        Some(&bin),
    );
    let header = std::fs::read_to_string(dir.join("build_info.h")).unwrap();
    assert!(
        header.contains(&format!(
            "#define BUILD_CC_PATH \"{}\"",
            bin.join("pomptrace-gcc").display()
        )),
        "{header}"
    );
    let traced = run_traced(&dir.join("which_cc"), "trace", &[]);
    assert_eq!(traced.stdout(), plain_output(&plain.join("which_cc")));
    let view = View::read(&traced.anchor());
    view.assert_well_formed();
    assert_regions_of_every_file(&view, &dir, &["main.c"]);
    // Options come from the environment; all arguments are the compiler's.
    let out = run(clean(Command::new(bin.join("pomptrace-gcc")))
        .arg("--version")
        .env("POMPTRACE_WRAPPER_VERBOSE", "1"));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("gcc"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("running the command unchanged"));
    // A second --create replaces the links; another file is left alone.
    run(clean(Command::new(pomptrace_command()))
        .args(["wrap", "--create", "gcc", "--dir"])
        .arg(&bin));
    std::fs::write(bin.join("pomptrace-cc"), "mine").unwrap();
    let refused = clean(Command::new(pomptrace_command()))
        .args(["wrap", "--create", "cc", "--dir"])
        .arg(&bin)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert_eq!(
        std::fs::read_to_string(bin.join("pomptrace-cc")).unwrap(),
        "mine"
    );
}

#[test]
fn a_wrapped_program_keeps_running_when_the_library_is_built_again() {
    let scratch = Scratch::new("compile-rebuilt");
    // A build tree of its own, as `cargo test` leaves one: the command in target/debug, the
    // library only in target/debug/deps, the headers in the tree's include/.
    let tree = scratch.join("tree");
    let profile = tree.join("target/debug");
    let library = support::pomp2::library_dir().join("libpomptrace.so");
    let fresh_build = || {
        std::fs::create_dir_all(profile.join("deps")).unwrap();
        std::fs::copy(pomptrace_command(), profile.join("pomptrace")).unwrap();
        std::fs::copy(&library, profile.join("deps/libpomptrace.so")).unwrap();
    };
    fresh_build();
    run(Command::new("cp")
        .arg("-r")
        .arg(support::repo_root().join("include"))
        .arg(&tree));
    std::fs::write(
        scratch.join("one.c"),
        "#include <stdio.h>\nint main(void)\n{\n    int n = 0;\n#pragma omp parallel\n    {\n\
         #pragma omp atomic\n        n++;\n    }\n    printf(\"one: %d\\n\", n);\n    return 0;\n}\n",
    )
    .unwrap();
    run(clean(Command::new(profile.join("pomptrace")))
        .args(["gcc", "-fopenmp", "one.c", "-o", "one"])
        .current_dir(&scratch.path));
    let exe = scratch.join("one");
    let dynamic =
        String::from_utf8(run(Command::new("readelf").arg("-d").arg(&exe)).stdout).unwrap();
    let runpath = dynamic
        .lines()
        .find(|l| l.contains("(RUNPATH)"))
        .unwrap_or_else(|| panic!("no RUNPATH: {dynamic}"));
    assert!(
        runpath.ends_with(&format!("[{}]", profile.display())),
        "{runpath}"
    );

    // `cargo clean && cargo build`: the tree goes, and the library is built again next to the
    // command (and in deps/).
    std::fs::remove_dir_all(tree.join("target")).unwrap();
    fresh_build();
    std::fs::copy(&library, profile.join("libpomptrace.so")).unwrap();
    let traced = run_traced(&exe, "after_clean", &[]);
    assert_eq!(traced.stdout(), "one: 2\n");
    assert_eq!(
        enters(&View::read(&traced.anchor()))["!$omp atomic @one.c:7"],
        2
    );
    // A later `cargo test` replaces deps/ only.
    std::fs::remove_dir_all(profile.join("deps")).unwrap();
    let traced = run_traced(&exe, "after_deps", &[]);
    assert_eq!(traced.stdout(), "one: 2\n");
}

#[test]
fn opari2_output_that_does_not_compile_is_reported_or_compiled_plain_when_asked() {
    let scratch = Scratch::new("compile-opari2-output");
    // Valid Fortran; opari2's region table declares variables this unit does not use, which
    // -Wall -Werror refuses.
    std::fs::write(
        scratch.join("t.f90"),
        "program t\n  implicit none\n  integer :: x\n  x = 0\n!$omp parallel\n!$omp atomic\n  \
         x = x + 1\n!$omp end parallel\n  print *, x > 0\nend program t\n",
    )
    .unwrap();
    let args = ["gfortran", "-Wall", "-Werror", "-fopenmp", "-c", "t.f90"];
    let out = wrapper_output(&scratch.path, &args, &[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("pomptrace: t.f90: opari2 output does not compile: Unused variable"),
        "{stderr}"
    );
    assert!(!scratch.join("t.o").exists());

    let mut skipping = vec!["--skip-uninstrumentable"];
    skipping.extend(args);
    let out = wrapper_output(&scratch.path, &skipping, &[]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("pomptrace: warning: t.f90: opari2 output does not compile:")
            && stderr.contains("compiling it without instrumentation"),
        "{stderr}"
    );
    let symbols = defined_symbols(&scratch.join("t.o"));
    assert!(
        symbols.contains(" t MAIN__") && !symbols.contains("POMP2"),
        "{symbols}"
    );

    // A source the compiler refuses itself gets the compiler's own messages and status.
    std::fs::write(scratch.join("bad.c"), "int main(void) { return x; }\n").unwrap();
    let out = wrapper_output(&scratch.path, &["gcc", "-fopenmp", "-c", "bad.c"], &[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("error: 'x' undeclared") || stderr.contains("error: ‘x’ undeclared"),
        "{stderr}"
    );
    assert!(!stderr.contains("pomptrace:"), "{stderr}");
}
