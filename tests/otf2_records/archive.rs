//! The archive's event and snapshot streams, and writing the whole archive.

use super::*;

pub(crate) type Timed<T> = (u64, AttributeList, T);

/// What was written.
pub(crate) struct Written {
    pub(crate) _scratch: Scratch,
    pub(crate) anchor: PathBuf,
    pub(crate) defs: Vec<GlobalDef>,
    pub(crate) locals: Vec<(u64, Vec<LocalDef>)>,
    pub(crate) events: Vec<(u64, Vec<Timed<Event>>)>,
    pub(crate) snaps: Vec<(u64, Vec<Timed<SnapRecord>>)>,
}

pub(crate) fn event_streams() -> Vec<(u64, Vec<Timed<Event>>)> {
    use Event as E;
    let none = AttributeList::new;
    let l0 = vec![
        (
            0,
            all_types_list(true),
            E::ProgramBegin {
                program_name: 36,
                arguments: vec![0, 37, 1, S_FAR],
            },
        ),
        (
            0,
            none(),
            E::MeasurementOnOff {
                mode: MeasurementMode::OFF,
            },
        ),
        (
            10,
            none(),
            E::MeasurementOnOff {
                mode: MeasurementMode::ON,
            },
        ),
        (10, none(), E::Enter { region: 0 }),
        (
            20,
            attrs(&[(9, TypedValue::f64(f64::NAN)), (3, TypedValue::u64(42))]),
            E::ThreadFork {
                model: Paradigm::OPENMP,
                number_of_requested_threads: u32::MAX,
            },
        ),
        (30, none(), E::ThreadTeamBegin { team: 0 }),
        (40, none(), E::Enter { region: R_L0_LOCAL }),
        (
            50,
            none(),
            E::ThreadAcquireLock {
                model: Paradigm::OPENMP,
                lock_id: 0,
                acquisition_order: u32::MAX - 1,
            },
        ),
        (
            60,
            none(),
            E::ThreadReleaseLock {
                model: Paradigm::OPENMP,
                lock_id: 123_456,
                acquisition_order: 0,
            },
        ),
        (
            70,
            none(),
            E::ThreadTaskCreate {
                team: 0,
                creating_thread: 0,
                generation_number: 1,
            },
        ),
        (
            80,
            none(),
            E::ThreadTaskSwitch {
                team: 0,
                creating_thread: 1,
                generation_number: u32::MAX - 1,
            },
        ),
        (
            90,
            none(),
            E::ThreadTaskComplete {
                team: 1,
                creating_thread: 0,
                generation_number: 0,
            },
        ),
        (
            100,
            none(),
            E::Metric {
                metric: 0,
                values: vec![
                    TypedValue::u64(u64::MAX),
                    TypedValue::i64(i64::MIN),
                    TypedValue::f64(-2.5e300),
                ],
            },
        ),
        (
            100,
            none(),
            E::Metric {
                metric: 2,
                values: vec![TypedValue::f64(0.1)],
            },
        ),
        (
            110,
            none(),
            E::ParameterString {
                parameter: 0,
                string: 0,
            },
        ),
        (
            111,
            none(),
            E::ParameterString {
                parameter: 0,
                string: 1,
            },
        ),
        (
            120,
            none(),
            E::ParameterInt {
                parameter: 1,
                value: i64::MIN,
            },
        ),
        (
            121,
            none(),
            E::ParameterInt {
                parameter: 1,
                value: -1,
            },
        ),
        (
            122,
            none(),
            E::ParameterInt {
                parameter: 1,
                value: i64::MAX,
            },
        ),
        (
            130,
            none(),
            E::ParameterUnsignedInt {
                parameter: 2,
                value: u64::MAX,
            },
        ),
        (
            131,
            none(),
            E::ParameterUnsignedInt {
                parameter: 2,
                value: 0,
            },
        ),
        (
            132,
            none(),
            E::MpiSend {
                receiver: 1,
                communicator: 0,
                msg_tag: u32::MAX - 1,
                msg_length: u64::MAX,
            },
        ),
        (
            133,
            none(),
            E::MpiIsend {
                receiver: 0,
                communicator: 1,
                msg_tag: 0,
                msg_length: 0,
                request_id: u64::MAX - 1,
            },
        ),
        (
            134,
            attrs(&[(3, TypedValue::u64(7))]),
            E::MpiIsendComplete {
                request_id: u64::MAX - 1,
            },
        ),
        (134, none(), E::MpiIrecvRequest { request_id: 0 }),
        (
            135,
            none(),
            E::MpiRecv {
                sender: 1,
                communicator: 0,
                msg_tag: 42,
                msg_length: 1 << 40,
            },
        ),
        (
            136,
            none(),
            E::MpiIrecv {
                sender: 0,
                communicator: 1,
                msg_tag: u32::MAX - 1,
                msg_length: 3,
                request_id: 0,
            },
        ),
        (
            137,
            none(),
            E::MpiRequestTest {
                request_id: 1 << 40,
            },
        ),
        (
            137,
            none(),
            E::MpiRequestCancelled {
                request_id: u64::MAX - 1,
            },
        ),
        (138, none(), E::MpiCollectiveBegin {}),
        (
            139,
            none(),
            E::MpiCollectiveEnd {
                collective_op: CollectiveOp::ALLREDUCE,
                communicator: 0,
                root: U,
                size_sent: 8,
                size_received: u64::MAX - 1,
            },
        ),
        (
            139,
            none(),
            E::NonBlockingCollectiveRequest {
                request_id: u64::MAX - 1,
            },
        ),
        (
            139,
            none(),
            E::NonBlockingCollectiveComplete {
                collective_op: CollectiveOp::REDUCE_SCATTER_BLOCK,
                communicator: 0,
                root: U,
                size_sent: 16,
                size_received: u64::MAX - 1,
                request_id: u64::MAX - 1,
            },
        ),
        (140, none(), E::Leave { region: R_L0_LOCAL }),
        (150, none(), E::ThreadTeamEnd { team: 0 }),
        (
            160,
            none(),
            E::ThreadJoin {
                model: Paradigm::OPENMP,
            },
        ),
        (170, none(), E::BufferFlush { stop_time: 175 }),
        (180, none(), E::Leave { region: 0 }),
        (1 << 62, none(), E::ProgramEnd { exit_status: -1 }),
    ];
    let l1 = vec![
        (
            5,
            none(),
            E::ProgramBegin {
                program_name: 0,
                arguments: vec![],
            },
        ),
        (5, all_types_list(false), E::Enter { region: R_L1_LOCAL }),
        (
            6,
            none(),
            E::ThreadFork {
                model: Paradigm::PTHREAD,
                number_of_requested_threads: 0,
            },
        ),
        (7, none(), E::Enter { region: 1 }),
        (
            8,
            attrs(&[
                (7, TypedValue::i64(i64::MAX)),
                (10, TypedValue::reference(Type::STRING, S_FAR as u64)),
            ]),
            E::Metric {
                metric: 0,
                values: vec![
                    TypedValue::u64(0),
                    TypedValue::i64(i64::MAX),
                    TypedValue::f64(f64::INFINITY),
                ],
            },
        ),
        (
            9,
            none(),
            E::Metric {
                metric: 5,
                values: vec![
                    TypedValue::u64(1),
                    TypedValue::i64(-1),
                    TypedValue::f64(f64::NAN),
                ],
            },
        ),
        (
            10,
            none(),
            E::Metric {
                metric: 4,
                values: vec![TypedValue::f64(f64::NEG_INFINITY)],
            },
        ),
        (11, none(), E::Leave { region: 1 }),
        (
            12,
            none(),
            E::ThreadJoin {
                model: Paradigm::PTHREAD,
            },
        ),
        (
            12,
            attrs(&[(3, TypedValue::u64(0))]),
            E::MpiCollectiveBegin {},
        ),
        (
            12,
            none(),
            E::MpiCollectiveEnd {
                collective_op: CollectiveOp::DESTROY_HANDLE_AND_DEALLOCATE,
                communicator: 1,
                root: 0,
                size_sent: 0,
                size_received: 0,
            },
        ),
        (13, none(), E::Leave { region: R_L1_LOCAL }),
        (
            u64::MAX - 1,
            none(),
            E::ProgramEnd {
                exit_status: i64::MIN,
            },
        ),
    ];
    vec![(L0, l0), (L1, l1)]
}

pub(crate) fn snapshot_streams() -> Vec<(u64, Vec<Timed<SnapRecord>>)> {
    use SnapRecord as S;
    let none = AttributeList::new;
    let l0 = vec![
        (
            155,
            none(),
            S::SnapshotStart {
                number_of_records: 19,
            },
        ),
        (
            155,
            none(),
            S::MeasurementOnOff {
                orig_event_time: 10,
                mode: MeasurementMode::ON,
            },
        ),
        (
            155,
            none(),
            S::Enter {
                orig_event_time: 10,
                region: 0,
            },
        ),
        (
            155,
            attrs(&[
                (1, TypedValue::u16(7)),
                (12, TypedValue::reference(Type::LOCATION, L1)),
            ]),
            S::Enter {
                orig_event_time: 40,
                region: 2,
            },
        ),
        (
            155,
            none(),
            S::Metric {
                orig_event_time: 100,
                metric: 0,
                values: vec![
                    TypedValue::u64(u64::MAX),
                    TypedValue::i64(i64::MIN),
                    TypedValue::f64(-2.5e300),
                ],
            },
        ),
        (
            155,
            none(),
            S::ParameterString {
                orig_event_time: 111,
                parameter: 0,
                string: 1,
            },
        ),
        (
            155,
            none(),
            S::ParameterInt {
                orig_event_time: 122,
                parameter: 1,
                value: i64::MIN,
            },
        ),
        (
            155,
            none(),
            S::ParameterUnsignedInt {
                orig_event_time: 131,
                parameter: 2,
                value: u64::MAX,
            },
        ),
        (
            155,
            none(),
            S::MpiSend {
                orig_event_time: 132,
                receiver: 1,
                communicator: 0,
                msg_tag: u32::MAX - 1,
                msg_length: u64::MAX,
            },
        ),
        (
            155,
            none(),
            S::MpiIsend {
                orig_event_time: 133,
                receiver: 0,
                communicator: 1,
                msg_tag: 0,
                msg_length: 0,
                request_id: u64::MAX - 1,
            },
        ),
        (
            155,
            none(),
            S::MpiIsendComplete {
                orig_event_time: 134,
                request_id: u64::MAX - 1,
            },
        ),
        (
            155,
            none(),
            S::MpiRecv {
                orig_event_time: 135,
                sender: 1,
                communicator: 0,
                msg_tag: 42,
                msg_length: 1 << 40,
            },
        ),
        (
            155,
            none(),
            S::MpiIrecvRequest {
                orig_event_time: 134,
                request_id: 0,
            },
        ),
        (
            155,
            none(),
            S::MpiIrecv {
                orig_event_time: 136,
                sender: 0,
                communicator: 1,
                msg_tag: 7,
                msg_length: 3,
                request_id: 0,
            },
        ),
        (
            155,
            none(),
            S::MpiCollectiveBegin {
                orig_event_time: 138,
            },
        ),
        (
            155,
            none(),
            S::MpiCollectiveEnd {
                orig_event_time: 139,
                collective_op: CollectiveOp::ALLREDUCE,
                communicator: 0,
                root: U,
                size_sent: 8,
                size_received: u64::MAX - 1,
            },
        ),
        (
            155,
            none(),
            S::OmpFork {
                orig_event_time: 20,
                number_of_requested_threads: u32::MAX,
            },
        ),
        (
            155,
            none(),
            S::OmpAcquireLock {
                orig_event_time: 50,
                lock_id: 0,
                acquisition_order: u32::MAX - 1,
            },
        ),
        (
            155,
            none(),
            S::OmpTaskCreate {
                orig_event_time: 70,
                task_id: u64::MAX,
            },
        ),
        (
            155,
            none(),
            S::OmpTaskSwitch {
                orig_event_time: 80,
                task_id: 1 << 40,
            },
        ),
        (
            155,
            none(),
            S::SnapshotEnd {
                cont_read_pos: u64::MAX,
            },
        ),
    ];
    // L1 gets no snapshot: `finish` writes its empty .snap file.
    vec![(L0, l0)]
}

pub(crate) fn write_archive() -> Written {
    write_archive_with(false)
}

/// One event through `EventWriter::write`, or, with `dedicated` and no attributes, through
/// the event's own encoder where it has one.
pub(crate) fn write_event(
    w: &mut EventWriter<FileSink>,
    time: u64,
    list: &AttributeList,
    event: &Event,
    dedicated: bool,
) {
    use Event as E;
    if !dedicated || !list.is_empty() {
        w.write(time, Some(list), event);
        return;
    }
    match *event {
        E::Enter { region } => w.enter(time, region),
        E::Leave { region } => w.leave(time, region),
        E::ThreadFork {
            model,
            number_of_requested_threads,
        } => w.thread_fork(time, model, number_of_requested_threads),
        E::ThreadJoin { model } => w.thread_join(time, model),
        E::ThreadTeamBegin { team } => w.thread_team_begin(time, team),
        E::ThreadTeamEnd { team } => w.thread_team_end(time, team),
        E::ThreadAcquireLock {
            model,
            lock_id,
            acquisition_order,
        } => w.thread_acquire_lock(time, model, lock_id, acquisition_order),
        E::ThreadReleaseLock {
            model,
            lock_id,
            acquisition_order,
        } => w.thread_release_lock(time, model, lock_id, acquisition_order),
        E::ThreadTaskCreate {
            team,
            creating_thread,
            generation_number,
        } => w.thread_task_create(time, team, creating_thread, generation_number),
        E::ThreadTaskSwitch {
            team,
            creating_thread,
            generation_number,
        } => w.thread_task_switch(time, team, creating_thread, generation_number),
        E::ThreadTaskComplete {
            team,
            creating_thread,
            generation_number,
        } => w.thread_task_complete(time, team, creating_thread, generation_number),
        E::BufferFlush { stop_time } => w.buffer_flush(time, stop_time),
        _ => w.write(time, Some(list), event),
    }
}

pub(crate) fn write_archive_with(dedicated: bool) -> Written {
    let scratch = Scratch::new("records");
    let dir = scratch.join("archive");
    let mut archive = ArchiveWriter::create(&dir, "traces", ArchiveConfig::default()).unwrap();
    let events = event_streams();
    let snaps = snapshot_streams();
    let locals = local_definitions();
    let defs = global_definitions(&events);
    for (loc, stream) in &events {
        let mut w = archive.event_writer(*loc).unwrap();
        for (time, list, event) in stream {
            write_event(&mut w, *time, list, event, dedicated);
        }
        assert_eq!(w.events(), stream.len() as u64);
        w.finish().1.unwrap();
    }
    archive.set_snapshot_count(1);
    for (loc, stream) in &snaps {
        let mut w = archive.snap_writer(*loc).unwrap();
        for (time, list, record) in stream {
            w.write(*time, Some(list), record);
        }
        w.finish().1.unwrap();
    }
    for (loc, list) in &locals {
        let mut w = archive.local_def_writer();
        for def in list {
            w.write(def);
        }
        archive.write_local_defs(*loc, w).unwrap();
    }
    let mut w = archive.global_def_writer();
    for def in &defs {
        w.write(def);
    }
    archive.finish(w, &[L0, L1]).unwrap();
    Written {
        anchor: dir.join("traces.otf2"),
        _scratch: scratch,
        defs,
        locals,
        events,
        snaps,
    }
}
