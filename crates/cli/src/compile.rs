//! `pomptrace [OPTIONS] COMPILER ARGS...`: the compiler wrapper. Runs `COMPILER ARGS...` as given,
//! except that each C, C++ and Fortran source of an OpenMP compile is instrumented with opari2
//! first, and that the link of an executable with instrumented objects gets the init file and
//! libpomptrace. Everything it writes besides the user's outputs lives in a private temporary
//! directory, removed at the end.
//!
//! C and C++ go through the compiler's preprocessor first, with the user's flags, so that opari2
//! (`--preprocessed`) sees the code that is really compiled; a `#line` directive in front of the
//! source keeps the compiler's messages and the trace's file names pointing at the user's file,
//! and `-iquote <source directory>` keeps `#include "..."` resolving as from the original place.
//! Before opari2, the preprocessed text's line markers are made absolute and the constructs
//! opari2 gets wrong are rewritten into equivalent ones it gets right ([`opari2_c_input`],
//! [`opari2_fortran_input`]); after it, its output is checked and completed
//! ([`opari2_output`]). With `-g`, `-fdebug-prefix-map` gives the compile unit the user's file
//! name. When the instrumented code does not compile but the source does, the wrapper says so
//! instead of passing on the compiler's messages about code the user did not write.

#[path = "compile_line.rs"]
mod compile_line;
#[path = "mpi_link.rs"]
pub mod mpi_link;
#[path = "opari2_c_input.rs"]
mod opari2_c_input;
#[path = "opari2_fortran_input.rs"]
mod opari2_fortran_input;
#[path = "opari2_output.rs"]
mod opari2_output;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use compile_line::{default_object, CommandLine, Language, Plan};
use pomptrace::settings;

use crate::{config, init_regions};

/// The wrapper's own options: before the compiler, each with an environment variable.
const OPTIONS: [(&str, &settings::Variable); 6] = [
    ("--static", &settings::STATIC),
    ("--no-mpi", &settings::NO_MPI),
    ("--skip-uninstrumentable", &settings::SKIP_UNINSTRUMENTABLE),
    ("--instrument-all", &settings::INSTRUMENT_ALL),
    ("--keep-files", &settings::KEEP_FILES),
    ("--verbose", &settings::WRAPPER_VERBOSE),
];

pub const USAGE: &str = "\n\
Compiler wrapper:
  pomptrace [--static] [--no-mpi] [--skip-uninstrumentable] [--instrument-all] [--keep-files]
            [--verbose] COMPILER ARGS...
      Run the compiler command `COMPILER ARGS...` (gcc, g++, gfortran, clang, mpicc, ...)
      with OpenMP instrumentation: each C, C++ and Fortran source of a compile with an OpenMP
      flag (-fopenmp, -qopenmp, ...) is instrumented by opari2 in a temporary directory (C and
      C++ after the compiler's preprocessor, with ARGS' flags); a link of an executable whose
      objects or archives hold instrumented code gets the init file and libpomptrace (shared,
      or with --static the archive). A link by an MPI compiler wrapper (mpicc, mpicxx,
      mpif90, mpifort, ..., or any compiler that answers -showme or -show with an MPI link
      line) also gets the MPI wrapper library libpomptrace_mpi, OpenMP or not, so that MPI
      calls are traced; --no-mpi leaves it out. -shared links give an instrumented library to
      run with LD_PRELOAD=libpomptrace.so. Unchanged: -E, -M, -MM, -S, -x, @file, sources on standard
      input, commands without input files (--version), compiles without an OpenMP flag
      (configure's conftests; --instrument-all instruments them too). A file opari2 cannot
      instrument, or whose instrumented code does not compile where the file itself does,
      fails the compile, naming file and line; --skip-uninstrumentable compiles it
      uninstrumented with one warning. --keep-files keeps the temporary files, --verbose
      prints each command run. Each option also has an environment variable
      (POMPTRACE_STATIC=1, ...; `pomptrace config --env` lists them), so CC=\"pomptrace gcc\", ./configure CC=\"pomptrace gcc\" and
      CMAKE_C_COMPILER_LAUNCHER=pomptrace (with CMAKE_C_LINKER_LAUNCHER=pomptrace) work.

  pomptrace wrap --create COMPILER... [--dir DIR]
      Make one-word commands pomptrace-COMPILER (links to pomptrace, next to it or in DIR)
      that run `pomptrace COMPILER`, for builds that need CC to be one program
      (CC=pomptrace-gcc); their options come from the environment variables.
";

/// Whether the command line is a compiler invocation: the first word is one of the wrapper's
/// options, or a program that exists (so that a misspelt subcommand stays a usage error); the
/// subcommands are matched before.
pub fn is_compiler_invocation(args: &[String]) -> bool {
    args.first().is_some_and(|first| {
        OPTIONS.iter().any(|(option, _)| option == first)
            || !first.starts_with('-') && is_program(first)
    })
}

/// Whether `name` is an executable file: a path, or found in PATH.
fn is_program(name: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let executable = |path: &Path| {
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if name.contains('/') {
        return executable(Path::new(name));
    }
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| executable(&dir.join(name))))
}

#[derive(Default)]
struct Options {
    static_lib: bool,
    no_mpi: bool,
    skip_uninstrumentable: bool,
    instrument_all: bool,
    keep_files: bool,
    verbose: bool,
}

impl Options {
    fn set(&mut self, variable: &settings::Variable) {
        let name = variable.name;
        let flag = match name {
            _ if name == settings::STATIC.name => &mut self.static_lib,
            _ if name == settings::NO_MPI.name => &mut self.no_mpi,
            _ if name == settings::SKIP_UNINSTRUMENTABLE.name => &mut self.skip_uninstrumentable,
            _ if name == settings::INSTRUMENT_ALL.name => &mut self.instrument_all,
            _ if name == settings::KEEP_FILES.name => &mut self.keep_files,
            _ => &mut self.verbose,
        };
        *flag = true;
    }
}

/// Why the wrapper stops.
enum Stop {
    /// A command failed and said why itself: the wrapper exits with its status.
    Status(i32),
    /// `pomptrace: <message>` and status 1.
    Message(String),
}

/// Runs the wrapper; returns the exit status.
pub fn run(args: &[String]) -> i32 {
    let mut options = options_from_environment();
    let mut rest = args;
    while let Some((_, variable)) = rest
        .first()
        .and_then(|first| OPTIONS.iter().find(|(option, _)| option == first))
    {
        options.set(variable);
        rest = &rest[1..];
    }
    let Some((compiler, compiler_args)) = rest.split_first() else {
        eprintln!("pomptrace: the compiler to run is missing after the options");
        return 2;
    };
    run_with(options, compiler, compiler_args)
}

/// Runs the wrapper as a one-word compiler command (`pomptrace-gcc ARGS...`): `line` is the
/// compiler and its arguments, the options come from the environment only.
pub fn run_compiler(line: &[String]) -> i32 {
    let Some((compiler, compiler_args)) = line.split_first() else {
        return 2;
    };
    run_with(options_from_environment(), compiler, compiler_args)
}

fn options_from_environment() -> Options {
    let mut options = Options::default();
    for (_, variable) in OPTIONS {
        if settings::switch_on(variable) {
            options.set(variable);
        }
    }
    options
}

fn run_with(options: Options, compiler: &str, compiler_args: &[String]) -> i32 {
    let line = CommandLine::parse(compiler_args);
    let mut wrapper = Wrapper {
        compiler,
        line,
        options,
        temp: None,
        layout: None,
    };
    let result = wrapper.run();
    if let Some(temp) = wrapper.temp.take() {
        temp.finish(wrapper.options.keep_files);
    }
    match result {
        Ok(()) => 0,
        Err(Stop::Status(code)) => code,
        Err(Stop::Message(message)) => {
            eprintln!("pomptrace: {message}");
            1
        }
    }
}

struct Wrapper<'a> {
    compiler: &'a str,
    line: CommandLine,
    options: Options,
    temp: Option<TempDir>,
    layout: Option<config::Layout>,
}

/// The private temporary directory.
struct TempDir(PathBuf);

impl TempDir {
    fn create() -> Result<TempDir, Stop> {
        let template = std::env::temp_dir().join("pomptrace-cc-XXXXXX");
        let mut bytes = template.into_os_string().into_encoded_bytes();
        bytes.push(0);
        // SAFETY: `bytes` is a writable NUL-terminated template that mkdtemp fills in place.
        let made = unsafe { libc::mkdtemp(bytes.as_mut_ptr().cast()) };
        if made.is_null() {
            return Err(Stop::Message(format!(
                "cannot create a temporary directory in {}: {}",
                std::env::temp_dir().display(),
                std::io::Error::last_os_error()
            )));
        }
        bytes.pop();
        // SAFETY: the bytes came from an OsString and mkdtemp replaced ASCII X's by ASCII.
        let path = unsafe { std::ffi::OsString::from_encoded_bytes_unchecked(bytes) };
        Ok(TempDir(PathBuf::from(path)))
    }

    fn finish(self, keep: bool) {
        if keep {
            eprintln!(
                "pomptrace: kept the temporary files in {}",
                self.0.display()
            );
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// The directory a source's `#include "..."` and Fortran `include` lines are relative to.
fn directory_of(source: &str) -> &Path {
    Path::new(source)
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The `#line` form of a file name.
fn quoted_for_line_directive(path: &str) -> String {
    path.replace('\\', "\\\\").replace('"', "\\\"")
}

fn exit_status(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1)
}

fn read(path: &Path) -> Result<Vec<u8>, Stop> {
    std::fs::read(path).map_err(|e| Stop::Message(format!("cannot read {}: {e}", path.display())))
}

fn write(path: &Path, contents: &[u8]) -> Result<(), Stop> {
    std::fs::write(path, contents)
        .map_err(|e| Stop::Message(format!("cannot write {}: {e}", path.display())))
}

/// `source` as an absolute path (the trace's file names and the debug information's are).
fn absolute(source: &str) -> PathBuf {
    match std::env::current_dir() {
        Ok(cwd) if Path::new(source).is_relative() => cwd
            .join(source)
            .components()
            .filter(|c| *c != std::path::Component::CurDir)
            .collect(),
        _ => PathBuf::from(source),
    }
}

/// `path` as the last of the user's `-fdebug-prefix-map=OLD=NEW` and `-ffile-prefix-map=OLD=NEW`
/// options whose OLD starts it maps it (as GCC and Clang choose).
fn prefix_mapped(path: &Path, flags: &[&str]) -> PathBuf {
    let text = path.to_string_lossy();
    for flag in flags.iter().rev() {
        let map = flag
            .strip_prefix("-fdebug-prefix-map=")
            .or_else(|| flag.strip_prefix("-ffile-prefix-map="));
        if let Some((old, new)) = map.and_then(|m| m.split_once('=')) {
            if let Some(rest) = text.strip_prefix(old) {
                return PathBuf::from(format!("{new}{rest}"));
            }
        }
    }
    path.to_path_buf()
}

/// Whether a compiler flag asks for debug information.
fn is_debug_flag(flag: &str) -> bool {
    flag.starts_with("-g") && flag != "-g0"
}

/// Whether opari2 reads a Fortran file with this extension as fixed form (it decides by the
/// extension, as compilers do).
fn is_fixed_form(ext: &str) -> bool {
    matches!(
        ext,
        "f" | "for" | "ftn" | "F" | "FOR" | "FTN" | "fpp" | "FPP"
    )
}

/// Said once for a source: opari2 leaves `taskloop` as it is.
fn warn_taskloop(place: &str) {
    eprintln!(
        "pomptrace: warning: {place}: taskloop is not instrumented by opari2; the tasks it \
         creates are not traced"
    );
}

/// opari2's complaint, as a compiler would word it: `FILE:LINE: error: ...`. opari2 ends its
/// message with `at FILE:LINE`, which the `#line` directive already maps to the user's file.
fn opari2_error(output: &str, source: &str) -> String {
    let text = output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let is_place = |place: &str| {
        place
            .rsplit_once(':')
            .is_some_and(|(file, line)| !file.is_empty() && line.parse::<u32>().is_ok())
    };
    // `FILE:LINE:ERROR: what` (directive nesting) or `ERROR: what ... at FILE:LINE` (blocks).
    if let Some((place, what)) = text.split_once(":ERROR: ").filter(|(p, _)| is_place(p)) {
        return format!("{place}: error: opari2 cannot instrument this: {what}");
    }
    let text = text.strip_prefix("ERROR: ").unwrap_or(&text);
    match text.rsplit_once(" at ") {
        Some((what, place)) if is_place(place) => {
            format!("{place}: error: opari2 cannot instrument this: {what}")
        }
        _ if text.is_empty() => format!("{source}: error: opari2 failed without a message"),
        _ => format!("{source}: error: opari2 cannot instrument this file: {text}"),
    }
}

impl Wrapper<'_> {
    fn instrumenting(&self) -> bool {
        self.line.openmp || self.options.instrument_all
    }

    fn run(&mut self) -> Result<(), Stop> {
        match self.line.plan.clone() {
            Plan::PassThrough(reason) => self.exec_unchanged(reason),
            Plan::Compile if !self.instrumenting() => {
                self.exec_unchanged("no OpenMP flag (--instrument-all instruments it)")
            }
            Plan::Compile => self.compile(),
            Plan::Link => self.link(),
        }
    }

    fn show(&self, command: &Command) {
        if self.options.verbose {
            let words: Vec<String> = std::iter::once(command.get_program())
                .chain(command.get_args())
                .map(|w| w.to_string_lossy().into_owned())
                .collect();
            eprintln!("pomptrace: + {}", words.join(" "));
        }
    }

    /// Runs the compiler with the user's arguments, in place of this process.
    fn exec_unchanged(&self, reason: &str) -> Result<(), Stop> {
        if self.options.verbose {
            eprintln!("pomptrace: running the command unchanged: {reason}");
        }
        let mut command = Command::new(self.compiler);
        command.args(&self.line.args);
        self.show(&command);
        let error = command.exec();
        Err(Stop::Message(format!(
            "cannot run {}: {error}",
            self.compiler
        )))
    }

    fn status_of(&self, mut command: Command) -> Result<(), Stop> {
        self.show(&command);
        let program = command.get_program().to_string_lossy().into_owned();
        let status = command
            .status()
            .map_err(|e| Stop::Message(format!("cannot run {program}: {e}")))?;
        if status.success() {
            Ok(())
        } else {
            Err(Stop::Status(exit_status(status)))
        }
    }

    fn compiler_command<S: AsRef<OsStr>>(&self, args: impl IntoIterator<Item = S>) -> Command {
        let mut command = Command::new(self.compiler);
        command.args(args);
        command
    }

    fn temp_dir(&mut self) -> Result<PathBuf, Stop> {
        if self.temp.is_none() {
            self.temp = Some(TempDir::create()?);
        }
        Ok(self.temp.as_ref().map(|t| t.0.clone()).unwrap_or_default())
    }

    fn layout(&mut self) -> Result<&config::Layout, Stop> {
        if self.layout.is_none() {
            self.layout = Some(config::layout().map_err(Stop::Message)?);
        }
        Ok(self.layout.as_ref().expect("set above"))
    }

    /// `-c`: each source to its object.
    fn compile(&mut self) -> Result<(), Stop> {
        let sources = self.line.sources();
        let output = self.line.output().map(String::from);
        if output.is_some() && sources.len() + self.line.inputs().len() > 1 {
            return self.exec_unchanged("-o with several files (the compiler will say so)");
        }
        if sources.is_empty() {
            return self.exec_unchanged("no C, C++ or Fortran source");
        }
        for input in self.line.inputs() {
            // Assembler and other sources the compiler compiles as it would.
            let mut args: Vec<&str> = self.line.preprocess_flags();
            args.extend(["-c", input, "-o"]);
            let object = default_object(input);
            args.push(&object);
            self.status_of(self.compiler_command(args))?;
        }
        for (n, (index, language)) in sources.into_iter().enumerate() {
            let source = self.line.args[index].clone();
            let object = output.clone().unwrap_or_else(|| default_object(&source));
            self.compile_one(n, &source, language, &object)?;
        }
        Ok(())
    }

    /// Instruments one source and compiles it to `object` (or, when opari2 cannot instrument
    /// it or its output does not compile and that was allowed, compiles it uninstrumented).
    fn compile_one(
        &mut self,
        n: usize,
        source: &str,
        language: Language,
        object: &str,
    ) -> Result<(), Stop> {
        self.write_dependencies(source, language, object)?;
        let instrumented = match self.instrument(n, source, language)? {
            Ok(file) => file,
            Err(message) => return self.uninstrumented(source, object, &message, None),
        };
        let include = config::cflags(self.layout()?);
        let source_dir = directory_of(source);
        let mut command = self.compiler_command(self.line.compile_flags());
        command.arg(include);
        if language == Language::Fortran {
            // INCLUDE lines and #include of the original place.
            command.arg(format!("-I{}", source_dir.display()));
        }
        let flags = self.line.compile_flags();
        if flags.iter().any(|f| is_debug_flag(f)) {
            // The compile unit is the user's source as the plain compile names it (as given,
            // mapped by the user's own prefix maps), not the temporary file.
            let mut map = std::ffi::OsString::from("-fdebug-prefix-map=");
            map.push(&instrumented);
            map.push("=");
            map.push(prefix_mapped(Path::new(source), &flags));
            command.arg(map);
        }
        command.arg("-c").arg(&instrumented).args(["-o", object]);
        self.show(&command);
        let program = command.get_program().to_string_lossy().into_owned();
        let compiled = command
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|child| child.wait_with_output())
            .map_err(|e| Stop::Message(format!("cannot run {program}: {e}")))?;
        let messages = String::from_utf8_lossy(&compiled.stderr).into_owned();
        if compiled.status.success() {
            eprint!("{messages}");
            return Ok(());
        }
        let _ = std::fs::remove_file(object);
        // An error in opari2's region table has no line of the user's.
        let in_region_table = |place: &str| {
            place
                .as_bytes()
                .starts_with(opari2_output::REGION_TABLE_NAME)
        };
        let message = match opari2_output::first_error(&messages) {
            Some((place, error)) if !place.is_empty() && !in_region_table(&place) => {
                format!("{place}: opari2 output does not compile: {error}")
            }
            Some((_, error)) => format!("{source}: opari2 output does not compile: {error}"),
            None => format!(
                "{source}: opari2 output does not compile: {}",
                messages
                    .lines()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("")
            ),
        };
        self.uninstrumented(source, object, &message, Some(messages))
    }

    /// `source` compiled to `object` without instrumentation, if --skip-uninstrumentable allows
    /// it, after opari2 failed (`message`) or its output did not compile (`failed_compile`, with
    /// what the compiler said). A source whose plain compile fails too gets the compiler's own
    /// messages and status: the fault is the source's, not opari2's.
    fn uninstrumented(
        &mut self,
        source: &str,
        object: &str,
        message: &str,
        failed_compile: Option<String>,
    ) -> Result<(), Stop> {
        let mut args: Vec<std::ffi::OsString> = self
            .line
            .preprocess_flags()
            .into_iter()
            .map(Into::into)
            .collect();
        let plain_object = match &failed_compile {
            Some(_) => self.temp_dir()?.join("plain.o"),
            None if self.options.skip_uninstrumentable => PathBuf::from(object),
            None => {
                return Err(Stop::Message(format!(
                    "{message} (--skip-uninstrumentable, or {}=1, compiles such files \
                     uninstrumented)",
                    settings::SKIP_UNINSTRUMENTABLE.name
                )))
            }
        };
        args.extend([
            "-c".into(),
            source.into(),
            "-o".into(),
            plain_object.clone().into(),
        ]);
        let mut command = self.compiler_command(&args);
        if failed_compile.is_some() {
            command.stderr(Stdio::piped());
        } else {
            eprintln!("pomptrace: warning: {message}; compiling it without instrumentation");
        }
        self.show(&command);
        let program = command.get_program().to_string_lossy().into_owned();
        let plain = command
            .spawn()
            .and_then(|child| child.wait_with_output())
            .map_err(|e| Stop::Message(format!("cannot run {program}: {e}")))?;
        let Some(messages) = failed_compile else {
            return if plain.status.success() {
                Ok(())
            } else {
                Err(Stop::Status(exit_status(plain.status)))
            };
        };
        if !plain.status.success() {
            eprint!("{}", String::from_utf8_lossy(&plain.stderr));
            return Err(Stop::Status(exit_status(plain.status)));
        }
        if self.options.verbose {
            eprint!("{messages}");
        }
        if !self.options.skip_uninstrumentable {
            let _ = std::fs::remove_file(&plain_object);
            return Err(Stop::Message(format!(
                "{message} (--skip-uninstrumentable, or {}=1, compiles such files \
                 uninstrumented)",
                settings::SKIP_UNINSTRUMENTABLE.name
            )));
        }
        eprintln!("pomptrace: warning: {message}; compiling it without instrumentation");
        eprint!("{}", String::from_utf8_lossy(&plain.stderr));
        std::fs::copy(&plain_object, object)
            .map(drop)
            .map_err(|e| Stop::Message(format!("cannot write {object}: {e}")))
    }

    /// The instrumented file for `source`, or Ok(Err(message)) when opari2 cannot instrument
    /// it. A failing preprocessor stops the wrapper (its messages name the user's file).
    fn instrument(
        &mut self,
        n: usize,
        source: &str,
        language: Language,
    ) -> Result<Result<PathBuf, String>, Stop> {
        let temp = self.temp_dir()?;
        let name = Path::new(source)
            .file_name()
            .map_or_else(|| "source".into(), |n| n.to_string_lossy().into_owned());
        let (stem, ext) = name.rsplit_once('.').unwrap_or((&name, "c"));
        let opari2 = settings::value(&settings::OPARI2).unwrap_or_else(|| "opari2".into());
        let mut command = Command::new(&opari2);
        // --omp-tpd: every parallel directive copies the forking thread's pomp_tpd into its
        // team (copyin), which is how libpomptrace tells each member its place; gfortran's
        // name for the variable (pomp_tpd_) in C and C++ too, so mixed programs share one.
        command.args([
            "--omp-task-untied=keep",
            "--omp-tpd",
            "--omp-tpd-mangling=gnu",
        ]);
        let (input, output) = match language {
            Language::Fortran => {
                let text = read(Path::new(source))?;
                let absolute = absolute(source);
                let fixed = opari2_fortran_input::fix(
                    &text,
                    is_fixed_form(ext),
                    &absolute.to_string_lossy(),
                );
                if let Some(line) = fixed.taskloop {
                    warn_taskloop(&format!("{}:{line}", absolute.display()));
                }
                let input = match fixed.text {
                    Some(fixed) => {
                        // opari2 names the regions after its input file until a line marker
                        // names another.
                        let mut contents = format!(
                            "# 1 \"{}\"\n",
                            quoted_for_line_directive(&absolute.to_string_lossy())
                        )
                        .into_bytes();
                        contents.extend(fixed);
                        let copy = temp.join(format!("{n}_{stem}.{ext}"));
                        write(&copy, &contents)?;
                        copy
                    }
                    None => PathBuf::from(source),
                };
                // Upper case, so that the compiler preprocesses OPARI2's #line directives.
                let output = temp.join(format!("{n}_{stem}.opari.{}", ext.to_ascii_uppercase()));
                command.arg(&input).arg(&output);
                (input, output)
            }
            Language::C | Language::Cxx => {
                let preprocessed = self.preprocess(&temp, n, source, stem, ext)?;
                let output = temp.join(format!("{n}_{stem}.opari.{ext}"));
                command
                    .arg("--preprocessed")
                    .arg(&preprocessed)
                    .arg(&output);
                (preprocessed, output)
            }
        };
        self.show(&command);
        let ran = command
            .output()
            .map_err(|e| Stop::Message(format!("cannot run {opari2}: {e}")))?;
        if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&ran.status) {
            return Ok(Err(format!(
                "{source}: error: opari2 cannot instrument this file: it was killed by signal \
                 {signal}"
            )));
        }
        if !ran.status.success() {
            let mut text = String::from_utf8_lossy(&ran.stderr).into_owned();
            text.push_str(&String::from_utf8_lossy(&ran.stdout));
            return Ok(Err(opari2_error(&text, source)));
        }
        let written = read(&output)?;
        if let Some(why) = opari2_output::invalid_text(&read(&input)?, &written) {
            return Ok(Err(format!(
                "{source}: error: opari2 cannot instrument this file: {why}"
            )));
        }
        let mut text = opari2_output::initialise_task_handles(&written);
        let table_name = format!(
            "{}.opari.inc",
            input.file_name().unwrap_or_default().to_string_lossy()
        );
        if let Ok(table) = std::fs::read(output.with_file_name(&table_name)) {
            text = opari2_output::inline_region_table(&text, &table_name, &table);
        }
        write(&output, &text)?;
        Ok(Ok(output))
    }

    /// Runs the compiler's preprocessor over the source with the POMP2 headers in front, as
    /// `opari2 --preprocessed` needs them, and makes the changes opari2 needs
    /// ([`opari2_c_input`]); returns the preprocessed file.
    fn preprocess(
        &mut self,
        temp: &Path,
        n: usize,
        source: &str,
        stem: &str,
        ext: &str,
    ) -> Result<PathBuf, Stop> {
        let text = read(Path::new(source))?;
        let input = temp.join(format!("{n}_{stem}.input.{ext}"));
        let absolute = absolute(source);
        let mut contents = format!(
            "#include <stdint.h>\n#include <opari2/pomp2_lib.h>\n#include <opari2/pomp2_user_lib.h>\n\
             ___POMP2_INCLUDE___\n#line 1 \"{}\"\n",
            quoted_for_line_directive(&absolute.to_string_lossy())
        )
        .into_bytes();
        contents.extend_from_slice(&text);
        write(&input, &contents)?;
        let preprocessed = temp.join(format!("{n}_{stem}.prep.{ext}"));
        let source_dir = directory_of(source);
        let include = config::cflags(self.layout()?);
        let mut command = self.compiler_command(["-E"]);
        command
            .args(self.line.internal_step_flags())
            .arg(include)
            .arg("-iquote")
            .arg(source_dir)
            .arg(&input)
            .arg("-o")
            .arg(&preprocessed);
        self.status_of(command)?;
        let cwd = std::env::current_dir()
            .map_err(|e| Stop::Message(format!("cannot find the working directory: {e}")))?;
        let fixed = opari2_c_input::fix(
            &read(&preprocessed)?,
            &opari2_c_input::Names {
                cwd: &cwd,
                input: input.as_os_str().as_bytes(),
                source: absolute.as_os_str().as_bytes(),
            },
        );
        if let Some(place) = fixed.taskloop {
            warn_taskloop(&place.to_string());
        }
        write(&preprocessed, &fixed.text)?;
        Ok(preprocessed)
    }

    /// `-MD`/`-MMD`: the make dependencies of the user's source (the instrumented file's would
    /// name temporary files), written where the compiler would write them.
    fn write_dependencies(
        &self,
        source: &str,
        language: Language,
        object: &str,
    ) -> Result<(), Stop> {
        let options = self.line.dependency_options();
        if !options.iter().any(|o| matches!(*o, "-MD" | "-MMD")) {
            return Ok(());
        }
        let mut args: Vec<String> = Vec::new();
        if language == Language::Fortran {
            args.push("-cpp".into());
        }
        args.extend(
            self.line
                .internal_step_flags()
                .into_iter()
                .map(String::from),
        );
        for option in &options {
            args.push(match *option {
                "-MD" => "-M".into(),
                "-MMD" => "-MM".into(),
                other => other.into(),
            });
        }
        if !options.iter().any(|o| o.starts_with("-MF")) {
            let stem = object.rsplit_once('.').map_or(object, |(stem, _)| stem);
            args.extend(["-MF".into(), format!("{stem}.d")]);
        }
        if !options
            .iter()
            .any(|o| o.starts_with("-MT") || o.starts_with("-MQ"))
        {
            args.extend(["-MT".into(), object.into()]);
        }
        args.push(source.into());
        self.status_of(self.compiler_command(args))
    }

    /// Compiles and instruments the sources on the line (if OpenMP is on), then links; an
    /// executable with instrumented code gets the init file and libpomptrace.
    fn link(&mut self) -> Result<(), Stop> {
        let mut args = self.line.args.clone();
        let mut objects: Vec<String> = self.line.inputs().into_iter().map(String::from).collect();
        if self.instrumenting() {
            for (n, (index, language)) in self.line.sources().into_iter().enumerate() {
                let temp = self.temp_dir()?;
                let source = self.line.args[index].clone();
                let name = Path::new(&source)
                    .file_stem()
                    .map_or_else(|| "source".into(), |s| s.to_string_lossy().into_owned());
                let object = temp.join(format!("{n}_{name}.o")).display().to_string();
                self.compile_one(n, &source, language, &object)?;
                args[index] = object.clone();
                objects.push(object);
            }
        }
        if self.line.shared {
            return self.status_of(self.compiler_command(&args));
        }
        let nm = init_regions::nm_program();
        let mut regions = init_regions::InitRegions::default();
        for object in objects.iter().filter(|o| Path::new(o).is_file()) {
            // Not an object (a linker script, an assembler source): the linker judges it.
            if let Ok(listing) = init_regions::nm_listing(&nm, Path::new(object)) {
                regions.add_nm_output(&listing);
            }
        }
        // A fully static program cannot use the shared library.
        let static_lib = self.options.static_lib || self.line.static_program;
        let mpi_libs = match mpi_link::wanted(self.compiler, self.options.no_mpi) {
            true => {
                let (compiler, verbose) = (self.compiler, self.options.verbose);
                mpi_link::link_args(compiler, self.layout()?, static_lib, verbose)
            }
            false => None,
        };
        if regions.openmp_symbols().next().is_none() && regions.user_symbols().next().is_none() {
            if let Some(libs) = mpi_libs {
                // An MPI program: its MPI calls are traced, OpenMP or not.
                let mut command = self.compiler_command(&args);
                command.args(libs);
                return self.status_of(command);
            }
            if args == self.line.args {
                return self.exec_unchanged("no instrumented object on the link line");
            }
            return self.status_of(self.compiler_command(&args));
        }
        let temp = self.temp_dir()?;
        let init_source = temp.join("pomp2_init.c");
        std::fs::write(&init_source, regions.to_c())
            .map_err(|e| Stop::Message(format!("cannot write {}: {e}", init_source.display())))?;
        let init_object = temp.join("pomp2_init.o");
        let target_flags = self.line.compile_flags().into_iter().filter(|f| {
            f.starts_with("-m") || f.starts_with("--sysroot") || f.starts_with("-target")
        });
        let mut command = self.compiler_command(["-x", "c"]);
        command
            .args(target_flags)
            .arg("-c")
            .arg(&init_source)
            .arg("-o")
            .arg(&init_object);
        self.status_of(command)?;
        let libs = match mpi_libs {
            Some(libs) => libs,
            None => config::link_args(self.layout()?, static_lib),
        };
        let mut command = self.compiler_command(&args);
        command.arg(&init_object).args(libs);
        self.status_of(command)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opari2_errors_read_like_compiler_errors() {
        assert_eq!(
            opari2_error(
                "ERROR: could not determine end of OpenMP construct (braces mismatch?)\n       \
                 near \"OpenMP: parallel\" construct at src/a.c:12\n",
                "src/a.c"
            ),
            "src/a.c:12: error: opari2 cannot instrument this: could not determine end of \
             OpenMP construct (braces mismatch?) near \"OpenMP: parallel\" construct"
        );
        assert_eq!(
            opari2_error(
                "u.c:3:ERROR: unbalanced pragma/directive nesting for enduserRegion directive\n",
                "u.c"
            ),
            "u.c:3: error: opari2 cannot instrument this: unbalanced pragma/directive nesting \
             for enduserRegion directive"
        );
        assert_eq!(
            opari2_error("something odd", "b.f90"),
            "b.f90: error: opari2 cannot instrument this file: something odd"
        );
        assert_eq!(
            opari2_error("", "b.f90"),
            "b.f90: error: opari2 failed without a message"
        );
    }

    #[test]
    fn invocations() {
        let words = |t: &str| t.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert!(is_compiler_invocation(&words("gcc -c a.c")));
        assert!(is_compiler_invocation(&words("/bin/sh -c true")));
        assert!(is_compiler_invocation(&words("--static gcc a.o")));
        assert!(!is_compiler_invocation(&words("frobnicate -c a.c")));
        assert!(!is_compiler_invocation(&words("./no/such/cc -c a.c")));
        assert!(!is_compiler_invocation(&words("--help")));
        assert!(!is_compiler_invocation(&[]));
        assert_eq!(quoted_for_line_directive("a\"b\\c.c"), "a\\\"b\\\\c.c");
        let flags = [
            "-g",
            "-ffile-prefix-map=/src=.",
            "-fdebug-prefix-map=/src/lib=/lib",
        ];
        assert_eq!(
            prefix_mapped(Path::new("/src/lib/a.c"), &flags),
            Path::new("/lib/a.c")
        );
        assert_eq!(
            prefix_mapped(Path::new("/src/b.c"), &flags),
            Path::new("./b.c")
        );
        assert_eq!(
            prefix_mapped(Path::new("/other/c.c"), &flags),
            Path::new("/other/c.c")
        );
    }
}
