//! `pomptrace wrap --create COMPILER...`: one-word compiler commands. `pomptrace-gcc ARGS...`
//! is `pomptrace gcc ARGS...` for build systems that need the compiler to be one program: a
//! Makefile that runs `which $(CC)` or writes `$(CC)` into a header, a CMake toolchain's
//! `CMAKE_C_COMPILER`. Each is a symbolic link to the `pomptrace` command, which takes the
//! compiler from the name it was run by. The wrapper's options come from their environment
//! variables (`POMPTRACE_SKIP_UNINSTRUMENTABLE=1`, ...): the arguments are all the compiler's.

use std::path::{Path, PathBuf};

use crate::{print_stdout, usage_error, Failure};

/// The start of a wrapped compiler command's name.
pub const PREFIX: &str = "pomptrace-";

/// Make one-word compiler commands: `pomptrace-COMPILER` runs `pomptrace COMPILER`.
#[derive(clap::Args)]
#[command(override_usage = "pomptrace wrap --create COMPILER... [--dir DIR]")]
pub struct WrapArgs {
    /// Make `pomptrace-COMPILER` for each COMPILER (gcc, g++, gfortran, mpicc, ...).
    #[arg(long, required = true, num_args = 1.., value_name = "COMPILER")]
    create: Vec<String>,
    /// Where to make them (default: the directory of the pomptrace command, so that they are
    /// found where it is).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

/// The compiler that the command name `program` (argv[0]) wraps, if it is a wrapped compiler
/// command.
pub fn wrapped_compiler(program: &std::ffi::OsStr) -> Option<String> {
    let name = Path::new(program).file_name()?.to_str()?;
    name.strip_prefix(PREFIX)
        .filter(|compiler| !compiler.is_empty())
        .map(String::from)
}

pub fn run(args: &WrapArgs) -> Result<(), Failure> {
    let exe = std::env::current_exe()
        .and_then(|e| e.canonicalize())
        .map_err(|e| Failure::Error(format!("cannot locate the pomptrace executable: {e}")))?;
    let exe_dir = exe.parent().unwrap_or(Path::new("/"));
    let dir = args.dir.clone().unwrap_or_else(|| exe_dir.to_path_buf());
    std::fs::create_dir_all(&dir)
        .map_err(|e| Failure::Error(format!("cannot create {}: {e}", dir.display())))?;
    // Next to the command the link names it by its file name, so that the directory can move.
    let target = match dir.canonicalize() {
        Ok(real) if real == exe_dir => PathBuf::from(exe.file_name().unwrap_or_default()),
        _ => exe.clone(),
    };
    let mut made = String::new();
    for compiler in &args.create {
        if compiler.is_empty() || compiler.contains('/') || compiler.starts_with('-') {
            return Err(usage_error(format!(
                "`{compiler}` is not a compiler's command name (gcc, mpicc, ...)"
            )));
        }
        let link = dir.join(format!("{PREFIX}{compiler}"));
        create_link(&target, &link)?;
        made.push_str(&format!("{}\n", link.display()));
    }
    print_stdout(&made)
}

/// Makes `link` point at `target`, replacing an earlier link (never another file).
fn create_link(target: &Path, link: &Path) -> Result<(), Failure> {
    if let Ok(existing) = std::fs::symlink_metadata(link) {
        if !existing.file_type().is_symlink() {
            return Err(Failure::Error(format!(
                "{} exists and is not a link; it is left as it is",
                link.display()
            )));
        }
    }
    // A new link renamed over the old one: the command is never missing.
    let partial = link.with_file_name(format!(
        ".{}.{}.partial",
        link.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    let _ = std::fs::remove_file(&partial);
    std::os::unix::fs::symlink(target, &partial)
        .and_then(|()| std::fs::rename(&partial, link))
        .map_err(|e| {
            let _ = std::fs::remove_file(&partial);
            Failure::Error(format!("cannot create {}: {e}", link.display()))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_compilers_by_command_name() {
        let name = |n: &str| wrapped_compiler(std::ffi::OsStr::new(n));
        assert_eq!(name("pomptrace-gcc").as_deref(), Some("gcc"));
        assert_eq!(
            name("/opt/p/bin/pomptrace-mpicxx").as_deref(),
            Some("mpicxx")
        );
        assert_eq!(name("pomptrace-g++-12").as_deref(), Some("g++-12"));
        assert_eq!(name("pomptrace"), None);
        assert_eq!(name("pomptrace-"), None);
        assert_eq!(name("/x/pomptrace-gcc/pomptrace"), None);
    }
}
