//! A compiler command line (gcc's conventions, which clang, icx, nvc and the MPI wrappers share)
//! seen by the compiler wrapper: which words are sources, objects and options, whether it
//! compiles, links or only preprocesses, and the flags a single source's compile needs. Pure.

/// The languages opari2 instruments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    C,
    Cxx,
    Fortran,
}

/// The language of a source file, by its extension as gcc decides it.
pub fn source_language(path: &str) -> Option<Language> {
    let ext = path.rsplit_once('.')?.1;
    if path.ends_with('/') {
        return None;
    }
    match ext {
        "c" => Some(Language::C),
        "cc" | "cp" | "cxx" | "cpp" | "CPP" | "c++" | "C" => Some(Language::Cxx),
        "f" | "for" | "ftn" | "F" | "FOR" | "FTN" | "fpp" | "FPP" | "f90" | "f95" | "f03"
        | "f08" | "F90" | "F95" | "F03" | "F08" => Some(Language::Fortran),
        _ => None,
    }
}

/// Options whose value is the next word.
const TAKES_VALUE: &[&str] = &[
    "-o",
    "-I",
    "-L",
    "-l",
    "-D",
    "-U",
    "-include",
    "-imacros",
    "-isystem",
    "-idirafter",
    "-iprefix",
    "-iwithprefix",
    "-iwithprefixbefore",
    "-iquote",
    "-isysroot",
    "-imultilib",
    "-MF",
    "-MT",
    "-MQ",
    "-x",
    "-Xlinker",
    "-Xassembler",
    "-Xpreprocessor",
    "-Xclang",
    "-u",
    "-T",
    "-z",
    "-aux-info",
    "-J",
    "-e",
    "--param",
    "-dumpbase",
    "-dumpdir",
    "-target",
    "-arch",
    "-module",
];

/// Options that make the command only preprocess, only check or stop before the object: the
/// wrapper runs those unchanged.
const NOT_COMPILING: &[&str] = &["-E", "-M", "-MM", "-S", "-fsyntax-only", "-###"];

/// Options that turn OpenMP on, in the spellings of the common compilers.
fn is_openmp_flag(arg: &str) -> bool {
    matches!(
        arg,
        "-fopenmp" | "-qopenmp" | "-openmp" | "-fiopenmp" | "-mp" | "-homp" | "-qsmp=omp"
    ) || arg.starts_with("-fopenmp=")
        || arg.starts_with("-mp=")
}

/// A language name of gcc's `-x` (lower case, unlike Intel's `-xHost` or `-xCORE-AVX2`).
fn is_gcc_language(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_lowercase())
}

/// Options that write make dependencies as a side effect of a compile.
fn dependency_option(arg: &str) -> Option<bool> {
    // Some(takes a value)
    match arg {
        "-MD" | "-MMD" | "-MP" | "-MG" => Some(false),
        "-MF" | "-MT" | "-MQ" => Some(true),
        _ if ["-MF", "-MT", "-MQ"].iter().any(|o| arg.starts_with(o)) => Some(false),
        _ => None,
    }
}

/// One word of the command line, classified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Word {
    /// A source opari2 can instrument.
    Source(Language),
    /// Another input: an object, an archive, a shared library, an assembler file.
    Input,
    /// `-o` and its value (the value follows as `OutputValue`, or is joined: `-oFILE`).
    Output,
    OutputValue,
    /// `-c`.
    CompileOnly,
    /// A make-dependency option (`-MD`, `-MF file`, ...); values follow as `DependencyValue`.
    Dependency,
    DependencyValue,
    /// An option only the linker needs (`-l`, `-L`, `-Wl,`, `-Xlinker` and its value).
    LinkOnly,
    /// `-include FILE` / `-imacros FILE` (with its value): run by the preprocessor, so not
    /// again on the already preprocessed file.
    ForcedInclude,
    /// Any other option or option value.
    Option,
}

/// What the wrapper does with a command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Run the compiler unchanged; the reason is shown with --verbose.
    PassThrough(&'static str),
    /// `-c`: compile each source to its object.
    Compile,
    /// Compile the sources (if any) and link.
    Link,
}

#[derive(Clone, Debug)]
pub struct CommandLine {
    pub args: Vec<String>,
    pub words: Vec<Word>,
    pub openmp: bool,
    pub shared: bool,
    /// `-static` / `-static-pie`: no shared library at all.
    pub static_program: bool,
    pub plan: Plan,
}

impl CommandLine {
    pub fn parse(args: &[String]) -> CommandLine {
        let mut words = Vec::with_capacity(args.len());
        let mut pending: Option<Word> = None;
        let mut pass_through: Option<&'static str> = None;
        let (mut openmp, mut shared, mut compile_only) = (false, false, false);
        let mut static_program = false;
        for arg in args {
            if let Some(value_word) = pending.take() {
                words.push(value_word);
                continue;
            }
            let a = arg.as_str();
            let word = if a == "-" {
                pass_through.get_or_insert("a source on standard input");
                Word::Input
            } else if a.starts_with('@') {
                pass_through.get_or_insert("a response file");
                Word::Option
            } else if !a.starts_with('-') {
                source_language(a).map_or(Word::Input, Word::Source)
            } else if a == "-c" {
                compile_only = true;
                Word::CompileOnly
            } else if a == "-o" {
                pending = Some(Word::OutputValue);
                Word::Output
            } else if a.starts_with("-o") {
                Word::Output
            } else if NOT_COMPILING.contains(&a) {
                pass_through.get_or_insert("no object is compiled");
                Word::Option
            } else if a == "-x" || a.strip_prefix("-x").is_some_and(is_gcc_language) {
                pass_through.get_or_insert("-x names the language");
                if a == "-x" {
                    pending = Some(Word::Option);
                }
                Word::Option
            } else if let Some(takes_value) = dependency_option(a) {
                if takes_value {
                    pending = Some(Word::DependencyValue);
                }
                Word::Dependency
            } else if a == "-Xlinker" {
                pending = Some(Word::LinkOnly);
                Word::LinkOnly
            } else if a.starts_with("-l") || a.starts_with("-L") || a.starts_with("-Wl,") {
                if a == "-l" || a == "-L" {
                    pending = Some(Word::LinkOnly);
                }
                Word::LinkOnly
            } else if a == "-include" || a == "-imacros" {
                pending = Some(Word::ForcedInclude);
                Word::ForcedInclude
            } else {
                if is_openmp_flag(a) {
                    openmp = true;
                }
                if a == "-shared" || a == "-r" {
                    shared = true;
                }
                if a == "-static" || a == "-static-pie" {
                    static_program = true;
                }
                if TAKES_VALUE.contains(&a) {
                    pending = Some(Word::Option);
                }
                Word::Option
            };
            words.push(word);
        }
        let has_sources = words
            .iter()
            .any(|w| matches!(w, Word::Source(_) | Word::Input));
        let plan = match pass_through {
            Some(reason) => Plan::PassThrough(reason),
            None if !has_sources => Plan::PassThrough("no input files"),
            None if compile_only => Plan::Compile,
            None => Plan::Link,
        };
        CommandLine {
            args: args.to_vec(),
            words,
            openmp,
            shared,
            static_program,
            plan,
        }
    }

    /// The sources opari2 can instrument: (index in `args`, language).
    pub fn sources(&self) -> Vec<(usize, Language)> {
        self.words
            .iter()
            .enumerate()
            .filter_map(|(i, w)| match w {
                Word::Source(language) => Some((i, *language)),
                _ => None,
            })
            .collect()
    }

    /// The other inputs (objects, archives, shared libraries, assembler files).
    pub fn inputs(&self) -> Vec<&str> {
        self.select(|w| matches!(w, Word::Input))
    }

    /// The `-o` file, if given.
    pub fn output(&self) -> Option<&str> {
        let i = self.words.iter().position(|w| *w == Word::Output)?;
        match self.args[i].strip_prefix("-o").filter(|v| !v.is_empty()) {
            Some(joined) => Some(joined),
            None => self.args.get(i + 1).map(String::as_str),
        }
    }

    /// The make-dependency options, as given.
    pub fn dependency_options(&self) -> Vec<&str> {
        self.select(|w| matches!(w, Word::Dependency | Word::DependencyValue))
    }

    /// The flags that preprocessing one source needs: everything but the inputs, `-c`, `-o`,
    /// the dependency options and the linker's options.
    pub fn preprocess_flags(&self) -> Vec<&str> {
        self.select(|w| matches!(w, Word::Option | Word::ForcedInclude))
    }

    /// `preprocess_flags` for a step the wrapper adds on its own (preprocessing for opari2,
    /// make dependencies), without `-v`: what the compiler reports belongs to the user's own
    /// compile and link, and build systems parse it. CMake's FindOpenMP takes the first line
    /// that looks like a link line, and the include search list of the preprocessing step
    /// named the source directory, which a try-compile directory like `TryCompile-ldQ2x9`
    /// matches: no OpenMP libraries, and a link that failed.
    pub fn internal_step_flags(&self) -> Vec<&str> {
        let mut flags = self.preprocess_flags();
        flags.retain(|f| *f != "-v");
        flags
    }

    /// The flags that compiling one source needs (after preprocessing, `-include` is done).
    pub fn compile_flags(&self) -> Vec<&str> {
        self.select(|w| matches!(w, Word::Option))
    }

    fn select(&self, keep: impl Fn(&Word) -> bool) -> Vec<&str> {
        self.words
            .iter()
            .zip(&self.args)
            .filter(|(w, _)| keep(w))
            .map(|(_, a)| a.as_str())
            .collect()
    }
}

/// The object file `-c` writes for `source` when no `-o` is given: its name, in the working
/// directory, with the extension replaced by `.o`.
pub fn default_object(source: &str) -> String {
    let name = source.rsplit('/').next().unwrap_or(source);
    let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
    format!("{stem}.o")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> CommandLine {
        let args: Vec<String> = text.split_whitespace().map(String::from).collect();
        CommandLine::parse(&args)
    }

    #[test]
    fn languages_by_extension() {
        assert_eq!(source_language("a.c"), Some(Language::C));
        assert_eq!(source_language("dir.x/a.cpp"), Some(Language::Cxx));
        assert_eq!(source_language("a.C"), Some(Language::Cxx));
        assert_eq!(source_language("m.f90"), Some(Language::Fortran));
        assert_eq!(source_language("m.F"), Some(Language::Fortran));
        assert_eq!(source_language("a.o"), None);
        assert_eq!(source_language("a.s"), None);
        assert_eq!(source_language("a.i"), None);
        assert_eq!(source_language("noext"), None);
    }

    #[test]
    fn a_compile_with_dependencies_and_includes() {
        let l =
            line("-fopenmp -O2 -Iinc -I inc2 -MD -MT x.o -MF x.d -include cfg.h -c src/x.c -o x.o");
        assert_eq!(l.plan, Plan::Compile);
        assert!(l.openmp);
        assert_eq!(l.sources(), vec![(13, Language::C)]);
        assert_eq!(l.output(), Some("x.o"));
        assert_eq!(l.dependency_options(), ["-MD", "-MT", "x.o", "-MF", "x.d"]);
        assert_eq!(
            l.preprocess_flags(),
            ["-fopenmp", "-O2", "-Iinc", "-I", "inc2", "-include", "cfg.h"]
        );
        assert_eq!(
            l.compile_flags(),
            ["-fopenmp", "-O2", "-Iinc", "-I", "inc2"]
        );
    }

    #[test]
    fn a_link_keeps_the_order_of_its_inputs() {
        let l = line("-fopenmp main.o lib/libk.a -o prog -Llib -lm -Wl,--as-needed");
        assert_eq!(l.plan, Plan::Link);
        assert_eq!(l.inputs(), ["main.o", "lib/libk.a"]);
        assert_eq!(l.output(), Some("prog"));
        assert!(!l.shared && !l.static_program);
        assert!(line("-static -fopenmp a.o").static_program);
        assert_eq!(l.compile_flags(), ["-fopenmp"]);
        assert!(line("-shared -fopenmp a.o -o liba.so").shared);
        let joined = line("-fopenmp a.c -oprog");
        assert_eq!(joined.output(), Some("prog"));
        assert_eq!(joined.plan, Plan::Link);
    }

    #[test]
    fn what_passes_through() {
        let pass = |text: &str| matches!(line(text).plan, Plan::PassThrough(_));
        assert!(pass("--version"));
        assert!(pass("-v"));
        assert!(pass("-dumpversion"));
        assert!(pass("-fopenmp -E a.c"));
        assert!(pass("-fopenmp -M a.c"));
        assert!(pass("-fopenmp -MM a.c"));
        assert!(pass("-fopenmp -S a.c"));
        assert!(pass("-fopenmp -x c -c -"));
        assert!(pass("-fopenmp -xc -c a.c"));
        assert!(!pass("-fopenmp -xHost -c a.c"));
        assert!(pass("@args.rsp"));
        assert!(pass("-fopenmp -c -"));
        assert!(!pass("-fopenmp -c a.c"));
        assert!(!pass("-c a.c")); // no OpenMP: the wrapper decides, not the parser
        assert!(!line("-c a.c").openmp);
        assert!(line("-fopenmp=libomp -c a.c").openmp);
        assert!(!line("-fopenmp-simd -c a.c").openmp);
    }

    #[test]
    fn default_objects() {
        assert_eq!(default_object("src/dir/x.c"), "x.o");
        assert_eq!(default_object("y.f90"), "y.o");
    }
}
