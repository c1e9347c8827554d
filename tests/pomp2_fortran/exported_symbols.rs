//! The exported symbols: every Fortran entry point in four spellings.

use super::*;

/// The POMP2 symbols gfortran references for code instrumented by OPARI2 (semantics doc 2.1),
/// without the `pomp2_` prefix and the trailing underscore.
const FORTRAN_ENTRIES: [&str; 63] = [
    "assign_handle",
    "atomic_enter",
    "atomic_exit",
    "barrier_enter",
    "barrier_exit",
    "begin",
    "critical_begin",
    "critical_end",
    "critical_enter",
    "critical_exit",
    "destroy_lock",
    "destroy_nest_lock",
    "do_enter",
    "do_exit",
    "end",
    "finalize",
    "flush_enter",
    "flush_exit",
    "implicit_barrier_enter",
    "implicit_barrier_exit",
    "init",
    "init_lock",
    "init_nest_lock",
    "lib_get_max_threads",
    "master_begin",
    "master_end",
    "off",
    "on",
    "ordered_begin",
    "ordered_end",
    "ordered_enter",
    "ordered_exit",
    "parallel_begin",
    "parallel_end",
    "parallel_fork",
    "parallel_join",
    "section_begin",
    "section_end",
    "sections_enter",
    "sections_exit",
    "set_lock",
    "set_nest_lock",
    "single_begin",
    "single_end",
    "single_enter",
    "single_exit",
    "task_begin",
    "task_create_begin",
    "task_create_end",
    "task_end",
    "taskwait_begin",
    "taskwait_end",
    "test_lock",
    "test_nest_lock",
    "unset_lock",
    "unset_nest_lock",
    "untied_task_begin",
    "untied_task_create_begin",
    "untied_task_create_end",
    "untied_task_end",
    "user_assign_handle",
    "workshare_enter",
    "workshare_exit",
];

/// Defined text symbols of a library, as `nm` lists them.
fn defined_symbols(args: &[&str], file: &Path) -> BTreeSet<String> {
    let out = run(Command::new("nm").args(args).arg(file));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 3 && f[1] == "T").then(|| f[2].to_string())
        })
        .collect()
}

#[test]
fn every_fortran_entry_point_is_exported_in_four_spellings() {
    let lib = library_dir();
    let shared = defined_symbols(&["-D", "--defined-only"], &lib.join("libpomptrace.so"));
    let archive = defined_symbols(&["--defined-only"], &lib.join("libpomptrace.a"));
    for entry in FORTRAN_ENTRIES {
        for name in [
            format!("pomp2_{entry}_"),
            format!("pomp2_{entry}"),
            format!("pomp2_{entry}__"),
            format!("POMP2_{}", entry.to_ascii_uppercase()),
        ] {
            assert!(shared.contains(&name), "libpomptrace.so lacks {name}");
            assert!(archive.contains(&name), "libpomptrace.a lacks {name}");
        }
    }
    let upper = |s: &str| s.starts_with("POMP2_") && !s.chars().any(|c| c.is_ascii_lowercase());
    assert_eq!(
        shared
            .iter()
            .filter(|s| s.starts_with("pomp2_") || upper(s))
            .count(),
        4 * FORTRAN_ENTRIES.len(),
        "exactly the Fortran spellings"
    );

    // Everything the instrumented Fortran test programs reference is there.
    let scratch = Scratch::new("fortran-symbols");
    let mut referenced = BTreeSet::new();
    for file in [
        "f_constructs.f90",
        "f_tasks_locks.f",
        "f_preproc.F90",
        "f_psections.f90",
    ] {
        let source = instrument_fortran(file, &scratch.path);
        let object = source.with_extension("o");
        run(Command::new("gfortran")
            .args(["-fopenmp", "-c"])
            .arg(&source)
            .arg("-o")
            .arg(&object)
            .current_dir(&scratch.path));
        let out = run(Command::new("nm").arg("-u").arg(&object));
        referenced.extend(
            String::from_utf8(out.stdout)
                .unwrap()
                .lines()
                .filter_map(|l| l.split_whitespace().last())
                .filter(|s| s.starts_with("pomp2_"))
                .map(String::from),
        );
    }
    assert!(referenced.len() > 40, "{referenced:?}");
    for name in &referenced {
        assert!(
            shared.contains(name),
            "{name} is referenced but not exported"
        );
    }

    // The C headers declare none of them.
    for header in ["pomp2_lib.h", "pomp2_user_lib.h"] {
        let text =
            std::fs::read_to_string(repo_root().join("include/opari2").join(header)).unwrap();
        assert!(
            !text.contains("pomp2_parallel_fork") && !text.contains("POMP2_PARALLEL_FORK"),
            "{header} declares Fortran symbols"
        );
    }
}
