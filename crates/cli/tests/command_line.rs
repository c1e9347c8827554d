//! The command line's own contract: every subcommand is listed in the help, and a usage error
//! exits with status 2 and one `pomptrace:` line. (The subcommands' work is tested in the
//! top-level `tests/`, which use this crate's binary; having a test here is also what makes
//! `cargo test` build that binary.)

use std::process::Command;

fn pomptrace() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pomptrace"))
}

#[test]
fn help_lists_every_subcommand() {
    let out = pomptrace()
        .arg("--help")
        .output()
        .expect("run pomptrace --help");
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).expect("utf-8 help");
    for subcommand in [
        "init-regions",
        "config",
        "summary",
        "view",
        "export",
        "recover",
        "unify",
    ] {
        assert!(
            help.contains(&format!("pomptrace {subcommand}")),
            "--help does not show `pomptrace {subcommand}`:\n{help}"
        );
    }
}

#[test]
fn usage_error_exits_2_with_one_line() {
    let out = pomptrace()
        .args(["summary", "--no-such-option"])
        .output()
        .expect("run pomptrace");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("pomptrace: "),
        "stderr does not start with `pomptrace: `:\n{stderr}"
    );
}
