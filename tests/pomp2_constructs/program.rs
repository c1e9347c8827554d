//! The programs: a `c-tests/fam_*.c` program instrumented and built once, its line markers,
//! and the region definitions its constructs must produce (doc 4.1).

use super::*;

/// A program from `c-tests/`, instrumented and built once.
pub(crate) struct Program {
    pub(crate) exe: PathBuf,
    /// The file name, as region names show it (`@<base>:<line>`).
    pub(crate) base: String,
    /// The path opari2 was given: the regions' source file.
    pub(crate) path: String,
    pub(crate) marks: BTreeMap<String, u32>,
    pub(crate) _scratch: Scratch,
}

/// A construct of a program, for the region definitions it must produce (doc 4.1).
#[derive(Clone, Copy)]
pub(crate) enum C {
    Parallel,
    For,
    ParallelFor,
    Sections,
    ParallelSections,
    Single,
    Master,
    Critical(Option<&'static str>),
    Ordered,
    Atomic,
    Flush,
    Barrier,
    Taskwait,
    Task,
    User(&'static str),
}

/// A region definition: name, role, paradigm, source file, begin line, end line.
pub(crate) type Def = (String, String, String, String, u32, u32);

impl Program {
    pub(crate) fn build(name: &str) -> Program {
        let stem = name.trim_end_matches(".c");
        let text = std::fs::read_to_string(support::repo_root().join("c-tests").join(name))
            .unwrap_or_else(|e| panic!("read {name}: {e}"));
        let mut marks = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            let mut rest = line;
            while let Some(p) = rest.find("/*@") {
                let after = &rest[p + 3..];
                let end = after.find("*/").expect("marker comment is closed");
                let mark = after[..end].trim().to_string();
                let again = marks.insert(mark.clone(), i as u32 + 1);
                assert!(again.is_none(), "marker {mark} twice in {name}");
                rest = &after[end..];
            }
        }
        let scratch = Scratch::new(stem);
        let source = instrument(name, &scratch.path, &[]);
        let exe = Build::c(&scratch.path).executable(&[source], stem);
        Program {
            exe,
            base: name.to_string(),
            path: scratch.join(name).display().to_string(),
            marks,
            _scratch: scratch,
        }
    }

    pub(crate) fn line(&self, mark: &str) -> u32 {
        *self
            .marks
            .get(mark)
            .unwrap_or_else(|| panic!("no marker /*@{mark}*/ in {}", self.base))
    }
    /// The directive's line (sscl).
    pub(crate) fn s(&self, mark: &str) -> u32 {
        self.line(mark)
    }
    /// The line where the structured block ends (escl).
    pub(crate) fn e(&self, mark: &str) -> u32 {
        self.line(&format!("{mark}.end"))
    }

    /// `!$omp <word> @<file>:<directive line>`
    pub(crate) fn omp(&self, word: &str, mark: &str) -> String {
        format!("!$omp {word} @{}:{}", self.base, self.s(mark))
    }
    /// `!$omp implicit barrier @<file>:<end line>`
    pub(crate) fn ibar_name(&self, mark: &str) -> String {
        format!("!$omp implicit barrier @{}:{}", self.base, self.e(mark))
    }
    pub(crate) fn user(&self, name: &str, mark: &str) -> String {
        format!("!$pomp user({name}) @{}:{}", self.base, self.s(mark))
    }

    /// Enter and Leave of the implicit barrier of the construct at `mark`, with no task run.
    pub(crate) fn ibar(&self, mark: &str) -> Seq {
        Seq::new().region(self.ibar_name(mark), |s| s)
    }

    /// Enter and Leave of `!$omp <word>` at `mark`, as a block for [`Seq::rep`].
    pub(crate) fn pair(&self, word: &str, mark: &str) -> Vec<Tok> {
        let name = self.omp(word, mark);
        vec![
            Tok::Is(format!("Enter {name}")),
            Tok::Is(format!("Leave {name}")),
        ]
    }

    /// One team member's view of the parallel region at `mark` (doc 4.3): the master forks and
    /// joins; everyone records the team (captured under `team:<mark>`) around the region.
    pub(crate) fn team(&self, mark: &str, master: bool, size: u32, body: Seq) -> Seq {
        let tag = format!("team:{mark}");
        Seq::new()
            .when(master, |s| s.is(format!("ThreadFork {size}")))
            .cap(&tag, "ThreadTeamBegin ")
            .region(self.omp("parallel", mark), |s| s.then(body))
            .cap(&tag, "ThreadTeamEnd ")
            .when(master, |s| s.is("ThreadJoin"))
    }

    /// The region definitions of these constructs plus the ten lock API regions: the complete
    /// set a trace of this program must define. All directives here fit on one line and so do
    /// the block ends, hence S1 = S2 and E1 = E2.
    pub(crate) fn defs(&self, constructs: &[(C, &str)]) -> BTreeSet<Def> {
        let mut defs: BTreeSet<Def> = [
            "omp_init_lock",
            "omp_destroy_lock",
            "omp_set_lock",
            "omp_unset_lock",
            "omp_test_lock",
            "omp_init_nest_lock",
            "omp_destroy_nest_lock",
            "omp_set_nest_lock",
            "omp_unset_nest_lock",
            "omp_test_nest_lock",
        ]
        .iter()
        .map(|n| def(n, "WRAPPER", "OPENMP", "OMP", 0, 0))
        .collect();
        for &(c, m) in constructs {
            let file = self.path.as_str();
            let (s, e) = match c {
                // No block: escl = sscl.
                C::Flush | C::Barrier | C::Taskwait => (self.s(m), self.s(m)),
                _ => (self.s(m), self.e(m)),
            };
            let omp = |word: &str, role: &str| def(&self.omp(word, m), role, "OPENMP", file, s, e);
            let ibar = || def(&self.ibar_name(m), "IMPLICIT_BARRIER", "OPENMP", file, e, e);
            let new: Vec<Def> = match c {
                C::Parallel => vec![omp("parallel", "PARALLEL"), ibar()],
                C::For => vec![omp("for", "LOOP"), ibar()],
                C::ParallelFor => vec![omp("parallel", "PARALLEL"), omp("for", "LOOP"), ibar()],
                C::Sections => vec![
                    omp("sections", "SECTIONS"),
                    omp("section", "SECTION"),
                    ibar(),
                ],
                C::ParallelSections => vec![
                    omp("parallel", "PARALLEL"),
                    omp("sections", "SECTIONS"),
                    omp("section", "SECTION"),
                    ibar(),
                ],
                C::Single => vec![
                    omp("single", "SINGLE"),
                    omp("single sblock", "SINGLE_SBLOCK"),
                    ibar(),
                ],
                C::Master => vec![omp("master", "MASTER")],
                C::Critical(name) => vec![
                    match name {
                        Some(n) => omp(&format!("critical ({n})"), "CRITICAL"),
                        None => omp("critical", "CRITICAL"),
                    },
                    omp("critical sblock", "CRITICAL_SBLOCK"),
                ],
                C::Ordered => vec![
                    omp("ordered", "ORDERED"),
                    omp("ordered sblock", "ORDERED_SBLOCK"),
                ],
                C::Atomic => vec![omp("atomic", "ATOMIC")],
                C::Flush => vec![omp("flush", "FLUSH")],
                C::Barrier => vec![omp("barrier", "BARRIER")],
                C::Taskwait => vec![omp("taskwait", "TASK_WAIT")],
                C::Task => vec![omp("create task", "TASK_CREATE"), omp("task", "TASK")],
                C::User(name) => vec![def(&self.user(name, m), "FUNCTION", "USER", file, s, e)],
            };
            defs.extend(new);
        }
        defs
    }
}

pub(crate) fn def(name: &str, role: &str, paradigm: &str, file: &str, begin: u32, end: u32) -> Def {
    (
        name.into(),
        role.into(),
        paradigm.into(),
        file.into(),
        begin,
        end,
    )
}

pub(crate) fn loc_name(thread: u32) -> String {
    if thread == 0 {
        "Master thread".into()
    } else {
        format!("OMP thread {thread}")
    }
}
