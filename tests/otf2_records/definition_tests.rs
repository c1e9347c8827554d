//! Global and local definitions through both reference readers and ours.

use super::*;

#[test]
fn clock_properties_and_strings() {
    // Empty and non-ASCII strings, and one string id far from the others (the ids of a kind
    // need not be dense).
    check_definitions(&["ClockProperties", "String"]);
    let w = write_archive();
    let ctx = Ctx { w: &w };
    let clock = dump(&w).get("clock").clone();
    let Json::Obj(mut expected) = ctx.py_def(&w.defs[0]) else {
        unreachable!()
    };
    expected.remove("kind");
    expected.remove("ref");
    assert_eq!(clock, Json::Obj(expected));
}

#[test]
fn paradigms_and_attributes() {
    // One attribute of every attribute type; descriptions UNDEFINED, non-ASCII and empty.
    check_definitions(&["Paradigm", "ParadigmProperty", "Attribute"]);
}

#[test]
fn system_tree_location_groups_locations_and_their_properties() {
    check_definitions(&[
        "SystemTreeNode",
        "SystemTreeNodeProperty",
        "SystemTreeNodeDomain",
        "LocationGroup",
        "LocationGroupProperty",
        "Location",
        "LocationProperty",
    ]);
}

#[test]
fn regions_callsites_groups_comms_and_parameters() {
    check_definitions(&["Region", "Callsite", "Group", "Comm", "Parameter"]);
}

#[test]
fn metric_definitions_and_interrupt_generators() {
    check_definitions(&[
        "MetricMember",
        "MetricClass",
        "MetricInstance",
        "MetricClassRecorder",
        "InterruptGenerator",
    ]);
}

#[test]
fn all_global_definitions_and_the_anchor() {
    let w = write_archive();
    let reader = ArchiveReader::open(&w.anchor).unwrap();
    assert_eq!(reader.global_defs().unwrap(), w.defs);
    let anchor = reader.anchor();
    assert_eq!(anchor.number_of_global_defs, w.defs.len() as u64);
    assert_eq!(anchor.number_of_locations, 2);
    assert_eq!(anchor.number_of_snapshots, 1);
    assert_eq!(reader.locations().unwrap(), vec![L0, L1]);

    // Every definition kind is covered.
    let mut kinds: Vec<&str> = w.defs.iter().map(def_kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    assert_eq!(kinds.len(), 22, "{kinds:?}");

    let out = otf2_print(&["-A"], &w.anchor, &[SPARSE_REGION_WARNING]);
    let info = |key: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(key))
            .unwrap_or_else(|| panic!("no {key:?} in otf2-print -A"))
            .trim()
            .to_string()
    };
    assert_eq!(info("Number of locations"), "2");
    assert_eq!(
        info("Number of global definitions"),
        w.defs.len().to_string()
    );
    assert_eq!(info("Number of snapshots"), "1");
    // Every definition is printed, every one the python module knows is dumped.
    assert_eq!(
        printed_section(&out, "Global Definitions", 1).len(),
        w.defs.len()
    );
    assert_eq!(dump(&w).get("definitions").arr().len(), w.defs.len());
}

#[test]
fn local_definitions_mapping_tables_and_clock_offsets() {
    let w = write_archive();
    let out = otf2_print(&["-M", "-C"], &w.anchor, &[SPARSE_REGION_WARNING]);
    let actual = printed_section(&out, "Per Location Definitions", 1);
    let mut expected = Vec::new();
    for (location, defs) in &w.locals {
        for def in defs {
            let (kind, rest) = match def {
                LocalDef::MappingTable { mapping_type, map } => {
                    let entries = match map {
                        IdMap::Dense(globals) => format!(
                            "[{}]",
                            globals
                                .iter()
                                .map(u64::to_string)
                                .collect::<Vec<_>>()
                                .join(",")
                        ),
                        IdMap::Sparse(pairs) => {
                            // Shown sorted by local id.
                            let mut pairs = pairs.clone();
                            pairs.sort_unstable();
                            let items: Vec<String> =
                                pairs.iter().map(|(l, g)| format!("{l}=>{g}")).collect();
                            format!("{{{}}}", items.join(","))
                        }
                    };
                    (
                        "MAPPING_TABLE",
                        format!("Type: {}, {entries}", en(*mapping_type)),
                    )
                }
                LocalDef::ClockOffset {
                    time,
                    offset,
                    standard_deviation,
                } => (
                    "CLOCK_OFFSET",
                    format!(
                        "Time: {time}, Offset: {offset:+}, StdDev: {}",
                        fmt_g(*standard_deviation)
                    ),
                ),
                LocalDef::Unknown { .. } => unreachable!(),
            };
            expected.push(printed(kind, vec![location.to_string()], rest, None));
        }
    }
    assert_same("otf2-print -M -C", &actual, &expected);

    // Both mapping modes, both record kinds, on both locations.
    let all: Vec<&LocalDef> = w.locals.iter().flat_map(|(_, d)| d).collect();
    assert!(all.iter().any(|d| matches!(
        d,
        LocalDef::MappingTable {
            map: IdMap::Dense(_),
            ..
        }
    )));
    assert!(all.iter().any(|d| matches!(
        d,
        LocalDef::MappingTable {
            map: IdMap::Sparse(_),
            ..
        }
    )));
    assert!(all
        .iter()
        .any(|d| matches!(d, LocalDef::ClockOffset { .. })));

    // Our reader gives the tables as written (no translation).
    let reader = ArchiveReader::open(&w.anchor).unwrap();
    for (location, defs) in &w.locals {
        assert_eq!(&reader.local_defs(*location).unwrap(), defs);
    }
    // The tables take effect in the reference readers (see the event checks): the python
    // module shows region ids only the tables produce.
    let doc = dump(&w);
    let regions = |location: u64| -> Vec<Json> {
        doc.get("events")
            .arr()
            .iter()
            .filter(|e| {
                *e.get("location") == ji(location)
                    && matches!(e.get("kind"), Json::Str(k) if k == "Enter")
            })
            .map(|e| e.get("region").clone())
            .collect()
    };
    assert_eq!(regions(L0), vec![ji(0), ji(R_FAR)]);
    assert_eq!(regions(L1), vec![ji(2), ji(1)]);
    // The clock offsets leave the times as they are (one offset alone, or a zero offset).
    let times: Vec<Json> = doc
        .get("events")
        .arr()
        .iter()
        .map(|e| e.get("time").clone())
        .collect();
    let mut written: Vec<Json> = w
        .events
        .iter()
        .flat_map(|(_, s)| s.iter().map(|e| ji(e.0)))
        .collect();
    let mut sorted = times.clone();
    let key = |j: &Json| match j {
        Json::Int(i) => *i,
        _ => unreachable!(),
    };
    sorted.sort_by_key(key);
    written.sort_by_key(key);
    assert_eq!(sorted, written);
}
