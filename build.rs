//! Compiles the small C shim through which the library reaches the OpenMP runtime and the
//! init-file functions with weak references (Rust cannot declare weak symbols on stable), and
//! exports the shim's thread-local `pomp_tpd` variables from the shared library (rustc's own
//! export list only names Rust items); marks the shared library never to be unloaded.
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=src/openmp_shim.c");
    cc::Build::new()
        .file("src/openmp_shim.c")
        .warnings(true)
        .extra_warnings(true)
        .compile("pomptrace_openmp_shim");

    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let map = out.join("pomp_tpd.map");
    std::fs::write(&map, "{ global: pomp_tpd_; pomp_tpd; };\n").expect("write version script");
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
        map.display()
    );
    // Never unloaded: the exit, fork and signal handlers and any helper thread point into the
    // library, so a dlclose of the last instrumented library that needed it must leave it mapped.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
}
