//! The commands that read traces hold bounded memory and never wait on what is not a file:
//! a 2 GB sparse `traces.otf2` (or event file) is refused at once in under 50 MB; a FIFO (or a
//! device) under a trace file's name is refused by `summary`, `view`, `export`, `recover` and
//! `unify` with one `pomptrace:` line, without waiting for a writer; and `recover` reads the
//! journal of a killed run as it goes, so a journal with a 1 GiB tail costs it no more memory.

mod support;

use std::ffi::CString;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use support::archives::{one_region_archive, Names};
use support::pomp2::{event_file_sizes, instrument, pomptrace_command, program, Build, View};
use support::Scratch;

/// What a command that ran to its end did, and what it cost.
struct Measured {
    status: ExitStatus,
    stdout: String,
    stderr: String,
    wall: Duration,
    /// User and system CPU time.
    cpu: Duration,
    /// Peak resident set in KiB (`ru_maxrss`). A child starts as a copy of this process, so
    /// this bounds this process's peak before the spawn too: an upper bound of the command's.
    max_rss_kib: i64,
}

/// Runs `command` to its end; panics (after killing it) if it is still running after
/// `timeout`: a reader that waits on a FIFO hangs there.
// The child is reaped with wait4 (which also gives its resource usage), not Child::wait.
#[allow(clippy::zombie_processes)]
fn measure(command: &mut Command, timeout: Duration) -> Measured {
    let started = Instant::now();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain old data; all zeros is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `pid` is our child, not yet reaped; `status` and `usage` are valid for writes.
        let reaped = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        assert!(reaped >= 0, "wait4: {}", std::io::Error::last_os_error());
        if reaped == pid {
            break;
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{command:?} still ran after {timeout:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let wall = started.elapsed();
    let mut stdout = String::new();
    let mut stderr = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Measured {
        status: ExitStatus::from_raw(status),
        stdout,
        stderr,
        wall,
        cpu: time(usage.ru_utime) + time(usage.ru_stime),
        max_rss_kib: usage.ru_maxrss,
    }
}

fn pomptrace(args: &[&str], path: &Path) -> Command {
    let mut command = Command::new(pomptrace_command());
    command.args(args).arg(path);
    command
}

/// The commands that read an archive through its anchor, with where their output would go.
fn reading_commands(anchor: &Path, out_dir: &Path) -> Vec<Command> {
    let mut summary = pomptrace(&["summary"], anchor);
    summary.current_dir(out_dir);
    let mut view = pomptrace(&["view"], anchor);
    view.arg("-o").arg(out_dir.join("page.html"));
    let mut export = pomptrace(&["export", "--chrome"], anchor);
    export.arg("-o").arg(out_dir.join("trace.json"));
    vec![summary, view, export]
}

/// Exit status 1, one `pomptrace:` line naming `what`, within 10 s.
fn assert_refused(mut command: Command, what: &[&str]) -> Measured {
    let m = measure(&mut command, Duration::from_secs(10));
    assert_eq!(m.status.code(), Some(1), "{command:?}: {}", m.stderr);
    assert_eq!(m.stderr.lines().count(), 1, "{command:?}: {}", m.stderr);
    assert!(
        m.stderr.starts_with("pomptrace: "),
        "{command:?}: {}",
        m.stderr
    );
    for w in what {
        assert!(
            m.stderr.contains(w),
            "{command:?} does not say {w:?}: {}",
            m.stderr
        );
    }
    m
}

fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let name = CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `name` is a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0, "{path:?}");
}

const NAMES: Names = Names {
    region: "work",
    file: "work.c",
    location: "Master thread",
};

#[test]
fn a_two_gigabyte_sparse_anchor_or_event_file_is_refused_at_once_in_little_memory() {
    let scratch = Scratch::new("sparse-anchor");
    let anchor = scratch.join("traces.otf2");
    std::fs::File::create(&anchor)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    for command in reading_commands(&anchor, &scratch.path) {
        let m = assert_refused(
            command,
            &["traces.otf2", "is not the size of an OTF2 anchor"],
        );
        eprintln!(
            "2 GB anchor: {:?} wall, {:?} CPU, peak RSS {} KiB: {}",
            m.wall,
            m.cpu,
            m.max_rss_kib,
            m.stderr.trim_end()
        );
        assert!(m.max_rss_kib < 50 * 1024, "peak RSS {} KiB", m.max_rss_kib);
        assert!(m.cpu < Duration::from_secs(1), "{:?} of CPU time", m.cpu);
        assert!(m.wall < Duration::from_secs(5), "{:?}", m.wall);
    }
    assert!(!scratch.join("page.html").exists() && !scratch.join("trace.json").exists());

    // An event file of 2 GB whose first chunk is a hole: one chunk is read, not the file.
    let archive = scratch.join("archive");
    let anchor = one_region_archive(&archive, &NAMES, 10);
    let events = archive.join("traces/0.evt");
    std::fs::File::create(&events)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    for command in reading_commands(&anchor, &scratch.path) {
        let m = assert_refused(command, &["0.evt", "no chunk header"]);
        eprintln!(
            "2 GB event file: {:?} wall, {:?} CPU, peak RSS {} KiB",
            m.wall, m.cpu, m.max_rss_kib
        );
        assert!(m.max_rss_kib < 50 * 1024, "peak RSS {} KiB", m.max_rss_kib);
        assert!(m.cpu < Duration::from_secs(1), "{:?} of CPU time", m.cpu);
    }
}

#[test]
fn fifos_and_devices_under_trace_file_names_are_refused_without_waiting() {
    let scratch = Scratch::new("fifo-anchor");
    let fifo = scratch.join("traces.otf2");
    mkfifo(&fifo);
    for command in reading_commands(&fifo, &scratch.path) {
        assert_refused(command, &["traces.otf2", "is a FIFO"]);
    }
    assert_refused(
        pomptrace(&["unify"], &scratch.path),
        &["traces.otf2 is a FIFO (named pipe), not a trace"],
    );
    // No journal beside it: recover says so, and does not touch the FIFO.
    assert_refused(pomptrace(&["recover"], &scratch.path), &["traces.journal"]);
    mkfifo(&scratch.join("traces.journal"));
    assert_refused(
        pomptrace(&["recover"], &scratch.path),
        &["traces.journal: is a FIFO"],
    );

    // A device under the anchor's name is not even opened.
    let device = scratch.join("device");
    std::fs::create_dir(&device).unwrap();
    std::os::unix::fs::symlink("/dev/zero", device.join("traces.otf2")).unwrap();
    for command in reading_commands(&device.join("traces.otf2"), &scratch.path) {
        assert_refused(command, &["is a character device"]);
    }

    // A FIFO as an event file, and as the global definitions.
    for (label, file) in [("events", "traces/0.evt"), ("definitions", "traces.def")] {
        let archive = scratch.join(label);
        let anchor = one_region_archive(&archive, &NAMES, 10);
        mkfifo(&archive.join(file));
        for command in reading_commands(&anchor, &scratch.path) {
            assert_refused(command, &[file, "is a FIFO"]);
        }
    }

    // A FIFO as the definitions of one rank of an MPI job.
    let job = scratch.join("job");
    std::fs::create_dir_all(job.join("ranks")).unwrap();
    mkfifo(&job.join("ranks/0.otf2"));
    assert_refused(pomptrace(&["unify"], &job), &["0.otf2", "is a FIFO"]);
}

/// Chunk size of the killed run (memory and file chunks are the same size).
const CHUNK: u64 = 256 * 1024;

#[test]
fn recover_reads_a_long_journal_as_it_goes_and_refuses_fifos() {
    let scratch = Scratch::new("recover-bounded");
    let source = instrument("stream_many.c", &scratch.path, &[]);
    let exe = Build::c(&scratch.path).executable(&[source], "stream_many");
    let experiment = scratch.join("exp");
    let gate = scratch.join("gate");
    // Every full chunk is written as it fills; the run then waits at the gate and is killed.
    let mut child = program(&exe)
        .arg("200000")
        .env("OMP_NUM_THREADS", "2")
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", &experiment)
        .env("POMPTRACE_CHUNK_SIZE", "256K")
        .env("POMPTRACE_KEEP_IN_MEMORY", "0")
        .env("STREAM_MANY_GATE", &gate)
        .env_remove("POMPTRACE_ENABLE")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "waiting");
    let deadline = Instant::now() + Duration::from_secs(60);
    let whole_chunks = || {
        let sizes = event_file_sizes(&experiment);
        sizes.len() == 2 && sizes.iter().all(|&bytes| bytes >= 4 * CHUNK)
    };
    while !whole_chunks() {
        assert!(Instant::now() < deadline, "no chunks written");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    assert_eq!(child.wait().unwrap().signal(), Some(9));

    // A FIFO where the anchor goes, or as an event file: refused, nothing waits.
    let fifo = experiment.join("traces.otf2");
    mkfifo(&fifo);
    assert_refused(
        pomptrace(&["recover"], &experiment),
        &["traces.otf2 already exists"],
    );
    std::fs::remove_file(&fifo).unwrap();
    let events = experiment.join("traces/0.evt");
    let kept = scratch.join("0.evt");
    std::fs::copy(&events, &kept).unwrap();
    mkfifo(&events);
    assert_refused(
        pomptrace(&["recover"], &experiment),
        &["0.evt", "is a FIFO"],
    );
    std::fs::remove_file(&events).unwrap();
    std::fs::rename(&kept, &events).unwrap();

    // A journal with a 1 GiB hole at its end (what a kill during a long write may leave):
    // read as it goes, the hole is a torn tail, not 1 GiB of memory.
    let journal = experiment.join("traces.journal");
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&journal)
        .unwrap();
    let hole = 1u64 << 30;
    file.set_len(file.metadata().unwrap().len() + hole).unwrap();
    let m = measure(
        &mut pomptrace(&["recover"], &experiment),
        Duration::from_secs(120),
    );
    eprintln!(
        "recover, 1 GiB journal: {:?} wall, {:?} CPU, peak RSS {} KiB: {}",
        m.wall,
        m.cpu,
        m.max_rss_kib,
        m.stdout.trim_end()
    );
    assert!(m.status.success(), "{}{}", m.stdout, m.stderr);
    assert!(
        m.stdout.contains("(2 locations,")
            && m.stdout
                .contains(&format!("the last {hole} bytes of the journal were torn")),
        "{}",
        m.stdout
    );
    assert!(m.max_rss_kib < 50 * 1024, "peak RSS {} KiB", m.max_rss_kib);
    // Both reference readers read it (regions the kill left open stay open).
    let view = View::read(&experiment.join("traces.otf2"));
    assert_eq!(view.locations.len(), 2);
    for (id, (name, count)) in &view.locations {
        assert_eq!(view.events[id].len() as u64, *count, "{name}");
    }
    // At least 4 whole chunks per thread, an Enter and a Leave taking under 64 bytes.
    assert!(view.enters_of("user(step)") as u64 >= 2 * 4 * CHUNK / 64);
}
