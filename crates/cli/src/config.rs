//! `pomptrace config`: what a build needs to compile and link against pomptrace, with the
//! spellings of `opari2-config` so that Makefiles written for OPARI2 keep working.
//!
//! Where the files are is derived from the location of the running executable:
//! * installed (`make install PREFIX=P`): `P/bin/pomptrace`, headers in `P/include/opari2/`,
//!   libraries in `P/lib/`;
//! * cargo's build tree: `target/<profile>/pomptrace` next to `libpomptrace.{so,a}`, headers
//!   in the source tree's `include/` (found from the build tree, or the source directory the
//!   binary was built from). Programs find the shared library in `target/<profile>/`, which
//!   cargo rebuilds in place (and `cargo build` makes again after `cargo clean`), never in
//!   `target/<profile>/deps/`, whose files later builds replace under them.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::init_regions::{self, InitRegions};
use crate::init_regions_command::init_file_for;
use crate::{print_stdout, usage_error, Failure};

/// The compilers `opari2-config --cflags=COMPILER` names; the flags are the same for all.
const COMPILERS: [&str; 7] = ["gnu", "intel", "sun", "pgi", "ibm", "cray", "fujitsu"];

/// Build flags and the OPARI2 link step, with the spellings of `opari2-config`.
///
/// The files are found relative to the executable: PREFIX/include and PREFIX/lib for
/// PREFIX/bin/pomptrace (make install PREFIX=...), the source tree's include/ and
/// target/<profile>/ for cargo's build. Options combine (`--cflags --libs`) and are answered
/// on one line in the order given.
#[derive(clap::Args)]
#[command(override_usage = "\
pomptrace config --nm [OBJ_OR_LIB...]
       pomptrace config --region-initialization [-]
       pomptrace config --create-pomp2-regions OBJ_OR_LIB...
       pomptrace config [--cflags[=COMPILER]] [--libs [--static] [--mpi]] [--libdir] [--includedir] [--version] [--interface-version]
       pomptrace config --env")]
pub struct ConfigArgs {
    /// Without files: print the nm command line to use (like `opari2-config --nm`). With
    /// files: print their nm symbol tables.
    #[arg(long, conflicts_with_all = FLAG_OPTIONS)]
    nm: bool,
    /// Read nm output on standard input and print the init file, e.g.
    /// `pomptrace config --nm` *.o | pomptrace config --region-initialization > pomp2_init.c.
    /// Inside `...` or $(...) (as OPARI2 Makefiles use opari2-config) it prints that filter
    /// command instead; `-` always reads standard input.
    #[arg(long, conflicts_with_all = FLAG_OPTIONS, conflicts_with = "nm")]
    region_initialization: bool,
    /// Print the init file for the given objects (the same C file as init-regions).
    #[arg(long, conflicts_with_all = FLAG_OPTIONS, conflicts_with_all = ["nm", "region_initialization"])]
    create_pomp2_regions: bool,
    /// Compiler flags: -I for the POMP2 headers (the same for every COMPILER).
    #[arg(long, value_name = "COMPILER", num_args = 0..=1, require_equals = true,
          default_missing_value = "gnu", value_parser = COMPILERS)]
    cflags: Option<String>,
    /// Linker flags for the shared library (with an rpath).
    #[arg(long)]
    libs: bool,
    /// With --libs: the static archive and the system libraries it needs.
    #[arg(long = "static", requires = "libs")]
    static_archive: bool,
    /// With --libs: the MPI wrapper library too, in front of libpomptrace (what `pomptrace
    /// mpicc` links), so that a program's MPI calls are traced.
    #[arg(long, requires = "libs")]
    mpi: bool,
    /// The library directory.
    #[arg(long)]
    libdir: bool,
    /// The header directory.
    #[arg(long)]
    includedir: bool,
    /// pomptrace's version.
    #[arg(long)]
    version: bool,
    /// The POMP2 interface version.
    #[arg(long)]
    interface_version: bool,
    /// Print every POMPTRACE_* environment variable: its value here, default and meaning.
    #[arg(long, conflicts_with_all = FLAG_OPTIONS, conflicts_with_all = ["nm", "region_initialization", "create_pomp2_regions"])]
    env: bool,
    /// opari2-config's modifier; changes nothing.
    #[arg(long, hide = true)]
    fortran: bool,
    /// opari2-config's modifier; changes nothing.
    #[arg(long, hide = true)]
    build_check: bool,
    /// Objects and libraries for --nm and --create-pomp2-regions; `-` for
    /// --region-initialization.
    #[arg(value_name = "OBJ_OR_LIB")]
    files: Vec<PathBuf>,
}

/// The options answered on one line, by their clap ids (the field names).
const FLAG_OPTIONS: [&str; 8] = [
    "cflags",
    "libs",
    "static_archive",
    "mpi",
    "libdir",
    "includedir",
    "version",
    "interface_version",
];

/// `matches` are the subcommand's own, for the order in which the flag options were given.
pub fn run(args: &ConfigArgs, matches: &clap::ArgMatches) -> Result<(), Failure> {
    let _ = (args.fortran, args.build_check);
    if args.env {
        return print_stdout(&pomptrace::settings::describe_environment());
    }
    if args.nm {
        return nm(&args.files);
    }
    if args.region_initialization {
        return region_initialization(&args.files);
    }
    if args.create_pomp2_regions {
        if args.files.is_empty() {
            return Err(usage_error(
                "config --create-pomp2-regions needs object files or libraries",
            ));
        }
        return print_stdout(&init_file_for(&args.files)?);
    }
    if let Some(file) = args.files.first() {
        return Err(usage_error(format!(
            "unexpected argument `{}` for config (files go with --nm or \
             --create-pomp2-regions)",
            file.display()
        )));
    }
    flags(args, matches)
}

/// `--nm [FILES]`: the nm command line, or the files' listings.
fn nm(files: &[PathBuf]) -> Result<(), Failure> {
    let nm = init_regions::nm_program();
    if files.is_empty() {
        return print_stdout(&format!("{} -B\n", nm.join(" ")));
    }
    let mut text = String::new();
    for file in files {
        text.push_str(&init_regions::nm_listing(&nm, file).map_err(Failure::Error)?);
    }
    print_stdout(&text)
}

/// `--region-initialization [-]`: the filter, or inside `` `...` `` the filter's command line.
fn region_initialization(files: &[PathBuf]) -> Result<(), Failure> {
    if files.is_empty() && in_command_substitution() {
        let exe = std::env::current_exe()
            .map_err(|e| Failure::Error(format!("cannot locate the pomptrace executable: {e}")))?;
        return print_stdout(&format!(
            "{} config --region-initialization -\n",
            exe.display()
        ));
    }
    if let Some(extra) = files.iter().find(|f| f.as_os_str() != "-").or(files.get(1)) {
        return Err(usage_error(format!(
            "unexpected argument `{}` after --region-initialization \
             (nm output is read from standard input)",
            extra.display()
        )));
    }
    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .map_err(|e| Failure::Error(format!("cannot read standard input: {e}")))?;
    let mut regions = InitRegions::default();
    regions.add_nm_output(&String::from_utf8_lossy(&input));
    print_stdout(&regions.to_c())
}

/// `--cflags --libs [--static] [--mpi] --libdir --includedir --version --interface-version`, in any
/// combination: the answers on one line, in the order asked.
fn flags(args: &ConfigArgs, matches: &clap::ArgMatches) -> Result<(), Failure> {
    let mut asked: Vec<(usize, &str)> = FLAG_OPTIONS
        .iter()
        .filter(|id| **id != "static_archive" && **id != "mpi")
        .filter_map(|id| Some((matches.index_of(id)?, *id)))
        .filter(|(_, id)| matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine))
        .collect();
    if asked.is_empty() {
        return Err(usage_error(
            "config needs an option (--cflags, --libs, --nm, --region-initialization, ...)",
        ));
    }
    asked.sort_unstable();
    let found = std::cell::OnceCell::new();
    // Only looked up when asked for: `--version` works without any installed files.
    let found_layout = || -> Result<&Layout, Failure> {
        if let Some(found) = found.get() {
            return Ok(found);
        }
        let fresh = layout().map_err(Failure::Error)?;
        Ok(found.get_or_init(|| fresh))
    };
    let mut words = Vec::new();
    for (_, id) in asked {
        words.push(match id {
            "cflags" => cflags(found_layout()?),
            "libs" if args.mpi => {
                let layout = found_layout()?;
                let libpomptrace = link_args(layout, args.static_archive);
                crate::compile::mpi_link::with_mpi_library(
                    layout,
                    args.static_archive,
                    libpomptrace,
                )
                .map_err(Failure::Error)?
                .join(" ")
            }
            "libs" => libs(found_layout()?, args.static_archive),
            "libdir" => found_layout()?.lib_dir.display().to_string(),
            "includedir" => found_layout()?.include_dir.display().to_string(),
            "version" => env!("CARGO_PKG_VERSION").to_string(),
            "interface_version" => INTERFACE_VERSION.to_string(),
            other => {
                return Err(Failure::Error(format!(
                    "config option {other} has no answer"
                )))
            }
        });
    }
    print_stdout(&format!("{}\n", words.join(" ")))
}

/// The POMP2 interface version instrumented files conform to (as `opari2-config
/// --interface-version` prints it).
pub const INTERFACE_VERSION: &str = "3:0:0";

/// System libraries the static archive needs (`cargo rustc --crate-type staticlib -- --print
/// native-static-libs`, less `-lgcc_s`, which the compiler driver adds itself where it exists:
/// a `-static` executable has none); the OpenMP runtime comes from the compiler's `-fopenmp`.
pub const STATIC_SYSTEM_LIBS: &str = "-lutil -lrt -lpthread -lm -ldl -lc";

/// The OpenMP lock functions libpomptrace calls for the program (OPARI2 replaced the program's
/// own calls with POMP2 ones). In a `-static` executable nothing else pulls them out of the
/// runtime's archive, and there is no dynamic symbol table to find them in.
const LOCK_FUNCTIONS: [&str; 10] = [
    "init_lock",
    "destroy_lock",
    "set_lock",
    "unset_lock",
    "test_lock",
    "init_nest_lock",
    "destroy_nest_lock",
    "set_nest_lock",
    "unset_nest_lock",
    "test_nest_lock",
];

/// `-Wl,--undefined=` for every C and Fortran lock entry of the OpenMP runtime: links them into
/// a static executable (a name the runtime lacks stays undefined, which is no error).
fn lock_function_links() -> impl Iterator<Item = String> {
    LOCK_FUNCTIONS.iter().flat_map(|name| {
        [
            format!("-Wl,--undefined=omp_{name}"),
            format!("-Wl,--undefined=omp_{name}_"),
        ]
    })
}

/// Where the headers and libraries are.
#[derive(Debug)]
pub struct Layout {
    pub include_dir: PathBuf,
    /// The shared library's directory: the programs' run path.
    pub lib_dir: PathBuf,
    /// The static archive's directory.
    pub archive_dir: PathBuf,
}

fn has_headers(include_dir: &Path) -> bool {
    include_dir.join("opari2/pomp2_lib.h").is_file()
}

fn has_library(lib_dir: &Path) -> bool {
    // (installed layouts; the build tree is looked at by `build_tree_library`)
    lib_dir.join("libpomptrace.so").is_file() || lib_dir.join("libpomptrace.a").is_file()
}

/// When the library was last built in `dir` (either kind), if it is there.
fn built_at(dir: &Path, files: &[&str]) -> Option<std::time::SystemTime> {
    files
        .iter()
        .filter_map(|f| {
            std::fs::metadata(dir.join(f))
                .and_then(|m| m.modified())
                .ok()
        })
        .max()
}

/// In cargo's `target/<profile>`, the directories of the shared library and the archive.
/// `cargo build` puts the libraries there, but `cargo test` and `cargo run` only refresh
/// `deps/`; a newer shared library in `deps/` is copied up, so that programs are linked with a
/// run path that stays valid. The archive is linked into the program: the newer one is used
/// where it is.
fn build_tree_libraries(profile_dir: &Path) -> Result<Option<(PathBuf, PathBuf)>, String> {
    let deps = profile_dir.join("deps");
    let shared = ["libpomptrace.so"];
    let archive = ["libpomptrace.a"];
    let newer = |files: &[&str]| match (built_at(profile_dir, files), built_at(&deps, files)) {
        (Some(top), Some(d)) if d > top => Some(deps.clone()),
        (None, Some(_)) => Some(deps.clone()),
        (Some(_), _) => Some(profile_dir.to_path_buf()),
        (None, None) => None,
    };
    let archive_dir = newer(&archive);
    let lib_dir = match newer(&shared) {
        Some(dir) if dir == deps => {
            copy_up(&deps.join(shared[0]), &profile_dir.join(shared[0]))?;
            Some(profile_dir.to_path_buf())
        }
        other => other,
    };
    Ok(match (lib_dir, archive_dir) {
        (Some(lib), Some(archive)) => Some((lib, archive)),
        (Some(lib), None) => Some((lib.clone(), lib)),
        (None, Some(archive)) => Some((profile_dir.to_path_buf(), archive)),
        (None, None) => None,
    })
}

/// Copies `from` to `to` without a moment in which `to` is missing or half written (other
/// wrapper processes may be linking against it); its time stays `from`'s.
fn copy_up(from: &Path, to: &Path) -> Result<(), String> {
    let partial = to.with_file_name(format!(
        ".{}.{}.partial",
        to.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    let copied = std::fs::copy(from, &partial)
        .and_then(|_| std::fs::metadata(from)?.modified())
        .and_then(|modified| {
            std::fs::File::options()
                .write(true)
                .open(&partial)?
                .set_modified(modified)
        })
        .and_then(|()| std::fs::rename(&partial, to));
    copied.map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        format!(
            "cannot copy {} to {} (programs are linked against the copy): {e}",
            from.display(),
            to.display()
        )
    })
}

/// The layout around an executable at `exe` (already canonical).
pub fn layout_for(exe: &Path) -> Result<Layout, String> {
    let bin_dir = exe.parent().unwrap_or(Path::new("/"));
    let parent = bin_dir.parent().unwrap_or(bin_dir);
    // Installed: PREFIX/bin/pomptrace.
    if has_headers(&parent.join("include")) && has_library(&parent.join("lib")) {
        return Ok(Layout {
            include_dir: parent.join("include"),
            lib_dir: parent.join("lib"),
            archive_dir: parent.join("lib"),
        });
    }
    // Cargo's build tree: target/<profile>/pomptrace, sources next to target/.
    if let Some((lib_dir, archive_dir)) = build_tree_libraries(bin_dir)? {
        let candidates = [
            parent.parent().map(|root| root.join("include")),
            Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("include")),
        ];
        if let Some(include_dir) = candidates.into_iter().flatten().find(|d| has_headers(d)) {
            return Ok(Layout {
                include_dir,
                lib_dir,
                archive_dir,
            });
        }
    }
    Err(format!(
        "cannot find pomptrace's headers and libraries around {} (expected PREFIX/bin, \
         PREFIX/include/opari2 and PREFIX/lib as `make install PREFIX=...` lays them out, or \
         cargo's target/<profile> directory)",
        exe.display()
    ))
}

pub fn layout() -> Result<Layout, String> {
    let exe = std::env::current_exe()
        .and_then(|e| e.canonicalize())
        .map_err(|e| format!("cannot locate the pomptrace executable: {e}"))?;
    layout_for(&exe)
}

pub fn cflags(layout: &Layout) -> String {
    format!("-I{}", layout.include_dir.display())
}

/// Linker flags: the shared library (with an rpath, so the program finds it without
/// LD_LIBRARY_PATH), or with `static_lib` the archive and the system libraries it needs.
pub fn libs(layout: &Layout, static_lib: bool) -> String {
    link_args(layout, static_lib).join(" ")
}

/// The linker flags of [`libs`], one word each (a directory may contain blanks).
pub fn link_args(layout: &Layout, static_lib: bool) -> Vec<String> {
    let dir = layout.lib_dir.display();
    if static_lib {
        std::iter::once(format!("{}/libpomptrace.a", layout.archive_dir.display()))
            .chain(lock_function_links())
            .chain(STATIC_SYSTEM_LIBS.split_whitespace().map(String::from))
            .collect()
    } else {
        vec![
            format!("-L{dir}"),
            format!("-Wl,-rpath,{dir}"),
            "-lpomptrace".into(),
        ]
    }
}

/// The file type bits of a descriptor (None if it is closed).
fn file_type(fd: libc::c_int) -> Option<(libc::mode_t, libc::ino_t)> {
    // SAFETY: an all-zero `stat` is a valid value for fstat to overwrite.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat writes only into the struct it is given.
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some((st.st_mode & libc::S_IFMT, st.st_ino))
}

/// Whether the command runs directly inside `` `...` `` or `$(...)`: standard output is a pipe
/// that the parent process, a shell, reads. OPARI2 Makefiles and Score-P write
/// `` `opari2-config --nm` OBJS | `opari2-config --region-initialization` > init.c ``, where
/// `--region-initialization` must print a command; standard input is then already the nm pipe,
/// so the input cannot tell the two uses apart (a regular file on standard input, though, is
/// input meant for the filter). Linux only; false when unknown.
pub fn in_command_substitution() -> bool {
    let Some((libc::S_IFIFO, pipe_inode)) = file_type(1) else {
        return false;
    };
    if matches!(file_type(0), Some((libc::S_IFREG, _))) {
        return false;
    }
    // SAFETY: getppid has no preconditions.
    let parent = unsafe { libc::getppid() };
    let proc_dir = PathBuf::from(format!("/proc/{parent}"));
    let is_shell = std::fs::read_to_string(proc_dir.join("comm")).is_ok_and(|comm| {
        matches!(
            comm.trim(),
            "sh" | "dash" | "bash" | "zsh" | "ksh" | "ksh93" | "mksh" | "ash" | "busybox" | "yash"
        )
    });
    if !is_shell {
        return false;
    }
    let pipe = format!("pipe:[{pipe_inode}]");
    let Ok(fds) = std::fs::read_dir(proc_dir.join("fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        let is_our_pipe = std::fs::read_link(fd.path()).is_ok_and(|t| t.as_os_str() == &*pipe);
        is_our_pipe && {
            // The parent holds the read end: its descriptor was opened read-only.
            let info = std::fs::read_to_string(proc_dir.join("fdinfo").join(fd.file_name()));
            info.ok()
                .and_then(|text| {
                    let flags = text.lines().find_map(|l| l.strip_prefix("flags:"))?;
                    i64::from_str_radix(flags.trim(), 8).ok()
                })
                .is_some_and(|flags| flags & i64::from(libc::O_ACCMODE) == 0)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Makes the directories `dirs` and the empty files `files` under `root`.
    fn tree(root: &Path, dirs: &[&str], files: &[&str]) {
        for d in dirs {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        for f in files {
            std::fs::write(root.join(f), "").unwrap();
        }
    }

    #[test]
    fn installed_and_build_tree_layouts() {
        let root = std::env::temp_dir().join(format!("pomptrace-layout-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let prefix = root.join("prefix");
        tree(
            &prefix,
            &["bin", "include/opari2", "lib"],
            &["include/opari2/pomp2_lib.h", "lib/libpomptrace.a"],
        );
        let l = layout_for(&prefix.join("bin/pomptrace")).unwrap();
        assert_eq!(l.include_dir, prefix.join("include"));
        assert_eq!(l.lib_dir, prefix.join("lib"));
        assert_eq!(
            cflags(&l),
            format!("-I{}", prefix.join("include").display())
        );
        let lib = prefix.join("lib");
        assert_eq!(
            libs(&l, false),
            format!("-L{0} -Wl,-rpath,{0} -lpomptrace", lib.display())
        );
        assert!(libs(&l, true).starts_with(&format!(
            "{}/libpomptrace.a -Wl,--undefined=omp_init_lock ",
            lib.display()
        )));

        // A build tree where only `cargo test` ran: the library is only in target/debug/deps,
        // and is copied next to the command for the programs' run path; the archive is
        // linked from where it is.
        let fresh = root.join("fresh");
        tree(
            &fresh,
            &["target/debug/deps", "include/opari2"],
            &[
                "include/opari2/pomp2_lib.h",
                "target/debug/deps/libpomptrace.a",
            ],
        );
        let deps_library = fresh.join("target/debug/deps/libpomptrace.so");
        std::fs::write(&deps_library, "new build").unwrap();
        let l = layout_for(&fresh.join("target/debug/pomptrace")).unwrap();
        assert_eq!(l.lib_dir, fresh.join("target/debug"));
        assert_eq!(l.archive_dir, fresh.join("target/debug/deps"));
        let copy = fresh.join("target/debug/libpomptrace.so");
        assert_eq!(std::fs::read_to_string(&copy).unwrap(), "new build");
        // A newer build in deps/ replaces the copy; an older one does not.
        let older = std::fs::metadata(&copy).unwrap().modified().unwrap();
        std::fs::write(&deps_library, "newer build").unwrap();
        let set_time = |path: &Path, time| {
            std::fs::File::options()
                .write(true)
                .open(path)
                .unwrap()
                .set_modified(time)
                .unwrap()
        };
        set_time(&deps_library, older + std::time::Duration::from_secs(5));
        layout_for(&fresh.join("target/debug/pomptrace")).unwrap();
        assert_eq!(std::fs::read_to_string(&copy).unwrap(), "newer build");
        set_time(&deps_library, older - std::time::Duration::from_secs(5));
        std::fs::write(&copy, "cargo build").unwrap();
        layout_for(&fresh.join("target/debug/pomptrace")).unwrap();
        assert_eq!(std::fs::read_to_string(&copy).unwrap(), "cargo build");

        // A build tree: target/debug/pomptrace with the headers in the source tree.
        let src = root.join("src");
        tree(
            &src,
            &["target/debug", "include/opari2"],
            &["include/opari2/pomp2_lib.h", "target/debug/libpomptrace.so"],
        );
        let l = layout_for(&src.join("target/debug/pomptrace")).unwrap();
        assert_eq!(l.include_dir, src.join("include"));
        assert_eq!(l.lib_dir, src.join("target/debug"));

        // Nothing around it.
        assert!(layout_for(&root.join("nowhere/bin/pomptrace")).is_err());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
