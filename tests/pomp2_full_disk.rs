//! A full disk: the experiment directory is a small file system (tmpfs, and ext4 on a loop
//! device, each at 2 MiB and 16 MiB) that the events fill long before the run ends. The program
//! must run on unharmed; pomptrace says what happened in its closing line; the definitions and
//! the anchor count only what reached the disk (whole chunks), so both reference readers read
//! the archive, promptly, with every location's events as the definitions announce them.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use otf2::ArchiveReader;
use support::pomp2::*;
use support::{run, Scratch};

/// A file system mounted for the test's lifetime.
struct Mounted {
    dir: PathBuf,
    loop_file: Option<PathBuf>,
}

impl Mounted {
    fn tmpfs(dir: &Path, size: &str) -> Self {
        std::fs::create_dir_all(dir).unwrap();
        run(Command::new("mount")
            .args(["-t", "tmpfs", "-o"])
            .arg(format!("size={size},mode=0755"))
            .arg("tmpfs")
            .arg(dir));
        Self {
            dir: dir.to_path_buf(),
            loop_file: None,
        }
    }

    fn ext4(dir: &Path, image: &Path, size: &str) -> Self {
        std::fs::create_dir_all(dir).unwrap();
        run(Command::new("truncate").args(["-s", size]).arg(image));
        // No journal: a 2 MiB file system has no room for one.
        run(Command::new("mkfs.ext4")
            .args(["-q", "-F", "-O", "^has_journal", "-E", "root_owner=0:0"])
            .arg(image));
        run(Command::new("mount")
            .args(["-o", "loop"])
            .arg(image)
            .arg(dir));
        Self {
            dir: dir.to_path_buf(),
            loop_file: Some(image.to_path_buf()),
        }
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
        if let Some(image) = &self.loop_file {
            let _ = std::fs::remove_file(image);
        }
    }
}

/// Runs the program into `experiment` (on a full file system) and checks everything above.
fn traced_on_a_full_disk(exe: &Path, experiment: &Path, what: &str) {
    // 2 x 1 500 000 user-region events per thread: about 70 MB of events, far past 16 MiB.
    let out = program(exe)
        .arg("1500000")
        .env("OMP_NUM_THREADS", "2")
        .env("POMPTRACE_CHUNK_SIZE", "256K")
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", experiment)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{what}: the program was harmed: {out:?}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("total=1500000 "),
        "{what}: the program's result changed: {stdout}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "{what}: expected one pomptrace line:\n{stderr}"
    );
    assert!(
        lines[0].starts_with(&format!(
            "pomptrace: trace written to {}/traces.otf2",
            experiment.display()
        )),
        "{what}: {stderr}"
    );
    assert!(
        lines[0].contains("No space left on device"),
        "{what}: {stderr}"
    );

    let anchor = experiment.join("traces.otf2");
    // The reference readers, each bounded in time: a reader must never hang on what a full
    // disk left.
    let print = run(Command::new("timeout")
        .args(["60", "otf2-print", "--silent"])
        .arg(&anchor));
    assert!(
        String::from_utf8_lossy(&print.stderr).trim().is_empty(),
        "{what}: otf2-print complained: {print:?}"
    );
    let view = View::read(&anchor);
    assert_eq!(view.locations.len(), 2, "{what}");
    let reader = ArchiveReader::open(&anchor).unwrap();
    for (id, (name, count)) in &view.locations {
        let read = view.events.get(id).map_or(0, Vec::len);
        assert_eq!(*count as usize, read, "{what}: {name}: number_of_events");
        let ours = reader.events(*id).unwrap().count();
        assert_eq!(ours, read, "{what}: {name}: our reader");
        assert!(
            read < 2 * 1_500_000 + 6,
            "{what}: {name}: every event fit on a full disk?"
        );
    }
    // Nothing left for `recover`: the trace is complete as it is.
    assert!(!experiment.join("traces.journal").exists(), "{what}");
}

#[test]
fn a_full_disk_is_reported_once_and_what_reached_it_is_a_readable_trace() {
    let scratch = Scratch::new("full-disk");
    let exe = instrumented_c_program(&scratch.path, "stream_many.c");
    for size in ["2M", "16M"] {
        let experiment = scratch.join(&format!("tmpfs-{size}"));
        let _fs = Mounted::tmpfs(&experiment, size);
        traced_on_a_full_disk(&exe, &experiment, &format!("tmpfs of {size}"));
    }
    for size in ["2M", "16M"] {
        let experiment = scratch.join(&format!("ext4-{size}"));
        let _fs = Mounted::ext4(
            &experiment,
            &scratch.join(&format!("ext4-{size}.img")),
            size,
        );
        traced_on_a_full_disk(&exe, &experiment, &format!("ext4 of {size}"));
    }
}
