//! `#pragma pomp inst off` / `on` (POMP2_Off / POMP2_On): while off, only the team structure
//! of parallel regions is recorded (fork, team begin/end with the parallel region, join), as
//! the reference does; everything else resumes when it is switched on again. A region entered
//! while on and left while off is closed at the end, so the trace stays well nested.

mod support;

use support::pomp2::*;
use support::Scratch;

/// Line of the first line of `c-tests/inst_onoff.c` containing `text`, after line `after`.
fn line(text: &str, after: usize) -> usize {
    let source =
        std::fs::read_to_string(support::repo_root().join("c-tests/inst_onoff.c")).unwrap();
    source
        .lines()
        .enumerate()
        .skip(after)
        .find(|(_, l)| l.contains(text))
        .map(|(i, _)| i + 1)
        .unwrap()
}

#[test]
fn recording_off_keeps_only_the_team_structure() {
    let scratch = Scratch::new("on-off");
    let source = instrument("inst_onoff.c", &scratch.path, &[]);
    let exe = Build::c(&scratch.path).executable(&[source], "inst_onoff");
    let (par_off, par_on) = (
        line("omp parallel", 0),
        line("omp parallel", line("omp parallel", 0)),
    );
    let for_on = line("omp for", par_on);
    let (end_for_on, end_par_on) = (for_on + 1, line("}", for_on + 1));
    let toggled = line("inst begin(toggled)", 0);
    for n in [1u32, 2, 4] {
        let run = run_traced(&exe, n, &format!("t{n}"), &[]);
        assert_eq!(run.stdout(), "s=58\n");
        let view = View::read(&run.anchor());
        view.assert_well_formed();
        let off_team = |teams: &str| {
            vec![
                format!("ThreadTeamBegin {teams}"),
                format!("Enter !$omp parallel @inst_onoff.c:{par_off}"),
                format!("Leave !$omp parallel @inst_onoff.c:{par_off}"),
                format!("ThreadTeamEnd {teams}"),
            ]
        };
        let on_team = |teams: &str| {
            vec![
                format!("ThreadTeamBegin {teams}"),
                format!("Enter !$omp parallel @inst_onoff.c:{par_on}"),
                format!("Enter !$omp for @inst_onoff.c:{for_on}"),
                format!("Enter !$omp implicit barrier @inst_onoff.c:{end_for_on}"),
                format!("Leave !$omp implicit barrier @inst_onoff.c:{end_for_on}"),
                format!("Leave !$omp for @inst_onoff.c:{for_on}"),
                format!("Enter !$omp implicit barrier @inst_onoff.c:{end_par_on}"),
                format!("Leave !$omp implicit barrier @inst_onoff.c:{end_par_on}"),
                format!("Leave !$omp parallel @inst_onoff.c:{par_on}"),
                format!("ThreadTeamEnd {teams}"),
            ]
        };
        // Both regions have the same team shape, so they share a Comm.
        let team = view
            .events_of("Master thread")
            .iter()
            .find(|e| e.kind == "ThreadTeamBegin")
            .unwrap()
            .detail[0]
            .clone();
        let toggled = format!("!$pomp user(toggled) @inst_onoff.c:{toggled}");
        let mut master = vec!["ProgramBegin".to_string(), format!("ThreadFork {n}")];
        master.extend(off_team(&team));
        master.push("ThreadJoin".into());
        master.push(format!("ThreadFork {n}"));
        master.extend(on_team(&team));
        master.push("ThreadJoin".into());
        master.push(format!("Enter {toggled}"));
        // Left while off: closed at the end of the measurement, before ProgramEnd.
        master.push(format!("Leave {toggled}"));
        master.push("ProgramEnd 0".into());
        let actual: Vec<String> = view
            .texts("Master thread", &[])
            .into_iter()
            .map(|t| {
                if t.starts_with("ProgramBegin") {
                    "ProgramBegin".into()
                } else {
                    t
                }
            })
            .collect();
        assert_eq!(actual, master, "{n} threads");
        for k in 1..n {
            let mut worker = off_team(&team);
            worker.extend(on_team(&team));
            assert_eq!(
                view.texts(&format!("OMP thread {k}"), &[]),
                worker,
                "{n} threads, thread {k}"
            );
        }
    }
}
