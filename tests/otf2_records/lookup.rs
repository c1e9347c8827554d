//! Looking things up in what was written, as the reference readers resolve references.

use super::*;

// ---------------------------------------------------------------------------------------------
// What the reference readers should show, derived from what was written
// ---------------------------------------------------------------------------------------------

pub(crate) fn is_undefined_ref(t: Type, id: u64) -> bool {
    match t {
        Type::LOCATION => id == UNDEFINED_U64,
        _ => id == UNDEFINED_U32 as u64,
    }
}

pub(crate) fn mapping_type_of(t: Type) -> Option<MappingType> {
    Some(match t {
        Type::STRING => MappingType::STRING,
        Type::ATTRIBUTE => MappingType::ATTRIBUTE,
        Type::LOCATION => MappingType::LOCATION,
        Type::REGION => MappingType::REGION,
        Type::GROUP => MappingType::GROUP,
        Type::METRIC => MappingType::METRIC,
        Type::COMM => MappingType::COMM,
        Type::PARAMETER => MappingType::PARAMETER,
        Type::RMA_WIN => MappingType::RMA_WIN,
        Type::SOURCE_CODE_LOCATION => MappingType::SOURCE_CODE_LOCATION,
        Type::CALLING_CONTEXT => MappingType::CALLING_CONTEXT,
        Type::INTERRUPT_GENERATOR => MappingType::INTERRUPT_GENERATOR,
        Type::IO_FILE => MappingType::IO_FILE,
        Type::IO_HANDLE => MappingType::IO_HANDLE,
        Type::LOCATION_GROUP => MappingType::LOCATION_GROUP,
        _ => return None,
    })
}

/// `otf2-print`'s bit-set notation: `NONE` or `{A, B}`.
pub(crate) fn print_flags(bits: u32, names: &[(u32, &str)]) -> String {
    if bits == 0 {
        return "NONE".into();
    }
    let set: Vec<&str> = names
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, n)| *n)
        .collect();
    format!("{{{}}}", set.join(", "))
}

/// The dump's bit-set notation: `NONE`, `A`, `A|B`.
pub(crate) fn py_flags(bits: u32, names: &[(u32, &str)]) -> Json {
    if bits == 0 {
        return js("NONE");
    }
    let set: Vec<&str> = names
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, n)| *n)
        .collect();
    js(&set.join("|"))
}

pub(crate) const REGION_FLAGS: &[(u32, &str)] = &[(1, "DYNAMIC"), (2, "PHASE")];
pub(crate) const GROUP_FLAGS: &[(u32, &str)] = &[(1, "GLOBAL_MEMBERS")];
pub(crate) const COMM_FLAGS: &[(u32, &str)] = &[(1, "CREATE_DESTROY_EVENTS")];

/// An enum's name (the value itself where this crate has no name for it).
pub(crate) fn en<T: std::fmt::Debug>(v: T) -> String {
    format!("{v:?}")
}

/// Looks things up in what was written.
pub(crate) struct Ctx<'a> {
    pub(crate) w: &'a Written,
}

impl Ctx<'_> {
    pub(crate) fn text(&self, id: u32) -> &str {
        self.w
            .defs
            .iter()
            .find_map(|d| match d {
                GlobalDef::String { id: i, string } if *i == id => Some(string.as_str()),
                _ => None,
            })
            .unwrap_or_else(|| panic!("string {id} not written"))
    }
    pub(crate) fn find<T>(&self, what: &str, f: impl Fn(&GlobalDef) -> Option<T>) -> T {
        self.w
            .defs
            .iter()
            .find_map(f)
            .unwrap_or_else(|| panic!("{what} not written"))
    }
    /// The name string of a definition that has an id.
    pub(crate) fn name_of(&self, t: Type, id: u64) -> u32 {
        use GlobalDef as D;
        self.find(&format!("{t:?} {id}"), |d| match (t, d) {
            (Type::ATTRIBUTE, D::Attribute { id: i, name, .. })
            | (Type::REGION, D::Region { id: i, name, .. })
            | (Type::GROUP, D::Group { id: i, name, .. })
            | (Type::COMM, D::Comm { id: i, name, .. })
            | (Type::PARAMETER, D::Parameter { id: i, name, .. })
            | (Type::INTERRUPT_GENERATOR, D::InterruptGenerator { id: i, name, .. })
            | (Type::LOCATION_GROUP, D::LocationGroup { id: i, name, .. })
                if *i as u64 == id =>
            {
                Some(*name)
            }
            (Type::LOCATION, D::Location { id: i, name, .. }) if *i == id => Some(*name),
            _ => None,
        })
    }
    pub(crate) fn metric_members(&self, metric: u32) -> Vec<u32> {
        self.find(&format!("metric {metric}"), |d| match d {
            GlobalDef::MetricClass { id, members, .. } if *id == metric => Some(members.clone()),
            GlobalDef::MetricInstance {
                id, metric_class, ..
            } if *id == metric => Some(self.metric_members(*metric_class)),
            _ => None,
        })
    }
    pub(crate) fn member_name_and_type(&self, member: u32) -> (u32, Type) {
        self.find(&format!("metric member {member}"), |d| match d {
            GlobalDef::MetricMember {
                id,
                name,
                value_type,
                ..
            } if *id == member => Some((*name, *value_type)),
            _ => None,
        })
    }
    pub(crate) fn group(&self, group: u32) -> (GroupType, Paradigm, Vec<u64>) {
        self.find(&format!("group {group}"), |d| match d {
            GlobalDef::Group {
                id,
                group_type,
                paradigm,
                members,
                ..
            } if *id == group => Some((*group_type, *paradigm, members.clone())),
            _ => None,
        })
    }
    /// The location a COMM_GROUP rank stands for (an index into the COMM_LOCATIONS group of
    /// the same paradigm).
    pub(crate) fn rank_location(&self, paradigm: Paradigm, rank: u64) -> u64 {
        let all = self.find("COMM_LOCATIONS group", |d| match d {
            GlobalDef::Group {
                group_type: GroupType::COMM_LOCATIONS,
                paradigm: p,
                members,
                ..
            } if *p == paradigm => Some(members.clone()),
            _ => None,
        });
        all[rank as usize]
    }

    /// The id a reference reader sees for `id` (of type `t`) written on `location`: local
    /// mapping tables translate it; ids missing from a table pass unchanged.
    pub(crate) fn map(&self, location: u64, t: Type, id: u64) -> u64 {
        let Some(mt) = mapping_type_of(t) else {
            return id;
        };
        let tables = &self
            .w
            .locals
            .iter()
            .find(|(l, _)| *l == location)
            .unwrap()
            .1;
        for def in tables {
            match def {
                LocalDef::MappingTable { mapping_type, map } if *mapping_type == mt => {
                    return match map {
                        IdMap::Dense(g) => g.get(id as usize).copied().unwrap_or(id),
                        IdMap::Sparse(p) => p.iter().find(|(l, _)| *l == id).map_or(id, |p| p.1),
                    };
                }
                _ => {}
            }
        }
        id
    }
    pub(crate) fn map32(&self, location: u64, t: Type, id: u32) -> u32 {
        self.map(location, t, id as u64) as u32
    }
    pub(crate) fn map_value(&self, location: u64, v: TypedValue) -> TypedValue {
        TypedValue::new(v.value_type, self.map(location, v.value_type, v.raw))
    }
    /// An event as a reference reader reports it: ids translated by the location's tables.
    pub(crate) fn global_event(&self, location: u64, event: &Event) -> Event {
        use Event as E;
        let m = |t, id| self.map32(location, t, id);
        let mut e = event.clone();
        match &mut e {
            E::Enter { region } | E::Leave { region } => *region = m(Type::REGION, *region),
            E::Metric { metric, .. } => *metric = m(Type::METRIC, *metric),
            E::ParameterString { parameter, string } => {
                *parameter = m(Type::PARAMETER, *parameter);
                *string = m(Type::STRING, *string);
            }
            E::ParameterInt { parameter, .. } | E::ParameterUnsignedInt { parameter, .. } => {
                *parameter = m(Type::PARAMETER, *parameter)
            }
            E::ThreadTeamBegin { team }
            | E::ThreadTeamEnd { team }
            | E::ThreadTaskCreate { team, .. }
            | E::ThreadTaskSwitch { team, .. }
            | E::ThreadTaskComplete { team, .. } => *team = m(Type::COMM, *team),
            E::MpiSend { communicator, .. }
            | E::MpiIsend { communicator, .. }
            | E::MpiRecv { communicator, .. }
            | E::MpiIrecv { communicator, .. }
            | E::MpiCollectiveEnd { communicator, .. }
            | E::NonBlockingCollectiveComplete { communicator, .. } => {
                *communicator = m(Type::COMM, *communicator)
            }
            E::ProgramBegin {
                program_name,
                arguments,
            } => {
                *program_name = m(Type::STRING, *program_name);
                for a in arguments {
                    *a = m(Type::STRING, *a);
                }
            }
            _ => {}
        }
        e
    }
    pub(crate) fn global_attributes(
        &self,
        location: u64,
        list: &AttributeList,
    ) -> Vec<(u32, TypedValue)> {
        list.entries()
            .iter()
            .map(|&(a, v)| {
                (
                    self.map32(location, Type::ATTRIBUTE, a),
                    self.map_value(location, v),
                )
            })
            .collect()
    }
    pub(crate) fn attribute_type(&self, attribute: u32) -> Type {
        self.find(&format!("attribute {attribute}"), |d| match d {
            GlobalDef::Attribute {
                id, attribute_type, ..
            } if *id == attribute => Some(*attribute_type),
            _ => None,
        })
    }
}

/// A point-to-point MPI event as both readers name and show it.
pub(crate) struct MpiMessage {
    pub(crate) print_kind: &'static str,
    pub(crate) python_kind: &'static str,
    /// `Receiver` or `Sender`, and the python field of that rank.
    pub(crate) role: &'static str,
    pub(crate) peer_key: &'static str,
    pub(crate) peer: u32,
    pub(crate) communicator: u32,
    pub(crate) tag: u32,
    pub(crate) length: u64,
    /// The non-blocking ones' request id.
    pub(crate) request: Option<u64>,
}

pub(crate) fn mpi_message(event: &Event) -> Option<MpiMessage> {
    use Event as E;
    let ((print_kind, python_kind), (role, peer_key), request) = match *event {
        E::MpiSend { .. } => (("MPI_SEND", "MpiSend"), ("Receiver", "receiver"), None),
        E::MpiIsend { request_id, .. } => (
            ("MPI_ISEND", "MpiIsend"),
            ("Receiver", "receiver"),
            Some(request_id),
        ),
        E::MpiRecv { .. } => (("MPI_RECV", "MpiRecv"), ("Sender", "sender"), None),
        E::MpiIrecv { request_id, .. } => (
            ("MPI_IRECV", "MpiIrecv"),
            ("Sender", "sender"),
            Some(request_id),
        ),
        _ => return None,
    };
    let (peer, communicator, tag, length) = match *event {
        E::MpiSend {
            receiver: peer,
            communicator,
            msg_tag,
            msg_length,
        }
        | E::MpiIsend {
            receiver: peer,
            communicator,
            msg_tag,
            msg_length,
            ..
        }
        | E::MpiRecv {
            sender: peer,
            communicator,
            msg_tag,
            msg_length,
        }
        | E::MpiIrecv {
            sender: peer,
            communicator,
            msg_tag,
            msg_length,
            ..
        } => (peer, communicator, msg_tag, msg_length),
        _ => unreachable!(),
    };
    Some(MpiMessage {
        print_kind,
        python_kind,
        role,
        peer_key,
        peer,
        communicator,
        tag,
        length,
        request,
    })
}

/// The MPI events that carry only a request id: their `otf2-print` and python names, the id.
pub(crate) fn mpi_request(event: &Event) -> Option<(&'static str, &'static str, u64)> {
    use Event as E;
    Some(match *event {
        E::MpiIsendComplete { request_id } => {
            ("MPI_ISEND_COMPLETE", "MpiIsendComplete", request_id)
        }
        E::MpiIrecvRequest { request_id } => ("MPI_IRECV_REQUEST", "MpiIrecvRequest", request_id),
        E::MpiRequestTest { request_id } => ("MPI_REQUEST_TEST", "MpiRequestTest", request_id),
        E::MpiRequestCancelled { request_id } => {
            ("MPI_REQUEST_CANCELLED", "MpiRequestCancelled", request_id)
        }
        E::NonBlockingCollectiveRequest { request_id } => (
            "NON_BLOCKING_COLLECTIVE_REQUEST",
            "NonBlockingCollectiveRequest",
            request_id,
        ),
        _ => return None,
    })
}
