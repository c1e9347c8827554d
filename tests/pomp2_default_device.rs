//! pthreads that open OpenMP teams while the program reads and sets the default device in its
//! regions (`c-tests/default_device_teams.c`) read exactly what the uninstrumented build reads,
//! run after run, also when the measurement ends while their teams are in flight: a team
//! member finds its parent without leaving a trace in the program's ICVs. Through the wrapper
//! (`opari2 --omp-tpd`) the library does not write the ICV at all; in the classic route it
//! uses it as a channel to teams of other threads of control and puts it back before the
//! program's code runs.

#[path = "support/routes.rs"]
mod routes;
mod support;

use routes::{Route, ROUTES};
use support::pomp2::{run_traced_with_args, View};
use support::Scratch;

const PTHREADS: &str = "3";
const REGIONS: &str = "60";
const RUNS: usize = 50;

/// The number on the program's "device writes by others <n>" line (calls of
/// omp_set_default_device that did not come from its own code).
fn device_writes_by_others(stderr: &str) -> u64 {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("device writes by others "))
        .unwrap_or_else(|| panic!("no count of device writes in:\n{stderr}"))
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn teams_of_pthreads_read_the_default_device_an_uninstrumented_build_reads() {
    let scratch = Scratch::new("default-device");
    let flags = ["-DCOUNT_DEVICE_WRITES"];
    let plain = routes::build_plain(&scratch.path, "default_device_teams.c", &flags);
    let expected = support::run(support::pomp2::program(&plain).args([PTHREADS, REGIONS]));
    let expected_stdout = String::from_utf8_lossy(&expected.stdout).into_owned();
    assert_eq!(
        device_writes_by_others(&String::from_utf8_lossy(&expected.stderr)),
        0
    );
    assert_eq!(expected_stdout.lines().count(), 4, "{expected_stdout}");

    for route in ROUTES {
        let exe = routes::build(route, &scratch.path, "default_device_teams.c", &flags);
        let mut channel_writes = 0;
        for run in 0..RUNS {
            // Every other run ends the measurement once the pthreads have opened a few teams
            // (a different number each time), while they go on opening more.
            let finalize_after = (run % 2 == 1).then(|| (run % 25 + 1).to_string());
            let mut args = vec![PTHREADS, REGIONS];
            args.extend(finalize_after.as_deref());
            let label = format!("{}-{run}", route.label());
            let traced = run_traced_with_args(&exe, &args, 2, &label, &[]);
            let stderr = traced.stderr();
            assert_eq!(
                traced.stdout(),
                expected_stdout,
                "{route:?} run {run} (args {args:?}) read other default devices than the \
                 uninstrumented build; stderr:\n{stderr}"
            );
            assert!(
                !stderr.contains("another default device") && !stderr.contains("internal error"),
                "{route:?} run {run}:\n{stderr}"
            );
            let writes = device_writes_by_others(&stderr);
            if route == Route::Wrapper {
                assert_eq!(
                    writes, 0,
                    "run {run}: the library wrote the default device of a program \
                     instrumented with --omp-tpd"
                );
            }
            channel_writes += writes;
            if run < 2 {
                // The trace of a whole run and of one ended early both read back.
                View::read(&traced.anchor()).assert_well_formed();
            }
        }
        if route == Route::Classic {
            assert!(
                channel_writes > 0,
                "the classic route's teams of pthreads were placed without the ICV channel: \
                 this test no longer covers putting it back"
            );
        }
    }
}
