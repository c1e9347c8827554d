//! What `otf2-print` shows for each event and snapshot record.

use super::*;

impl Ctx<'_> {
    /// A rank of a communicator as `otf2-print` shows it: the rank and the location it stands
    /// for, seen from `location`.
    pub(crate) fn p_rank(&self, location: u64, comm: u32, rank: u32) -> String {
        let group = self.find(&format!("comm {comm}"), |d| match d {
            GlobalDef::Comm { id, group, .. } if *id == comm => Some(*group),
            _ => None,
        });
        let rank_location = match self.group(group) {
            (GroupType::COMM_GROUP, p, members) => self.rank_location(p, members[rank as usize]),
            (GroupType::COMM_SELF, _, _) => location,
            (t, _, _) => panic!("communicator group type {t:?}"),
        };
        format!("{rank} ({})", self.p_location(rank_location))
    }

    /// An event (already translated to global ids) as `otf2-print` shows it: record name and
    /// the rest of the line.
    pub(crate) fn p_event(&self, location: u64, event: &Event) -> (&'static str, String) {
        use Event as E;
        let task = |kind, team: u32, creator: u32, generation: u32| {
            (
                kind,
                format!(
                    "Thread Team: {}, Creating Thread: {}, Generation Number: {generation}",
                    self.p_ref(Type::COMM, team as u64),
                    self.p_rank(location, team, creator)
                ),
            )
        };
        if let Some(m) = mpi_message(event) {
            let request = m
                .request
                .map_or(String::new(), |r| format!(", Request: {r}"));
            let rest = format!(
                "{}: {}, Communicator: {}, Tag: {}, Length: {}{request}",
                m.role,
                self.p_rank(location, m.communicator, m.peer),
                self.p_ref(Type::COMM, m.communicator as u64),
                m.tag,
                m.length
            );
            return (m.print_kind, rest);
        }
        if let Some((kind, _, request_id)) = mpi_request(event) {
            return (kind, format!("Request: {request_id}"));
        }
        match event {
            E::BufferFlush { stop_time } => ("BUFFER_FLUSH", format!("Stop Time: {stop_time}")),
            E::MeasurementOnOff { mode } => ("MEASUREMENT_ON_OFF", format!("Mode: {}", en(*mode))),
            E::Enter { region } => ("ENTER", format!("Region: {}", self.p_region(*region))),
            E::Leave { region } => ("LEAVE", format!("Region: {}", self.p_region(*region))),
            E::Metric { metric, values } => ("METRIC", self.p_metric_values(*metric, values)),
            E::ParameterString { parameter, string } => (
                "PARAMETER_STRING",
                format!(
                    "Parameter: {}, Value: {}",
                    self.p_ref(Type::PARAMETER, *parameter as u64),
                    self.p_str(*string)
                ),
            ),
            E::ParameterInt { parameter, value } => (
                "PARAMETER_INT64",
                format!(
                    "Parameter: {}, Value: {value}",
                    self.p_ref(Type::PARAMETER, *parameter as u64)
                ),
            ),
            E::ParameterUnsignedInt { parameter, value } => (
                "PARAMETER_UINT64",
                format!(
                    "Parameter: {}, Value: {value}",
                    self.p_ref(Type::PARAMETER, *parameter as u64)
                ),
            ),
            E::ThreadFork {
                model,
                number_of_requested_threads,
            } => (
                "THREAD_FORK",
                format!(
                    "Model: {}, # Requested Threads: {number_of_requested_threads}",
                    self.p_paradigm(*model)
                ),
            ),
            E::ThreadJoin { model } => {
                ("THREAD_JOIN", format!("Model: {}", self.p_paradigm(*model)))
            }
            E::ThreadTeamBegin { team } => (
                "THREAD_TEAM_BEGIN",
                format!("Thread Team: {}", self.p_ref(Type::COMM, *team as u64)),
            ),
            E::ThreadTeamEnd { team } => (
                "THREAD_TEAM_END",
                format!("Thread Team: {}", self.p_ref(Type::COMM, *team as u64)),
            ),
            E::ThreadAcquireLock {
                model,
                lock_id,
                acquisition_order,
            } => (
                "THREAD_ACQUIRE_LOCK",
                format!(
                    "Model: {}, Lock: {lock_id}, Acquisition Order: {acquisition_order}",
                    self.p_paradigm(*model)
                ),
            ),
            E::ThreadReleaseLock {
                model,
                lock_id,
                acquisition_order,
            } => (
                "THREAD_RELEASE_LOCK",
                format!(
                    "Model: {}, Lock: {lock_id}, Acquisition Order: {acquisition_order}",
                    self.p_paradigm(*model)
                ),
            ),
            E::ThreadTaskCreate {
                team,
                creating_thread,
                generation_number,
            } => task(
                "THREAD_TASK_CREATE",
                *team,
                *creating_thread,
                *generation_number,
            ),
            E::ThreadTaskSwitch {
                team,
                creating_thread,
                generation_number,
            } => task(
                "THREAD_TASK_SWITCH",
                *team,
                *creating_thread,
                *generation_number,
            ),
            E::ThreadTaskComplete {
                team,
                creating_thread,
                generation_number,
            } => task(
                "THREAD_TASK_COMPLETE",
                *team,
                *creating_thread,
                *generation_number,
            ),
            E::ProgramBegin {
                program_name,
                arguments,
            } => (
                "PROGRAM_BEGIN",
                format!(
                    "Name: {}, {}",
                    self.p_str(*program_name),
                    Self::p_list(
                        arguments.iter().map(|&a| self.p_str(a)).collect(),
                        "Argument",
                        "Arguments"
                    )
                ),
            ),
            E::ProgramEnd { exit_status } => (
                "PROGRAM_END",
                // OTF2_UNDEFINED_INT64 is i64::MIN.
                if *exit_status == i64::MIN {
                    "Exit status: UNDEFINED".into()
                } else {
                    format!("Exit status: {exit_status}")
                },
            ),
            E::MpiCollectiveBegin {} => ("MPI_COLLECTIVE_BEGIN", String::new()),
            E::MpiCollectiveEnd {
                collective_op,
                communicator,
                root,
                size_sent,
                size_received,
            } => (
                "MPI_COLLECTIVE_END",
                format!(
                    "Operation: {}, Communicator: {}, Root: {}, Sent: {size_sent}, Received: \
                     {size_received}",
                    en(*collective_op),
                    self.p_ref(Type::COMM, *communicator as u64),
                    // OTF2_COLLECTIVE_ROOT_NONE
                    if *root == U {
                        "NONE".to_string()
                    } else {
                        self.p_rank(location, *communicator, *root)
                    }
                ),
            ),
            E::NonBlockingCollectiveComplete {
                collective_op,
                communicator,
                root,
                size_sent,
                size_received,
                request_id,
            } => (
                "NON_BLOCKING_COLLECTIVE_COMPLETE",
                format!(
                    "Operation: {}, Communicator: {}, Root: {}, Sent: {size_sent}, Received: \
                     {size_received}, Request: {request_id}",
                    en(*collective_op),
                    self.p_ref(Type::COMM, *communicator as u64),
                    if *root == U {
                        "NONE".to_string()
                    } else {
                        self.p_rank(location, *communicator, *root)
                    }
                ),
            ),
            E::MpiSend { .. }
            | E::MpiIsend { .. }
            | E::MpiRecv { .. }
            | E::MpiIrecv { .. }
            | E::MpiIsendComplete { .. }
            | E::MpiIrecvRequest { .. }
            | E::MpiRequestTest { .. }
            | E::MpiRequestCancelled { .. }
            | E::NonBlockingCollectiveRequest { .. } => unreachable!("shown above"),
            E::Unknown { .. } => panic!("not written"),
        }
    }

    /// A snapshot record as `otf2-print` shows it: record name, time column (the original event
    /// time for records that capture an event), rest of the line.
    pub(crate) fn p_snap(
        &self,
        location: u64,
        time: u64,
        record: &SnapRecord,
    ) -> (&'static str, u64, String) {
        use SnapRecord as S;
        if let Some((orig_event_time, event)) = captured_event(record) {
            let (kind, rest) = self.p_event(location, &event);
            return (kind, orig_event_time, rest);
        }
        match record {
            S::SnapshotStart { number_of_records } => (
                "SNAPSHOT_START",
                time,
                format!("# Events: {number_of_records}"),
            ),
            S::SnapshotEnd { cont_read_pos } => (
                "SNAPSHOT_END",
                time,
                format!("Cont. Read Position: {cont_read_pos}"),
            ),
            S::OmpFork {
                orig_event_time,
                number_of_requested_threads,
            } => (
                "OMP_FORK",
                *orig_event_time,
                format!("# Requested Threads: {number_of_requested_threads}"),
            ),
            S::OmpAcquireLock {
                orig_event_time,
                lock_id,
                acquisition_order,
            } => (
                "OMP_ACQUIRE_LOCK",
                *orig_event_time,
                format!("Lock: {lock_id}, Acquisition Order: {acquisition_order}"),
            ),
            S::OmpTaskCreate {
                orig_event_time,
                task_id,
            } => (
                "OMP_TASK_CREATE",
                *orig_event_time,
                format!("Task: {task_id}"),
            ),
            S::OmpTaskSwitch {
                orig_event_time,
                task_id,
            } => (
                "OMP_TASK_SWITCH",
                *orig_event_time,
                format!("Task: {task_id}"),
            ),
            other => panic!("not written: {other:?}"),
        }
    }
}

/// The event a snapshot record captures, with the time that event happened.
pub(crate) fn captured_event(record: &SnapRecord) -> Option<(u64, Event)> {
    use Event as E;
    use SnapRecord as S;
    Some(match record.clone() {
        S::MeasurementOnOff {
            orig_event_time,
            mode,
        } => (orig_event_time, E::MeasurementOnOff { mode }),
        S::Enter {
            orig_event_time,
            region,
        } => (orig_event_time, E::Enter { region }),
        S::MpiSend {
            orig_event_time,
            receiver,
            communicator,
            msg_tag,
            msg_length,
        } => (
            orig_event_time,
            E::MpiSend {
                receiver,
                communicator,
                msg_tag,
                msg_length,
            },
        ),
        S::MpiIsend {
            orig_event_time,
            receiver,
            communicator,
            msg_tag,
            msg_length,
            request_id,
        } => (
            orig_event_time,
            E::MpiIsend {
                receiver,
                communicator,
                msg_tag,
                msg_length,
                request_id,
            },
        ),
        S::MpiIsendComplete {
            orig_event_time,
            request_id,
        } => (orig_event_time, E::MpiIsendComplete { request_id }),
        S::MpiRecv {
            orig_event_time,
            sender,
            communicator,
            msg_tag,
            msg_length,
        } => (
            orig_event_time,
            E::MpiRecv {
                sender,
                communicator,
                msg_tag,
                msg_length,
            },
        ),
        S::MpiIrecvRequest {
            orig_event_time,
            request_id,
        } => (orig_event_time, E::MpiIrecvRequest { request_id }),
        S::MpiIrecv {
            orig_event_time,
            sender,
            communicator,
            msg_tag,
            msg_length,
            request_id,
        } => (
            orig_event_time,
            E::MpiIrecv {
                sender,
                communicator,
                msg_tag,
                msg_length,
                request_id,
            },
        ),
        S::MpiCollectiveBegin { orig_event_time } => (orig_event_time, E::MpiCollectiveBegin {}),
        S::MpiCollectiveEnd {
            orig_event_time,
            collective_op,
            communicator,
            root,
            size_sent,
            size_received,
        } => (
            orig_event_time,
            E::MpiCollectiveEnd {
                collective_op,
                communicator,
                root,
                size_sent,
                size_received,
            },
        ),
        S::Metric {
            orig_event_time,
            metric,
            values,
        } => (orig_event_time, E::Metric { metric, values }),
        S::ParameterString {
            orig_event_time,
            parameter,
            string,
        } => (orig_event_time, E::ParameterString { parameter, string }),
        S::ParameterInt {
            orig_event_time,
            parameter,
            value,
        } => (orig_event_time, E::ParameterInt { parameter, value }),
        S::ParameterUnsignedInt {
            orig_event_time,
            parameter,
            value,
        } => (
            orig_event_time,
            E::ParameterUnsignedInt { parameter, value },
        ),
        _ => return None,
    })
}
