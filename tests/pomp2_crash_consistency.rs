//! What reached the disk is readable: a run killed with SIGKILL in the middle (also on a file
//! system that filled up first) leaves its journal and whole event chunks, and `pomptrace
//! recover` makes an archive of them that both reference readers accept, with at least every
//! event of every whole chunk that was on disk.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::pomp2::*;
use support::{run, Scratch};

/// The event chunk size of these runs (memory and file chunks are the same size).
const CHUNK: u64 = 256 * 1024;

/// 2 threads × 2 × `per_thread` user-region events.
fn start(exe: &Path, experiment: &Path, per_thread: u64) -> Child {
    program(exe)
        .arg(per_thread.to_string())
        .env("OMP_NUM_THREADS", "2")
        .env("POMPTRACE_CHUNK_SIZE", "256K")
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", experiment)
        .env_remove("POMPTRACE_ENABLE")
        .env_remove("POMPTRACE_KEEP_IN_MEMORY")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Polls until `ready`, then kills the run; panics if the run ended first.
fn kill_when(mut child: Child, what: &str, ready: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !ready() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the run ended ({status}) before {what}: nothing to test");
        }
        assert!(Instant::now() < deadline, "never {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9),
        "{status}"
    );
}

/// Per location, the events in the whole chunks of its file, read from the chunk headers (a
/// chunk is whole when all its bytes are there; its header's last event number counts).
fn whole_chunk_events(experiment: &Path) -> BTreeMap<u64, u64> {
    event_files(experiment)
        .into_iter()
        .map(|(location, path)| {
            let bytes = std::fs::read(&path).unwrap();
            let whole = bytes.len() as u64 / CHUNK;
            let events = if whole == 0 {
                0
            } else {
                let header = &bytes[((whole - 1) * CHUNK) as usize..][..18];
                assert_eq!(header[0], 0x03, "{}: chunk header", path.display());
                u64::from_le_bytes(header[10..18].try_into().unwrap())
            };
            (location, events)
        })
        .collect()
}

fn recover(experiment: &Path) -> String {
    let out = run(Command::new(pomptrace_command())
        .arg("recover")
        .arg(experiment));
    String::from_utf8(out.stdout).unwrap()
}

/// Both readers accept the archive (View::read runs the python module and otf2-print), every
/// location holds at least the events of its whole chunks, and says how many it holds.
fn assert_recovered(experiment: &Path, on_disk: &BTreeMap<u64, u64>, report: &str) {
    assert!(
        report.starts_with(&format!(
            "pomptrace: recovered {}/traces.otf2 (2 locations, ",
            experiment.display()
        )),
        "{report}"
    );
    let view = View::read(&experiment.join("traces.otf2"));
    assert_eq!(
        view.locations.keys().copied().collect::<Vec<_>>(),
        vec![0, 1]
    );
    for (location, &expected) in on_disk {
        let got = view.events.get(location).map_or(0, Vec::len) as u64;
        assert!(
            got >= expected,
            "location {location}: {got} events recovered, {expected} were on disk"
        );
        assert_eq!(view.locations[location].1, got, "number_of_events");
    }
    let total: u64 = on_disk.values().sum();
    assert!(
        report.contains(&format!(" {} events in ", view.total_events())),
        "{report}"
    );
    assert!(total > 0, "no whole chunk reached the disk: {on_disk:?}");
    assert!(
        !experiment.join("traces.journal").exists(),
        "the journal is spent"
    );
    // Recovering twice is refused: the trace is complete.
    let again = Command::new(pomptrace_command())
        .arg("recover")
        .arg(experiment)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already holds a complete trace"));
}

#[test]
fn a_run_killed_in_the_middle_is_recovered_with_every_whole_chunk_on_disk() {
    let scratch = Scratch::new("recover-killed");
    let exe = instrumented_c_program(&scratch.path, "stream_many.c");
    let experiment = scratch.join("exp");
    // 10^7 events in all; killed once 2 MiB of events are on disk.
    let child = start(&exe, &experiment, 2_500_000);
    kill_when(child, "2 MiB of events reached the disk", || {
        event_bytes(&experiment) >= 2 << 20
    });
    assert!(!experiment.join("traces.otf2").exists());
    let on_disk = whole_chunk_events(&experiment);
    let report = recover(&experiment);
    assert_recovered(&experiment, &on_disk, &report);
}

/// A tmpfs of 2 MiB mounted for the test, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path) -> Self {
        std::fs::create_dir_all(dir).unwrap();
        run(Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=2m,mode=0755", "tmpfs"])
            .arg(dir));
        Tmpfs(dir.to_path_buf())
    }

    fn available(&self) -> u64 {
        let path = std::ffi::CString::new(self.0.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: statvfs writes only into `st`; `path` is a valid C string.
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::statvfs(path.as_ptr(), &mut st) }, 0);
        st.f_bavail as u64 * st.f_frsize as u64
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_run_killed_after_filling_its_file_system_is_recovered_there() {
    let scratch = Scratch::new("recover-full");
    let exe = instrumented_c_program(&scratch.path, "stream_many.c");
    let experiment = scratch.join("exp");
    let tmpfs = Tmpfs::mount(&experiment);
    let child = start(&exe, &experiment, 2_500_000);
    kill_when(child, "the file system filled up", || {
        tmpfs.available() < CHUNK
    });
    let on_disk = whole_chunk_events(&experiment);
    let report = recover(&experiment);
    assert_recovered(&experiment, &on_disk, &report);
    drop(tmpfs);
}

#[test]
fn a_new_run_leaves_a_killed_runs_remains_alone_and_says_how_to_recover_them() {
    let scratch = Scratch::new("recover-reuse");
    let exe = instrumented_c_program(&scratch.path, "stream_many.c");
    let experiment = scratch.join("exp");
    let child = start(&exe, &experiment, 2_500_000);
    kill_when(child, "1 MiB of events reached the disk", || {
        event_bytes(&experiment) >= 1 << 20
    });
    let on_disk = whole_chunk_events(&experiment);

    let second = program(&exe)
        .arg("1000")
        .env("OMP_NUM_THREADS", "2")
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", &experiment)
        .env_remove("POMPTRACE_ENABLE")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let own = PathBuf::from(format!("{}-{}", experiment.display(), second.id()));
    let out = second.wait_with_output().unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines[0],
        format!(
            "pomptrace: {0} holds the remains of a run that did not end (`pomptrace recover \
             {0}` makes them a readable trace); writing this trace to {1} instead",
            experiment.display(),
            own.display()
        )
    );
    assert!(
        lines[1].starts_with(&format!(
            "pomptrace: trace written to {}/traces.otf2",
            own.display()
        )),
        "{stderr}"
    );
    assert_eq!(lines.len(), 2, "{stderr}");
    View::read(&own.join("traces.otf2")).assert_well_formed();
    std::fs::remove_dir_all(&own).unwrap();

    assert_eq!(
        whole_chunk_events(&experiment),
        on_disk,
        "the remains were touched"
    );
    let report = recover(&experiment);
    assert_recovered(&experiment, &on_disk, &report);
}
