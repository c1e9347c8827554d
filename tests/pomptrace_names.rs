//! Names from a trace are shown as text wherever the commands show them: a region, file or
//! thread named with `<!--<script>` renders in the `view` page (headless Chromium) as those
//! characters, and the page still runs; terminal escapes and other control characters in
//! names are printed by `summary` (table, CSV, JSON) and in messages as escapes like `\x1b`.

mod support;

use std::path::Path;
use std::process::Command;

use support::archives::{one_region_archive, Names};
use support::pomp2::pomptrace_command;
use support::{run, Scratch};

/// The page's DOM after its script ran, from headless Chromium (profile of its own).
fn dump_dom(scratch: &Scratch, html: &Path) -> String {
    let out = run(Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--virtual-time-budget=10000",
            "--window-size=1400,900",
            "--dump-dom",
        ])
        .arg(format!(
            "--user-data-dir={}",
            scratch.join("chromium-profile").display()
        ))
        .arg(format!("file://{}", html.display())));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_name_with_a_comment_and_script_tag_renders_in_the_page_as_text() {
    let scratch = Scratch::new("names-view");
    let names = Names {
        region: "solve <!--<script> </script> phase",
        file: "<!--<script>solve.c",
        location: "thread <!--<script>",
    };
    let anchor = one_region_archive(&scratch.path, &names, 20);
    let html = scratch.join("page.html");
    run(Command::new(pomptrace_command())
        .arg("view")
        .arg(&anchor)
        .arg("-o")
        .arg(&html));
    let page = std::fs::read_to_string(&html).unwrap();
    let start = page.find("const TRACE = ").unwrap() + "const TRACE = ".len();
    let data = &page[start..start + page[start..].find(";\n").unwrap()];
    assert!(!data.contains('<'), "a '<' in the page's data");
    let data: serde_json::Value = serde_json::from_str(data).unwrap();
    assert_eq!(data["profile"][0]["name"], names.region);
    assert_eq!(data["profile"][0]["source"], format!("{}:7", names.file));
    assert_eq!(data["lanes"][0]["name"], names.location);

    let dom = dump_dom(&scratch, &html);
    // The script ran to its end: it writes its self-check last.
    let check = dom
        .find("<pre id=\"selfcheck\"")
        .map(|at| &dom[at..])
        .and_then(|text| Some(&text[text.find('>')? + 1..text.find("</pre>")?]))
        .unwrap_or_default();
    let check: serde_json::Value = serde_json::from_str(check)
        .unwrap_or_else(|e| panic!("no self-check ({e}): the page did not run:\n{dom}"));
    assert_eq!(check["ok"], true, "{check}");
    assert_eq!(check["lanes"], 1, "{check}");
    // The profile's row shows the name as text (serialised back with "<" as "&lt;").
    assert!(
        dom.contains(">solve &lt;!--&lt;script&gt; &lt;/script&gt; phase<"),
        "the region's name is not shown as text:\n{dom}"
    );
}

#[test]
fn control_characters_in_names_are_printed_as_escapes() {
    let scratch = Scratch::new("names-terminal");
    let names = Names {
        region: "red\x1b[31m region\x07",
        file: "file\x1b]0;title\x07.c",
        location: "thread\x1b[2J\u{202e}1",
    };
    let anchor = one_region_archive(&scratch.path, &names, 20);
    let summary = |args: &[&str]| {
        let out = run(Command::new(pomptrace_command())
            .arg("summary")
            .arg(&anchor)
            .args(args));
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let controls = |text: &str| {
        text.chars()
            .filter(|c| (c.is_control() && *c != '\n') || *c == '\u{202e}')
            .count()
    };
    let table = summary(&[]);
    assert_eq!(controls(&table), 0, "{table:?}");
    assert!(table.contains("\nred\\x1b[31m region\\x07 "), "{table}");
    let by_thread = summary(&["--by-thread"]);
    assert_eq!(controls(&by_thread), 0, "{by_thread:?}");
    assert!(
        by_thread.contains(" thread\\x1b[2J\\u{202e}1 "),
        "{by_thread}"
    );
    let csv = summary(&["--csv"]);
    assert_eq!(controls(&csv), 0, "{csv:?}");
    assert!(
        csv.contains("\nred\\x1b[31m region\\x07,user region,file\\x1b]0;title\\x07.c,7,"),
        "{csv}"
    );
    // JSON escapes them itself, and keeps the names exact.
    let json = summary(&["--json", "--by-thread"]);
    assert_eq!(controls(&json), 0, "{json:?}");
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["regions"][0]["region"], names.region);
    assert_eq!(json["regions"][0]["file"], names.file);
    assert_eq!(json["by_thread"][0]["thread"], names.location);

    // A message naming a file.
    let out = Command::new(pomptrace_command())
        .arg("summary")
        .arg(scratch.join("gone\x1b[2J.otf2"))
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("gone\\x1b[2J.otf2"), "{stderr}");
    assert_eq!(controls(&stderr), 0, "{stderr:?}");
}
