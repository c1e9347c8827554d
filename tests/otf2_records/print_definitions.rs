//! What `otf2-print` shows for each global definition, and its number and date formats.

use super::*;

impl Ctx<'_> {
    // --- otf2-print's notation ---

    pub(crate) fn p_str(&self, id: u32) -> String {
        if id == U {
            "UNDEFINED".into()
        } else {
            format!("\"{}\" <{id}>", self.text(id))
        }
    }
    pub(crate) fn p_ref(&self, t: Type, id: u64) -> String {
        if is_undefined_ref(t, id) {
            return "UNDEFINED".into();
        }
        match t {
            Type::STRING => self.p_str(id as u32),
            Type::METRIC => id.to_string(),
            _ => format!("\"{}\" <{id}>", self.text(self.name_of(t, id))),
        }
    }
    pub(crate) fn p_region(&self, id: u32) -> String {
        self.p_ref(Type::REGION, id as u64)
    }
    pub(crate) fn p_location(&self, id: u64) -> String {
        self.p_ref(Type::LOCATION, id)
    }
    pub(crate) fn p_node(&self, node: u32) -> String {
        if node == U {
            return "UNDEFINED".into();
        }
        let (name, class) = self.find(&format!("node {node}"), |d| match d {
            GlobalDef::SystemTreeNode {
                id,
                name,
                class_name,
                ..
            } if *id == node => Some((*name, *class_name)),
            _ => None,
        });
        format!("\"{}::{}\" <{node}>", self.text(class), self.text(name))
    }
    /// A paradigm: by its definition's name where it has one.
    pub(crate) fn p_paradigm(&self, p: Paradigm) -> String {
        self.w
            .defs
            .iter()
            .find_map(|d| match d {
                GlobalDef::Paradigm { paradigm, name, .. } if *paradigm == p => {
                    Some(format!("\"{}\" <{}>", self.text(*name), p.0))
                }
                _ => None,
            })
            .unwrap_or_else(|| en(p))
    }
    pub(crate) fn p_member(&self, member: u32) -> String {
        format!(
            "\"{}\" <{member}>",
            self.text(self.member_name_and_type(member).0)
        )
    }
    pub(crate) fn p_value(&self, v: TypedValue) -> String {
        match v.value_type {
            Type::UINT8 | Type::UINT16 | Type::UINT32 | Type::UINT64 => v.raw.to_string(),
            Type::INT8 | Type::INT16 | Type::INT32 | Type::INT64 => v.as_i64().to_string(),
            Type::FLOAT | Type::DOUBLE => fmt_g(v.as_f64()),
            t => self.p_ref(t, v.raw),
        }
    }
    /// `Type: T, Value: V` of properties.
    pub(crate) fn p_property(&self, v: TypedValue) -> String {
        format!("Type: {:?}, Value: {}", v.value_type, self.p_value(v))
    }
    pub(crate) fn p_list(items: Vec<String>, one: &str, many: &str) -> String {
        let word = if items.len() == 1 { one } else { many };
        if items.is_empty() {
            format!("0 {many}")
        } else {
            format!("{} {word}: {}", items.len(), items.join(", "))
        }
    }
    pub(crate) fn p_attributes(&self, entries: &[(u32, TypedValue)]) -> Option<String> {
        if entries.is_empty() {
            return None;
        }
        let items: Vec<String> = entries
            .iter()
            .map(|&(a, v)| {
                format!(
                    "({}; {:?}; {})",
                    self.p_ref(Type::ATTRIBUTE, a as u64),
                    v.value_type,
                    self.p_value(v)
                )
            })
            .collect();
        Some(items.join(", "))
    }
    pub(crate) fn p_metric_values(&self, metric: u32, values: &[TypedValue]) -> String {
        let members = self.metric_members(metric);
        let items = members
            .iter()
            .zip(values)
            .map(|(&m, &v)| {
                format!(
                    "({}; {:?}; {})",
                    self.p_member(m),
                    v.value_type,
                    self.p_value(v)
                )
            })
            .collect();
        format!(
            "Metric: {metric}, {}",
            Self::p_list(items, "Value", "Values")
        )
    }

    /// A global definition as `otf2-print -G` shows it: (record name, id column, the rest).
    pub(crate) fn p_def(&self, d: &GlobalDef) -> (&'static str, String, String) {
        use GlobalDef as D;
        let none = String::new;
        match d {
            D::ClockProperties {
                timer_resolution,
                global_offset,
                trace_length,
                realtime_timestamp,
            } => (
                "CLOCK_PROPERTIES",
                none(),
                format!(
                    "Ticks per Seconds: {timer_resolution}, Global Offset: {global_offset}, \
                     Length: {trace_length}, Date: @{realtime_timestamp}"
                ),
            ),
            D::String { id, string } => ("STRING", id.to_string(), format!("\"{string}\"")),
            D::Paradigm {
                paradigm,
                name,
                paradigm_class,
            } => (
                "PARADIGM",
                paradigm.0.to_string(),
                format!(
                    "{}, Name: {}, Class: {}",
                    en(*paradigm),
                    self.p_str(*name),
                    en(*paradigm_class)
                ),
            ),
            D::ParadigmProperty {
                paradigm,
                property,
                value,
            } => {
                // RMA_ONLY is a boolean property.
                let typed =
                    if *property == ParadigmProperty::RMA_ONLY && value.value_type == Type::UINT8 {
                        format!(
                            "Type: BOOLEAN, Value: {}",
                            if value.raw != 0 { "TRUE" } else { "FALSE" }
                        )
                    } else {
                        self.p_property(*value)
                    };
                (
                    "PARADIGM_PROPERTY",
                    none(),
                    format!(
                        "Paradigm: {}, Property: {}, {typed}",
                        self.p_paradigm(*paradigm),
                        en(*property)
                    ),
                )
            }
            D::Attribute {
                id,
                name,
                description,
                attribute_type,
            } => (
                "ATTRIBUTE",
                id.to_string(),
                format!(
                    "Name: {}, Description: {}, Type: {}",
                    self.p_str(*name),
                    self.p_str(*description),
                    en(*attribute_type)
                ),
            ),
            D::SystemTreeNode {
                id,
                name,
                class_name,
                parent,
            } => (
                "SYSTEM_TREE_NODE",
                id.to_string(),
                format!(
                    "Name: {}, Class: {}, Parent: {}",
                    self.p_str(*name),
                    self.p_str(*class_name),
                    self.p_node(*parent)
                ),
            ),
            D::SystemTreeNodeProperty { node, name, value } => (
                "SYSTEM_TREE_NODE_PROPERTY",
                none(),
                format!(
                    "System Tree Node: {}, Name: {}, {}",
                    self.p_node(*node),
                    self.p_str(*name),
                    self.p_property(*value)
                ),
            ),
            D::SystemTreeNodeDomain { node, domain } => (
                "SYSTEM_TREE_NODE_DOMAIN",
                none(),
                format!(
                    "System Tree Node: {}, Domain: {}",
                    self.p_node(*node),
                    en(*domain)
                ),
            ),
            D::LocationGroup {
                id,
                name,
                location_group_type,
                system_tree_parent,
                creating_location_group,
            } => (
                "LOCATION_GROUP",
                id.to_string(),
                format!(
                    "Name: {}, Type: {}, Parent: {}, Creator: {}",
                    self.p_str(*name),
                    en(*location_group_type),
                    self.p_node(*system_tree_parent),
                    self.p_ref(Type::LOCATION_GROUP, *creating_location_group as u64)
                ),
            ),
            D::LocationGroupProperty {
                location_group,
                name,
                value,
            } => (
                "LOCATION_GROUP_PROPERTY",
                none(),
                format!(
                    "Location Group: {}, Name: {}, {}",
                    self.p_ref(Type::LOCATION_GROUP, *location_group as u64),
                    self.p_str(*name),
                    self.p_property(*value)
                ),
            ),
            D::Location {
                id,
                name,
                location_type,
                number_of_events,
                location_group,
            } => (
                "LOCATION",
                id.to_string(),
                format!(
                    "Name: {}, Type: {}, # Events: {number_of_events}, Group: {}",
                    self.p_str(*name),
                    en(*location_type),
                    self.p_ref(Type::LOCATION_GROUP, *location_group as u64)
                ),
            ),
            D::LocationProperty {
                location,
                name,
                value,
            } => (
                "LOCATION_PROPERTY",
                none(),
                format!(
                    "Location: {}, Name: {}, {}",
                    self.p_location(*location),
                    self.p_str(*name),
                    self.p_property(*value)
                ),
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
                "REGION",
                id.to_string(),
                format!(
                    "Name: {} (Aka. {}), Descr.: {}, Role: {}, Paradigm: {}, Flags: {}, \
                     File: {}, Begin: {begin_line}, End: {end_line}",
                    self.p_str(*name),
                    self.p_str(*canonical_name),
                    self.p_str(*description),
                    en(*region_role),
                    self.p_paradigm(*paradigm),
                    print_flags(region_flags.0, REGION_FLAGS),
                    self.p_str(*source_file)
                ),
            ),
            D::Callsite {
                id,
                source_file,
                line_number,
                entered_region,
                left_region,
            } => (
                "CALLSITE",
                id.to_string(),
                format!(
                    "File: {}, Line Number: {line_number}, Entered Region: {}, Left Region: {}",
                    self.p_str(*source_file),
                    self.p_region(*entered_region),
                    self.p_region(*left_region)
                ),
            ),
            D::Group {
                id,
                name,
                group_type,
                paradigm,
                group_flags,
                members,
            } => {
                let items = members
                    .iter()
                    .map(|&m| match *group_type {
                        GroupType::LOCATIONS | GroupType::COMM_LOCATIONS => self.p_location(m),
                        GroupType::REGIONS => self.p_region(m as u32),
                        // otf2-print names the members of a METRIC group by metric member.
                        GroupType::METRIC => self.p_member(m as u32),
                        GroupType::COMM_GROUP => {
                            format!(
                                "{m} ({})",
                                self.p_location(self.rank_location(*paradigm, m))
                            )
                        }
                        t => panic!("no members expected in a {t:?} group"),
                    })
                    .collect();
                (
                    "GROUP",
                    id.to_string(),
                    format!(
                        "Name: {}, Type: {}, Paradigm: {}, Flags: {}, {}",
                        self.p_str(*name),
                        en(*group_type),
                        self.p_paradigm(*paradigm),
                        print_flags(group_flags.0, GROUP_FLAGS),
                        Self::p_list(items, "Member", "Members")
                    ),
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
                "METRIC_MEMBER",
                id.to_string(),
                format!(
                    "Name: {}, Descr.: {}, Type: {}, Mode: {}, Value Type: {}, Base: {}, \
                     Exponent: {exponent}, Unit: {}",
                    self.p_str(*name),
                    self.p_str(*description),
                    en(*metric_type),
                    en(*metric_mode),
                    en(*value_type),
                    en(*base),
                    self.p_str(*unit)
                ),
            ),
            D::MetricClass {
                id,
                members,
                occurrence,
                recorder_kind,
            } => (
                "METRIC_CLASS",
                id.to_string(),
                format!(
                    "Occurrence: {}, Kind: {}, {}",
                    en(*occurrence),
                    en(*recorder_kind),
                    Self::p_list(
                        members.iter().map(|&m| self.p_member(m)).collect(),
                        "Member",
                        "Members"
                    )
                ),
            ),
            D::MetricInstance {
                id,
                metric_class,
                recorder,
                scope_type,
                scope,
            } => {
                let scope_ref = match *scope_type {
                    MetricScope::LOCATION => self.p_location(*scope),
                    MetricScope::LOCATION_GROUP => self.p_ref(Type::LOCATION_GROUP, *scope),
                    MetricScope::SYSTEM_TREE_NODE => self.p_node(*scope as u32),
                    MetricScope::GROUP => self.p_ref(Type::GROUP, *scope),
                    s => panic!("scope {s:?}"),
                };
                (
                    "METRIC_INSTANCE",
                    id.to_string(),
                    format!(
                        "Class: {metric_class}, Recorder: {}, Scope: {} {scope_ref}",
                        self.p_location(*recorder),
                        en(*scope_type)
                    ),
                )
            }
            D::MetricClassRecorder { metric, recorder } => (
                "METRIC_CLASS_RECORDER",
                none(),
                format!("Class: {metric}, Recorder: {}", self.p_location(*recorder)),
            ),
            D::Comm {
                id,
                name,
                group,
                parent,
                flags,
            } => (
                "COMM",
                id.to_string(),
                format!(
                    "Name: {}, Group: {}, Parent: {}, Flags: {}",
                    self.p_str(*name),
                    self.p_ref(Type::GROUP, *group as u64),
                    self.p_ref(Type::COMM, *parent as u64),
                    print_flags(flags.0, COMM_FLAGS)
                ),
            ),
            D::Parameter {
                id,
                name,
                parameter_type,
            } => (
                "PARAMETER",
                id.to_string(),
                format!("Name: {}, Type: {}", self.p_str(*name), en(*parameter_type)),
            ),
            D::InterruptGenerator {
                id,
                name,
                mode,
                base,
                exponent,
                period,
            } => (
                "INTERRUPT_GENERATOR",
                id.to_string(),
                format!(
                    "Name: {}, Mode: {}, Base: {}, Exponent: {exponent}, Period: {period}",
                    self.p_str(*name),
                    en(*mode),
                    en(*base)
                ),
            ),
            D::Unknown { .. } => panic!("not written"),
        }
    }
}

/// C's `%g` (6 significant digits), as `otf2-print` formats FLOAT and DOUBLE values.
pub(crate) fn fmt_g(v: f64) -> String {
    pub(crate) fn strip(s: &str) -> &str {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.')
        } else {
            s
        }
    }
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let e = format!("{v:.5e}");
    let (mantissa, exp) = e.split_once('e').unwrap();
    let exp: i32 = exp.parse().unwrap();
    if (-4..6).contains(&exp) {
        strip(&format!("{:.*}", (5 - exp) as usize, v)).to_string()
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", strip(mantissa), exp.abs())
    }
}

#[test]
fn fmt_g_matches_c() {
    let cases = [
        (0.1, "0.1"),
        (-2.5e300, "-2.5e+300"),
        (1.0 / 3.0, "0.333333"),
        (-2.0 / 3.0e-300, "-6.66667e+299"),
        (123456.0, "123456"),
        (1234567.0, "1.23457e+06"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (-1.5, "-1.5"),
        (f64::NAN, "nan"),
        (f64::NEG_INFINITY, "-inf"),
    ];
    for (v, s) in cases {
        assert_eq!(fmt_g(v), s, "{v:e}");
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub(crate) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `otf2-print` shows ClockProperties' realtime timestamp as a local date ("2023-11-14
/// 22:13:20.123456789 +0000"); turn it back into nanoseconds since the epoch, "@<ns>".
pub(crate) fn normalize_date(rest: &str) -> String {
    let Some((head, date)) = rest.split_once("Date: ") else {
        return rest.to_string();
    };
    let parts: Vec<&str> = date.split([' ', '-', ':', '.']).collect();
    let [y, mo, d, h, mi, s, frac, tz] = parts[..] else {
        panic!("unexpected date {date:?}");
    };
    let n = |t: &str| {
        t.parse::<i64>()
            .unwrap_or_else(|_| panic!("bad date {date:?}"))
    };
    let (tz_sign, tz) = if let Some(t) = tz.strip_prefix('+') {
        (1, t)
    } else {
        (-1, tz.strip_prefix('-').expect("time zone"))
    };
    assert_eq!(frac.len(), 9, "nanoseconds in {date:?}");
    let offset = tz_sign * (n(&tz[..2]) * 3600 + n(&tz[2..]) * 60);
    let secs = days_from_civil(n(y), n(mo), n(d)) * 86_400 + n(h) * 3600 + n(mi) * 60 + n(s);
    let ns = (secs - offset) as i128 * 1_000_000_000 + n(frac) as i128;
    format!("{head}Date: @{ns}")
}
