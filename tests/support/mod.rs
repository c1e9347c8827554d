//! Helpers shared by the integration tests: scratch directories, building the C programs in
//! `c-tests/`, and running the reference readers (`otf2-print`, the python `otf2` module).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A scratch directory under `target/`, removed on drop unless the test failed.
pub struct Scratch {
    pub path: PathBuf,
}

impl Scratch {
    pub fn new(label: &str) -> Self {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = target_dir()
            .join("test-scratch")
            .join(format!("{label}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create scratch dir");
        Self { path }
    }
    pub fn join(&self, p: &str) -> PathBuf {
        self.path.join(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target"))
}

/// Runs a command, panicking with its output if it fails.
pub fn run(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    if !out.status.success() {
        panic!(
            "{cmd:?} failed ({}):\nstdout:\n{}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out
}

/// `pkg-config --cflags --libs otf2`, split into arguments.
pub fn otf2_flags() -> Vec<String> {
    let out = run(Command::new("pkg-config").args(["--cflags", "--libs", "otf2"]));
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// Compiles `c-tests/<name>.c` against the OTF2 C library (once per test process).
pub fn build_c_program(name: &str) -> PathBuf {
    let out_dir = target_dir().join("c-tests");
    std::fs::create_dir_all(&out_dir).unwrap();
    let exe = out_dir.join(format!("{name}-{}", std::process::id()));
    if !exe.exists() {
        let src = repo_root().join("c-tests").join(format!("{name}.c"));
        let tmp = out_dir.join(format!(
            "{name}-{}-{:?}.tmp",
            std::process::id(),
            std::thread::current().id()
        ));
        run(Command::new("cc")
            .args(["-O2", "-Wall", "-Wextra", "-Werror", "-o"])
            .arg(&tmp)
            .arg(&src)
            .args(otf2_flags()));
        std::fs::rename(&tmp, &exe).unwrap();
    }
    exe
}

/// What `otf2-print ARGS ANCHOR` printed; panics if it failed or complained on stderr about
/// anything but `allowed_warnings`.
pub fn otf2_print(args: &[&str], anchor: &Path, allowed_warnings: &[&str]) -> String {
    let out = run(Command::new("otf2-print").args(args).arg(anchor));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for line in stderr.lines() {
        assert!(
            allowed_warnings.iter().any(|w| line.contains(w)),
            "otf2-print {args:?} complained: {line}\nfull stderr:\n{stderr}"
        );
    }
    String::from_utf8(out.stdout).expect("otf2-print output is UTF-8")
}

/// The python `otf2` module's view of an archive, as JSON text (see tests/support/otf2_dump.py).
pub fn python_dump(anchor: &Path) -> String {
    let script = repo_root().join("tests/support/otf2_dump.py");
    let out = run(Command::new("/usr/bin/python3").arg(script).arg(anchor));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("error") && !stderr.contains("Error"),
        "python otf2 reader complained:\n{stderr}"
    );
    String::from_utf8(out.stdout).expect("dump is UTF-8")
}
pub mod archives;
pub mod budget;
pub mod mpi;
/// Which pages of a file are in the page cache (shared with the OTF2 crate's unit tests).
#[path = "../../crates/otf2/src/page_cache_probe.rs"]
pub mod page_cache_probe;
pub mod pomp2;

/// The plumbing every test archive needs: a system tree node, one process location group under
/// it, and a CPU-thread Location per `(name string id, number of events)`, with ids 0, 1, ...
pub fn write_process_and_locations(
    defs: &mut otf2::GlobalDefWriter,
    node: (u32, u32),
    process_name: u32,
    locations: &[(u32, u64)],
) {
    use otf2::*;
    defs.write(&GlobalDef::SystemTreeNode {
        id: 0,
        name: node.0,
        class_name: node.1,
        parent: UNDEFINED_U32,
    });
    defs.write(&GlobalDef::LocationGroup {
        id: 0,
        name: process_name,
        location_group_type: LocationGroupType::PROCESS,
        system_tree_parent: 0,
        creating_location_group: UNDEFINED_U32,
    });
    for (l, &(name, number_of_events)) in locations.iter().enumerate() {
        defs.write(&GlobalDef::Location {
            id: l as u64,
            name,
            location_type: LocationType::CPU_THREAD,
            number_of_events,
            location_group: 0,
        });
    }
}

/// A user-paradigm FUNCTION region definition named by string `name`, without a source file.
pub fn write_user_region(defs: &mut otf2::GlobalDefWriter, id: u32, name: u32) {
    use otf2::*;
    defs.write(&GlobalDef::Region {
        id,
        name,
        canonical_name: name,
        description: 0,
        region_role: RegionRole::FUNCTION,
        paradigm: Paradigm::USER,
        region_flags: RegionFlag::NONE,
        source_file: 0,
        begin_line: 0,
        end_line: 0,
    });
}
