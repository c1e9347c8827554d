//! `pomptrace config`: what a build needs to compile and link against pomptrace, with the
//! spellings of `opari2-config` so that Makefiles written for OPARI2 keep working.
//!
//! Where the files are is derived from the location of the running executable:
//! * installed (`make install PREFIX=P`): `P/bin/pomptrace`, headers in `P/include/opari2/`,
//!   libraries in `P/lib/`;
//! * cargo's build tree: `target/<profile>/pomptrace` next to `libpomptrace.{so,a}`, headers
//!   in the source tree's `include/` (found from the build tree, or the source directory the
//!   binary was built from).

use std::path::{Path, PathBuf};

/// The POMP2 interface version instrumented files conform to (as `opari2-config
/// --interface-version` prints it).
pub const INTERFACE_VERSION: &str = "3:0:0";

/// System libraries the static archive needs (`cargo rustc --crate-type staticlib -- --print
/// native-static-libs`); the OpenMP runtime comes from the compiler's `-fopenmp`.
pub const STATIC_SYSTEM_LIBS: &str = "-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc";

/// Where the headers and libraries are.
#[derive(Debug)]
pub struct Layout {
    pub include_dir: PathBuf,
    pub lib_dir: PathBuf,
}

fn has_headers(include_dir: &Path) -> bool {
    include_dir.join("opari2/pomp2_lib.h").is_file()
}

fn has_library(lib_dir: &Path) -> bool {
    // (installed layouts; the build tree is looked at by `build_tree_library`)
    lib_dir.join("libpomptrace.so").is_file() || lib_dir.join("libpomptrace.a").is_file()
}

/// In cargo's `target/<profile>`, the library: `cargo build` puts it there, but `cargo test` and
/// `cargo run` only refresh the copy in `deps/`; the newer of the two is the current one.
fn build_tree_library(profile_dir: &Path) -> Option<PathBuf> {
    let deps = profile_dir.join("deps");
    let modified = |dir: &Path| {
        ["libpomptrace.so", "libpomptrace.a"]
            .iter()
            .filter_map(|f| {
                std::fs::metadata(dir.join(f))
                    .and_then(|m| m.modified())
                    .ok()
            })
            .max()
    };
    match (modified(profile_dir), modified(&deps)) {
        (Some(top), Some(d)) if top > d => Some(profile_dir.to_path_buf()),
        (_, Some(_)) => Some(deps),
        (Some(_), None) => Some(profile_dir.to_path_buf()),
        (None, None) => None,
    }
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
        });
    }
    // Cargo's build tree: target/<profile>/pomptrace, sources next to target/.
    if let Some(lib_dir) = build_tree_library(bin_dir) {
        let candidates = [
            parent.parent().map(|root| root.join("include")),
            Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("include")),
        ];
        if let Some(include_dir) = candidates.into_iter().flatten().find(|d| has_headers(d)) {
            return Ok(Layout {
                include_dir,
                lib_dir,
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
        std::iter::once(format!("{dir}/libpomptrace.a"))
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

    #[test]
    fn installed_and_build_tree_layouts() {
        let root = std::env::temp_dir().join(format!("pomptrace-layout-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let prefix = root.join("prefix");
        std::fs::create_dir_all(prefix.join("bin")).unwrap();
        std::fs::create_dir_all(prefix.join("include/opari2")).unwrap();
        std::fs::create_dir_all(prefix.join("lib")).unwrap();
        std::fs::write(prefix.join("include/opari2/pomp2_lib.h"), "").unwrap();
        std::fs::write(prefix.join("lib/libpomptrace.a"), "").unwrap();
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
        assert!(libs(&l, true).starts_with(&format!("{}/libpomptrace.a -l", lib.display())));

        // A build tree where only `cargo test` ran: the library is only in target/debug/deps.
        let fresh = root.join("fresh");
        std::fs::create_dir_all(fresh.join("target/debug/deps")).unwrap();
        std::fs::create_dir_all(fresh.join("include/opari2")).unwrap();
        std::fs::write(fresh.join("include/opari2/pomp2_lib.h"), "").unwrap();
        std::fs::write(fresh.join("target/debug/deps/libpomptrace.so"), "").unwrap();
        let l = layout_for(&fresh.join("target/debug/pomptrace")).unwrap();
        assert_eq!(l.lib_dir, fresh.join("target/debug/deps"));

        // A build tree: target/debug/pomptrace with the headers in the source tree.
        let tree = root.join("src");
        std::fs::create_dir_all(tree.join("target/debug")).unwrap();
        std::fs::create_dir_all(tree.join("include/opari2")).unwrap();
        std::fs::write(tree.join("include/opari2/pomp2_lib.h"), "").unwrap();
        std::fs::write(tree.join("target/debug/libpomptrace.so"), "").unwrap();
        let l = layout_for(&tree.join("target/debug/pomptrace")).unwrap();
        assert_eq!(l.include_dir, tree.join("include"));
        assert_eq!(l.lib_dir, tree.join("target/debug"));

        // Nothing around it.
        assert!(layout_for(&root.join("nowhere/bin/pomptrace")).is_err());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
