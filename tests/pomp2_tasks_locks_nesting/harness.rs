//! Building the `c-tests/` programs with the real `opari2` and pomptrace, running them and
//! reading their traces back.

use super::*;

/// A program of `c-tests/`, instrumented and built.
pub(crate) struct Program {
    pub(crate) name: &'static str,
    pub(crate) source: String,
    pub(crate) exe: PathBuf,
    pub(crate) _scratch: Scratch,
}

impl Program {
    pub(crate) fn build(name: &'static str, opari_args: &[&str]) -> Self {
        let scratch = Scratch::new(name);
        let file = format!("{name}.c");
        let instrumented = instrument(&file, &scratch.path, opari_args);
        let exe = Build::c(&scratch.path).executable(&[instrumented], name);
        let source = std::fs::read_to_string(support::repo_root().join("c-tests").join(&file))
            .expect("read the test program");
        Self {
            name,
            source,
            exe,
            _scratch: scratch,
        }
    }

    /// The value of `#define NAME <value>` in the program.
    pub(crate) fn define(&self, name: &str) -> u64 {
        let prefix = format!("#define {name} ");
        self.source
            .lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no #define {name} in {}.c", self.name))
    }

    /// 1-based number of the one source line that contains `pattern` (only `#pragma` lines
    /// with `pragma_only`).
    pub(crate) fn line_of(&self, pattern: &str, pragma_only: bool) -> usize {
        let lines: Vec<usize> = self
            .source
            .lines()
            .enumerate()
            .filter(|(_, l)| l.contains(pattern))
            .filter(|(_, l)| !pragma_only || l.trim_start().starts_with("#pragma"))
            .map(|(i, _)| i + 1)
            .collect();
        assert_eq!(
            lines.len(),
            1,
            "{pattern:?} in {}.c on lines {lines:?}",
            self.name
        );
        lines[0]
    }

    /// 1-based number of the one `#pragma` line that contains `pattern`.
    pub(crate) fn line(&self, pattern: &str) -> usize {
        self.line_of(pattern, true)
    }

    /// Name of the region `!$omp <word>` of the construct on the `#pragma` line containing
    /// `pattern`.
    pub(crate) fn region(&self, word: &str, pattern: &str) -> String {
        format!("!$omp {word} @{}.c:{}", self.name, self.line(pattern))
    }

    /// Name of the region `!$omp <word>` of the directive right above the statement line that
    /// contains `statement` (an `atomic` and its statement).
    pub(crate) fn region_above(&self, word: &str, statement: &str) -> String {
        let line = self.line_of(statement, false) - 1;
        let pragma = self.source.lines().nth(line - 1).unwrap_or_default();
        assert!(
            pragma.contains(&format!("#pragma omp {word}")),
            "{pragma:?}"
        );
        format!("!$omp {word} @{}.c:{line}", self.name)
    }

    /// Runs the program traced and reads the trace back; checks everything that holds for any
    /// program (see `analyse`).
    pub(crate) fn run(&self, threads: u32, env: &[(&str, &str)], untied: bool) -> Traced {
        let mut label = format!("t{threads}");
        for (k, v) in env {
            label.push_str(&format!("-{k}={v}"));
        }
        let run = run_traced(&self.exe, threads, &label, env);
        let view = View::read(&run.anchor());
        let analysis = analyse(&view, untied);
        Traced {
            label: format!("{} {label}", self.name),
            stdout: run.stdout(),
            anchor: run.anchor(),
            view,
            a: analysis,
        }
    }
}

/// One traced run.
pub(crate) struct Traced {
    pub(crate) label: String,
    pub(crate) stdout: String,
    pub(crate) anchor: PathBuf,
    pub(crate) view: View,
    pub(crate) a: Analysis,
}

impl Traced {
    /// The `key=<number>` the program printed.
    pub(crate) fn printed(&self, key: &str) -> i64 {
        let prefix = format!("{key}=");
        self.stdout
            .split_whitespace()
            .find_map(|w| w.strip_prefix(&prefix))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{}: no {key}= in {:?}", self.label, self.stdout))
    }

    /// Location names, in location order.
    pub(crate) fn location_names(&self) -> Vec<String> {
        self.view
            .locations
            .values()
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// One location per thread of a single top-level team of `n`, numbered by thread number.
    pub(crate) fn assert_team_locations(&self, n: u32) {
        let want: Vec<String> = std::iter::once("Master thread".to_string())
            .chain((1..n).map(|k| format!("OMP thread {k}")))
            .collect();
        assert_eq!(self.location_names(), want, "{}: locations", self.label);
    }

    pub(crate) fn location_id(&self, name: &str) -> u64 {
        *self
            .view
            .locations
            .iter()
            .find(|(_, (n, _))| n == name)
            .unwrap_or_else(|| panic!("{}: no location {name:?}", self.label))
            .0
    }

    /// The implicit barrier region that ends the construct whose region is `construct` (it
    /// spans the construct's last lines: E1..E2, where the construct spans S1..E2).
    pub(crate) fn implicit_barrier_of(&self, construct: &str) -> String {
        let c = self.view.region(construct);
        let found: Vec<&str> = self
            .view
            .regions
            .values()
            .filter(|r| r.role == "IMPLICIT_BARRIER" && r.file == c.file && r.end == c.end)
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(found.len(), 1, "implicit barrier of {construct}: {found:?}");
        found[0].to_string()
    }

    /// Event texts of a location with Comm ids replaced by `labels` (team records only), without
    /// ProgramBegin/End and BufferFlush.
    pub(crate) fn symbolic(&self, location: &str, labels: &HashMap<u64, String>) -> Vec<String> {
        self.view
            .events_of(location)
            .iter()
            .filter(|e| {
                !matches!(
                    e.kind.as_str(),
                    "ProgramBegin" | "ProgramEnd" | "BufferFlush"
                )
            })
            .map(|e| match e.kind.as_str() {
                "ThreadTeamBegin" | "ThreadTeamEnd" => {
                    let comm = num(e, 0);
                    let label = labels.get(&comm).cloned().unwrap_or(comm.to_string());
                    format!("{} {label}", e.kind)
                }
                _ => e.text(),
            })
            .collect()
    }

    /// The record kinds must be exactly `expected` (BufferFlush, which only says that the
    /// writer stalled, excepted); zero counts may be left out.
    pub(crate) fn assert_kinds(&self, expected: &[(&str, usize)]) {
        let mut want: BTreeMap<String, usize> = BTreeMap::new();
        for (k, n) in expected {
            if *n > 0 {
                *want.entry(k.to_string()).or_default() += n;
            }
        }
        let mut have = self.view.kind_counts();
        have.remove("BufferFlush");
        assert_eq!(have, want, "{}: records per kind", self.label);
    }

    /// Records per kind of a program with one parallel region of `n` threads that creates
    /// `tasks` tasks: one fork and join, a team begin and end per thread, `enters` Enter/Leave
    /// pairs, each task created and completed once, one switch per task begin and per resume.
    pub(crate) fn assert_one_team_task_kinds(&self, n: usize, enters: usize, tasks: usize) {
        self.assert_kinds(&[
            ("ProgramBegin", 1),
            ("ProgramEnd", 1),
            ("ThreadFork", 1),
            ("ThreadJoin", 1),
            ("ThreadTeamBegin", n),
            ("ThreadTeamEnd", n),
            ("Enter", enters),
            ("Leave", enters),
            ("ThreadTaskCreate", tasks),
            ("ThreadTaskComplete", tasks),
            ("ThreadTaskSwitch", tasks + self.a.task_resumes),
        ]);
    }

    /// Enters per region name must be exactly `expected` (zero counts may be left out).
    pub(crate) fn assert_enters(&self, expected: &[(&str, usize)]) {
        let mut want: BTreeMap<String, usize> = BTreeMap::new();
        for (k, n) in expected {
            if *n > 0 {
                *want.entry(k.to_string()).or_default() += n;
            }
        }
        assert_eq!(self.a.enters, want, "{}: Enters per region", self.label);
    }

    /// The common task assertions: `tasks` created, begun and completed, at most
    /// `restore_points` resumes; the switch count in the kind counts is begins + resumes.
    pub(crate) fn assert_tasks(&self, tasks: usize, restore_points: usize) {
        let a = &self.a;
        assert_eq!(a.tasks_created, tasks, "{}: tasks created", self.label);
        assert_eq!(a.tasks_completed, tasks, "{}: tasks completed", self.label);
        assert_eq!(a.task_begins, tasks, "{}: task begins", self.label);
        assert!(
            a.task_resumes <= restore_points,
            "{}: {} resumes, but only {restore_points} restore points",
            self.label,
            a.task_resumes
        );
    }

    /// The Comm used by ThreadTeamBegin records whose members (by thread number) are these
    /// locations and whose parent is `parent`.
    pub(crate) fn used_comm(&self, members: &[&str], parent: Option<u64>) -> u64 {
        let ids: Vec<u64> = members.iter().map(|m| self.location_id(m)).collect();
        let found: Vec<u64> = self
            .a
            .team_begins
            .keys()
            .copied()
            .filter(|c| self.view.comms[&(*c as u32)].members == ids)
            .filter(|c| self.parent_of(*c) == parent)
            .collect();
        assert_eq!(
            found.len(),
            1,
            "{}: Comms used with members {members:?} and parent {parent:?}: {found:?} (used: {:?})",
            self.label,
            self.used_comms()
        );
        found[0]
    }

    pub(crate) fn parent_of(&self, comm: u64) -> Option<u64> {
        self.view.comms[&(comm as u32)].parent.map(u64::from)
    }

    /// Used Comms with member names and parent, for messages.
    pub(crate) fn used_comms(&self) -> Vec<(u64, Vec<String>, Option<u32>)> {
        self.a
            .team_begins
            .keys()
            .map(|c| {
                let comm = &self.view.comms[&(*c as u32)];
                let names = comm
                    .members
                    .iter()
                    .map(|m| self.view.locations[m].0.clone())
                    .collect();
                (*c, names, comm.parent)
            })
            .collect()
    }
}

pub(crate) fn num(e: &Ev, i: usize) -> u64 {
    e.detail[i]
        .parse()
        .unwrap_or_else(|_| panic!("field {i} of {e:?} is not a number"))
}
