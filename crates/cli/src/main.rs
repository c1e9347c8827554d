//! The `pomptrace` command: link-time region initialisation for OPARI2-instrumented programs
//! (`init-regions`, and the `opari2-config`-compatible `config --nm` / `--region-initialization`
//! / `--create-pomp2-regions`), build flags (`config --cflags` / `--libs`), and reading OTF2
//! traces: a per-region summary (`summary`), a self-contained HTML timeline and profile
//! (`view`), Chrome trace-event JSON (`export --chrome`); and making the remains of a killed run
//! a readable trace (`recover`). As a compiler wrapper it runs as `pomptrace COMPILER ARGS...`,
//! or by a one-word name `pomptrace-COMPILER` (`wrap --create`).
//!
//! The command line is parsed by clap; each subcommand owns its argument struct and its `run`
//! function in `pomptrace/<subcommand>.rs`, so adding one is a variant here and a file there.
//!
//! Exit status: 0 on success, 1 when the work itself failed (nm failed, the trace cannot be
//! read, the output cannot be written), 2 for a usage error.

mod compile;
mod config;
mod cube_profile;
mod export_chrome;
mod init_regions;
mod init_regions_command;
mod progress;
mod recover;
mod region_profile;
mod region_visits;
mod score;
mod summary;
mod terminal_text;
mod trace_definitions;
mod unify;
mod unify_profile;
mod view;

mod wrap;

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use terminal_text::escape_controls;

/// One usage line per subcommand (clap's generated line would only say `<COMMAND>`).
const USAGE_LINES: &str = "\
pomptrace init-regions [-o FILE] OBJ_OR_LIB...
       pomptrace config --nm [OBJ_OR_LIB...]
       pomptrace config --region-initialization [-]
       pomptrace config --create-pomp2-regions OBJ_OR_LIB...
       pomptrace config [--cflags[=COMPILER]] [--libs [--static] [--mpi]] [--libdir] [--includedir] [--version] [--interface-version]
       pomptrace config --env
       pomptrace [--static] [--no-mpi] [--skip-uninstrumentable] COMPILER ARGS...
       pomptrace wrap --create COMPILER... [--dir DIR]
       pomptrace summary DIR|traces.otf2|profile.cubex [--top N] [--by-thread] [--csv | --json]
       pomptrace score DIR [-r] [--filter FILE] [--suggest [--budget SIZE] -o FILE] [--csv | --json]
       pomptrace view DIR|traces.otf2|profile.cubex [-o FILE.html]
       pomptrace export --chrome ARCHIVE.otf2 [-o trace.json[.gz]]
       pomptrace recover DIR
       pomptrace unify DIR
       pomptrace --version
       pomptrace --help";

#[derive(Parser)]
#[command(
    name = "pomptrace",
    version,
    about = "OPARI2/POMP2 measurement with OTF2 traces: link-time region initialisation, \
             build flags, and reading the traces",
    override_usage = USAGE_LINES,
    subcommand_required = true,
    allow_external_subcommands = true,
    after_help = after_help()
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    InitRegions(init_regions_command::InitRegionsArgs),
    Config(config::ConfigArgs),
    Summary(summary::SummaryArgs),
    Score(score::ScoreArgs),
    View(view::ViewArgs),
    Export(export_chrome::ExportArgs),
    Recover(recover::RecoverArgs),
    Unify(unify::UnifyArgs),
    Wrap(wrap::WrapArgs),
    /// Print the version (as --version does).
    #[command(hide = true)]
    Version,
    /// Any other first word (a compiler is recognised before clap parses; see `main`).
    #[command(external_subcommand)]
    External(Vec<OsString>),
}

pub enum Failure {
    /// Bad command line: `pomptrace: <message>` and the usage on stderr, exit 2.
    Usage(String),
    /// The work failed: `pomptrace: <message>` on stderr, exit 1.
    Error(String),
}

pub fn usage_error(message: impl Into<String>) -> Failure {
    Failure::Usage(message.into())
}

fn after_help() -> String {
    format!(
        "Environment:\n  NM    the nm program to run (default: nm)\n{}",
        compile::USAGE
    )
}

/// The subcommands' names: any other first word that is not an option names a compiler.
const SUBCOMMANDS: [&str; 11] = [
    "init-regions",
    "wrap",
    "unify",
    "config",
    "summary",
    "score",
    "view",
    "export",
    "recover",
    "version",
    "help",
];

fn main() -> ExitCode {
    // `pomptrace [WRAPPER OPTIONS] COMPILER ARGS...` is decided before clap sees the words: the
    // compiler's arguments are not ours to parse.
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `pomptrace-COMPILER ARGS...`: every argument is the compiler's.
    if let Some(compiler) = std::env::args_os()
        .next()
        .and_then(|program| wrap::wrapped_compiler(&program))
    {
        let line: Vec<String> = std::iter::once(compiler).chain(args).collect();
        return ExitCode::from(compile::run_compiler(&line).clamp(0, 255) as u8);
    }
    let subcommand = args
        .first()
        .is_some_and(|first| SUBCOMMANDS.contains(&first.as_str()));
    if !subcommand && compile::is_compiler_invocation(&args) {
        return ExitCode::from(compile::run(&args).clamp(0, 255) as u8);
    }
    let matches = match Cli::command().try_get_matches() {
        Ok(matches) => matches,
        Err(e) => return report_clap_error(&e),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => return report_clap_error(&e),
    };
    let result = match cli.command {
        Command::InitRegions(args) => init_regions_command::run(&args),
        Command::Config(args) => {
            let (_, config_matches) = matches.subcommand().expect("the config subcommand");
            config::run(&args, config_matches)
        }
        Command::Summary(args) => summary::run(&args),
        Command::Score(args) => score::run(&args),
        Command::Unify(args) => unify::run(&args),
        Command::Wrap(args) => wrap::run(&args),
        Command::View(args) => view::run(&args),
        Command::Export(args) => export_chrome::run(&args),
        Command::Recover(args) => recover::run(&args),
        Command::Version => print_stdout(&version_line()),
        Command::External(words) => Err(usage_error(format!(
            "unknown command `{}`",
            words[0].to_string_lossy()
        ))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(message)) => {
            eprintln!("pomptrace: {}", escape_controls(&message));
            eprintln!("{}", Cli::command().render_usage());
            ExitCode::from(2)
        }
        Err(Failure::Error(message)) => {
            // Messages name files and what is in them.
            eprintln!("pomptrace: {}", escape_controls(&message));
            ExitCode::from(1)
        }
    }
}

fn version_line() -> String {
    format!("pomptrace {}\n", env!("CARGO_PKG_VERSION"))
}

/// Help and version go to stdout with status 0; anything else is a usage error on stderr, with
/// clap's `error:` spelled `pomptrace:` like every other message of the command.
fn report_clap_error(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    let text = e.render().to_string();
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => match print_stdout(&text) {
            Ok(()) => ExitCode::SUCCESS,
            Err(_) => ExitCode::from(1),
        },
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            eprint!("pomptrace: missing command\n\n{text}");
            ExitCode::from(2)
        }
        _ => {
            let text = text.strip_prefix("error: ").unwrap_or(&text);
            eprint!("pomptrace: {text}");
            // Some of clap's messages (a missing option value) come without the usage.
            if !text.contains("Usage:") {
                eprintln!("\n{}", Cli::command().render_usage());
            }
            ExitCode::from(2)
        }
    }
}

/// Writes to stdout; a closed pipe (e.g. `| head`) is not an error worth a message.
pub fn print_stdout(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure::Error(format!("cannot write standard output: {e}"))),
    }
}
