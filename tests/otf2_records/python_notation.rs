//! What the python dump (tests/support/otf2_dump.py) shows for each definition and event.

use super::*;

impl Ctx<'_> {
    // --- the python dump's notation ---

    pub(crate) fn py_str(&self, id: u32) -> Json {
        if id == U {
            Json::Null
        } else {
            js(self.text(id))
        }
    }
    pub(crate) fn py_ref(&self, t: Type, id: u64) -> Json {
        if is_undefined_ref(t, id) {
            Json::Null
        } else if t == Type::STRING {
            self.py_str(id as u32)
        } else {
            ji(id)
        }
    }
    pub(crate) fn py_value(&self, v: TypedValue) -> Json {
        match v.value_type {
            Type::UINT8 | Type::UINT16 | Type::UINT32 | Type::UINT64 => ji(v.raw),
            Type::INT8 | Type::INT16 | Type::INT32 | Type::INT64 => ji(v.as_i64()),
            Type::FLOAT | Type::DOUBLE => jf(v.as_f64()),
            t => self.py_ref(t, v.raw),
        }
    }
    pub(crate) fn py_def(&self, d: &GlobalDef) -> Json {
        use GlobalDef as D;
        let r32 = |t, id: u32| self.py_ref(t, id as u64);
        let (kind, id, mut fields): (&str, Json, Vec<(&str, Json)>) = match d {
            D::ClockProperties {
                timer_resolution,
                global_offset,
                trace_length,
                realtime_timestamp,
            } => (
                "ClockProperties",
                Json::Null,
                vec![
                    ("timer_resolution", ji(*timer_resolution)),
                    ("global_offset", ji(*global_offset)),
                    ("trace_length", ji(*trace_length)),
                    ("realtime_timestamp", ji(*realtime_timestamp)),
                ],
            ),
            D::String { id, string } => ("String", ji(*id), vec![("name", js(string))]),
            D::Paradigm {
                paradigm,
                name,
                paradigm_class,
            } => (
                "Paradigm",
                Json::Null,
                vec![
                    ("paradigm", js(&en(*paradigm))),
                    ("name", self.py_str(*name)),
                    ("paradigm_class", js(&en(*paradigm_class))),
                ],
            ),
            D::ParadigmProperty {
                paradigm,
                property,
                value,
            } => (
                "ParadigmProperty",
                Json::Null,
                vec![
                    ("paradigm", js(&en(*paradigm))),
                    ("property", js(&en(*property))),
                    ("type", js(&en(value.value_type))),
                    ("value", self.py_value(*value)),
                ],
            ),
            D::Attribute {
                id,
                name,
                description,
                attribute_type,
            } => (
                "Attribute",
                ji(*id),
                vec![
                    ("name", self.py_str(*name)),
                    ("description", self.py_str(*description)),
                    ("type", js(&en(*attribute_type))),
                ],
            ),
            D::SystemTreeNode {
                id,
                name,
                class_name,
                parent,
            } => (
                "SystemTreeNode",
                ji(*id),
                vec![
                    ("name", self.py_str(*name)),
                    ("class_name", self.py_str(*class_name)),
                    ("parent", r32(Type::NONE, *parent)),
                ],
            ),
            D::SystemTreeNodeProperty { node, name, value } => (
                "SystemTreeNodeProperty",
                Json::Null,
                vec![
                    ("system_tree_node", ji(*node)),
                    ("name", self.py_str(*name)),
                    ("type", js(&en(value.value_type))),
                    ("value", self.py_value(*value)),
                ],
            ),
            D::SystemTreeNodeDomain { node, domain } => (
                "SystemTreeNodeDomain",
                Json::Null,
                vec![
                    ("system_tree_node", ji(*node)),
                    ("system_tree_node_domain", js(&en(*domain))),
                ],
            ),
            D::LocationGroup {
                id,
                name,
                location_group_type,
                system_tree_parent,
                creating_location_group,
            } => (
                "LocationGroup",
                ji(*id),
                vec![
                    ("name", self.py_str(*name)),
                    ("location_group_type", js(&en(*location_group_type))),
                    ("system_tree_parent", r32(Type::NONE, *system_tree_parent)),
                    (
                        "creating_location_group",
                        r32(Type::NONE, *creating_location_group),
                    ),
                ],
            ),
            D::LocationGroupProperty {
                location_group,
                name,
                value,
            } => (
                "LocationGroupProperty",
                Json::Null,
                vec![
                    ("location_group", ji(*location_group)),
                    ("name", self.py_str(*name)),
                    ("type", js(&en(value.value_type))),
                    ("value", self.py_value(*value)),
                ],
            ),
            D::Location {
                id,
                name,
                location_type,
                number_of_events,
                location_group,
            } => (
                "Location",
                ji(*id),
                vec![
                    ("name", self.py_str(*name)),
                    // The binding (3.0.2) still uses the pre-3.0 name of type 2.
                    (
                        "type",
                        js(if *location_type == LocationType::ACCELERATOR_STREAM {
                            "GPU".into()
                        } else {
                            en(*location_type)
                        }
                        .as_str()),
                    ),
                    ("number_of_events", ji(*number_of_events)),
                    ("group", ji(*location_group)),
                ],
            ),
            D::LocationProperty {
                location,
                name,
                value,
            } => (
                "LocationProperty",
                Json::Null,
                vec![
                    ("location", ji(*location)),
                    ("name", self.py_str(*name)),
                    ("type", js(&en(value.value_type))),
                    ("value", self.py_value(*value)),
                ],
            ),
            D::Region {
                id,
                name,
                canonical_name,
                description,
                region_role,
                paradigm,
                region_flags,
                source_file,
                begin_line,
                end_line,
            } => (
                "Region",
                ji(*id),
                vec![
                    ("name", self.py_str(*name)),
                    ("canonical_name", self.py_str(*canonical_name)),
                    ("description", self.py_str(*description)),
                    ("region_role", js(&en(*region_role))),
                    ("paradigm", js(&en(*paradigm))),
                    ("region_flags", py_flags(region_flags.0, REGION_FLAGS)),
                    ("source_file", self.py_str(*source_file)),
                    ("begin_line_number", ji(*begin_line)),
                    ("end_line_number", ji(*end_line)),
                ],
            ),
            D::Callsite {
                id,
                source_file,
                line_number,
                entered_region,
                left_region,
            } => (
                "Callsite",
                ji(*id),
                vec![
                    ("source_file", self.py_str(*source_file)),
                    ("line_number", ji(*line_number)),
                    ("entered_region", r32(Type::REGION, *entered_region)),
                    ("left_region", r32(Type::REGION, *left_region)),
                ],
            ),
            D::Group {
                id,
                name,
                group_type,
                paradigm,
                group_flags,
                members,
            } => {
                // The binding turns COMM_GROUP ranks into location ids.
                let members = members
                    .iter()
                    .map(|&m| match *group_type {
                        GroupType::COMM_GROUP => ji(self.rank_location(*paradigm, m)),
                        _ => ji(m),
                    })
                    .collect();
                (
                    "Group",
                    ji(*id),
                    vec![
                        ("name", self.py_str(*name)),
                        ("group_type", js(&en(*group_type))),
                        ("paradigm", js(&en(*paradigm))),
                        ("group_flags", py_flags(group_flags.0, GROUP_FLAGS)),
                        ("members", Json::Arr(members)),
                    ],
                )
            }
            D::MetricMember {
                id,
                name,
                description,
                metric_type,
                metric_mode,
                value_type,
                base,
                exponent,
                unit,
            } => (
                "MetricMember",
                ji(*id),
                vec![
                    ("name", self.py_str(*name)),
                    ("description", self.py_str(*description)),
                    ("metric_type", js(&en(*metric_type))),
                    ("metric_mode", js(&en(*metric_mode))),
                    ("value_type", js(&en(*value_type))),
                    ("base", js(&en(*base))),
                    ("exponent", ji(*exponent)),
                    ("unit", self.py_str(*unit)),
                ],
            ),
            D::MetricClass {
                id,
                members,
                occurrence,
                recorder_kind,
            } => (
                "MetricClass",
                ji(*id),
                vec![
                    (
                        "members",
                        Json::Arr(members.iter().map(|&m| ji(m)).collect()),
                    ),
                    ("occurrence", js(&en(*occurrence))),
                    ("recorder_kind", js(&en(*recorder_kind))),
                ],
            ),
            D::MetricInstance {
                id,
                metric_class,
                recorder,
                scope_type,
                scope,
            } => (
                "MetricInstance",
                ji(*id),
                vec![
                    ("metric_class", ji(*metric_class)),
                    ("recorder", ji(*recorder)),
                    ("metric_scope", js(&en(*scope_type))),
                    ("scope", ji(*scope)),
                ],
            ),
            D::MetricClassRecorder { metric, recorder } => (
                "MetricClassRecorder",
                Json::Null,
                vec![("metric_class", ji(*metric)), ("recorder", ji(*recorder))],
            ),
            D::Comm {
                id,
                name,
                group,
                parent,
                flags,
            } => (
                "Comm",
                ji(*id),
                vec![
                    ("name", self.py_str(*name)),
                    ("group", r32(Type::GROUP, *group)),
                    ("parent", r32(Type::COMM, *parent)),
                    ("flags", py_flags(flags.0, COMM_FLAGS)),
                ],
            ),
            D::Parameter {
                id,
                name,
                parameter_type,
            } => (
                "Parameter",
                ji(*id),
                vec![
                    ("name", self.py_str(*name)),
                    ("parameter_type", js(&en(*parameter_type))),
                ],
            ),
            D::InterruptGenerator {
                id,
                name,
                mode,
                base,
                exponent,
                period,
            } => (
                "InterruptGenerator",
                ji(*id),
                vec![
                    ("name", self.py_str(*name)),
                    ("interrupt_generator_mode", js(&en(*mode))),
                    ("base", js(&en(*base))),
                    ("exponent", ji(*exponent)),
                    ("period", ji(*period)),
                ],
            ),
            D::Unknown { .. } => panic!("not written"),
        };
        fields.push(("kind", js(kind)));
        fields.push(("ref", id));
        jobj(fields)
    }

    /// An event (already translated to global ids) as the dump shows it.
    pub(crate) fn py_event(
        &self,
        location: u64,
        time: u64,
        attributes: &[(u32, TypedValue)],
        event: &Event,
    ) -> Json {
        use Event as E;
        let model = |p: &Paradigm| js(&en(*p));
        let task = |team: &u32, creator: &u32, generation: &u32| {
            vec![
                ("thread_team", ji(*team)),
                ("creating_thread", ji(*creator)),
                ("generation_number", ji(*generation)),
            ]
        };
        let lock = |m: &Paradigm, id: &u32, order: &u32| {
            vec![
                ("model", model(m)),
                ("lock_id", ji(*id)),
                ("acquisition_order", ji(*order)),
            ]
        };
        let mpi = mpi_message(event).map(|m| {
            let mut fields = vec![
                (m.peer_key, ji(m.peer)),
                ("communicator", ji(m.communicator)),
                ("msg_tag", ji(m.tag)),
                ("msg_length", ji(m.length)),
            ];
            fields.extend(m.request.map(|r| ("request_id", ji(r))));
            (m.python_kind, fields)
        });
        let mpi = mpi
            .or_else(|| mpi_request(event).map(|(_, kind, r)| (kind, vec![("request_id", ji(r))])));
        let (kind, mut fields): (&str, Vec<(&str, Json)>) = match mpi {
            Some(shown) => shown,
            None => match event {
                E::BufferFlush { stop_time } => {
                    ("BufferFlush", vec![("stop_time", ji(*stop_time))])
                }
                E::MeasurementOnOff { mode } => (
                    "MeasurementOnOff",
                    vec![("measurement_mode", js(&en(*mode)))],
                ),
                E::Enter { region } => ("Enter", vec![("region", ji(*region))]),
                E::Leave { region } => ("Leave", vec![("region", ji(*region))]),
                E::Metric { metric, values } => {
                    // The binding decodes the values with the members' value types.
                    let values = self
                        .metric_members(*metric)
                        .iter()
                        .zip(values)
                        .map(|(&m, v)| {
                            let t = self.member_name_and_type(m).1;
                            let value = match t {
                                Type::UINT64 => ji(v.raw),
                                Type::INT64 => ji(v.raw as i64),
                                Type::DOUBLE => jf(f64::from_bits(v.raw)),
                                t => panic!("metric value type {t:?}"),
                            };
                            Json::Arr(vec![js(&en(t)), value])
                        })
                        .collect();
                    (
                        "Metric",
                        vec![("metric", ji(*metric)), ("values", Json::Arr(values))],
                    )
                }
                E::ParameterString { parameter, string } => (
                    "ParameterString",
                    vec![
                        ("parameter", ji(*parameter)),
                        ("string", self.py_str(*string)),
                    ],
                ),
                E::ParameterInt { parameter, value } => (
                    "ParameterInt",
                    vec![("parameter", ji(*parameter)), ("value", ji(*value))],
                ),
                E::ParameterUnsignedInt { parameter, value } => (
                    "ParameterUnsignedInt",
                    vec![("parameter", ji(*parameter)), ("value", ji(*value))],
                ),
                E::ThreadFork {
                    model: m,
                    number_of_requested_threads,
                } => (
                    "ThreadFork",
                    vec![
                        ("model", model(m)),
                        (
                            "number_of_requested_threads",
                            ji(*number_of_requested_threads),
                        ),
                    ],
                ),
                E::ThreadJoin { model: m } => ("ThreadJoin", vec![("model", model(m))]),
                E::ThreadTeamBegin { team } => {
                    ("ThreadTeamBegin", vec![("thread_team", ji(*team))])
                }
                E::ThreadTeamEnd { team } => ("ThreadTeamEnd", vec![("thread_team", ji(*team))]),
                E::ThreadAcquireLock {
                    model: m,
                    lock_id,
                    acquisition_order,
                } => ("ThreadAcquireLock", lock(m, lock_id, acquisition_order)),
                E::ThreadReleaseLock {
                    model: m,
                    lock_id,
                    acquisition_order,
                } => ("ThreadReleaseLock", lock(m, lock_id, acquisition_order)),
                E::ThreadTaskCreate {
                    team,
                    creating_thread,
                    generation_number,
                } => (
                    "ThreadTaskCreate",
                    task(team, creating_thread, generation_number),
                ),
                E::ThreadTaskSwitch {
                    team,
                    creating_thread,
                    generation_number,
                } => (
                    "ThreadTaskSwitch",
                    task(team, creating_thread, generation_number),
                ),
                E::ThreadTaskComplete {
                    team,
                    creating_thread,
                    generation_number,
                } => (
                    "ThreadTaskComplete",
                    task(team, creating_thread, generation_number),
                ),
                E::ProgramBegin {
                    program_name,
                    arguments,
                } => (
                    "ProgramBegin",
                    vec![
                        ("program_name", self.py_str(*program_name)),
                        (
                            "program_arguments",
                            Json::Arr(arguments.iter().map(|&a| self.py_str(a)).collect()),
                        ),
                    ],
                ),
                E::ProgramEnd { exit_status } => {
                    ("ProgramEnd", vec![("exit_status", ji(*exit_status))])
                }
                E::MpiSend { .. }
                | E::MpiIsend { .. }
                | E::MpiRecv { .. }
                | E::MpiIrecv { .. }
                | E::MpiIsendComplete { .. }
                | E::MpiIrecvRequest { .. }
                | E::MpiRequestTest { .. }
                | E::MpiRequestCancelled { .. }
                | E::NonBlockingCollectiveRequest { .. } => unreachable!("shown above"),
                E::MpiCollectiveBegin {} => ("MpiCollectiveBegin", vec![]),
                E::MpiCollectiveEnd {
                    collective_op,
                    communicator,
                    root,
                    size_sent,
                    size_received,
                } => (
                    "MpiCollectiveEnd",
                    vec![
                        ("collective_op", js(&en(*collective_op))),
                        ("communicator", ji(*communicator)),
                        ("root", ji(*root)),
                        ("size_sent", ji(*size_sent)),
                        ("size_received", ji(*size_received)),
                    ],
                ),
                E::NonBlockingCollectiveComplete {
                    collective_op,
                    communicator,
                    root,
                    size_sent,
                    size_received,
                    request_id,
                } => (
                    "NonBlockingCollectiveComplete",
                    vec![
                        ("collective_op", js(&en(*collective_op))),
                        ("communicator", ji(*communicator)),
                        ("root", ji(*root)),
                        ("size_sent", ji(*size_sent)),
                        ("size_received", ji(*size_received)),
                        ("request_id", ji(*request_id)),
                    ],
                ),
                E::Unknown { .. } => panic!("not written"),
            },
        };
        let attributes = attributes
            .iter()
            .map(|&(a, v)| {
                Json::Arr(vec![
                    ji(a),
                    js(&en(self.attribute_type(a))),
                    self.py_value(v),
                ])
            })
            .collect();
        fields.extend([
            ("kind", js(kind)),
            ("location", ji(location)),
            ("time", ji(time)),
            ("attributes", Json::Arr(attributes)),
        ]);
        jobj(fields)
    }
}
