//! Building and running OPARI2-instrumented programs against pomptrace, and reading their traces
//! back through the reference reader (the python `otf2` module, via `otf2_view.py`).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::{repo_root, run, target_dir};

/// Where cargo put `libpomptrace.so` / `.a` for this test run: `cargo test` builds the library
/// in `target/<profile>/deps/` (a copy one level up, if any, is from some earlier `cargo build`
/// and may be stale).
pub fn library_dir() -> PathBuf {
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let top = target_dir().join(profile);
    let deps = top.join("deps");
    if deps.join("libpomptrace.so").exists() {
        deps
    } else if top.join("libpomptrace.so").exists() {
        top
    } else {
        panic!(
            "no libpomptrace.so in {} or {}",
            deps.display(),
            top.display()
        )
    }
}

pub fn include_dir() -> PathBuf {
    repo_root().join("include")
}

/// The `pomptrace` command built for this test run: the `pomptrace-cli` crate's binary, which
/// `cargo test` in the top directory builds beside this test (in the same profile directory).
pub fn pomptrace_command() -> PathBuf {
    let test_exe = std::env::current_exe().expect("the test's own path");
    // <target>/<profile>/deps/<test>-<hash>
    let profile_dir = test_exe
        .parent()
        .and_then(Path::parent)
        .expect("test binaries live in <target>/<profile>/deps");
    let command = profile_dir.join("pomptrace");
    assert!(
        command.is_file(),
        "{} is missing: run the tests with `cargo test` in the top directory (the workspace's \
         default members build it), or `cargo build -p pomptrace-cli` first",
        command.display()
    );
    command
}

/// Copies `c-tests/<name>` into `dir` and instruments it with the real `opari2`; returns the
/// instrumented file (`<name>.mod.<ext>`).
pub fn instrument(name: &str, dir: &Path, opari_args: &[&str]) -> PathBuf {
    let src = dir.join(name);
    std::fs::copy(repo_root().join("c-tests").join(name), &src)
        .unwrap_or_else(|e| panic!("copy {name}: {e}"));
    let (stem, ext) = name.rsplit_once('.').expect("file with extension");
    let out = dir.join(format!("{stem}.mod.{ext}"));
    run(Command::new("opari2")
        .args(opari_args)
        .arg(&src)
        .arg(&out)
        .current_dir(dir));
    out
}

/// The event files of an experiment directory so far, with their location numbers.
pub fn event_files(experiment: &Path) -> Vec<(u64, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(experiment.join("traces")) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let location = name.strip_suffix(".evt")?.parse().ok()?;
            Some((location, e.path()))
        })
        .collect()
}

/// Bytes in an experiment directory's event files so far.
pub fn event_bytes(experiment: &Path) -> u64 {
    event_file_sizes(experiment).iter().sum()
}

/// The sizes of an experiment directory's event files so far, one per file.
pub fn event_file_sizes(experiment: &Path) -> Vec<u64> {
    event_files(experiment)
        .iter()
        .map(|(_, p)| std::fs::metadata(p).map_or(0, |m| m.len()))
        .collect()
}

/// A command that runs `exe`, a program linked against the library under test. cargo test
/// puts its build directories in `LD_LIBRARY_PATH`, where an older copy of the library (from an
/// earlier `cargo build`) may come before the one the program's rpath names: removed.
pub fn program(exe: &Path) -> Command {
    let mut command = Command::new(exe);
    command.env_remove("LD_LIBRARY_PATH");
    command
}

/// `c-tests/<file>` instrumented with `opari2` and built into `dir` against the shared library,
/// with an init file; returns the executable (named after the file's stem).
pub fn instrumented_c_program(dir: &Path, file: &str) -> PathBuf {
    let source = instrument(file, dir, &[]);
    let stem = file.rsplit_once('.').map_or(file, |(stem, _)| stem);
    Build::c(dir).executable(&[source], stem)
}

/// Copies `c-tests/<name>`, a program that calls POMP2_* itself (not instrumented), into `dir`
/// and builds it against the library without an init file: its handles are assigned when
/// first reached.
pub fn build_direct_calls(dir: &Path, name: &str) -> PathBuf {
    std::fs::copy(repo_root().join("c-tests").join(name), dir.join(name))
        .unwrap_or_else(|e| panic!("copy {name}: {e}"));
    let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
    Build {
        init_file: false,
        ..Build::c(dir)
    }
    .executable(&[dir.join(name)], stem)
}

/// How the test program gets the library.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Link {
    /// `-lpomptrace` against the shared library.
    Shared,
    /// The static archive, with only `-fopenmp` and what `pomptrace config --libs` would add.
    Static,
    /// Not linked at all (the library comes in through LD_PRELOAD).
    None,
    /// `-lpomptrace_mpi -lpomptrace`, both from the build directory (see
    /// `support::mpi::mpi_library`).
    SharedWithMpi,
}

pub struct Build<'a> {
    pub dir: &'a Path,
    pub compiler: &'a str,
    pub init_file: bool,
    pub link: Link,
}

impl<'a> Build<'a> {
    pub fn c(dir: &'a Path) -> Self {
        Self {
            dir,
            compiler: "cc",
            init_file: true,
            link: Link::Shared,
        }
    }

    /// Compiles `sources` (instrumented or not) with OpenMP and links them into `exe`; with
    /// `init_file`, generates the init file from the objects with `pomptrace init-regions`.
    pub fn executable(&self, sources: &[PathBuf], exe: &str) -> PathBuf {
        let mut objects = Vec::new();
        for src in sources {
            let obj = src.with_extension("o");
            run(Command::new(self.compiler)
                .args(["-fopenmp", "-O1", "-g", "-I"])
                .arg(include_dir())
                .arg("-c")
                .arg(src)
                .arg("-o")
                .arg(&obj)
                .current_dir(self.dir));
            objects.push(obj);
        }
        if self.init_file {
            let init = self.dir.join(format!("{exe}_pomp2_init.c"));
            run(Command::new(pomptrace_command())
                .arg("init-regions")
                .arg("-o")
                .arg(&init)
                .args(&objects));
            let obj = init.with_extension("o");
            run(Command::new("cc").arg("-c").arg(&init).arg("-o").arg(&obj));
            objects.push(obj);
        }
        let out = self.dir.join(exe);
        let mut cmd = Command::new(self.compiler);
        cmd.arg("-fopenmp").args(&objects).arg("-o").arg(&out);
        let lib = library_dir();
        match self.link {
            Link::Shared => {
                cmd.arg("-L")
                    .arg(&lib)
                    .arg("-lpomptrace")
                    .arg(format!("-Wl,-rpath,{}", lib.display()));
            }
            Link::Static => {
                cmd.arg(lib.join("libpomptrace.a"))
                    .args(["-lpthread", "-ldl", "-lm"]);
            }
            Link::SharedWithMpi => {
                cmd.arg("-L")
                    .arg(&lib)
                    .args(["-lpomptrace_mpi", "-lpomptrace"])
                    .arg(format!("-Wl,-rpath,{}", lib.display()));
            }
            Link::None => {}
        }
        run(&mut cmd);
        out
    }
}

/// A finished run: its output and the trace it wrote.
pub struct Run {
    pub output: Output,
    pub experiment: PathBuf,
}

impl Run {
    pub fn anchor(&self) -> PathBuf {
        self.experiment.join("traces.otf2")
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }
}

/// Runs `exe` with `threads` OpenMP threads, writing its trace to `<dir>/<label>`.
pub fn run_traced(exe: &Path, threads: u32, label: &str, env: &[(&str, &str)]) -> Run {
    run_traced_with_args(exe, &[], threads, label, env)
}

/// `run_traced` with command-line arguments for the program.
pub fn run_traced_with_args(
    exe: &Path,
    args: &[&str],
    threads: u32,
    label: &str,
    env: &[(&str, &str)],
) -> Run {
    let experiment = exe.parent().unwrap().join(label);
    let _ = std::fs::remove_dir_all(&experiment);
    let mut cmd = program(exe);
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

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    pub name: String,
    pub role: String,
    pub paradigm: String,
    pub file: String,
    pub begin: u32,
    pub end: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ev {
    pub time: u64,
    pub kind: String,
    /// Kind-specific fields as `otf2_view.py` prints them (region name, counts, ids).
    pub detail: Vec<String>,
}

impl Ev {
    /// `"Enter !$omp for @x.c:5"`, `"ThreadFork 4"`, ...: kind and details in one string.
    pub fn text(&self) -> String {
        std::iter::once(self.kind.as_str())
            .chain(self.detail.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comm {
    pub name: String,
    pub parent: Option<u32>,
    pub members: Vec<u64>,
}

/// The reference reader's view of a trace.
#[derive(Debug, Default)]
pub struct View {
    pub timer_resolution: u64,
    pub regions: BTreeMap<u32, Region>,
    /// id → (name, number_of_events)
    pub locations: BTreeMap<u64, (String, u64)>,
    /// location id → the name of its location group
    pub location_groups: BTreeMap<u64, String>,
    pub comms: BTreeMap<u32, Comm>,
    pub events: BTreeMap<u64, Vec<Ev>>,
    /// location id → OTF2 location type (`CPU_THREAD`, `METRIC`)
    pub location_types: BTreeMap<u64, String>,
    /// metric class id → (occurrence, members as `name:unit:mode`)
    pub metric_classes: BTreeMap<u32, (String, Vec<String>)>,
}

impl View {
    pub fn read(anchor: &Path) -> View {
        let out = run(Command::new("/usr/bin/python3")
            .arg(repo_root().join("tests/support/otf2_view.py"))
            .arg(anchor));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.trim().is_empty(),
            "python otf2 reader complained:\n{stderr}"
        );
        let text = String::from_utf8(out.stdout).expect("UTF-8");
        let mut v = View::default();
        for line in text.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            match f[0] {
                "CLOCK" => v.timer_resolution = f[1].parse().unwrap(),
                "REGION" => {
                    v.regions.insert(
                        f[1].parse().unwrap(),
                        Region {
                            name: f[2].into(),
                            role: f[3].into(),
                            paradigm: f[4].into(),
                            file: f[5].into(),
                            begin: f[6].parse().unwrap(),
                            end: f[7].parse().unwrap(),
                        },
                    );
                }
                "LOCATION" => {
                    let id = f[1].parse().unwrap();
                    v.locations.insert(id, (f[2].into(), f[3].parse().unwrap()));
                    v.location_types.insert(id, f[4].into());
                    v.location_groups.insert(id, f[5].into());
                }
                "METRIC_CLASS" => {
                    v.metric_classes.insert(
                        f[1].parse().unwrap(),
                        (f[2].into(), f[3].split(',').map(String::from).collect()),
                    );
                }
                "COMM" => {
                    let members = if f[4].is_empty() {
                        vec![]
                    } else {
                        f[4].split(',').map(|m| m.parse().unwrap()).collect()
                    };
                    v.comms.insert(
                        f[1].parse().unwrap(),
                        Comm {
                            name: f[2].into(),
                            parent: f[3].parse().ok(),
                            members,
                        },
                    );
                }
                "EVENT" => {
                    v.events.entry(f[1].parse().unwrap()).or_default().push(Ev {
                        time: f[2].parse().unwrap(),
                        kind: f[3].into(),
                        detail: f[4..].iter().map(|s| s.to_string()).collect(),
                    });
                }
                "" => {}
                other => panic!("unexpected line kind {other:?} in: {line}"),
            }
        }
        // Also the other reference reader: otf2-print must read it without complaint.
        let print = run(Command::new("otf2-print").arg("--silent").arg(anchor));
        let stderr = String::from_utf8_lossy(&print.stderr);
        assert!(stderr.trim().is_empty(), "otf2-print complained:\n{stderr}");
        v
    }

    /// The events of the location with this name.
    pub fn events_of(&self, location_name: &str) -> &[Ev] {
        let id = self
            .locations
            .iter()
            .find(|(_, (n, _))| n == location_name)
            .unwrap_or_else(|| panic!("no location {location_name:?} in {:?}", self.locations))
            .0;
        self.events.get(id).map_or(&[], Vec::as_slice)
    }

    /// The times of a location's events of one kind.
    pub fn times_of(&self, location_name: &str, kind: &str) -> Vec<u64> {
        self.events_of(location_name)
            .iter()
            .filter(|e| e.kind == kind)
            .map(|e| e.time)
            .collect()
    }

    /// (time, Comm id) of a location's ThreadTeamBegin events.
    pub fn team_begins(&self, location_name: &str) -> Vec<(u64, u32)> {
        self.events_of(location_name)
            .iter()
            .filter(|e| e.kind == "ThreadTeamBegin")
            .map(|e| (e.time, e.detail[0].parse().unwrap()))
            .collect()
    }

    /// Event texts of a location, without the ones whose kind is in `skip`.
    pub fn texts(&self, location_name: &str, skip: &[&str]) -> Vec<String> {
        self.events_of(location_name)
            .iter()
            .filter(|e| !skip.contains(&e.kind.as_str()))
            .map(Ev::text)
            .collect()
    }

    /// How many Enter events of regions whose name contains `region` the trace holds.
    pub fn enters_of(&self, region: &str) -> usize {
        self.events
            .values()
            .flatten()
            .filter(|e| e.kind == "Enter" && e.detail.first().is_some_and(|r| r.contains(region)))
            .count()
    }

    pub fn total_events(&self) -> usize {
        self.events.values().map(Vec::len).sum()
    }

    /// How many events of each kind the whole trace holds.
    pub fn kind_counts(&self) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for e in self.events.values().flatten() {
            *counts.entry(e.kind.clone()).or_insert(0) += 1;
        }
        counts
    }

    /// Names of all defined regions, sorted.
    pub fn region_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.regions.values().map(|r| r.name.clone()).collect();
        names.sort();
        names
    }

    pub fn region(&self, name: &str) -> &Region {
        self.regions
            .values()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("no region {name:?}; have {:?}", self.region_names()))
    }

    /// Checks every location: Enter/Leave well nested (each Leave closes the innermost open
    /// region, nothing left open), timestamps never decrease, event count as defined.
    pub fn assert_well_formed(&self) {
        self.assert_well_formed_but_cut_off(&[]);
    }

    /// [`assert_well_formed`](Self::assert_well_formed), except that the locations in `cut`
    /// (of a process that was killed) may end inside regions.
    pub fn assert_well_formed_but_cut_off(&self, cut: &[u64]) {
        for (id, events) in &self.events {
            let (name, count) = &self.locations[id];
            assert_eq!(*count as usize, events.len(), "{name}: number_of_events");
            let mut open: Vec<&str> = Vec::new();
            let mut last = 0;
            for e in events {
                assert!(e.time >= last, "{name}: time goes back at {e:?}");
                last = e.time;
                match e.kind.as_str() {
                    "Enter" => open.push(&e.detail[0]),
                    "Leave" => assert_eq!(
                        open.pop(),
                        Some(e.detail[0].as_str()),
                        "{name}: Leave does not match the innermost Enter"
                    ),
                    _ => {}
                }
            }
            assert!(
                open.is_empty() || cut.contains(id),
                "{name}: regions left open: {open:?}"
            );
        }
    }
}
