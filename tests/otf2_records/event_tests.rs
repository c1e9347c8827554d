//! Events (with attribute lists) through both reference readers and ours.

use super::*;

#[test]
fn program_buffer_flush_and_measurement_events() {
    check_events(&[
        "ProgramBegin",
        "ProgramEnd",
        "BufferFlush",
        "MeasurementOnOff",
    ]);
}

#[test]
fn enter_and_leave_through_dense_and_sparse_mapping_tables() {
    check_events(&["Enter", "Leave"]);
}

#[test]
fn thread_fork_join_team_and_lock_events() {
    check_events(&[
        "ThreadFork",
        "ThreadJoin",
        "ThreadTeamBegin",
        "ThreadTeamEnd",
        "ThreadAcquireLock",
        "ThreadReleaseLock",
    ]);
}

#[test]
fn thread_task_events() {
    check_events(&["ThreadTaskCreate", "ThreadTaskSwitch", "ThreadTaskComplete"]);
}

#[test]
fn metric_and_parameter_events() {
    check_events(&[
        "Metric",
        "ParameterString",
        "ParameterInt",
        "ParameterUnsignedInt",
    ]);
}

#[test]
fn mpi_point_to_point_events() {
    check_events(&[
        "MpiSend",
        "MpiIsend",
        "MpiIsendComplete",
        "MpiIrecvRequest",
        "MpiRecv",
        "MpiIrecv",
        "MpiRequestTest",
        "MpiRequestCancelled",
    ]);
}

#[test]
fn mpi_collective_events() {
    check_events(&[
        "MpiCollectiveBegin",
        "MpiCollectiveEnd",
        "NonBlockingCollectiveRequest",
        "NonBlockingCollectiveComplete",
    ]);
}

#[test]
fn attribute_lists_with_every_attribute_type() {
    // Every event kind is written, and attribute lists carry every attribute type (twice: the
    // extremes in one list, the other extremes in reverse order in another).
    let w = write_archive();
    let mut kinds: Vec<&str> = w
        .events
        .iter()
        .flat_map(|(_, s)| s.iter().map(|e| event_kind(&e.2)))
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    assert_eq!(kinds.len(), 31, "{kinds:?}");
    for first in [true, false] {
        let list = all_types_list(first);
        let mut types: Vec<Type> = list.entries().iter().map(|e| e.1.value_type).collect();
        types.sort_unstable();
        assert_eq!(types, ATTRIBUTE_TYPES);
        assert!(w.events.iter().any(|(_, s)| s.iter().any(|e| e.1 == list)));
    }
    // The full comparison: all events, with their attribute lists.
    check_events(&kinds);
}

#[test]
fn dedicated_event_encoders_match_the_generic_one() {
    // Enter, Leave, the thread events and BufferFlush have encoders of their own; the checks
    // above read files written through `EventWriter::write`, so these must give the same bytes.
    let generic = write_archive_with(false);
    let dedicated = write_archive_with(true);
    for (location, _) in &generic.events {
        let file = format!("traces/{location}.evt");
        let a = std::fs::read(generic.anchor.with_file_name(&file)).unwrap();
        let b = std::fs::read(dedicated.anchor.with_file_name(&file)).unwrap();
        assert_eq!(a, b, "{file}");
    }
}
