//! Shared by the examples that time a C OpenMP program plain and instrumented: builds one
//! source file both ways, the instrumented one as README.md describes (the real `opari2`, the
//! region init file of `pomptrace init-regions`, linked against this build's `libpomptrace.so`).

use std::path::{Path, PathBuf};
use std::process::Command;

// The code behind `pomptrace init-regions`, so that the examples do not depend on the
// `pomptrace` binary having been built (cargo builds only the library for an example).
#[allow(dead_code)]
#[path = "../../crates/cli/src/init_regions.rs"]
mod init_regions;

/// Runs a build tool; panics with its output when it fails.
pub fn run_tool(cmd: &mut Command) {
    let shown = format!("{cmd:?}");
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {shown}: {e}"));
    assert!(
        out.status.success(),
        "{shown} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The two builds of one program.
pub struct Builds {
    pub plain: PathBuf,
    pub instrumented: PathBuf,
}

/// Copies `source` (a C file) into `work` and builds it there plain (`cc -O2 -fopenmp`) and
/// instrumented against the `libpomptrace.so` in `lib`.
pub fn build_plain_and_instrumented(source: &Path, lib: &Path, work: &Path) -> Builds {
    let file_name = source.file_name().expect("source file name");
    let stem = source
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("source stem");
    let copy = work.join(file_name);
    std::fs::copy(source, &copy).expect("copy source");
    // The copy's own directory has none of the headers it may include from beside the source.
    let source_dir = source.parent().expect("source directory");

    let plain = work.join(format!("{stem}-plain"));
    run_tool(
        Command::new("cc")
            .args(["-O2", "-fopenmp", "-I"])
            .arg(source_dir)
            .arg(&copy)
            .arg("-o")
            .arg(&plain)
            .arg("-lm"),
    );

    // opari2 NAME.c NAME.mod.c (also writes NAME.c.opari.inc)
    let modified = format!("{stem}.mod.c");
    run_tool(
        Command::new("opari2")
            .arg(file_name)
            .arg(&modified)
            .current_dir(work),
    );
    let object = work.join(format!("{stem}.o"));
    run_tool(
        Command::new("cc")
            .args(["-O2", "-fopenmp", "-I"])
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("include"))
            .arg("-I")
            .arg(source_dir)
            .arg("-c")
            .arg(work.join(&modified))
            .arg("-o")
            .arg(&object),
    );
    // pomptrace init-regions -o pomp2_init.c NAME.o
    let listing = init_regions::nm_listing(&init_regions::nm_program(), &object)
        .unwrap_or_else(|e| panic!("nm: {e}"));
    let mut regions = init_regions::InitRegions::default();
    regions.add_nm_output(&listing);
    let init = work.join("pomp2_init.c");
    std::fs::write(&init, regions.to_c()).expect("write init file");
    let init_object = work.join("pomp2_init.o");
    run_tool(
        Command::new("cc")
            .arg("-c")
            .arg(&init)
            .arg("-o")
            .arg(&init_object),
    );
    let instrumented = work.join(format!("{stem}-pomptrace"));
    run_tool(
        Command::new("cc")
            .arg("-fopenmp")
            .arg(&object)
            .arg(&init_object)
            .arg("-L")
            .arg(lib)
            .arg("-lpomptrace")
            // A runpath (not an rpath): LD_LIBRARY_PATH comes first, so that a benchmark can
            // run the same binary against another POMP2 library.
            .arg(format!("-Wl,--enable-new-dtags,-rpath,{}", lib.display()))
            .arg("-lm")
            .arg("-o")
            .arg(&instrumented),
    );
    Builds {
        plain,
        instrumented,
    }
}
