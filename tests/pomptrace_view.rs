//! `pomptrace view` rendered in headless Chromium (Debian's `chromium`, installed by
//! scripts/setup.sh): the page of the main job's trace draws coloured bars in every lane (checked
//! on the pixels of a screenshot), its own self-check (written into the DOM, read with
//! `--dump-dom`) reports one lane per location, the regions it drew, that zooming narrows the
//! visible interval, that a profile row highlights its bars and that columns sort; the file
//! references nothing on the network. A trace with more visits
//! than the page draws exactly is aggregated, says so, and still renders.
//! A call-path profile's page (a profile alone, and beside the trace) shows the call tree with
//! every call path's numbers as pycubexr sums them over the threads, and it opens and closes.
//!
//! With POMPTRACE_VIEW_SCREENSHOT=FILE the jacobi screenshot is also copied to FILE (this is how
//! docs/pomptrace-view.png was made).

mod pomptrace_traces;
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use otf2::*;
use pomptrace_traces::*;
use support::pomp2::{pomptrace_command, View};
use support::{run, write_process_and_locations, Scratch};

const WINDOW: (u32, u32) = (1400, 900);

fn view(anchor: &Path, html: &Path) -> Output {
    run(Command::new(pomptrace_command())
        .arg("view")
        .arg(anchor)
        .arg("-o")
        .arg(html))
}

/// Headless Chromium on the page, with a profile of its own (tests run in parallel).
fn chromium(scratch: &Scratch, html: &Path, what: &[&str]) -> Output {
    let profile = scratch.join(&format!("chromium-profile-{}", what.len()));
    run(Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            "--virtual-time-budget=10000",
        ])
        .arg(format!("--window-size={},{}", WINDOW.0, WINDOW.1))
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(what)
        .arg(format!("file://{}", html.display())))
}

/// The self-check results the page wrote into `<pre id="selfcheck">`.
fn self_check(scratch: &Scratch, html: &Path) -> (serde_json::Value, String) {
    let dom = String::from_utf8(chromium(scratch, html, &["--dump-dom"]).stdout).unwrap();
    let start = dom
        .find("<pre id=\"selfcheck\"")
        .expect("the self-check element");
    let text = &dom[start..];
    let text = &text[text.find('>').unwrap() + 1..text.find("</pre>").unwrap()];
    let result = serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("self-check is not JSON ({e}): {text:?}"));
    (result, dom)
}

/// RGB pixels of a screenshot.
fn screenshot(scratch: &Scratch, html: &Path) -> (PathBuf, Vec<[u8; 3]>, u32, u32) {
    let png_path = scratch.join("view.png");
    chromium(
        scratch,
        html,
        &[&format!("--screenshot={}", png_path.display())],
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&png_path).unwrap(),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = match info.color_type {
        png::ColorType::Rgba => 4,
        png::ColorType::Rgb => 3,
        other => panic!("unexpected PNG colour type {other:?}"),
    };
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let pixels = buf[..info.buffer_size()]
        .chunks(channels)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    (png_path, pixels, info.width, info.height)
}

fn hex_colour(text: &str) -> [u8; 3] {
    let v = u32::from_str_radix(text.trim_start_matches('#'), 16).unwrap();
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

/// Per lane, how many pixels of its band in the plot show each construct kind's colour.
fn kind_pixels_per_lane(
    check: &serde_json::Value,
    shot: &(PathBuf, Vec<[u8; 3]>, u32, u32),
) -> Vec<Vec<usize>> {
    let (_, pixels, width, height) = shot;
    let colours: Vec<[u8; 3]> = check["kindColours"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| hex_colour(c.as_str().unwrap()))
        .collect();
    let plot = check["plot"].as_array().unwrap();
    let (x0, x1) = (
        plot[0].as_f64().unwrap() as u32,
        plot[1].as_f64().unwrap() as u32,
    );
    check["laneBands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|band| {
            let y0 = band[0].as_f64().unwrap() as u32;
            let y1 = band[1].as_f64().unwrap() as u32;
            assert!(y1 <= *height, "lane band {y0}..{y1} inside the screenshot");
            let mut counts = vec![0; colours.len()];
            for y in y0..y1 {
                for x in x0..x1.min(*width) {
                    let p = pixels[(y * width + x) as usize];
                    // "other" (grey, the last colour) does not count as a coloured bar.
                    if let Some(k) = colours[..colours.len() - 1]
                        .iter()
                        .position(|c| c.iter().zip(p).all(|(a, b)| a.abs_diff(b) <= 6))
                    {
                        counts[k] += 1;
                    }
                }
            }
            counts
        })
        .collect()
}

#[test]
fn the_view_of_the_main_jobs_trace_renders_in_headless_chromium() {
    let scratch = Scratch::new("view-jacobi");
    let anchor = jacobi_trace(&scratch.path, &[]);
    let reference = View::read(&anchor);
    let visits: usize = reference_visits(&reference).values().map(Vec::len).sum();
    let html = scratch.join("jacobi.html");
    view(&anchor, &html);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "the page references the network"
    );
    assert!(
        !page.contains("<script src") && !page.contains("<link"),
        "all inline"
    );

    let (check, dom) = self_check(&scratch, &html);
    assert_eq!(check["ok"], true, "{check}");
    assert_eq!(check["aggregated"], false, "{check}");
    assert_eq!(
        check["lanes"].as_u64(),
        Some(reference.locations.len() as u64),
        "{check}"
    );
    let drawn = check["drawnRegions"].as_u64().unwrap();
    // Bars thinner than a pixel on an already painted pixel are skipped, so at most all visits.
    assert!(
        drawn > 100 && drawn <= visits as u64,
        "drew {drawn} of {visits} visits: {check}"
    );
    for n in check["drawnPerLane"].as_array().unwrap() {
        assert!(n.as_u64().unwrap() > 0, "every lane has bars: {check}");
    }
    let before = check["visibleBefore"].as_array().unwrap();
    let after = check["visibleAfterZoom"].as_array().unwrap();
    let span = |v: &Vec<serde_json::Value>| v[1].as_f64().unwrap() - v[0].as_f64().unwrap();
    assert!(
        span(after) < span(before) * 0.9,
        "zoom narrows the interval: {check}"
    );
    // A click on the first profile row (the region with the most exclusive time) outlined its
    // bars; sorting by visits ordered the rows.
    assert!(check["highlightedBars"].as_u64().unwrap() > 0, "{check}");
    assert_eq!(check["highlightCleared"], true, "{check}");
    assert_eq!(check["sortedByVisits"], true, "{check}");
    // The header and the profile table were filled in.
    assert!(dom.contains("threads waited"), "headline");
    assert!(dom.contains("!$omp for @jacobi.c:56"), "profile row");

    let shot = screenshot(&scratch, &html);
    assert_eq!((shot.2, shot.3), WINDOW);
    let per_lane = kind_pixels_per_lane(&check, &shot);
    assert_eq!(per_lane.len(), reference.locations.len());
    for (lane, counts) in per_lane.iter().enumerate() {
        assert!(
            counts.iter().sum::<usize>() > 500,
            "lane {lane}: too few coloured pixels {counts:?}"
        );
        // parallel (blue), worksharing (green), barrier (red) in every lane.
        for kind in 0..3 {
            assert!(
                counts[kind] > 20,
                "lane {lane}: colour {kind} missing {counts:?}"
            );
        }
    }
    if let Ok(keep) = std::env::var("POMPTRACE_VIEW_SCREENSHOT") {
        std::fs::copy(&shot.0, keep).unwrap();
    }
}

/// 2 threads × 260 000 short visits inside one parallel region each: more than the page draws
/// exactly, so it aggregates, says so, and the page stays small and renders.
#[test]
fn a_big_trace_is_aggregated_and_still_renders() {
    const VISITS: u64 = 260_000;
    let scratch = Scratch::new("view-big");
    let archive = ArchiveWriter::create(&scratch.path, "traces", ArchiveConfig::default()).unwrap();
    let mut counts = Vec::new();
    for location in 0..2u64 {
        let mut w = archive.event_writer(location).unwrap();
        w.enter(0, 0);
        for i in 0..VISITS {
            let t = 10 + i * 100 + location * 7;
            w.enter(t, 1 + (i % 2) as u32);
            w.leave(t + 60 + (i % 3) * 10, 1 + (i % 2) as u32);
        }
        // A long visit stays exact.
        w.enter(VISITS * 100 + 100, 1);
        w.leave(VISITS * 100 + 20_000_000, 1);
        w.leave(VISITS * 100 + 20_000_100, 0);
        counts.push(w.events());
        w.finish().1.unwrap();
    }
    let mut defs = archive.global_def_writer();
    defs.write(&GlobalDef::ClockProperties {
        timer_resolution: 1_000_000_000,
        global_offset: 0,
        trace_length: VISITS * 100 + 20_000_100,
        realtime_timestamp: UNDEFINED_U64,
    });
    let strings = [
        "node",
        "machine",
        "Process",
        "Master thread",
        "OMP thread 1",
        "!$omp parallel @big.c:1",
        "!$omp for @big.c:2",
        "!$omp implicit barrier @big.c:3",
        "big.c",
    ];
    for (id, s) in strings.iter().enumerate() {
        defs.write(&GlobalDef::String {
            id: id as u32,
            string: s.to_string(),
        });
    }
    write_process_and_locations(&mut defs, (0, 1), 2, &[(3, counts[0]), (4, counts[1])]);
    for (id, role) in [
        (0, RegionRole::PARALLEL),
        (1, RegionRole::LOOP),
        (2, RegionRole::IMPLICIT_BARRIER),
    ] {
        defs.write(&GlobalDef::Region {
            id,
            name: 5 + id,
            canonical_name: 5 + id,
            description: 0,
            region_role: role,
            paradigm: Paradigm::OPENMP,
            region_flags: RegionFlag::NONE,
            source_file: 8,
            begin_line: 1 + id,
            end_line: 1 + id,
        });
    }
    archive.finish(defs, &[0, 1]).unwrap();
    let anchor = scratch.join("traces.otf2");

    let html = scratch.join("big.html");
    let out = view(&anchor, &html);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("aggregated cells"), "{said}");
    let size = std::fs::metadata(&html).unwrap().len();
    assert!(
        size < 12 << 20,
        "page of {size} bytes for {} events",
        counts[0] + counts[1]
    );

    let (check, dom) = self_check(&scratch, &html);
    assert_eq!(check["ok"], true, "{check}");
    assert_eq!(check["aggregated"], true, "{check}");
    assert_eq!(check["lanes"], 2);
    assert!(
        dom.contains("Aggregated: visits shorter than"),
        "the page says so"
    );
    // The profile still counts every visit.
    assert!(
        dom.contains(&format!(">{}<", VISITS + 2)),
        "loop visits of both threads"
    );
    let shot = screenshot(&scratch, &html);
    for (lane, counts) in kind_pixels_per_lane(&check, &shot).iter().enumerate() {
        assert!(counts[0] > 20 && counts[1] > 20, "lane {lane}: {counts:?}");
    }
}

#[test]
fn view_errors() {
    let scratch = Scratch::new("view-errors");
    let out = Command::new(pomptrace_command())
        .arg("view")
        .arg(scratch.join("missing.otf2"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("pomptrace: "));
}

/// The data of the page: the JSON object the script starts from.
fn page_data(html: &Path) -> serde_json::Value {
    let page = std::fs::read_to_string(html).unwrap();
    let start = page.find("const TRACE = ").unwrap() + "const TRACE = ".len();
    let end = start + page[start..].find(";\n").unwrap();
    serde_json::from_str(&page[start..end].replace("<\\/", "</")).unwrap()
}

/// Nested teams: the inner teams' threads (`OMP thread 1:2`) are lanes right under the thread
/// that forked them, indented one level; one lane per location, all in one process group.
#[test]
fn nested_team_lanes_follow_the_thread_tree() {
    let scratch = Scratch::new("view-nested");
    let instrumented = support::pomp2::instrument("nested_2x3.c", &scratch.path, &[]);
    let exe = support::pomp2::Build::c(&scratch.path).executable(&[instrumented], "nested");
    let anchor =
        support::pomp2::run_traced(&exe, 2, "trace", &[("OMP_MAX_ACTIVE_LEVELS", "2")]).anchor();
    let reference = View::read(&anchor);
    let html = scratch.join("nested.html");
    view(&anchor, &html);
    let data = page_data(&html);
    let lanes: Vec<(String, u64)> = data["lanes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["name"].as_str().unwrap().to_string(),
                l["nesting"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut names: Vec<&String> = reference.locations.values().map(|(n, _)| n).collect();
    names.sort();
    let mut lane_names: Vec<&String> = lanes.iter().map(|(n, _)| n).collect();
    lane_names.sort();
    assert_eq!(lane_names, names, "one lane per location");
    let order: Vec<&str> = lanes.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        order,
        [
            "Master thread",
            "OMP thread 0:1",
            "OMP thread 0:2",
            "OMP thread 1",
            "OMP thread 1:1",
            "OMP thread 1:2"
        ],
        "{lanes:?}"
    );
    for (name, nesting) in &lanes {
        assert_eq!(*nesting, u64::from(name.contains(':')), "{name}");
    }
    let groups: std::collections::BTreeSet<&str> = data["lanes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["group"].as_str().unwrap())
        .collect();
    assert_eq!(groups.len(), 1, "{groups:?}");
    assert!(groups.iter().next().unwrap().starts_with("Process ("));
}

/// pycubexr's sums over threads per call path of `profile`: (visits, inclusive ms, exclusive
/// ms, threads that visited it), by call path id.
fn pycubexr_call_paths(profile: &Path) -> Vec<(u64, f64, f64, usize)> {
    let out = run(Command::new("/usr/bin/python3")
        .arg(support::repo_root().join("tests/support/cube_dump.py"))
        .arg(profile));
    let dump: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let number = |v: &serde_json::Value| match v.get("f64_bits") {
        Some(bits) => f64::from_bits(bits.as_u64().unwrap()),
        None => v.as_u64().unwrap() as f64,
    };
    let row = |metric: &str, view: &str, c: usize| -> Vec<f64> {
        dump["values"][metric][view][c.to_string()]
            .as_array()
            .unwrap()
            .iter()
            .map(number)
            .collect()
    };
    (0..dump["cnodes"].as_array().unwrap().len())
        .map(|c| {
            let visits = row("visits", "raw", c);
            (
                visits.iter().sum::<f64>() as u64,
                row("time", "inclusive", c).iter().sum::<f64>() * 1000.0,
                row("time", "exclusive", c).iter().sum::<f64>() * 1000.0,
                visits.iter().filter(|&&v| v > 0.0).count(),
            )
        })
        .collect()
}

/// A directory that holds only a profile (the main job's program profiled without a trace):
/// the page has no timeline, the per-region table, and the call tree, every
/// call path's numbers as pycubexr sums them over the threads; it opens and closes.
#[test]
fn a_profile_alone_shows_its_call_tree() {
    let scratch = Scratch::new("view-profile");
    jacobi_trace(&scratch.path, &[]);
    let only = scratch.join("only");
    run_jacobi(
        &scratch.path,
        &[],
        &only,
        &[
            ("POMPTRACE_ENABLE_PROFILING", "1"),
            ("POMPTRACE_ENABLE_TRACING", "0"),
        ],
    );
    let cubex = only.join("profile.cubex");
    let profile = otf2::cube::read(&cubex).unwrap();
    let out = run(Command::new(pomptrace_command()).arg("view").arg(&only));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("call tree of"), "{said}");
    let html = only.join("profile.html");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(!page.contains("http://") && !page.contains("https://"));

    let (check, dom) = self_check(&scratch, &html);
    assert_eq!(check["ok"], true, "{check}");
    assert_eq!(check["lanes"], 0, "{check}");
    assert_eq!(check["timelineHidden"], true, "{check}");
    let expected = pycubexr_call_paths(&cubex);
    assert_eq!(check["treeNodes"].as_u64(), Some(expected.len() as u64));
    assert!(expected.len() > 5, "{expected:?}");
    assert!(check["treeOpened"].as_u64().unwrap() > 0, "{check}");
    let rows = check["treeRowTexts"].as_array().unwrap();
    assert_eq!(
        rows.len(),
        expected.len(),
        "expand all shows every call path"
    );
    for row in rows {
        let c = row[0].as_u64().unwrap() as usize;
        let text = |i: usize| row[i].as_str().unwrap();
        let (visits, inclusive, exclusive, threads) = expected[c];
        let name = &profile.regions[profile.cnodes[c].region].name;
        assert!(text(1).ends_with(name.as_str()), "{row}");
        assert_eq!(text(2).parse::<usize>().unwrap(), threads, "{row}");
        assert_eq!(text(3).parse::<u64>().unwrap(), visits, "{row}");
        for (i, want) in [(4, inclusive), (5, exclusive)] {
            let shown: f64 = text(i).parse().unwrap();
            assert!((shown - want).abs() <= 0.0006, "{row}: {want}");
        }
    }
    // The per-region table is the profile's summary.
    assert!(dom.contains("!$omp for @jacobi.c:56"), "profile row");
    assert!(dom.contains("threads waited"), "headline");
}

/// A directory with both: the timeline and, below it, the profile's call tree.
#[test]
fn a_directory_with_trace_and_profile_shows_both() {
    let scratch = Scratch::new("view-both");
    jacobi_trace(&scratch.path, &[]);
    let anchor = run_jacobi(
        &scratch.path,
        &[],
        &scratch.join("both"),
        &[("POMPTRACE_ENABLE_PROFILING", "1")],
    );
    let dir = anchor.parent().unwrap();
    let profile = otf2::cube::read(&dir.join("profile.cubex")).unwrap();
    run(Command::new(pomptrace_command()).arg("view").arg(dir));
    let html = dir.join("traces.html");
    let (check, _) = self_check(&scratch, &html);
    assert_eq!(check["ok"], true, "{check}");
    assert_eq!(
        check["lanes"].as_u64(),
        Some(View::read(&anchor).locations.len() as u64)
    );
    assert_eq!(
        check["treeNodes"].as_u64(),
        Some(profile.cnodes.len() as u64)
    );
    assert_eq!(check["treeOk"], true, "{check}");
}
