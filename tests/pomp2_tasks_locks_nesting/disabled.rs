//! `POMPTRACE_ENABLE=0`: the instrumented programs still do their OpenMP work exactly (tasks,
//! waits, locks, nested teams), print what the traced run prints, and write nothing. Disabled
//! calls take a short path once the measurement knows it has ended; the task a waiting region
//! restores and the team bookkeeping must survive it.

use super::*;

#[test]
fn disabled_runs_compute_what_traced_runs_compute_and_write_nothing() {
    let programs: [(&str, &str, &[&str]); 5] = [
        ("task_fib", "fib", &[]),
        ("task_producer", "sum", &[]),
        ("task_untied", "sum", &["--omp-task-untied=keep"]),
        ("task_if0", "sum", &[]),
        ("nested_2x3", "sum", &[]),
    ];
    for (name, key, opari_args) in programs {
        let p = Program::build(name, opari_args);
        for t in [1, 2] {
            let traced = p.run(t, &[("OMP_MAX_ACTIVE_LEVELS", "2")], name == "task_untied");
            let label = format!("disabled-t{t}");
            let off = run_traced(
                &p.exe,
                t,
                &label,
                &[("POMPTRACE_ENABLE", "0"), ("OMP_MAX_ACTIVE_LEVELS", "2")],
            );
            assert!(off.output.status.success(), "{name} t{t}: {}", off.stderr());
            let printed = |stdout: &str| {
                let prefix = format!("{key}=");
                stdout
                    .split_whitespace()
                    .find_map(|w| w.strip_prefix(&prefix).map(str::to_string))
                    .unwrap_or_else(|| panic!("{name} t{t}: no {key}= in {stdout:?}"))
            };
            assert_eq!(
                printed(&off.stdout()),
                traced.printed(key).to_string(),
                "{name} t{t}"
            );
            assert_eq!(
                off.stderr(),
                "",
                "{name} t{t}: a disabled run prints nothing"
            );
            assert!(
                !off.experiment.exists(),
                "{name} t{t}: a disabled run created {}",
                off.experiment.display()
            );
        }
    }
}
