//! The `pomptrace` command: link-time region initialisation for OPARI2-instrumented programs
//! (`init-regions`, and the `opari2-config`-compatible `config --nm` / `--region-initialization`
//! / `--create-pomp2-regions`), build flags (`config --cflags` / `--libs`) and a per-region
//! summary of an OTF2 trace (`summary`).
//!
//! Exit status: 0 on success, 1 when the work itself failed (nm failed, the trace cannot be
//! read, the output cannot be written), 2 for a usage error.

#[path = "pomptrace/config.rs"]
mod config;
#[path = "pomptrace/init_regions.rs"]
mod init_regions;
#[path = "pomptrace/summary.rs"]
mod summary;
#[path = "pomptrace/unify.rs"]
mod unify;

use std::io::{Read, Write};
use std::path::Path;
use std::process::ExitCode;

const USAGE: &str = "\
Usage:
  pomptrace init-regions [-o FILE] OBJ_OR_LIB...
      Run nm on the given objects, static archives and shared libraries and write the C
      file that OPARI2's link step generates (POMP2_Init_regions, POMP2_Get_num_regions,
      POMP2_USER_Init_regions, POMP2_USER_Get_num_regions, POMP2_Get_opari2_version)
      to standard output, or to FILE with -o.
  pomptrace config --nm [OBJ_OR_LIB...]
      Without files: print the nm command line to use (like `opari2-config --nm`).
      With files: print their nm symbol tables.
  pomptrace config --region-initialization [-]
      Read nm output on standard input and print the same C file as init-regions, e.g.
      `pomptrace config --nm` *.o | pomptrace config --region-initialization > pomp2_init.c
      Inside `...` or $(...) (as OPARI2 Makefiles use opari2-config) it prints that filter
      command instead; `-` always reads standard input.
  pomptrace config --create-pomp2-regions OBJ_OR_LIB...
      Print the init file for the given objects (the same C file as init-regions).
  pomptrace config --cflags | --libs [--static] | --libdir | --includedir | --version
      Print compiler flags (-I for the POMP2 headers), linker flags for the shared library
      (with an rpath) or with --static for the static archive and the system libraries it
      needs, the library or header directory, the version. Options combine, e.g.
      `pomptrace config --cflags --libs`. The files are found relative to the executable:
      PREFIX/include and PREFIX/lib for PREFIX/bin/pomptrace (make install PREFIX=...), the
      source tree's include/ and target/<profile>/ for cargo's build.
      opari2-config spellings are accepted: --cflags=gnu (and the other compilers),
      --interface-version, and the modifiers --fortran and --build-check (ignored).
  pomptrace summary ARCHIVE.otf2
      Print visits and inclusive time per region and thread of an OTF2 trace.
  pomptrace unify DIR
      Merge the definitions the ranks of an MPI job wrote into DIR (DIR/ranks/) into
      DIR/traces.otf2; for a job that ended before its last rank could do it.
  pomptrace --version
      Print the version.
  pomptrace --help
      Print this help.

Environment:
  NM    the nm program to run (default: nm)
";

enum Failure {
    /// Bad command line: usage on stderr, exit 2.
    Usage(String),
    /// The work failed: `pomptrace: <message>` on stderr, exit 1.
    Error(String),
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match dispatch(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(message)) => {
            eprintln!("pomptrace: {message}");
            eprint!("{USAGE}");
            ExitCode::from(2)
        }
        Err(Failure::Error(message)) => {
            eprintln!("pomptrace: {message}");
            ExitCode::from(1)
        }
    }
}

fn usage_error(message: impl Into<String>) -> Failure {
    Failure::Usage(message.into())
}

fn is_help(arg: &str) -> bool {
    matches!(arg, "-h" | "--help" | "help")
}

fn dispatch(args: &[String]) -> Result<(), Failure> {
    let Some(command) = args.first() else {
        return Err(usage_error("missing command"));
    };
    let rest = &args[1..];
    if rest.iter().any(|a| a == "-h" || a == "--help") {
        print_stdout(USAGE)?;
        return Ok(());
    }
    match command.as_str() {
        c if is_help(c) => print_stdout(USAGE),
        "-V" | "--version" | "version" => {
            print_stdout(&format!("pomptrace {}\n", env!("CARGO_PKG_VERSION")))
        }
        "init-regions" => init_regions_command(rest),
        "config" => config_command(rest),
        "summary" => summary_command(rest),
        "unify" => match rest {
            [dir] => unify::run(Path::new(dir))
                .map_err(Failure::Error)
                .and_then(|out| print_stdout(&out)),
            _ => Err(usage_error("unify needs one experiment directory")),
        },
        other => Err(usage_error(format!("unknown command `{other}`"))),
    }
}

/// `init-regions [-o FILE] OBJ_OR_LIB...`
fn init_regions_command(args: &[String]) -> Result<(), Failure> {
    let mut output: Option<String> = None;
    let mut inputs: Vec<&str> = Vec::new();
    let mut options_done = false;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        i += 1;
        if options_done || !arg.starts_with('-') || arg == "-" {
            inputs.push(arg);
        } else if arg == "--" {
            options_done = true;
        } else if arg == "-o" || arg == "--output" {
            let Some(file) = args.get(i) else {
                return Err(usage_error(format!("{arg} needs a file name")));
            };
            output = Some(file.clone());
            i += 1;
        } else if let Some(file) = arg.strip_prefix("--output=") {
            output = Some(file.to_string());
        } else if let Some(file) = arg.strip_prefix("-o").filter(|f| !f.is_empty()) {
            output = Some(file.to_string());
        } else {
            return Err(usage_error(format!(
                "unknown option `{arg}` for init-regions"
            )));
        }
    }
    if inputs.is_empty() {
        return Err(usage_error(
            "init-regions needs at least one object or library",
        ));
    }
    let nm = init_regions::nm_program();
    let mut regions = init_regions::InitRegions::default();
    for input in inputs {
        let listing = init_regions::nm_listing(&nm, Path::new(input)).map_err(Failure::Error)?;
        regions.add_nm_output(&listing);
    }
    let text = regions.to_c();
    match output {
        Some(file) => std::fs::write(&file, text)
            .map_err(|e| Failure::Error(format!("cannot write {file}: {e}"))),
        None => print_stdout(&text),
    }
}

/// `config ...`: the `opari2-config` commands (`--nm`, `--region-initialization`,
/// `--create-pomp2-regions`, `--cflags`, `--version`, `--interface-version`) and the build flags
/// (`--cflags`, `--libs [--static]`, `--libdir`, `--includedir`).
fn config_command(args: &[String]) -> Result<(), Failure> {
    // opari2-config's modifiers change nothing here.
    let args: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| !matches!(*a, "--fortran" | "--build-check"))
        .collect();
    match args.first().copied() {
        Some("--nm") => {
            let nm = init_regions::nm_program();
            let files = &args[1..];
            if files.is_empty() {
                return print_stdout(&format!("{} -B\n", nm.join(" ")));
            }
            if let Some(option) = files.iter().find(|f| f.starts_with('-') && **f != "-") {
                return Err(usage_error(format!(
                    "unknown option `{option}` for config --nm"
                )));
            }
            let mut text = String::new();
            for file in files {
                text.push_str(
                    &init_regions::nm_listing(&nm, Path::new(file)).map_err(Failure::Error)?,
                );
            }
            print_stdout(&text)
        }
        Some("--region-initialization") => {
            let extra = &args[1..];
            if extra.is_empty() && config::in_command_substitution() {
                // `` `pomptrace config --region-initialization` ``: print the filter command.
                let exe = std::env::current_exe().map_err(|e| {
                    Failure::Error(format!("cannot locate the pomptrace executable: {e}"))
                })?;
                return print_stdout(&format!(
                    "{} config --region-initialization -\n",
                    exe.display()
                ));
            }
            if let Some(extra) = extra.iter().find(|a| **a != "-").or(extra.get(1)) {
                return Err(usage_error(format!(
                    "unexpected argument `{extra}` after --region-initialization \
                     (nm output is read from standard input)"
                )));
            }
            let mut input = Vec::new();
            std::io::stdin()
                .read_to_end(&mut input)
                .map_err(|e| Failure::Error(format!("cannot read standard input: {e}")))?;
            let mut regions = init_regions::InitRegions::default();
            regions.add_nm_output(&String::from_utf8_lossy(&input));
            print_stdout(&regions.to_c())
        }
        Some("--create-pomp2-regions") => {
            let files = &args[1..];
            if files.is_empty() {
                return Err(usage_error(
                    "config --create-pomp2-regions needs object files or libraries",
                ));
            }
            if let Some(option) = files.iter().find(|f| f.starts_with('-')) {
                return Err(usage_error(format!(
                    "unknown option `{option}` for config --create-pomp2-regions"
                )));
            }
            let nm = init_regions::nm_program();
            let mut regions = init_regions::InitRegions::default();
            for file in files {
                let listing =
                    init_regions::nm_listing(&nm, Path::new(file)).map_err(Failure::Error)?;
                regions.add_nm_output(&listing);
            }
            print_stdout(&regions.to_c())
        }
        Some(_) => config_flags(&args),
        None => Err(usage_error(
            "config needs an option (--cflags, --libs, --nm, --region-initialization, ...)",
        )),
    }
}

/// `config --cflags --libs [--static] --libdir --includedir --version --interface-version`, in
/// any combination: the answers on one line, in the order asked.
fn config_flags(args: &[&str]) -> Result<(), Failure> {
    let static_lib = args.contains(&"--static");
    let found = std::cell::OnceCell::new();
    let layout = || -> Result<&config::Layout, Failure> {
        if let Some(layout) = found.get() {
            return Ok(layout);
        }
        let layout = config::layout().map_err(Failure::Error)?;
        Ok(found.get_or_init(|| layout))
    };
    let mut words = Vec::new();
    for &arg in args {
        match arg {
            "--static" => {}
            "--cflags" | "--cflags=gnu" | "--cflags=intel" | "--cflags=sun" | "--cflags=pgi"
            | "--cflags=ibm" | "--cflags=cray" | "--cflags=fujitsu" => {
                words.push(config::cflags(layout()?))
            }
            "--libs" => words.push(config::libs(layout()?, static_lib)),
            "--libdir" => words.push(layout()?.lib_dir.display().to_string()),
            "--includedir" => words.push(layout()?.include_dir.display().to_string()),
            "--version" => words.push(env!("CARGO_PKG_VERSION").to_string()),
            "--interface-version" => words.push(config::INTERFACE_VERSION.to_string()),
            "--nm" | "--region-initialization" | "--create-pomp2-regions" => {
                return Err(usage_error(format!(
                    "config {arg} must come first and cannot be combined"
                )))
            }
            other => return Err(usage_error(format!("unknown option `{other}` for config"))),
        }
    }
    if words.is_empty() {
        return Err(usage_error("config --static needs --libs"));
    }
    print_stdout(&format!("{}\n", words.join(" ")))
}

/// `summary ARCHIVE.otf2`
fn summary_command(args: &[String]) -> Result<(), Failure> {
    let archive = match args {
        [archive] if !archive.starts_with('-') || archive == "-" => archive,
        [] => {
            return Err(usage_error(
                "summary needs an OTF2 anchor file (ARCHIVE.otf2)",
            ))
        }
        [option] => {
            return Err(usage_error(format!(
                "unknown option `{option}` for summary"
            )))
        }
        _ => return Err(usage_error("summary takes exactly one OTF2 anchor file")),
    };
    let text = summary::summarize(Path::new(archive)).map_err(Failure::Error)?;
    print_stdout(&text)
}

/// Writes to stdout; a closed pipe (e.g. `| head`) is not an error worth a message.
fn print_stdout(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure::Error(format!("cannot write standard output: {e}"))),
    }
}
