//! The link-time init file of OPARI2 (`pomp2_parse_init_regions.awk`, see
//! docs/pomp2-semantics.md 7.1–7.2): find the `POMP2_Init_reg_<id>_<n>` and
//! `POMP2_USER_Init_reg_<id>_<n>` functions in `nm` output and write a C file that calls them.
//!
//! Rules, as in the awk script:
//! * the symbol, after optional leading underscores and an optional `.`, starts
//!   case-insensitively with `pomp2_init_reg_` (OpenMP) or `pomp2_user_init_reg_` (user),
//!   followed by an alphanumeric id, `_`, and a count without leading zero, and optionally one
//!   trailing `_` (gfortran);
//! * the `nm` type letter is `T`, `D` or `A`;
//! * names containing `.ITC.` (Intel IPO artefacts) are dropped;
//! * a symbol whose `<id>_<n>` was already seen (for the same paradigm) is counted and called
//!   once;
//! * the `.` is removed from the emitted name (PowerPC function-descriptor symbols).
//!
//! Unlike the awk script (hash order, no version function) the calls are sorted by name and
//! `POMP2_Get_opari2_version` is emitted too.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// The OPARI2 version the generated file reports.
pub const OPARI2_VERSION: &str = "2.0.8";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Paradigm {
    OpenMp,
    User,
}

/// One init function found in `nm` output.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct InitSymbol {
    pub paradigm: Paradigm,
    /// The C name to declare and call.
    pub symbol: String,
    /// `<id>_<n>`: the de-duplication key.
    pub key: String,
    /// `<n>`: the instrumenter's region count for the compile unit.
    pub count: u64,
}

/// Recognises an init function from an `nm` type letter and symbol name.
pub fn parse_symbol(type_letter: &str, name: &str) -> Option<InitSymbol> {
    if !matches!(type_letter, "T" | "D" | "A") || name.contains(".ITC.") {
        return None;
    }
    let underscores = name.len() - name.trim_start_matches('_').len();
    let after_underscores = &name[underscores..];
    let body = after_underscores
        .strip_prefix('.')
        .unwrap_or(after_underscores);
    let (paradigm, rest) = [
        ("pomp2_user_init_reg_", Paradigm::User),
        ("pomp2_init_reg_", Paradigm::OpenMp),
    ]
    .into_iter()
    .find_map(|(prefix, paradigm)| {
        let head = body.get(..prefix.len())?;
        head.eq_ignore_ascii_case(prefix)
            .then(|| (paradigm, &body[prefix.len()..]))
    })?;

    let id_len = rest.bytes().take_while(u8::is_ascii_alphanumeric).count();
    if id_len == 0 {
        return None;
    }
    let (id, rest) = rest.split_at(id_len);
    let rest = rest.strip_prefix('_')?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let (count, tail) = rest.split_at(digits);
    if count.is_empty() || (count.len() > 1 && count.starts_with('0')) {
        return None;
    }
    if !(tail.is_empty() || tail == "_") {
        return None;
    }
    Some(InitSymbol {
        paradigm,
        symbol: format!("{}{}", &name[..underscores], body),
        key: format!("{id}_{count}"),
        count: count.parse().unwrap_or(u64::MAX),
    })
}

/// The init functions of one paradigm: name → count, and the keys seen so far.
#[derive(Default, Debug)]
struct Found {
    symbols: BTreeMap<String, u64>,
    keys: BTreeSet<String>,
}

impl Found {
    fn add(&mut self, symbol: InitSymbol) {
        if self.keys.insert(symbol.key) {
            self.symbols.insert(symbol.symbol, symbol.count);
        }
    }
    fn total(&self) -> u64 {
        self.symbols
            .values()
            .fold(0u64, |sum, n| sum.saturating_add(*n))
    }
}

/// Everything found so far, over any number of `nm` listings.
#[derive(Default, Debug)]
pub struct InitRegions {
    openmp: Found,
    user: Found,
}

impl InitRegions {
    /// Adds the init functions listed in `nm` (BSD format) output. Lines that are not symbol
    /// lines (file headers, blank lines, undefined symbols) are ignored.
    pub fn add_nm_output(&mut self, text: &str) {
        for line in text.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (type_letter, name) = match fields.as_slice() {
                [_, t, name, ..] => (*t, *name),
                [t, name] => (*t, *name),
                _ => continue,
            };
            if let Some(symbol) = parse_symbol(type_letter, name) {
                match symbol.paradigm {
                    Paradigm::OpenMp => self.openmp.add(symbol),
                    Paradigm::User => self.user.add(symbol),
                }
            }
        }
    }

    /// The OpenMP init function names, sorted.
    pub fn openmp_symbols(&self) -> impl Iterator<Item = &str> {
        self.openmp.symbols.keys().map(String::as_str)
    }

    /// The user-region init function names, sorted.
    pub fn user_symbols(&self) -> impl Iterator<Item = &str> {
        self.user.symbols.keys().map(String::as_str)
    }

    /// The generated C file.
    pub fn to_c(&self) -> String {
        let mut c = String::new();
        c.push_str(
            "/* POMP2 region initialisation, generated by pomptrace init-regions\n \
             * (compatible with the init file of OPARI2's link step). Do not edit. */\n\n",
        );
        c.push_str("#include <stddef.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
        let all: BTreeSet<&str> = self.openmp_symbols().chain(self.user_symbols()).collect();
        for symbol in &all {
            c.push_str(&format!("extern void {symbol}(void);\n"));
        }
        if !all.is_empty() {
            c.push('\n');
        }
        for (init, get, found) in [
            ("POMP2_Init_regions", "POMP2_Get_num_regions", &self.openmp),
            (
                "POMP2_USER_Init_regions",
                "POMP2_USER_Get_num_regions",
                &self.user,
            ),
        ] {
            c.push_str(&format!("void\n{init}(void)\n{{\n"));
            for symbol in found.symbols.keys() {
                c.push_str(&format!("    {symbol}();\n"));
            }
            c.push_str("}\n\n");
            c.push_str(&format!(
                "size_t\n{get}(void)\n{{\n    return {};\n}}\n\n",
                found.total()
            ));
        }
        c.push_str(&format!(
            "const char*\nPOMP2_Get_opari2_version(void)\n{{\n    return \"{OPARI2_VERSION}\";\n}}\n\n"
        ));
        c.push_str("#ifdef __cplusplus\n}\n#endif\n");
        c
    }
}

/// The nm program and its leading arguments: `$NM` split on blanks, or `nm`.
pub fn nm_program() -> Vec<String> {
    let words: Vec<String> = std::env::var("NM")
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect();
    if words.is_empty() {
        vec!["nm".to_string()]
    } else {
        words
    }
}

/// Whether `path` looks like a shared library: an ELF file of type ET_DYN, or a `.so` /
/// `.so.N` / `.dylib` name.
fn is_shared_library(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name.ends_with(".so") || name.contains(".so.") || name.ends_with(".dylib") {
        return true;
    }
    let mut header = [0u8; 18];
    let ok = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut header))
        .is_ok();
    if !ok || &header[..4] != b"\x7fELF" {
        return false;
    }
    let e_type = match header[5] {
        2 => u16::from_be_bytes([header[16], header[17]]),
        _ => u16::from_le_bytes([header[16], header[17]]),
    };
    e_type == 3
}

/// Runs `NM -B [extra] path`; Ok(stdout) when it succeeded, Err(message) otherwise.
fn run_nm(nm: &[String], extra: &[&str], path: &Path) -> Result<String, String> {
    let mut cmd = Command::new(&nm[0]);
    cmd.args(&nm[1..]).arg("-B").args(extra).arg(path);
    let shown = format!(
        "{} -B {}{}",
        nm.join(" "),
        extra.iter().map(|e| format!("{e} ")).collect::<String>(),
        path.display()
    );
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run `{}`: {e}", nm[0]))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "`{shown}` failed ({}): {}",
            out.status,
            stderr.trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The `nm -B` listing of one object, archive or shared library; for a shared library the
/// dynamic symbol table (`nm -B -D`) is appended, so that stripped libraries work too.
pub fn nm_listing(nm: &[String], path: &Path) -> Result<String, String> {
    let plain = run_nm(nm, &[], path);
    if !is_shared_library(path) {
        return plain;
    }
    match (plain, run_nm(nm, &["-D"], path)) {
        (Ok(mut a), Ok(b)) => {
            a.push_str(&b);
            Ok(a)
        }
        (Ok(a), Err(_)) | (Err(_), Ok(a)) => Ok(a),
        (Err(e), Err(_)) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(t: &str, name: &str) -> Option<(Paradigm, String, String, u64)> {
        parse_symbol(t, name).map(|s| (s.paradigm, s.symbol, s.key, s.count))
    }

    #[test]
    fn symbol_rules() {
        let omp = Paradigm::OpenMp;
        let user = Paradigm::User;
        // (nm type, nm name) → paradigm, symbol, key, count
        for (t, name, paradigm, symbol, key, count) in [
            (
                "T",
                "POMP2_Init_reg_abc123_4",
                omp,
                "POMP2_Init_reg_abc123_4",
                "abc123_4",
                4,
            ),
            (
                "T",
                "pomp2_init_reg_f00_3_",
                omp,
                "pomp2_init_reg_f00_3_",
                "f00_3",
                3,
            ),
            (
                "D",
                "__.POMP2_USER_Init_reg_x_12",
                user,
                "__POMP2_USER_Init_reg_x_12",
                "x_12",
                12,
            ),
            (
                "A",
                ".POMP2_Init_reg_x_1",
                omp,
                "POMP2_Init_reg_x_1",
                "x_1",
                1,
            ),
        ] {
            let expected = (paradigm, symbol.to_string(), key.to_string(), count);
            assert_eq!(parse(t, name), Some(expected), "{t} {name}");
        }
        for (t, name) in [
            ("t", "POMP2_Init_reg_abc_4"),
            ("U", "POMP2_Init_reg_abc_4"),
            ("B", "POMP2_Init_reg_abc_4"),
            ("T", "POMP2_Init_reg_abc_04"),
            ("T", "POMP2_Init_reg_abc_"),
            ("T", "POMP2_Init_reg__4"),
            ("T", "POMP2_Init_reg_a_b_4"),
            ("T", "POMP2_Init_reg_abc_4x"),
            ("T", "POMP2_Init_reg_abc_4__"),
            ("T", "POMP2_Init_reg_abc_4.ITC.x"),
            ("T", "my_POMP2_Init_reg_abc_4"),
            ("T", "POMP2_Init_regions"),
        ] {
            assert_eq!(parse(t, name), None, "{t} {name}");
        }
    }

    #[test]
    fn dedup_and_totals() {
        let mut r = InitRegions::default();
        r.add_nm_output(
            "\na.o:\n0000 T POMP2_Init_reg_a_4\n0010 T POMP2_USER_Init_reg_a_4\n\
             0020 T _POMP2_Init_reg_a_4\n         U POMP2_Init_reg_u_7\nb.o:\n\
             0000 T POMP2_Init_reg_b_2\n",
        );
        assert_eq!(
            r.openmp_symbols().collect::<Vec<_>>(),
            ["POMP2_Init_reg_a_4", "POMP2_Init_reg_b_2"]
        );
        assert_eq!(r.openmp.total(), 6);
        assert_eq!(r.user.total(), 4);
        let empty = InitRegions::default().to_c();
        assert!(empty.contains("void\nPOMP2_Init_regions(void)\n{\n}\n"));
        assert_eq!(empty.matches("return 0;").count(), 2);
    }
}
