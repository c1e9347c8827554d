//! The runtime's rooms import each other without circles: a graph of which source file of
//! `src/` names which other (through `use` and through paths written out in the code), checked
//! to have no cycle. A file's `#[cfg(test)]` module is left out (tests may look anywhere), and so
//! is the `mod x;` line that declares a child (a declaration, not an import); a `pub use` of a
//! child is an import like any other.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path (`["lifecycle", "finish"]`) for every source file under `src/`.
fn module_files(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    fn walk(dir: &Path, prefix: &[String], out: &mut BTreeMap<Vec<String>, PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if name == "bin" {
                    continue;
                }
                let mut inner = prefix.to_vec();
                inner.push(name);
                walk(&path, &inner, out);
            } else if let Some(stem) = name.strip_suffix(".rs") {
                let mut module = prefix.to_vec();
                if !(stem == "mod" || (prefix.is_empty() && stem == "lib")) {
                    module.push(stem.to_string());
                }
                out.insert(module, path);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(src, &[], &mut out);
    out
}

/// The source without comments, string and character literals, and the trailing
/// `#[cfg(test)]` module.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod ") {
        Some(at) => &text[..at],
        None => text,
    };
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(b"//") {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if bytes[i..].starts_with(b"/*") {
            i += text[i..].find("*/").map_or(bytes.len(), |e| e + 2);
        } else if bytes[i] == b'"' {
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.extend_from_slice(b"\"\"");
        } else if bytes[i] == b'\''
            && (bytes.get(i + 2) == Some(&b'\'') || bytes.get(i + 1) == Some(&b'\\'))
        {
            // A character literal, not a lifetime.
            i += 1 + text[i + 1..].find('\'').map_or(bytes.len(), |e| e + 1);
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every path the code names that starts at `crate` or `super` (use trees expanded).
fn named_paths(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    // `use` statements, whose braces group several paths.
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let before = rest[..at].chars().last();
        let start = at + 4;
        let Some(end) = rest[start..].find(';') else {
            break;
        };
        if before.map_or(true, |c| !c.is_alphanumeric() && c != '_') {
            expand_use_tree(rest[start..start + end].trim(), &mut Vec::new(), &mut paths);
        }
        rest = &rest[start + end..];
    }
    // Paths written out in expressions and types.
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let word_start = i == 0
            || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_' || chars[i - 1] == ':');
        if word_start && (code_at(&chars, i, "crate::") || code_at(&chars, i, "super::")) {
            let mut j = i;
            while j < chars.len()
                && (chars[j].is_alphanumeric() || chars[j] == '_' || chars[j] == ':')
            {
                j += 1;
            }
            let path: String = chars[i..j].iter().collect();
            paths.push(
                path.split("::")
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect(),
            );
            i = j;
        } else {
            i += 1;
        }
    }
    paths
}

fn code_at(chars: &[char], i: usize, word: &str) -> bool {
    word.chars()
        .enumerate()
        .all(|(k, c)| chars.get(i + k) == Some(&c))
}

fn expand_use_tree(tree: &str, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head: Vec<String> = tree[..open]
            .split("::")
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let depth = prefix.len();
        prefix.extend(head);
        let mut level = 0;
        let mut piece_start = 0;
        for (k, c) in inner.char_indices() {
            match c {
                '{' => level += 1,
                '}' => level -= 1,
                ',' if level == 0 => {
                    expand_use_tree(&inner[piece_start..k], prefix, out);
                    piece_start = k + 1;
                }
                _ => {}
            }
        }
        expand_use_tree(&inner[piece_start..], prefix, out);
        prefix.truncate(depth);
    } else if !tree.is_empty() {
        let mut path = prefix.clone();
        let tree = tree.split(" as ").next().unwrap_or(tree);
        path.extend(
            tree.split("::")
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty() && s != "self" && s != "*"),
        );
        out.push(path);
    }
}

/// The file a path leads into: the longest prefix of it that is a module of the crate.
fn resolve(
    from: &[String],
    path: &[String],
    modules: &BTreeMap<Vec<String>, PathBuf>,
) -> Option<Vec<String>> {
    let mut absolute: Vec<String> = match path.first().map(String::as_str) {
        Some("crate") => Vec::new(),
        Some("super") => from.to_vec(),
        _ => return None,
    };
    let mut rest = &path[1..];
    if path[0] == "super" {
        absolute.pop();
        while rest.first().map(String::as_str) == Some("super") {
            absolute.pop();
            rest = &rest[1..];
        }
    }
    let mut best = None;
    if modules.contains_key(&absolute) {
        best = Some(absolute.clone());
    }
    for segment in rest {
        absolute.push(segment.clone());
        if modules.contains_key(&absolute) {
            best = Some(absolute.clone());
        } else {
            break;
        }
    }
    best
}

fn name(module: &[String]) -> String {
    if module.is_empty() {
        "crate".into()
    } else {
        module.join("::")
    }
}

#[test]
fn no_two_runtime_modules_import_each_other() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules = module_files(&src);
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (module, file) in &modules {
        let text = std::fs::read_to_string(file).unwrap();
        let targets = edges.entry(module.clone()).or_default();
        for path in named_paths(&code_of(&text)) {
            if let Some(target) = resolve(module, &path, &modules) {
                // A file naming its own items or its own children's is no import between rooms,
                // and the crate root only declares the rooms.
                if !target.is_empty() && !target.starts_with(module) {
                    targets.insert(target);
                }
            }
        }
    }
    // Depth-first search for a back edge; report the whole circle.
    let mut state: BTreeMap<&Vec<String>, u8> = BTreeMap::new();
    let mut stack: Vec<&Vec<String>> = Vec::new();
    fn visit<'a>(
        node: &'a Vec<String>,
        edges: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        state: &mut BTreeMap<&'a Vec<String>, u8>,
        stack: &mut Vec<&'a Vec<String>>,
    ) -> Option<Vec<String>> {
        state.insert(node, 1);
        stack.push(node);
        for next in edges.get(node).into_iter().flatten() {
            match state.get(next) {
                Some(1) => {
                    let from = stack.iter().position(|m| *m == next).unwrap();
                    let mut circle: Vec<String> = stack[from..].iter().map(|m| name(m)).collect();
                    circle.push(name(next));
                    return Some(circle);
                }
                Some(_) => {}
                None => {
                    if let Some(circle) = visit(next, edges, state, stack) {
                        return Some(circle);
                    }
                }
            }
        }
        stack.pop();
        state.insert(node, 2);
        None
    }
    for module in edges.keys() {
        if !state.contains_key(module) {
            if let Some(circle) = visit(module, &edges, &mut state, &mut stack) {
                panic!(
                    "these modules import each other in a circle: {}",
                    circle.join(" -> ")
                );
            }
        }
    }
    // The check sees real imports: the FFI room reaches the core.
    assert!(
        edges
            .iter()
            .any(|(from, to)| from.first().map(String::as_str) == Some("ffi") && !to.is_empty()),
        "no import found from src/ffi: the scan is broken"
    );
}

#[test]
fn the_scan_finds_a_planted_circle() {
    let modules: BTreeMap<Vec<String>, PathBuf> = [
        (vec![], PathBuf::new()),
        (vec!["a".to_string()], PathBuf::new()),
        (vec!["a".to_string(), "b".to_string()], PathBuf::new()),
        (vec!["c".to_string()], PathBuf::new()),
    ]
    .into_iter()
    .collect();
    let code = code_of(
        "use crate::{a::b::{Thing, other}, c};\n// use crate::c::commented;\nfn f() { super::c::call(\"crate::a\"); }\n",
    );
    let targets: BTreeSet<_> = named_paths(&code)
        .iter()
        .filter_map(|p| resolve(&["a".into(), "b".into()], p, &modules))
        .filter(|m| !m.is_empty())
        .collect();
    // `super::c` from `a::b` is `a::c`, which is no module: the path leads into `a`.
    let expected: BTreeSet<Vec<String>> = [vec!["a", "b"], vec!["c"], vec!["a"]]
        .into_iter()
        .map(|m| m.into_iter().map(String::from).collect())
        .collect();
    assert_eq!(targets, expected);
}
