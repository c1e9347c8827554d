//! Traces the tests of `pomptrace view`, `export` and `summary` read: real OPARI2-instrumented
//! programs run against this build, and the reference reader's visits of a trace.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::pomp2::{
    include_dir, instrument, library_dir, pomptrace_command, run_traced, Build, View,
};
use crate::support::{repo_root, run};

/// The main job's program (examples/jacobi/jacobi.c), instrumented with `opari2` and built as
/// scripts/demo.sh builds it, run on 4 threads with `args` (grid size, iterations).
pub fn jacobi_trace(dir: &Path, args: &[&str]) -> PathBuf {
    std::fs::copy(
        repo_root().join("examples/jacobi/jacobi.c"),
        dir.join("jacobi.c"),
    )
    .unwrap();
    run(Command::new("opari2")
        .args(["jacobi.c", "jacobi.mod.c"])
        .current_dir(dir));
    // As scripts/demo.sh builds it (Build::c cannot add -lm).
    run(Command::new("cc")
        .args(["-O2", "-fopenmp", "-I"])
        .arg(include_dir())
        .args(["-c", "jacobi.mod.c", "-o", "jacobi.o"])
        .current_dir(dir));
    run(Command::new(pomptrace_command())
        .args(["init-regions", "-o", "pomp2_init.c", "jacobi.o"])
        .current_dir(dir));
    run(Command::new("cc")
        .args(["-c", "pomp2_init.c", "-o", "pomp2_init.o"])
        .current_dir(dir));
    let lib = library_dir();
    run(Command::new("cc")
        .args(["-fopenmp", "jacobi.o", "pomp2_init.o", "-L"])
        .arg(&lib)
        .arg("-lpomptrace")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .args(["-lm", "-o", "jacobi"])
        .current_dir(dir));
    run_jacobi(dir, args, &dir.join("trace"), &[])
}

/// Runs the solver `jacobi_trace` built in `dir` again, into `experiment` with `env` (on 4
/// threads); returns where its trace goes.
pub fn run_jacobi(dir: &Path, args: &[&str], experiment: &Path, env: &[(&str, &str)]) -> PathBuf {
    let mut cmd = Command::new(dir.join("jacobi"));
    cmd.args(args)
        .env("OMP_NUM_THREADS", "4")
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", experiment)
        .env_remove("POMPTRACE_ENABLE")
        .env_remove("POMPTRACE_ENABLE_PROFILING")
        .env_remove("POMPTRACE_ENABLE_TRACING")
        .env_remove("LD_PRELOAD");
    for (k, v) in env {
        cmd.env(k, v);
    }
    run(&mut cmd);
    experiment.join("traces.otf2")
}

/// A program from c-tests/ (instrumented with `opari2`), run on `threads` threads.
pub fn c_test_trace(dir: &Path, source: &str, threads: u32) -> PathBuf {
    let instrumented = instrument(source, dir, &[]);
    let exe = Build::c(dir).executable(&[instrumented], "program");
    run_traced(&exe, threads, "trace", &[]).anchor()
}

/// A visit as the reference reader's events give it.
#[derive(Clone, Debug)]
pub struct ReferenceVisit {
    pub region: String,
    pub start: u64,
    pub end: u64,
    pub exclusive: u64,
}

/// Per location name, the matched Enter/Leave pairs of the reference reader's events (the
/// traces of these tests nest properly), in the order they end.
pub fn reference_visits(view: &View) -> BTreeMap<String, Vec<ReferenceVisit>> {
    let mut out = BTreeMap::new();
    for (id, (name, _)) in &view.locations {
        let mut stack: Vec<(String, u64, u64)> = Vec::new();
        let mut visits = Vec::new();
        for ev in view.events.get(id).map_or(&[][..], Vec::as_slice) {
            match ev.kind.as_str() {
                "Enter" => stack.push((ev.detail[0].clone(), ev.time, 0)),
                "Leave" => {
                    let (region, start, enclosed) = stack.pop().expect("Leave after Enter");
                    assert_eq!(region, ev.detail[0], "well nested");
                    let duration = ev.time - start;
                    if let Some(parent) = stack.last_mut() {
                        parent.2 += duration;
                    }
                    visits.push(ReferenceVisit {
                        region,
                        start,
                        end: ev.time,
                        exclusive: duration - enclosed,
                    });
                }
                _ => {}
            }
        }
        assert!(stack.is_empty(), "{name}: regions left open");
        out.insert(name.clone(), visits);
    }
    out
}

/// The clock's global offset, as the python `otf2` module reads it.
pub fn global_offset(anchor: &Path) -> u64 {
    let dump: serde_json::Value =
        serde_json::from_str(&crate::support::python_dump(anchor)).unwrap();
    dump["clock"]["global_offset"]
        .as_u64()
        .expect("global_offset")
}
