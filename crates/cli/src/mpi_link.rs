//! MPI in the compiler wrapper: a program linked by an MPI compiler wrapper (`pomptrace mpicc
//! ...`) gets the MPI wrapper library `libpomptrace_mpi` with libpomptrace, so that its MPI
//! calls are traced without a further step, OpenMP or not. The library goes before libpomptrace
//! (it records through it) and, being among the user's arguments, before the MPI libraries that
//! the MPI wrapper appends (its MPI_* and mpi_*_ symbols must be found first).
//!
//! A compiler is an MPI wrapper when its name says so (`mpicc`, `mpif90.openmpi`, ...) or when
//! it answers `-showme` (Open MPI) or `-show` (MPICH, Intel MPI) with a command line that links
//! an MPI library.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::config::Layout;

/// The MPI compiler wrappers of Open MPI, MPICH, MVAPICH, Intel MPI and Cray.
const MPI_COMPILERS: [&str; 14] = [
    "mpicc", "mpicxx", "mpic++", "mpiCC", "mpif77", "mpif90", "mpifort", "mpiicc", "mpiicpc",
    "mpiicx", "mpiicpx", "mpiifort", "mpiifx", "mpifc",
];

/// How long a compiler may take to answer `-showme` / `-show`.
const ASK_TIMEOUT: Duration = Duration::from_secs(10);

/// Compilers that are no MPI wrapper: not asked (every link would run them twice more).
const PLAIN_COMPILERS: [&str; 20] = [
    "cc",
    "c++",
    "gcc",
    "g++",
    "gfortran",
    "clang",
    "clang++",
    "flang",
    "flang-new",
    "icc",
    "icpc",
    "icx",
    "icpx",
    "ifort",
    "ifx",
    "nvc",
    "nvc++",
    "nvfortran",
    "pgcc",
    "armclang",
];

/// Whether `compiler` is an MPI compiler wrapper.
pub fn is_mpi_compiler(compiler: &str) -> bool {
    if is_named(compiler, &MPI_COMPILERS) {
        return true;
    }
    !is_named(compiler, &PLAIN_COMPILERS) && answers_like_mpi(compiler)
}

/// Whether the program's name is one of `names`, in any of the spellings distributions give
/// them: `mpicc`, `/usr/bin/mpicc.openmpi`, `mpif90-4.1`, `x86_64-linux-gnu-mpicc`, `gcc-12`.
fn is_named(compiler: &str, names: &[&str]) -> bool {
    let name = Path::new(compiler)
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let base = name.split('.').next().unwrap_or_default();
    names.iter().any(|known| {
        base == *known
            || base
                .strip_prefix(known)
                .is_some_and(|rest| rest.starts_with('-'))
            || base
                .strip_suffix(known)
                .is_some_and(|rest| rest.ends_with('-'))
    })
}

/// Asks the compiler what it runs: an MPI wrapper prints the underlying command, with its MPI
/// libraries; any other compiler rejects the option.
fn answers_like_mpi(compiler: &str) -> bool {
    ["-showme", "-show"].iter().any(|option| {
        output_within(Command::new(compiler).arg(option), ASK_TIMEOUT).is_some_and(|text| {
            text.split_whitespace()
                .any(|word| word.starts_with("-lmpi") || word.contains("/libmpi"))
        })
    })
}

/// What the command printed on standard output, if it succeeded in time (else it is killed).
fn output_within(command: &mut Command, timeout: Duration) -> Option<String> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdout = child.stdout.take()?;
    // The answer is a line or two: far below what a pipe holds, so waiting first cannot block.
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < timeout => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    let mut text = String::new();
    stdout.read_to_string(&mut text).ok()?;
    status.success().then_some(text)
}

/// The MPI wrapper library in `layout`: the shared one, or with `static_lib` the archive.
pub fn library(layout: &Layout, static_lib: bool) -> Result<PathBuf, String> {
    let name = if static_lib {
        "libpomptrace_mpi.a"
    } else {
        "libpomptrace_mpi.so"
    };
    // The archive sits beside libpomptrace.a, wherever the newer of the two builds left it.
    let dir = if static_lib {
        &layout.archive_dir
    } else {
        &layout.lib_dir
    };
    let path = dir.join(name);
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "{} is missing: pomptrace was built where no MPI compiler wrapper was found (its \
             build compiles the MPI wrapper library with $MPICC, default mpicc)",
            path.display()
        ))
    }
}

/// libpomptrace's link arguments (`config::link_args`) with the MPI wrapper library in front of
/// the library itself.
pub fn with_mpi_library(
    layout: &Layout,
    static_lib: bool,
    mut libpomptrace: Vec<String>,
) -> Result<Vec<String>, String> {
    let mpi = library(layout, static_lib)?;
    let word = if static_lib {
        mpi.display().to_string()
    } else {
        "-lpomptrace_mpi".to_string()
    };
    let at = libpomptrace
        .iter()
        .position(|w| w == "-lpomptrace" || w.ends_with("/libpomptrace.a"))
        .unwrap_or(0);
    libpomptrace.insert(at, word);
    Ok(libpomptrace)
}

/// Whether a link by `compiler` should get the MPI wrapper library.
pub fn wanted(compiler: &str, no_mpi: bool) -> bool {
    !no_mpi && is_mpi_compiler(compiler)
}

/// The link arguments of a link that [`wanted`] the MPI wrapper library: libpomptrace's with
/// it. None when it is missing (said once: the program is linked without it).
pub fn link_args(
    compiler: &str,
    layout: &Layout,
    static_lib: bool,
    verbose: bool,
) -> Option<Vec<String>> {
    let libpomptrace = crate::config::link_args(layout, static_lib);
    match with_mpi_library(layout, static_lib, libpomptrace) {
        Ok(args) => {
            if verbose {
                eprintln!(
                    "pomptrace: {compiler} is an MPI compiler wrapper: linking the MPI wrapper \
                     library (--no-mpi leaves it out)"
                );
            }
            Some(args)
        }
        Err(why) => {
            eprintln!("pomptrace: warning: MPI calls are not traced: {why}");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mpi_wrappers_are_known_by_name() {
        for name in [
            "mpicc",
            "/usr/bin/mpicc.openmpi",
            "mpif90",
            "mpifort",
            "mpic++",
            "mpicxx-4.1",
            "x86_64-linux-gnu-mpicc",
            "mpiifx",
        ] {
            assert!(is_named(name, &MPI_COMPILERS), "{name}");
        }
        for name in [
            "gcc",
            "mpicalc",
            "cc",
            "gfortran",
            "/opt/mpicc-tools/bin/gcc",
        ] {
            assert!(!is_named(name, &MPI_COMPILERS), "{name}");
        }
        for name in ["gcc-12", "x86_64-linux-gnu-gcc", "/usr/bin/clang++", "cc"] {
            assert!(is_named(name, &PLAIN_COMPILERS), "{name}");
            assert!(!is_mpi_compiler(name), "{name}");
        }
    }

    #[test]
    fn compilers_are_asked_and_liars_or_hangers_are_not_believed() {
        let dir = std::env::temp_dir().join(format!("pomptrace-mpi-link-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let script = |name: &str, body: &str| {
            use std::os::unix::fs::PermissionsExt;
            let path = dir.join(name);
            std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
            path.display().to_string()
        };
        let wrapper = script(
            "frontend",
            "[ \"$1\" = -show ] && echo gcc -I/opt/mpi/include -L/opt/mpi/lib -lmpi",
        );
        let plain = script("rejects", "echo \"cc: unknown option $1\" >&2; exit 1");
        let quiet = script("quiet", "echo gcc");
        assert!(is_mpi_compiler(&wrapper));
        assert!(!is_mpi_compiler(&plain));
        assert!(!is_mpi_compiler(&quiet));
        assert!(output_within(
            Command::new(script("slow", "sleep 5")).arg("x"),
            Duration::from_millis(100)
        )
        .is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_mpi_library_goes_in_front_of_libpomptrace() {
        let dir = std::env::temp_dir().join(format!("pomptrace-mpi-libs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let layout = Layout {
            include_dir: dir.clone(),
            lib_dir: dir.clone(),
            archive_dir: dir.clone(),
        };
        let shared = vec![
            format!("-L{}", dir.display()),
            format!("-Wl,-rpath,{}", dir.display()),
            "-lpomptrace".to_string(),
        ];
        assert!(with_mpi_library(&layout, false, shared.clone())
            .unwrap_err()
            .contains("libpomptrace_mpi.so is missing"));
        std::fs::write(dir.join("libpomptrace_mpi.so"), "").unwrap();
        std::fs::write(dir.join("libpomptrace_mpi.a"), "").unwrap();
        let args = with_mpi_library(&layout, false, shared.clone()).unwrap();
        assert_eq!(&args[2..], ["-lpomptrace_mpi", "-lpomptrace"]);
        let archive = format!("{}/libpomptrace.a", dir.display());
        let args = with_mpi_library(&layout, true, vec![archive.clone(), "-lm".into()]).unwrap();
        assert_eq!(
            args,
            [
                format!("{}/libpomptrace_mpi.a", dir.display()),
                archive,
                "-lm".into()
            ]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
