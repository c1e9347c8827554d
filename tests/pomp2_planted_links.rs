//! Experiment directories cannot be redirected: a symbolic link planted at the experiment
//! directory's name, at a file or directory the run will create in it, or at the fallback
//! names, never gets a victim file truncated or written, nor the trace written into the link's
//! target. Each place is tried on its own; the program runs unharmed every time, the trace is
//! written somewhere pomptrace names, and where pomptrace refused a place it says why. Also
//! refused: a directory of another user's and one that others can write. The fallback in the
//! temporary directory has a name nobody can guess and mode 0700. As root, every case runs
//! twice: as root and as an unprivileged user.

mod support;

use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::pomp2::*;
use support::{run, Scratch};

const EVENTS: &str = "20000";
const NOBODY: u32 = 65534;

/// Where a case plants its link (relative to the case directory), and what it points at.
#[derive(Clone, Copy, Debug)]
enum Plant {
    /// `exp` itself → the victim directory.
    Directory,
    /// `exp/<name>` → the victim file (`exp` made beforehand, private).
    FileInside(&'static str),
    /// `exp/<name>` → the victim directory.
    DirectoryInside(&'static str),
    /// `exp` holds a finished trace, and `exp-<pid>` → the victim directory.
    PidFallback,
}

struct Case {
    plant: Plant,
    /// Whether pomptrace must refuse the place and write the trace elsewhere (otherwise it
    /// replaces the link with a file of its own, in `exp`).
    refused: bool,
}

const CASES: [Case; 14] = [
    Case {
        plant: Plant::Directory,
        refused: true,
    },
    Case {
        plant: Plant::DirectoryInside("traces"),
        refused: true,
    },
    Case {
        plant: Plant::FileInside(".traces.lock"),
        refused: true,
    },
    Case {
        plant: Plant::FileInside(".traces.reserve"),
        refused: true,
    },
    Case {
        plant: Plant::FileInside("traces.otf2"),
        refused: true,
    },
    Case {
        plant: Plant::FileInside("traces.journal"),
        refused: true,
    },
    Case {
        plant: Plant::FileInside("traces/0.evt"),
        refused: true,
    },
    Case {
        plant: Plant::FileInside("traces/1.evt"),
        refused: true,
    },
    Case {
        plant: Plant::FileInside("pomptrace.cfg"),
        refused: false,
    },
    Case {
        plant: Plant::FileInside("traces.def"),
        refused: false,
    },
    Case {
        plant: Plant::FileInside(".traces.otf2.tmp"),
        refused: false,
    },
    Case {
        plant: Plant::FileInside(".traces.def.tmp"),
        refused: false,
    },
    Case {
        plant: Plant::FileInside("traces/0.def"),
        refused: true,
    },
    Case {
        plant: Plant::PidFallback,
        refused: true,
    },
];

/// Runs `command`, as `uid` when given (the caller is root).
fn as_user(uid: Option<u32>, program: &Path) -> Command {
    match uid {
        None => Command::new(program),
        Some(uid) => {
            let mut c = Command::new("setpriv");
            c.arg(format!("--reuid={uid}"))
                .arg(format!("--regid={uid}"))
                .arg("--clear-groups")
                .arg(program);
            c
        }
    }
}

fn chown_tree(path: &Path, uid: u32) {
    run(Command::new("chown")
        .arg("-R")
        .arg(format!("{uid}:{uid}"))
        .arg(path));
}

/// A directory a planted link points at: one file, `keep`.
fn make_victim_dir(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("keep"), b"kept").unwrap();
}

/// Nothing was written into the victim directory, and nothing removed from it.
fn assert_victim_dir_untouched(dir: &Path, what: &str) {
    let kept: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(kept, ["keep"], "{what}: the victim directory changed");
}

/// The trace directory the closing line names.
fn written_to(stderr: &str) -> PathBuf {
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("pomptrace: trace written to "))
        .unwrap_or_else(|| panic!("no closing line:\n{stderr}"));
    let anchor = line.split(" (").next().unwrap();
    PathBuf::from(anchor).parent().unwrap().to_path_buf()
}

fn run_case(exe: &Path, case_dir: &Path, case: &Case, uid: Option<u32>) -> (Output, PathBuf) {
    let victim = case_dir.join("victim");
    let victim_dir = case_dir.join("victim_dir");
    let exp = case_dir.join("exp");
    let tmp = case_dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::write(&victim, b"precious").unwrap();
    make_victim_dir(&victim_dir);
    match case.plant {
        Plant::Directory => symlink(&victim_dir, &exp).unwrap(),
        Plant::FileInside(name) | Plant::DirectoryInside(name) => {
            std::fs::create_dir_all(exp.join(name).parent().unwrap()).unwrap();
            std::fs::set_permissions(&exp, std::fs::Permissions::from_mode(0o700)).unwrap();
            let target = if matches!(case.plant, Plant::FileInside(_)) {
                &victim
            } else {
                &victim_dir
            };
            symlink(target, exp.join(name)).unwrap();
        }
        Plant::PidFallback => {
            std::fs::create_dir_all(&exp).unwrap();
            std::fs::write(exp.join("traces.otf2"), b"a finished trace").unwrap();
        }
    }
    if let Some(uid) = uid {
        chown_tree(case_dir, uid);
    }
    let mut command = if matches!(case.plant, Plant::PidFallback) {
        // The shell plants the link at the name of the pid the program will have (exec keeps
        // it), so nothing can create it first.
        let mut c = as_user(uid, Path::new("/bin/sh"));
        c.arg("-c")
            .arg("ln -s \"$1\" \"$2-$$\" && exec \"$3\" \"$4\"")
            .arg("sh")
            .arg(&victim_dir)
            .arg(&exp)
            .arg(exe)
            .arg(EVENTS);
        c
    } else {
        let mut c = as_user(uid, exe);
        c.arg(EVENTS);
        c
    };
    let out = command
        .env_remove("LD_LIBRARY_PATH")
        .env("OMP_NUM_THREADS", "2")
        .env("POMPTRACE_EXPERIMENT_DIRECTORY", &exp)
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    (out, exp)
}

fn check_case(exe: &Path, case_dir: &Path, case: &Case, uid: Option<u32>) {
    let what = format!(
        "{:?} as {}",
        case.plant,
        uid.map_or("this user".into(), |u| format!("uid {u}"))
    );
    let (out, exp) = run_case(exe, case_dir, case, uid);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{what}: {out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with(&format!("total={EVENTS} ")),
        "{what}: {out:?}"
    );
    assert_eq!(
        std::fs::read(case_dir.join("victim")).unwrap(),
        b"precious",
        "{what}: the victim file changed"
    );
    assert_victim_dir_untouched(&case_dir.join("victim_dir"), &what);
    let trace = written_to(&stderr);
    if case.refused {
        assert_ne!(
            trace, exp,
            "{what}: written through the planted link:\n{stderr}"
        );
        assert!(
            stderr.contains("symbolic link")
                || stderr.contains("already holds")
                || stderr.contains("remains of a run")
                || stderr.contains("already exists"),
            "{what}: no reason given:\n{stderr}"
        );
    } else {
        assert_eq!(trace, exp, "{what}:\n{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{what}:\n{stderr}");
    }
    // Where it went is a real directory of this user's, and the trace reads back.
    let md = std::fs::symlink_metadata(&trace).unwrap();
    assert!(md.is_dir(), "{what}");
    assert_eq!(md.uid(), uid.unwrap_or_else(effective_uid), "{what}");
    let view = View::read(&trace.join("traces.otf2"));
    view.assert_well_formed();
    assert_eq!(view.locations.len(), 2, "{what}");
}

fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

fn users() -> Vec<Option<u32>> {
    if effective_uid() == 0 {
        vec![None, Some(NOBODY)]
    } else {
        vec![None]
    }
}

/// A scratch directory that `uid` can work in (and whose parents it can pass through).
fn scratch_for(label: &str, uid: Option<u32>) -> Scratch {
    let scratch = Scratch::new(label);
    if let Some(uid) = uid {
        chown_tree(&scratch.path, uid);
        let mut dir = scratch.path.parent();
        while let Some(d) = dir {
            let mode = std::fs::metadata(d).unwrap().permissions().mode();
            if mode & 0o001 == 0 {
                std::fs::set_permissions(d, std::fs::Permissions::from_mode(mode | 0o001)).unwrap();
            }
            dir = d.parent();
        }
    }
    scratch
}

#[test]
fn every_planted_link_is_refused_or_replaced_and_the_victim_never_touched() {
    for uid in users() {
        let scratch = scratch_for("planted-links", uid);
        let exe = instrumented_c_program(&scratch.path, "stream_many.c");
        for (n, case) in CASES.iter().enumerate() {
            let case_dir = scratch.join(&format!("case{n}"));
            std::fs::create_dir_all(&case_dir).unwrap();
            check_case(&exe, &case_dir, case, uid);
        }
    }
}

#[test]
fn a_directory_of_another_user_or_one_others_can_write_is_refused() {
    let scratch = Scratch::new("foreign-directory");
    let exe = instrumented_c_program(&scratch.path, "stream_many.c");
    /// A reason pomptrace must give, and how to make a directory deserve it.
    type Refusal<'a> = (&'a str, Box<dyn Fn(&Path)>);
    let mut cases: Vec<Refusal> = vec![(
        "writable by other users",
        Box::new(|exp: &Path| {
            std::fs::set_permissions(exp, std::fs::Permissions::from_mode(0o777)).unwrap()
        }),
    )];
    if effective_uid() == 0 {
        cases.push((
            "belongs to user 65534",
            Box::new(|exp: &Path| chown_tree(exp, NOBODY)),
        ));
    }
    for (n, (reason, prepare)) in cases.iter().enumerate() {
        let case_dir = scratch.join(&format!("case{n}"));
        let exp = case_dir.join("exp");
        let tmp = case_dir.join("tmp");
        std::fs::create_dir_all(&exp).unwrap();
        std::fs::create_dir_all(&tmp).unwrap();
        prepare(&exp);
        let out = program(&exe)
            .arg(EVENTS)
            .env("OMP_NUM_THREADS", "2")
            .env("POMPTRACE_EXPERIMENT_DIRECTORY", &exp)
            .env("TMPDIR", &tmp)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{out:?}");
        assert!(stderr.contains(reason), "{reason}:\n{stderr}");
        assert_eq!(std::fs::read_dir(&exp).unwrap().count(), 0, "{reason}");
        // The fallback in the temporary directory: an unguessable name, private.
        let trace = written_to(&stderr);
        assert!(trace.starts_with(&tmp), "{reason}: {}", trace.display());
        let name = trace.file_name().unwrap().to_string_lossy().into_owned();
        let suffix = name.rsplit('-').next().unwrap();
        assert!(
            suffix.len() == 16 && suffix.chars().all(|c| c.is_ascii_hexdigit()),
            "{name}"
        );
        assert_eq!(
            std::fs::metadata(&trace).unwrap().permissions().mode() & 0o777,
            0o700
        );
        View::read(&trace.join("traces.otf2")).assert_well_formed();
    }
}

/// A link planted at a job's parts directory (`exp/ranks`), where every rank writes its part of
/// the definitions and of the profile at the end, is refused at the start, while the job can
/// still write elsewhere: the run says why and where it wrote, what it wrote reads back, and
/// the link's target is never written. Traced, and profiled without a trace.
#[test]
fn a_link_planted_at_a_jobs_parts_directory_is_refused_at_the_start() {
    let scratch = Scratch::new("planted-parts-link");
    let exe = instrumented_c_program(&scratch.path, "stream_many.c");
    let profile_only = [
        ("POMPTRACE_ENABLE_PROFILING", "1"),
        ("POMPTRACE_ENABLE_TRACING", "0"),
    ];
    for (what, settings) in [("trace", &[][..]), ("profile", &profile_only[..])] {
        let case_dir = scratch.join(what);
        let (exp, tmp, victim_dir) = (
            case_dir.join("exp"),
            case_dir.join("tmp"),
            case_dir.join("victim_dir"),
        );
        for dir in [&exp, &tmp] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::set_permissions(&exp, std::fs::Permissions::from_mode(0o700)).unwrap();
        make_victim_dir(&victim_dir);
        symlink(&victim_dir, exp.join("ranks")).unwrap();
        let out = program(&exe)
            .arg(EVENTS)
            .env("OMP_NUM_THREADS", "2")
            .env("OMPI_COMM_WORLD_RANK", "0")
            .env("OMPI_COMM_WORLD_SIZE", "1")
            .env("POMPTRACE_EXPERIMENT_DIRECTORY", &exp)
            .env("TMPDIR", &tmp)
            .envs(settings.iter().copied())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{what}: {out:?}");
        assert_victim_dir_untouched(&victim_dir, what);
        assert!(
            stderr.contains(&format!(
                "{} is a symbolic link",
                exp.join("ranks").display()
            )),
            "{what}: no reason given:\n{stderr}"
        );
        let written = stderr
            .lines()
            .find_map(|l| l.split_once(" written to ").map(|(_, rest)| rest))
            .and_then(|rest| rest.split(" (").next())
            .map(PathBuf::from)
            .unwrap_or_else(|| panic!("{what}: no closing line:\n{stderr}"));
        assert!(written.starts_with(&tmp), "{what}:\n{stderr}");
        if what == "trace" {
            View::read(&written).assert_well_formed();
        } else {
            let dump = run(Command::new("/usr/bin/python3")
                .arg(support::repo_root().join("tests/support/cube_dump.py"))
                .arg(&written));
            let text = String::from_utf8_lossy(&dump.stdout);
            assert!(text.contains("\"visits\""), "{what}: {text}");
        }
    }
}
