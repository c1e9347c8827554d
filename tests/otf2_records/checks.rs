//! Reading the reference readers' output and comparing it with what was written.

use super::*;

// ---------------------------------------------------------------------------------------------
// Reading the reference readers' output
// ---------------------------------------------------------------------------------------------

/// The only warning `otf2-print` may give: region ids are deliberately not dense.
pub(crate) const SPARSE_REGION_WARNING: &str =
    "warning: out of order Region definition: \"far region\" <19088743>";

/// One record line of `otf2-print`: the record name, the numeric columns (id; location and
/// time; location), the rest of the line and the "ADDITIONAL ATTRIBUTES:" line after it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Printed {
    pub(crate) kind: String,
    pub(crate) columns: Vec<String>,
    pub(crate) rest: String,
    pub(crate) attributes: Option<String>,
}

/// The records of the section headed `=== {title}` with up to `columns` numeric columns.
pub(crate) fn printed_section(output: &str, title: &str, columns: usize) -> Vec<Printed> {
    let mut lines = output.lines();
    assert!(
        lines
            .by_ref()
            .any(|l| l.starts_with(&format!("=== {title}"))),
        "no {title} section in:\n{output}"
    );
    assert!(lines.by_ref().any(|l| l.starts_with("-----")));
    let mut records: Vec<Printed> = Vec::new();
    for line in lines {
        if line.trim().is_empty() || line.starts_with("===") {
            break;
        }
        if line.starts_with(' ') {
            let list = line
                .trim()
                .strip_prefix("ADDITIONAL ATTRIBUTES: ")
                .unwrap_or_else(|| panic!("unexpected continuation line {line:?}"));
            let last = records.last_mut().expect("attributes before any record");
            assert!(last.attributes.is_none());
            last.attributes = Some(list.to_string());
            continue;
        }
        let (kind, mut rest) = line.split_once(' ').unwrap_or((line, ""));
        let mut cols = Vec::new();
        while cols.len() < columns {
            let trimmed = rest.trim_start();
            let (token, after) = trimmed.split_once(' ').unwrap_or((trimmed, ""));
            if token.is_empty() || !token.bytes().all(|b| b.is_ascii_digit()) {
                break;
            }
            cols.push(token.to_string());
            rest = after;
        }
        records.push(Printed {
            kind: kind.to_string(),
            columns: cols,
            rest: normalize_date(rest.trim()),
            attributes: None,
        });
    }
    records
}

pub(crate) fn printed(
    kind: &str,
    columns: Vec<String>,
    rest: String,
    attributes: Option<String>,
) -> Printed {
    Printed {
        kind: kind.to_string(),
        columns,
        rest,
        attributes,
    }
}

pub(crate) fn assert_same<T: std::fmt::Debug + PartialEq>(
    what: &str,
    actual: &[T],
    expected: &[T],
) {
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        assert_eq!(a, e, "{what}: record {i} differs");
    }
    assert_eq!(
        actual.len(),
        expected.len(),
        "{what}: {} records, expected {}:\n{actual:#?}\nexpected:\n{expected:#?}",
        actual.len(),
        expected.len()
    );
}

pub(crate) fn dump(w: &Written) -> Json {
    Json::parse(&python_dump(&w.anchor))
}

pub(crate) fn def_kind(d: &GlobalDef) -> &'static str {
    use GlobalDef as D;
    match d {
        D::ClockProperties { .. } => "ClockProperties",
        D::Paradigm { .. } => "Paradigm",
        D::ParadigmProperty { .. } => "ParadigmProperty",
        D::String { .. } => "String",
        D::Attribute { .. } => "Attribute",
        D::SystemTreeNode { .. } => "SystemTreeNode",
        D::LocationGroup { .. } => "LocationGroup",
        D::Location { .. } => "Location",
        D::Region { .. } => "Region",
        D::Callsite { .. } => "Callsite",
        D::Group { .. } => "Group",
        D::MetricMember { .. } => "MetricMember",
        D::MetricClass { .. } => "MetricClass",
        D::MetricInstance { .. } => "MetricInstance",
        D::Comm { .. } => "Comm",
        D::Parameter { .. } => "Parameter",
        D::MetricClassRecorder { .. } => "MetricClassRecorder",
        D::SystemTreeNodeProperty { .. } => "SystemTreeNodeProperty",
        D::SystemTreeNodeDomain { .. } => "SystemTreeNodeDomain",
        D::LocationGroupProperty { .. } => "LocationGroupProperty",
        D::LocationProperty { .. } => "LocationProperty",
        D::InterruptGenerator { .. } => "InterruptGenerator",
        D::Unknown { .. } => "Unknown",
    }
}

pub(crate) fn event_kind(e: &Event) -> &'static str {
    use Event as E;
    match e {
        E::BufferFlush { .. } => "BufferFlush",
        E::MeasurementOnOff { .. } => "MeasurementOnOff",
        E::Enter { .. } => "Enter",
        E::Leave { .. } => "Leave",
        E::Metric { .. } => "Metric",
        E::ParameterString { .. } => "ParameterString",
        E::ParameterInt { .. } => "ParameterInt",
        E::ParameterUnsignedInt { .. } => "ParameterUnsignedInt",
        E::ThreadFork { .. } => "ThreadFork",
        E::ThreadJoin { .. } => "ThreadJoin",
        E::ThreadTeamBegin { .. } => "ThreadTeamBegin",
        E::ThreadTeamEnd { .. } => "ThreadTeamEnd",
        E::ThreadAcquireLock { .. } => "ThreadAcquireLock",
        E::ThreadReleaseLock { .. } => "ThreadReleaseLock",
        E::ThreadTaskCreate { .. } => "ThreadTaskCreate",
        E::ThreadTaskSwitch { .. } => "ThreadTaskSwitch",
        E::ThreadTaskComplete { .. } => "ThreadTaskComplete",
        E::ProgramBegin { .. } => "ProgramBegin",
        E::ProgramEnd { .. } => "ProgramEnd",
        E::MpiSend { .. } => "MpiSend",
        E::MpiIsend { .. } => "MpiIsend",
        E::MpiIsendComplete { .. } => "MpiIsendComplete",
        E::MpiIrecvRequest { .. } => "MpiIrecvRequest",
        E::MpiRecv { .. } => "MpiRecv",
        E::MpiIrecv { .. } => "MpiIrecv",
        E::MpiRequestTest { .. } => "MpiRequestTest",
        E::MpiRequestCancelled { .. } => "MpiRequestCancelled",
        E::MpiCollectiveBegin { .. } => "MpiCollectiveBegin",
        E::MpiCollectiveEnd { .. } => "MpiCollectiveEnd",
        E::NonBlockingCollectiveRequest { .. } => "NonBlockingCollectiveRequest",
        E::NonBlockingCollectiveComplete { .. } => "NonBlockingCollectiveComplete",
        E::Unknown { .. } => "Unknown",
    }
}

// ---------------------------------------------------------------------------------------------
// The checks
// ---------------------------------------------------------------------------------------------

/// Global definitions of the given kinds: `otf2-print -G` and `-A`, the python dump and our
/// reader all show exactly what was written, in file order (python: in its registry order).
pub(crate) fn check_definitions(kinds: &[&str]) {
    let w = write_archive();
    let ctx = Ctx { w: &w };
    let written: Vec<&GlobalDef> = w
        .defs
        .iter()
        .filter(|d| kinds.contains(&def_kind(d)))
        .collect();
    for kind in kinds {
        assert!(
            written.iter().any(|d| def_kind(d) == *kind),
            "the archive has no {kind} definition"
        );
    }

    // (a) otf2-print
    let expected: Vec<Printed> = written
        .iter()
        .map(|d| {
            let (kind, id, rest) = ctx.p_def(d);
            let columns = if id.is_empty() { vec![] } else { vec![id] };
            printed(kind, columns, rest, None)
        })
        .collect();
    let print_kinds: Vec<&str> = expected.iter().map(|p| p.kind.as_str()).collect();
    for args in [&["-G"][..], &["-A"]] {
        let out = otf2_print(args, &w.anchor, &[SPARSE_REGION_WARNING]);
        let actual: Vec<Printed> = printed_section(&out, "Global Definitions", 1)
            .into_iter()
            .filter(|p| print_kinds.contains(&p.kind.as_str()))
            .collect();
        assert_same(&format!("otf2-print {args:?}"), &actual, &expected);
    }

    // (b) the python module
    let doc = dump(&w);
    let mut actual: Vec<Json> = doc
        .get("definitions")
        .arr()
        .iter()
        .filter(|d| matches!(d.get("kind"), Json::Str(k) if kinds.contains(&k.as_str())))
        .cloned()
        .collect();
    for d in &written {
        let e = ctx.py_def(d);
        let at = actual
            .iter()
            .position(|a| *a == e)
            .unwrap_or_else(|| panic!("python: no definition {e:?} among\n{actual:#?}"));
        actual.remove(at);
    }
    assert!(
        actual.is_empty(),
        "python: unexpected definitions {actual:#?}"
    );

    // (c) our reader
    let reader = ArchiveReader::open(&w.anchor).unwrap();
    let ours = reader.global_defs().unwrap();
    let ours: Vec<&GlobalDef> = ours
        .iter()
        .filter(|d| kinds.contains(&def_kind(d)))
        .collect();
    assert_same("our reader", &ours, &written);
}

/// Events of the given kinds on both locations (and their attribute lists): `otf2-print -A`
/// and the python dump show them with ids translated by the mapping tables, our reader
/// exactly as written.
pub(crate) fn check_events(kinds: &[&str]) {
    let w = write_archive();
    let ctx = Ctx { w: &w };
    let out = otf2_print(&["-A"], &w.anchor, &[SPARSE_REGION_WARNING]);
    let printed_events = printed_section(&out, "Events", 2);
    let doc = dump(&w);
    let reader = ArchiveReader::open(&w.anchor).unwrap();
    for kind in kinds {
        assert!(
            w.events
                .iter()
                .any(|(_, s)| s.iter().any(|e| event_kind(&e.2) == *kind)),
            "the archive has no {kind} event"
        );
    }
    for (location, stream) in &w.events {
        let written: Vec<&Timed<Event>> = stream
            .iter()
            .filter(|e| kinds.contains(&event_kind(&e.2)))
            .collect();

        // (a) otf2-print
        let expected: Vec<Printed> = written
            .iter()
            .map(|(time, list, event)| {
                let event = ctx.global_event(*location, event);
                let (kind, rest) = ctx.p_event(*location, &event);
                let attributes = ctx.p_attributes(&ctx.global_attributes(*location, list));
                printed(
                    kind,
                    vec![location.to_string(), time.to_string()],
                    rest,
                    attributes,
                )
            })
            .collect();
        let print_kinds: Vec<&str> = expected.iter().map(|p| p.kind.as_str()).collect();
        let actual: Vec<Printed> = printed_events
            .iter()
            .filter(|p| {
                p.columns[0] == location.to_string() && print_kinds.contains(&p.kind.as_str())
            })
            .cloned()
            .collect();
        assert_same(
            &format!("otf2-print -A, location {location}"),
            &actual,
            &expected,
        );

        // (b) the python module
        let expected: Vec<Json> = written
            .iter()
            .map(|(time, list, event)| {
                let event = ctx.global_event(*location, event);
                ctx.py_event(
                    *location,
                    *time,
                    &ctx.global_attributes(*location, list),
                    &event,
                )
            })
            .collect();
        let actual: Vec<Json> = doc
            .get("events")
            .arr()
            .iter()
            .filter(|e| {
                *e.get("location") == ji(*location)
                    && matches!(e.get("kind"), Json::Str(k) if kinds.contains(&k.as_str()))
            })
            .cloned()
            .collect();
        assert_same(&format!("python, location {location}"), &actual, &expected);

        // (c) our reader
        let ours: Vec<Timed<Event>> = reader
            .events(*location)
            .unwrap()
            .map(|r| r.unwrap())
            .map(|r| (r.time, r.attributes, r.event))
            .filter(|e| kinds.contains(&event_kind(&e.2)))
            .collect();
        let written: Vec<Timed<Event>> = written.into_iter().cloned().collect();
        assert_same(&format!("our reader, location {location}"), &ours, &written);
    }
}
