//! The `pomptrace` command: `init-regions` and `config` on real objects compiled with `cc`
//! (the generated init file is compiled and linked, and must call every init function once),
//! and `summary` on a trace written with `otf2`.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use otf2::*;
use support::*;

fn pomptrace() -> Command {
    let mut cmd = Command::new(support::pomp2::pomptrace_command());
    cmd.env_remove("NM");
    cmd
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Writes `NAME.c` into the scratch directory and compiles it with `cc -c` to `NAME.o`.
fn compile(scratch: &Scratch, name: &str, source: &str, extra: &[&str]) -> PathBuf {
    let c = scratch.join(&format!("{name}.c"));
    std::fs::write(&c, source).unwrap();
    let o = scratch.join(&format!("{name}.o"));
    run(Command::new("cc")
        .args(["-c", "-O0", "-Wall", "-Werror"])
        .args(extra)
        .arg("-o")
        .arg(&o)
        .arg(&c));
    o
}

/// A C function with the given name that prints its name when called.
fn printing_function(name: &str) -> String {
    format!("void {name}(void) {{ puts(\"ran {name}\"); }}\n")
}

const OMP_FUNCTIONS: [&str; 3] = [
    "POMP2_Init_reg_abc123_4",
    "POMP2_Init_reg_zz9_2",
    "pomp2_init_reg_f00_3_",
];
const USER_FUNCTIONS: [&str; 1] = ["POMP2_USER_Init_reg_abc123_1"];

/// Three objects defining the init functions (one Fortran-style), and one object with
/// near-miss names that must all be ignored.
struct Objects {
    a: PathBuf,
    b: PathBuf,
    f: PathBuf,
    decoys: PathBuf,
}

fn objects(scratch: &Scratch) -> Objects {
    let header = "#include <stdio.h>\n";
    let a = compile(
        scratch,
        "a",
        &format!(
            "{header}{}{}",
            printing_function("POMP2_Init_reg_abc123_4"),
            printing_function("POMP2_USER_Init_reg_abc123_1")
        ),
        &[],
    );
    let b = compile(
        scratch,
        "b",
        &format!("{header}{}", printing_function("POMP2_Init_reg_zz9_2")),
        &[],
    );
    // What gfortran makes of `subroutine POMP2_Init_reg_f00_3`.
    let f = compile(
        scratch,
        "f",
        &format!("{header}{}", printing_function("pomp2_init_reg_f00_3_")),
        &[],
    );
    let decoys = compile(
        scratch,
        "decoys",
        "static __attribute__((used)) void POMP2_Init_reg_local_5(void) {}\n\
         void POMP2_Init_reg_lead_07(void) {}\n\
         void POMP2_Init_reg_two_parts_3(void) {}\n\
         void POMP2_Init_reg_nocount(void) {}\n\
         void my_POMP2_Init_reg_q_1(void) {}\n\
         int POMP2_Init_reg_bss_6;\n\
         void POMP2_Init_reg_ext_8(void);\n\
         void decoy_caller(void) { POMP2_Init_reg_ext_8(); }\n",
        &[],
    );
    Objects { a, b, f, decoys }
}

fn assert_generated(c: &str) {
    for f in OMP_FUNCTIONS.iter().chain(&USER_FUNCTIONS) {
        assert_eq!(
            c.matches(&format!("extern void {f}(void);")).count(),
            1,
            "declaration of {f}:\n{c}"
        );
        assert_eq!(
            c.matches(&format!("    {f}();")).count(),
            1,
            "call of {f}:\n{c}"
        );
    }
    for decoy in [
        "local_5",
        "lead_07",
        "two_parts",
        "nocount",
        "my_POMP2",
        "bss_6",
        "ext_8",
    ] {
        assert!(!c.contains(decoy), "{decoy} must be ignored:\n{c}");
    }
    assert!(c.contains("#include <stddef.h>"), "{c}");
    assert!(c.contains("extern \"C\""), "{c}");
    assert!(c.contains("return 9;"), "OpenMP total 4+2+3:\n{c}");
    assert!(c.contains("return 1;"), "user total:\n{c}");
    assert!(c.contains("return \"2.0.8\";"), "{c}");
    // Calls are sorted by name, so the output is deterministic.
    let omp_body = &c[c.find("POMP2_Init_regions(void)").unwrap()..];
    let omp_body = &omp_body[..omp_body.find('}').unwrap()];
    let calls: Vec<&str> = omp_body
        .lines()
        .filter_map(|l| l.trim().strip_suffix("();"))
        .collect();
    assert_eq!(
        calls,
        [
            "POMP2_Init_reg_abc123_4",
            "POMP2_Init_reg_zz9_2",
            "pomp2_init_reg_f00_3_"
        ]
    );
}

/// Compiles the generated file with the objects and a main() that runs the init functions;
/// returns the program's output.
fn link_and_run(scratch: &Scratch, generated: &Path, objects: &[&Path]) -> String {
    let main = scratch.join("main.c");
    std::fs::write(
        &main,
        "#include <stdio.h>\n#include <stddef.h>\n\
         void POMP2_Init_regions(void);\nsize_t POMP2_Get_num_regions(void);\n\
         void POMP2_USER_Init_regions(void);\nsize_t POMP2_USER_Get_num_regions(void);\n\
         const char* POMP2_Get_opari2_version(void);\n\
         int main(void) {\n\
           POMP2_Init_regions();\n\
           POMP2_USER_Init_regions();\n\
           printf(\"omp regions %zu\\n\", POMP2_Get_num_regions());\n\
           printf(\"user regions %zu\\n\", POMP2_USER_Get_num_regions());\n\
           printf(\"version %s\\n\", POMP2_Get_opari2_version());\n\
           return 0;\n}\n",
    )
    .unwrap();
    let exe = scratch.join("prog");
    run(Command::new("cc")
        .args(["-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg(&main)
        .arg(generated)
        .args(objects));
    stdout(&run(&mut support::pomp2::program(&exe)))
}

#[test]
fn init_regions_on_objects_links_and_calls_every_init_function_once() {
    let scratch = Scratch::new("pomptrace-init");
    let o = objects(&scratch);
    let generated = scratch.join("pomp2_init.c");
    // a.o twice: its functions must still be declared, called and counted once.
    let out = run(pomptrace()
        .arg("init-regions")
        .arg("-o")
        .arg(&generated)
        .args([&o.a, &o.b, &o.f, &o.decoys, &o.a]));
    assert!(out.stdout.is_empty(), "-o writes the file, not stdout");
    let c = std::fs::read_to_string(&generated).unwrap();
    assert_generated(&c);

    // Without -o the same text goes to stdout.
    let out = run(pomptrace()
        .arg("init-regions")
        .args([&o.a, &o.b, &o.f, &o.decoys, &o.a]));
    assert_eq!(stdout(&out), c);

    let output = link_and_run(&scratch, &generated, &[&o.a, &o.b, &o.f]);
    for f in OMP_FUNCTIONS.iter().chain(&USER_FUNCTIONS) {
        assert_eq!(
            output.matches(&format!("ran {f}\n")).count(),
            1,
            "{f} must run exactly once:\n{output}"
        );
    }
    assert!(output.contains("omp regions 9\n"), "{output}");
    assert!(output.contains("user regions 1\n"), "{output}");
    assert!(output.contains("version 2.0.8\n"), "{output}");
}

#[test]
fn init_regions_duplicate_object_counts_once() {
    let scratch = Scratch::new("pomptrace-dup");
    let o = objects(&scratch);
    let once = stdout(&run(pomptrace().arg("init-regions").arg(&o.b)));
    let twice = stdout(&run(pomptrace().arg("init-regions").args([&o.b, &o.b])));
    assert_eq!(once, twice);
    assert!(once.contains("return 2;"), "{once}");
    assert_eq!(once.matches("    POMP2_Init_reg_zz9_2();").count(), 1);
    // No user regions: the functions are still there, empty.
    assert!(
        once.contains("void\nPOMP2_USER_Init_regions(void)\n{\n}\n"),
        "{once}"
    );
    assert!(once.contains("return 0;"), "{once}");
}

#[test]
fn init_regions_reads_archives_and_stripped_shared_libraries() {
    let scratch = Scratch::new("pomptrace-libs");
    let o = objects(&scratch);
    let archive = scratch.join("libab.a");
    run(Command::new("ar")
        .arg("rcs")
        .arg(&archive)
        .args([&o.a, &o.b]));
    // A shared library whose static symbol table is stripped: only `nm -D` sees the function.
    let fpic = compile(
        &scratch,
        "fpic",
        &format!(
            "#include <stdio.h>\n{}",
            printing_function("pomp2_init_reg_f00_3_")
        ),
        &["-fPIC"],
    );
    let shared = scratch.join("libf.so");
    run(Command::new("cc")
        .arg("-shared")
        .arg("-o")
        .arg(&shared)
        .arg(&fpic));
    run(Command::new("strip").arg(&shared));
    let c = stdout(&run(pomptrace()
        .arg("init-regions")
        .args([&archive, &shared])));
    assert_generated(&c);
}

#[test]
fn config_nm_pipeline_gives_the_same_file() {
    let scratch = Scratch::new("pomptrace-config");
    let o = objects(&scratch);
    let files = [&o.a, &o.b, &o.f, &o.decoys, &o.a];
    let direct = stdout(&run(pomptrace().arg("init-regions").args(files)));

    // `pomptrace config --nm` prints the nm command line, as `opari2-config --nm` does.
    let nm_cmd = stdout(&run(pomptrace().args(["config", "--nm"])));
    assert_eq!(nm_cmd, "nm -B\n");
    let with_nm = |nm: &str| stdout(&run(pomptrace().env("NM", nm).args(["config", "--nm"])));
    assert_eq!(with_nm("llvm-nm --no-sort"), "llvm-nm --no-sort -B\n");

    // `` `pomptrace config --nm` objs | pomptrace config --region-initialization ``
    let words: Vec<&str> = nm_cmd.split_whitespace().collect();
    let listing = run(Command::new(words[0]).args(&words[1..]).args(files)).stdout;
    let piped = region_initialization(&listing);
    assert_eq!(piped, direct);

    // `pomptrace config --nm objs` runs nm itself.
    let listing = run(pomptrace().args(["config", "--nm"]).args(files)).stdout;
    assert_eq!(region_initialization(&listing), direct);

    // Through a real shell pipeline, as a Makefile would run it.
    let bin = support::pomp2::pomptrace_command();
    let bin = bin.display();
    let script = format!(
        "`'{bin}' config --nm` '{}' '{}' '{}' | '{bin}' config --region-initialization",
        o.a.display(),
        o.b.display(),
        o.f.display()
    );
    let out = run(Command::new("sh").arg("-c").arg(&script).env_remove("NM"));
    assert_eq!(stdout(&out), direct);
}

fn region_initialization(nm_output: &[u8]) -> String {
    use std::io::Write;
    let mut child = pomptrace()
        .args(["config", "--region-initialization"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(nm_output).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
}

#[test]
fn config_region_initialization_on_empty_input_emits_all_functions() {
    let c = region_initialization(b"");
    for f in [
        "void\nPOMP2_Init_regions(void)\n{\n}\n",
        "size_t\nPOMP2_Get_num_regions(void)\n{\n    return 0;\n}\n",
        "void\nPOMP2_USER_Init_regions(void)\n{\n}\n",
        "size_t\nPOMP2_USER_Get_num_regions(void)\n{\n    return 0;\n}\n",
        "const char*\nPOMP2_Get_opari2_version(void)\n{\n    return \"2.0.8\";\n}\n",
    ] {
        assert!(c.contains(f), "missing {f:?} in\n{c}");
    }
    assert!(!c.contains("extern void"), "{c}");
}

#[test]
fn init_regions_errors() {
    let scratch = Scratch::new("pomptrace-init-errors");
    let missing = scratch.join("missing.o");
    let out = pomptrace()
        .arg("init-regions")
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).starts_with("pomptrace: "), "{}", stderr(&out));

    let o = objects(&scratch);
    let out = pomptrace()
        .env("NM", scratch.join("no-such-nm"))
        .arg("init-regions")
        .arg(&o.a)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("cannot run"), "{}", stderr(&out));
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &[][..],
        &["frobnicate"],
        &["init-regions"],
        &["init-regions", "--bogus", "x.o"],
        &["init-regions", "-o"],
        &["config"],
        &["config", "--bogus"],
        &["config", "--region-initialization", "x.o"],
        &["summary"],
        &["summary", "a.otf2", "b.otf2"],
    ] {
        let out = pomptrace().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("Usage:"),
            "{args:?}: {}",
            stderr(&out)
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn version_and_help() {
    let out = run(pomptrace().arg("--version"));
    assert_eq!(
        stdout(&out),
        format!("pomptrace {}\n", env!("CARGO_PKG_VERSION"))
    );
    let help = stdout(&run(pomptrace().arg("--help")));
    for sub in [
        "pomptrace init-regions [-o FILE] OBJ_OR_LIB...",
        "pomptrace config --nm",
        "pomptrace config --region-initialization",
        "pomptrace summary DIR|traces.otf2|profile.cubex",
        "pomptrace --version",
    ] {
        assert!(help.contains(sub), "help lacks {sub}:\n{help}");
    }
}

// ---------------------------------------------------------------------------------------------
// summary

const REGION_PARALLEL: u32 = 0;
const REGION_LOOP: u32 = 1;
const REGION_BARRIER: u32 = 2;
const REGION_UNUSED: u32 = 3;

/// Two locations, timer resolution 1 µs (so 1000 ticks = 1 ms):
///
/// Master thread: parallel [1000, 10000) containing loop [2000, 5000) and loop [6000, 7000),
///   then a Leave of the barrier that was never entered.
/// OMP thread 1: parallel [1500, 3000), then loop entered at 5000 and never left; its last
///   event (a ThreadJoin) is at 8000.
fn write_trace(dir: &Path) -> PathBuf {
    let archive = ArchiveWriter::create(dir, "traces", ArchiveConfig::default()).unwrap();
    let master: &[(u64, Event)] = &[
        (
            1000,
            Event::Enter {
                region: REGION_PARALLEL,
            },
        ),
        (
            2000,
            Event::Enter {
                region: REGION_LOOP,
            },
        ),
        (
            5000,
            Event::Leave {
                region: REGION_LOOP,
            },
        ),
        (
            6000,
            Event::Enter {
                region: REGION_LOOP,
            },
        ),
        (
            7000,
            Event::Leave {
                region: REGION_LOOP,
            },
        ),
        (
            10000,
            Event::Leave {
                region: REGION_PARALLEL,
            },
        ),
        (
            10500,
            Event::Leave {
                region: REGION_BARRIER,
            },
        ),
    ];
    let worker: &[(u64, Event)] = &[
        (
            1500,
            Event::Enter {
                region: REGION_PARALLEL,
            },
        ),
        (
            3000,
            Event::Leave {
                region: REGION_PARALLEL,
            },
        ),
        (
            5000,
            Event::Enter {
                region: REGION_LOOP,
            },
        ),
        (
            8000,
            Event::ThreadJoin {
                model: Paradigm::OPENMP,
            },
        ),
    ];
    let mut counts = Vec::new();
    for (location, events) in [(0u64, master), (1, worker)] {
        let mut w = archive.event_writer(location).unwrap();
        for (time, event) in events {
            w.write(*time, None, event);
        }
        counts.push(w.events());
        let (_, result) = w.finish();
        result.unwrap();
    }

    let strings = [
        "",
        "Master thread",
        "OMP thread 1",
        "process",
        "machine",
        "node",
        "!$omp parallel @jacobi.c:42",
        "!$omp for @jacobi.c:44",
        "!$omp ibarrier @jacobi.c:50",
        "never entered",
        "jacobi.c",
    ];
    let mut defs = archive.global_def_writer();
    defs.write(&GlobalDef::ClockProperties {
        timer_resolution: 1_000_000,
        global_offset: 0,
        trace_length: 10_000,
        realtime_timestamp: UNDEFINED_U64,
    });
    for (id, s) in strings.iter().enumerate() {
        defs.write(&GlobalDef::String {
            id: id as u32,
            string: s.to_string(),
        });
    }
    write_process_and_locations(&mut defs, (4, 5), 3, &[(1, counts[0]), (2, counts[1])]);
    for (id, name, role) in [
        (REGION_PARALLEL, 6, RegionRole::PARALLEL),
        (REGION_LOOP, 7, RegionRole::LOOP),
        (REGION_BARRIER, 8, RegionRole::IMPLICIT_BARRIER),
        (REGION_UNUSED, 9, RegionRole::FUNCTION),
    ] {
        defs.write(&GlobalDef::Region {
            id,
            name,
            canonical_name: name,
            description: 0,
            region_role: role,
            paradigm: Paradigm::OPENMP,
            region_flags: RegionFlag::NONE,
            source_file: 10,
            begin_line: 42,
            end_line: 60,
        });
    }
    archive.finish(defs, &[0, 1]).unwrap();
    dir.join("traces.otf2")
}

/// The (region, thread, visits, inclusive ms, exclusive ms) rows of the `--by-thread` table; a
/// row with an empty region column continues the region above.
fn table_rows(text: &str) -> Vec<(String, String, u64, String, String)> {
    let mut rows = Vec::new();
    let mut region = String::new();
    let mut in_table = false;
    for line in text.lines() {
        if line.starts_with("region ") {
            in_table = true;
            continue;
        }
        if !in_table {
            continue;
        }
        if line.is_empty() {
            break;
        }
        let cells: Vec<&str> = line.split("  ").filter(|c| !c.is_empty()).collect();
        let (label, rest) = if line.starts_with(' ') {
            (None, &cells[..])
        } else {
            (Some(cells[0].trim()), &cells[1..])
        };
        if let Some(label) = label {
            region = label.to_string();
        }
        assert_eq!(rest.len(), 4, "row {line:?}");
        rows.push((
            region.clone(),
            rest[0].trim().to_string(),
            rest[1].trim().parse().unwrap(),
            rest[2].trim().to_string(),
            rest[3].trim().to_string(),
        ));
    }
    rows
}

#[test]
fn summary_reports_visits_and_inclusive_time() {
    let scratch = Scratch::new("pomptrace-summary");
    let anchor = write_trace(&scratch.path);
    let out = run(pomptrace().arg("summary").arg("--by-thread").arg(&anchor));
    let text = stdout(&out);
    let header = text.lines().next().unwrap();
    assert!(header.contains(&anchor.display().to_string()), "{text}");
    assert!(header.contains("2 locations"), "{text}");
    assert!(header.contains("11 events"), "{text}");
    assert!(header.contains("duration 9.500 ms"), "{text}");

    let row = |r: &str, t: &str, v: u64, incl: &str, excl: &str| {
        (r.to_string(), t.to_string(), v, incl.into(), excl.into())
    };
    assert_eq!(
        table_rows(&text),
        [
            // Regions by exclusive time: the loop's 7 ms before the parallel region's 6.5 ms.
            // loop: 3 ms + 1 ms; on thread 1 open from 5000 to its last event at 8000
            row(
                "!$omp for @jacobi.c:44",
                "Master thread",
                2,
                "4.000",
                "4.000"
            ),
            row(
                "!$omp for @jacobi.c:44",
                "OMP thread 1",
                1,
                "3.000",
                "3.000"
            ),
            // parallel: 9 ms + 1.5 ms, of which the master spent 4 ms in the loop
            row(
                "!$omp parallel @jacobi.c:42",
                "Master thread",
                1,
                "9.000",
                "5.000"
            ),
            row(
                "!$omp parallel @jacobi.c:42",
                "OMP thread 1",
                1,
                "1.500",
                "1.500"
            ),
        ],
        "{text}"
    );
    assert!(!text.contains("never entered"), "{text}");
    assert!(!text.contains("ibarrier"), "{text}");
    let warnings: Vec<&str> = text.lines().filter(|l| l.starts_with("warning:")).collect();
    assert_eq!(warnings.len(), 2, "{text}");
    assert!(
        warnings[0].contains("1 Leave event without a matching Enter"),
        "{text}"
    );
    assert!(warnings[1].contains("1 region visit never left"), "{text}");
    // Columns line up: every table row has the thread column at the same offset.
    let offsets: Vec<usize> = text
        .lines()
        .filter(|l| l.contains("Master thread") || l.contains("OMP thread 1"))
        .map(|l| l.find(['M', 'O']).unwrap())
        .collect();
    assert!(offsets.windows(2).all(|w| w[0] == w[1]), "{text}");
}

#[test]
fn summary_of_missing_file_fails_with_message() {
    let scratch = Scratch::new("pomptrace-summary-missing");
    let out = pomptrace()
        .arg("summary")
        .arg(scratch.join("nothing.otf2"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = stderr(&out);
    assert!(err.starts_with("pomptrace: "), "{err}");
    assert!(err.contains("nothing.otf2"), "{err}");
}

#[test]
fn summary_of_damaged_trace_fails_with_message() {
    let scratch = Scratch::new("pomptrace-summary-damaged");
    let anchor = write_trace(&scratch.path);
    let evt = scratch.join("traces/1.evt");
    let data = std::fs::read(&evt).unwrap();
    std::fs::write(&evt, &data[..data.len() / 2]).unwrap();
    let out = pomptrace().arg("summary").arg(&anchor).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stderr(&out).starts_with("pomptrace: "), "{}", stderr(&out));
}

/// The calls in, and the return value of, one function of an init file (order ignored).
fn init_function(source: &str, name: &str) -> (Vec<String>, Option<u64>) {
    let start = source
        .find(&format!("\n{name}("))
        .or_else(|| source.find(&format!(" {name}(")))
        .unwrap_or_else(|| panic!("no {name} in:\n{source}"));
    let open = start + source[start..].find('{').unwrap();
    let close = open + source[open..].find('}').unwrap();
    let body = &source[open + 1..close];
    let mut calls: Vec<String> = body
        .split(';')
        .filter_map(|s| s.trim().strip_suffix("()"))
        .map(String::from)
        .collect();
    calls.sort();
    let ret = body
        .split_whitespace()
        .skip_while(|w| *w != "return")
        .nth(1)
        .and_then(|v| v.trim_end_matches(';').parse().ok());
    (calls, ret)
}

/// The real OPARI2 link step (`opari2-config --nm` piped into `opari2-config
/// --region-initialization`, Debian's libpomp2-dev) and `pomptrace init-regions` agree on real
/// instrumented objects: the same init functions called, the same region counts.
#[test]
fn init_regions_agrees_with_opari2_config_on_instrumented_objects() {
    let scratch = Scratch::new("init-vs-opari2-config");
    let mut objects = Vec::new();
    for (source, compiler) in [
        ("fam_parallel.c", "cc"),
        ("fam_user.c", "cc"),
        ("f_constructs.f90", "gfortran"),
    ] {
        let instrumented = support::pomp2::instrument(source, &scratch.path, &[]);
        // gfortran preprocesses OPARI2's `#line` directives only for upper-case suffixes.
        let compile_from = if compiler == "gfortran" {
            let upper = instrumented.with_extension("F90");
            std::fs::rename(&instrumented, &upper).unwrap();
            upper
        } else {
            instrumented
        };
        let object = scratch.join(&format!("{source}.o"));
        run(Command::new(compiler)
            .args(["-fopenmp", "-c", "-I"])
            .arg(support::pomp2::include_dir())
            .arg(&compile_from)
            .arg("-o")
            .arg(&object)
            .current_dir(&scratch.path));
        objects.push(object);
    }
    objects.push(objects[0].clone()); // an object named twice counts once
    let nm = String::from_utf8(run(Command::new("opari2-config").arg("--nm")).stdout).unwrap();
    let nm: Vec<&str> = nm.split_whitespace().collect();
    let symbols = run(Command::new(nm[0]).args(&nm[1..]).args(&objects)).stdout;
    // As Makefiles use it: `opari2-config --region-initialization` prints the filter command.
    let filter =
        String::from_utf8(run(Command::new("opari2-config").arg("--region-initialization")).stdout)
            .unwrap();
    let filter: Vec<&str> = filter.split_whitespace().collect();
    let reference = {
        let mut child = Command::new(filter[0])
            .args(&filter[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(&symbols).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let ours = String::from_utf8(
        run(Command::new(support::pomp2::pomptrace_command())
            .arg("init-regions")
            .args(&objects))
        .stdout,
    )
    .unwrap();
    for function in [
        "POMP2_Init_regions",
        "POMP2_Get_num_regions",
        "POMP2_USER_Init_regions",
        "POMP2_USER_Get_num_regions",
    ] {
        assert_eq!(
            init_function(&ours, function),
            init_function(&reference, function),
            "{function}\nours:\n{ours}\nopari2-config:\n{reference}"
        );
    }
    let (calls, _) = init_function(&ours, "POMP2_Init_regions");
    assert_eq!(
        calls.len(),
        3,
        "one OpenMP init function per instrumented file: {calls:?}"
    );
    assert!(
        calls.iter().any(|c| c.starts_with("pomp2_init_reg_")),
        "the Fortran one, lower case: {calls:?}"
    );
}

/// clap parses the options in every spelling the hand-written parser took: `-o FILE`, `-oFILE`,
/// `--output=FILE`, `--` before inputs; `config` answers its options in the order given.
#[test]
fn option_spellings_and_order() {
    let scratch = Scratch::new("pomptrace-spellings");
    let o = objects(&scratch);
    let reference = stdout(&run(pomptrace().arg("init-regions").arg(&o.b)));
    let attached = scratch.join("attached.c");
    let long = scratch.join("long.c");
    run(pomptrace()
        .arg("init-regions")
        .arg(format!("-o{}", attached.display()))
        .arg(&o.b));
    run(pomptrace()
        .arg("init-regions")
        .arg(format!("--output={}", long.display()))
        .arg("--")
        .arg(&o.b));
    assert_eq!(std::fs::read_to_string(&attached).unwrap(), reference);
    assert_eq!(std::fs::read_to_string(&long).unwrap(), reference);

    let config = |args: &[&str]| stdout(&run(pomptrace().arg("config").args(args)));
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        config(&["--version", "--interface-version"]),
        format!("{version} 3:0:0\n")
    );
    assert_eq!(
        config(&["--interface-version", "--version"]),
        format!("3:0:0 {version}\n")
    );
    let cflags = config(&["--cflags"]);
    let libs = config(&["--libs"]);
    assert_eq!(
        config(&["--libs", "--cflags=gnu"]),
        format!("{} {}", libs.trim_end(), cflags)
    );
}
