//! Reading a `.cubex` archive back into a [`Profile`]: ours, and those cubew writes for
//! Score-P (and Scalasca), within limits on what it loads into memory.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use super::model::{
    group_kind, location_kind, Cnode, DataType, Location, LocationGroup, Metric, MetricKind,
    Profile, Region, SystemNode, Values, FORMAT_ATTRIBUTE_KEYS,
};
use super::tar::{self, Member};
use super::xml::{self, Document, Element};
use super::{
    deep_enumeration, wide_enumeration, ANCHOR_NAME, DATA_MARKER, ENDIANNESS_MARK,
    INDEX_FORMAT_DENSE, INDEX_FORMAT_SPARSE, INDEX_MARKER, ZDATA_MARKER,
};

/// How much a read may load; files past these limits are refused with an error rather than
/// read into memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadLimits {
    /// Largest archive accepted, in bytes.
    pub max_file_bytes: u64,
    /// Largest `anchor.xml` accepted, in bytes (its parsed form takes a few times as much).
    pub max_anchor_bytes: u64,
    /// Largest total of the dense value matrices (call paths × locations × 8 bytes per metric).
    pub max_value_bytes: u64,
    /// Deepest system tree accepted (call trees may be of any depth).
    pub max_system_tree_depth: usize,
}

impl Default for ReadLimits {
    /// 1 GiB of file, 256 MiB of anchor, 1 GiB of values, 256 system tree levels.
    fn default() -> Self {
        ReadLimits {
            max_file_bytes: 1 << 30,
            max_anchor_bytes: 256 << 20,
            max_value_bytes: 1 << 30,
            max_system_tree_depth: 256,
        }
    }
}

/// What [`read_with`] gives back.
#[derive(Clone, Debug, PartialEq)]
pub struct Reading {
    /// The profile.
    pub profile: Profile,
    /// Unique names of the metrics left out: derived metrics (no stored data), `SIMPLE` ones,
    /// and those of data types this model does not hold (`TAU_ATOMIC`, `HISTOGRAM`...). Their
    /// children hang under their nearest kept ancestor.
    pub skipped_metrics: Vec<String>,
}

fn bad(message: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.into())
}

/// Reads the profile at `path` within the default [`ReadLimits`], leaving out the metrics it
/// cannot hold (see [`Reading::skipped_metrics`]).
pub fn read(path: &Path) -> io::Result<Profile> {
    read_with(path, &ReadLimits::default()).map(|r| r.profile)
}

/// Reads the profile at `path` within `limits`. Refuses anything but a regular file (a FIFO or
/// a device would block or never end), archives and anchors past the limits, and malformed
/// content, with an [`io::ErrorKind::InvalidData`] error saying what is wrong.
pub fn read_with(path: &Path, limits: &ReadLimits) -> io::Result<Reading> {
    let meta = fs::metadata(path)?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        ));
    }
    let mut file = File::open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        ));
    }
    let len = meta.len();
    if len > limits.max_file_bytes {
        return Err(bad(format!(
            "{} has {len} bytes, more than the {} this reader accepts",
            path.display(),
            limits.max_file_bytes
        )));
    }
    let members = tar::list(&mut file, len)?;
    let mut by_name: HashMap<&str, &Member> = HashMap::new();
    for member in &members {
        by_name.insert(member.name.as_str(), member);
    }
    let anchor = by_name.get(ANCHOR_NAME).ok_or_else(|| {
        bad(format!(
            "{} has no {ANCHOR_NAME}: not a CUBE4 archive",
            path.display()
        ))
    })?;
    if anchor.size > limits.max_anchor_bytes {
        return Err(bad(format!(
            "{ANCHOR_NAME} has {} bytes, more than the {} this reader accepts",
            anchor.size, limits.max_anchor_bytes
        )));
    }
    let anchor_bytes = read_member(&mut file, anchor)?;
    if anchor_bytes.starts_with(&[0x1f, 0x8b]) {
        return Err(bad("compressed anchor.xml is not supported"));
    }
    let anchor_text =
        String::from_utf8(anchor_bytes).map_err(|_| bad("anchor.xml is not UTF-8"))?;
    let doc = xml::parse(&anchor_text)?;
    drop(anchor_text);
    let mut anchor = Anchor::from_document(&doc, limits)?;
    drop(doc);

    let locations = anchor.location_ids.len();
    let entries = anchor
        .cnodes_model
        .len()
        .checked_mul(locations)
        .filter(|&e| {
            e.checked_mul(8)
                .and_then(|b| b.checked_mul(anchor.metrics.len()))
                .is_some_and(|b| b as u64 <= limits.max_value_bytes)
        })
        .ok_or_else(|| {
            bad(format!(
                "{} call paths × {locations} locations × {} metrics is more data than the {} bytes this reader accepts",
                anchor.cnodes_model.len(),
                anchor.metrics.len(),
                limits.max_value_bytes
            ))
        })?;

    let mut values = Vec::with_capacity(anchor.metrics.len());
    for kept in &anchor.metrics {
        let index = by_name
            .get(format!("{}.index", kept.xml_id).as_str())
            .copied();
        let data = by_name
            .get(format!("{}.data", kept.xml_id).as_str())
            .copied();
        let matrix = match (index, data) {
            (None, None) => kept.metric.data_type.zeros(entries),
            (Some(index), Some(data)) => {
                let name = &kept.metric.unique_name;
                let index_bytes = read_member(&mut file, index)?;
                let data_bytes = read_member(&mut file, data)?;
                anchor
                    .metric_values(kept, &index_bytes, &data_bytes)
                    .map_err(|e| bad(format!("metric {name:?}: {e}")))?
            }
            _ => {
                return Err(bad(format!(
                    "metric {:?} has only one of {id}.index and {id}.data",
                    kept.metric.unique_name,
                    id = kept.xml_id
                )))
            }
        };
        values.push(matrix);
    }
    let metrics = std::mem::take(&mut anchor.metrics)
        .into_iter()
        .map(|k| k.metric)
        .collect();
    Ok(Reading {
        profile: Profile {
            attributes: anchor.attributes,
            metrics,
            regions: anchor.regions,
            cnodes: anchor.cnodes_model,
            system: anchor.system,
            values,
        },
        skipped_metrics: anchor.skipped_metrics,
    })
}

fn read_member(file: &mut File, member: &Member) -> io::Result<Vec<u8>> {
    let size = usize::try_from(member.size).map_err(|_| bad("tar member too large"))?;
    let mut bytes = vec![0u8; size];
    file.seek(SeekFrom::Start(member.offset))?;
    file.read_exact(&mut bytes)?;
    Ok(bytes)
}

struct KeptMetric {
    metric: Metric,
    xml_id: u64,
}

/// The definitions of an anchor, with what is needed to place the stored rows and columns.
struct Anchor {
    attributes: Vec<(String, String)>,
    metrics: Vec<KeptMetric>,
    skipped_metrics: Vec<String>,
    regions: Vec<Region>,
    /// The model's call paths (see [`parents_first`] for their order).
    cnodes_model: Vec<Cnode>,
    /// Call paths in document order: roots and children lists, for the enumerations.
    doc_roots: Vec<usize>,
    doc_children: Vec<Vec<usize>>,
    /// Model index of each document-order call path.
    doc_to_model: Vec<usize>,
    system: Vec<SystemNode>,
    /// The `Id` of each location in model (document) order: the data column it reads.
    location_ids: Vec<usize>,
}

fn parse_u64(text: &str, what: &str) -> io::Result<u64> {
    text.trim()
        .parse::<u64>()
        .map_err(|_| bad(format!("{what}: {text:?} is not a non-negative integer")))
}

fn required_id(element: &Element, name: &str) -> io::Result<u64> {
    let text = element
        .attribute(name)
        .ok_or_else(|| bad(format!("<{}> without {name} attribute", element.name)))?;
    parse_u64(text, &format!("<{}> {name}", element.name))
}

/// A source line: CUBE writes -1 (or nothing) when unknown.
fn optional_line(text: Option<&str>) -> Option<u32> {
    text.and_then(|t| t.trim().parse::<i64>().ok())
        .filter(|&l| (0..=i64::from(i32::MAX)).contains(&l))
        .map(|l| l as u32)
}

/// An order of `keys.len()` items in which every parent comes before its children: ascending
/// `keys` (the ids cubew gives in definition order) when that works, the given order (document
/// preorder, always parents first) otherwise.
fn parents_first(keys: &[u64], parents: &[Option<usize>]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by_key(|&i| keys[i]);
    let mut position = vec![0usize; keys.len()];
    for (p, &i) in order.iter().enumerate() {
        position[i] = p;
    }
    let ok = (0..keys.len()).all(|i| parents[i].map_or(true, |p| position[p] < position[i]));
    if ok {
        order
    } else {
        (0..keys.len()).collect()
    }
}

impl Anchor {
    fn from_document(doc: &Document, limits: &ReadLimits) -> io::Result<Anchor> {
        let root = doc.root();
        if root.name != "cube" {
            return Err(bad(format!(
                "anchor.xml: root element is <{}>, not <cube>",
                root.name
            )));
        }
        let version = root.attribute("version").unwrap_or("");
        if !version.trim().starts_with('4') {
            return Err(bad(format!(
                "anchor.xml: CUBE version {version:?} is not supported (CUBE 4 only)"
            )));
        }
        let mut attributes = Vec::new();
        for (_, attr) in doc.named(root, "attr") {
            let key = attr
                .attribute("key")
                .ok_or_else(|| bad("<attr> without key"))?;
            let value = attr
                .attribute("value")
                .ok_or_else(|| bad("<attr> without value"))?;
            if !FORMAT_ATTRIBUTE_KEYS.contains(&key) {
                attributes.push((key.to_string(), value.to_string()));
            }
        }
        let (metrics, skipped_metrics) = Self::metrics(doc, root)?;
        let program = doc
            .first(root, "program")
            .ok_or_else(|| bad("anchor.xml has no <program>"))?;
        let (regions, region_index) = Self::regions(doc, program)?;
        let mut anchor = Anchor {
            attributes,
            metrics,
            skipped_metrics,
            regions,
            cnodes_model: Vec::new(),
            doc_roots: Vec::new(),
            doc_children: Vec::new(),
            doc_to_model: Vec::new(),
            system: Vec::new(),
            location_ids: Vec::new(),
        };
        anchor.cnodes(doc, program, &region_index)?;
        let system = doc
            .first(root, "system")
            .ok_or_else(|| bad("anchor.xml has no <system>"))?;
        if doc.first(system, "machine").is_some() {
            return Err(bad(
                "anchor.xml: CUBE 3 system trees (<machine>) are not supported",
            ));
        }
        let mut location_ids = Vec::new();
        for (_, node) in doc.named(system, "systemtreenode") {
            let node = system_node(
                doc,
                node,
                1,
                limits.max_system_tree_depth,
                &mut location_ids,
            )?;
            anchor.system.push(node);
        }
        let mut seen = vec![false; location_ids.len()];
        for &id in &location_ids {
            match seen.get_mut(id) {
                Some(s) if !*s => *s = true,
                _ => {
                    return Err(bad(format!(
                        "anchor.xml: location Ids must be 0..{} without repeats, found {id}",
                        location_ids.len()
                    )))
                }
            }
        }
        anchor.location_ids = location_ids;
        Ok(anchor)
    }

    fn metrics(doc: &Document, root: &Element) -> io::Result<(Vec<KeptMetric>, Vec<String>)> {
        let metrics = doc
            .first(root, "metrics")
            .ok_or_else(|| bad("anchor.xml has no <metrics>"))?;
        // Document preorder; each entry's nearest kept ancestor (as a position in `kept`).
        let mut kept: Vec<(u64, Option<usize>, Metric)> = Vec::new();
        let mut skipped = Vec::new();
        let mut seen_ids = std::collections::HashSet::new();
        let mut stack: Vec<(&Element, Option<usize>)> = doc
            .named(metrics, "metric")
            .map(|(_, e)| (e, None))
            .collect();
        stack.reverse();
        while let Some((element, parent)) = stack.pop() {
            let id = required_id(element, "id")?;
            if !seen_ids.insert(id) {
                return Err(bad(format!("anchor.xml: metric id {id} is used twice")));
            }
            let unique_name = doc.child_text(element, "uniq_name").to_string();
            let kind = match element.attribute("type").unwrap_or("").trim() {
                "INCLUSIVE" => Some(MetricKind::Inclusive),
                "EXCLUSIVE" => Some(MetricKind::Exclusive),
                _ => None,
            };
            let data_type = DataType::from_cube_name(doc.child_text(element, "dtype"));
            let this = match (kind, data_type) {
                (Some(kind), Some(data_type)) => {
                    kept.push((
                        id,
                        parent,
                        Metric {
                            unique_name,
                            display_name: doc.child_text(element, "disp_name").to_string(),
                            unit: doc.child_text(element, "uom").to_string(),
                            description: doc.child_text(element, "descr").to_string(),
                            data_type,
                            kind,
                            parent: None,
                        },
                    ));
                    Some(kept.len() - 1)
                }
                _ => {
                    skipped.push(unique_name);
                    parent
                }
            };
            let children: Vec<_> = doc
                .named(element, "metric")
                .map(|(_, e)| (e, this))
                .collect();
            stack.extend(children.into_iter().rev());
        }
        let keys: Vec<u64> = kept.iter().map(|k| k.0).collect();
        let parents: Vec<Option<usize>> = kept.iter().map(|k| k.1).collect();
        let order = parents_first(&keys, &parents);
        let mut new_index = vec![0usize; kept.len()];
        for (n, &old) in order.iter().enumerate() {
            new_index[old] = n;
        }
        let mut slots: Vec<Option<(u64, Option<usize>, Metric)>> =
            kept.into_iter().map(Some).collect();
        let mut out = Vec::with_capacity(slots.len());
        for &old in &order {
            if let Some((xml_id, parent, mut metric)) = slots[old].take() {
                metric.parent = parent.map(|p| new_index[p]);
                out.push(KeptMetric { metric, xml_id });
            }
        }
        Ok((out, skipped))
    }

    fn regions(
        doc: &Document,
        program: &Element,
    ) -> io::Result<(Vec<Region>, HashMap<u64, usize>)> {
        let mut found: Vec<(u64, Region)> = Vec::new();
        for (_, element) in doc.named(program, "region") {
            let id = required_id(element, "id")?;
            let name = doc.child_text(element, "name").to_string();
            let canonical_name = match doc.first(element, "mangled_name") {
                Some(e) => e.text.clone(),
                None => name.clone(),
            };
            found.push((
                id,
                Region {
                    name,
                    canonical_name,
                    source_file: element.attribute("mod").unwrap_or("").to_string(),
                    begin_line: optional_line(element.attribute("begin")),
                    end_line: optional_line(element.attribute("end")),
                    paradigm: doc.child_text(element, "paradigm").to_string(),
                    role: doc.child_text(element, "role").to_string(),
                    description: doc.child_text(element, "descr").to_string(),
                },
            ));
        }
        found.sort_by_key(|(id, _)| *id);
        let mut index = HashMap::with_capacity(found.len());
        let mut regions = Vec::with_capacity(found.len());
        for (id, region) in found {
            if index.insert(id, regions.len()).is_some() {
                return Err(bad(format!("anchor.xml: region id {id} is used twice")));
            }
            regions.push(region);
        }
        Ok((regions, index))
    }

    fn cnodes(
        &mut self,
        doc: &Document,
        program: &Element,
        region_index: &HashMap<u64, usize>,
    ) -> io::Result<()> {
        // Document preorder.
        let mut ids: Vec<u64> = Vec::new();
        let mut parents: Vec<Option<usize>> = Vec::new();
        let mut found: Vec<Cnode> = Vec::new();
        let mut seen_ids = std::collections::HashSet::new();
        let mut stack: Vec<(&Element, Option<usize>)> = doc
            .named(program, "cnode")
            .map(|(_, e)| (e, None))
            .collect();
        stack.reverse();
        while let Some((element, parent)) = stack.pop() {
            let id = required_id(element, "id")?;
            if !seen_ids.insert(id) {
                return Err(bad(format!("anchor.xml: cnode id {id} is used twice")));
            }
            let callee = required_id(element, "calleeId")?;
            let region = *region_index.get(&callee).ok_or_else(|| {
                bad(format!(
                    "anchor.xml: cnode {id} calls region {callee}, which is not defined"
                ))
            })?;
            let this = found.len();
            ids.push(id);
            parents.push(parent);
            found.push(Cnode {
                region,
                parent,
                line: optional_line(element.attribute("line")),
            });
            let children: Vec<_> = doc
                .named(element, "cnode")
                .map(|(_, e)| (e, Some(this)))
                .collect();
            stack.extend(children.into_iter().rev());
        }
        if found.is_empty() {
            return Err(bad("anchor.xml: the call tree is empty"));
        }
        let mut doc_children = vec![Vec::new(); found.len()];
        let mut doc_roots = Vec::new();
        for (i, parent) in parents.iter().enumerate() {
            match parent {
                Some(p) => doc_children[*p].push(i),
                None => doc_roots.push(i),
            }
        }
        let order = parents_first(&ids, &parents);
        let mut doc_to_model = vec![0usize; found.len()];
        for (n, &old) in order.iter().enumerate() {
            doc_to_model[old] = n;
        }
        self.cnodes_model = order
            .iter()
            .map(|&old| {
                let c = &found[old];
                Cnode {
                    region: c.region,
                    parent: c.parent.map(|p| doc_to_model[p]),
                    line: c.line,
                }
            })
            .collect();
        self.doc_roots = doc_roots;
        self.doc_children = doc_children;
        self.doc_to_model = doc_to_model;
        Ok(())
    }

    /// Places the stored rows of one metric into a dense model matrix.
    fn metric_values(&self, kept: &KeptMetric, index: &[u8], data: &[u8]) -> io::Result<Values> {
        let cnodes = self.cnodes_model.len();
        let locations = self.location_ids.len();
        let rest = index
            .strip_prefix(INDEX_MARKER)
            .ok_or_else(|| bad("index file does not start with CUBEX.INDEX"))?;
        if rest.len() < 7 {
            return Err(bad("index header is truncated"));
        }
        let mark = [rest[0], rest[1], rest[2], rest[3]];
        let little = if u32::from_le_bytes(mark) == ENDIANNESS_MARK {
            true
        } else if u32::from_be_bytes(mark) == ENDIANNESS_MARK {
            false
        } else {
            return Err(bad("index header has no valid byte order mark"));
        };
        let u32_at = |b: &[u8]| {
            let a = [b[0], b[1], b[2], b[3]];
            if little {
                u32::from_le_bytes(a)
            } else {
                u32::from_be_bytes(a)
            }
        };
        let format = rest[6];
        let rest = &rest[7..];
        let rows: Vec<usize> = match format {
            INDEX_FORMAT_SPARSE => {
                if rest.len() < 4 {
                    return Err(bad("sparse index has no entry count"));
                }
                let count = u32_at(rest) as usize;
                let list = &rest[4..];
                if list.len() != count.saturating_mul(4) {
                    return Err(bad(format!(
                        "sparse index announces {count} entries but holds {} bytes",
                        list.len()
                    )));
                }
                let mut seen = vec![false; cnodes];
                let mut rows = Vec::with_capacity(count);
                for chunk in list.chunks_exact(4) {
                    let position = u32_at(chunk) as usize;
                    match seen.get_mut(position) {
                        Some(s) if !*s => *s = true,
                        _ => {
                            return Err(bad(format!(
                                "index entry {position} is out of range or repeated ({cnodes} call paths)"
                            )))
                        }
                    }
                    rows.push(position);
                }
                rows
            }
            INDEX_FORMAT_DENSE => {
                if !rest.is_empty() {
                    return Err(bad("dense index has trailing bytes"));
                }
                (0..cnodes).collect()
            }
            other => return Err(bad(format!("index format {other} is not supported"))),
        };
        if data.starts_with(ZDATA_MARKER) {
            return Err(bad("compressed data (ZCUBEX.DATA) is not supported"));
        }
        let data = data
            .strip_prefix(DATA_MARKER)
            .ok_or_else(|| bad("data file does not start with CUBEX.DATA"))?;
        let row_bytes = locations * 8;
        if data.len() != rows.len().saturating_mul(row_bytes) {
            return Err(bad(format!(
                "data file holds {} bytes, expected {} rows of {locations} values",
                data.len(),
                rows.len()
            )));
        }
        let enumeration = match kept.metric.kind {
            MetricKind::Inclusive => wide_enumeration(&self.doc_roots, &self.doc_children),
            MetricKind::Exclusive => deep_enumeration(&self.doc_roots, &self.doc_children),
        };
        let mut values = kept.metric.data_type.zeros(cnodes * locations);
        for (row, &position) in data.chunks_exact(row_bytes.max(1)).zip(&rows) {
            let model_cnode = self.doc_to_model[enumeration[position]];
            let base = model_cnode * locations;
            for (column, &id) in self.location_ids.iter().enumerate() {
                let b = &row[id * 8..id * 8 + 8];
                let raw = [b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]];
                let bits = if little {
                    u64::from_le_bytes(raw)
                } else {
                    u64::from_be_bytes(raw)
                };
                match &mut values {
                    Values::U64(v) => v[base + column] = bits,
                    Values::I64(v) => v[base + column] = bits as i64,
                    Values::F64(v) => v[base + column] = f64::from_bits(bits),
                }
            }
        }
        Ok(values)
    }
}

/// One `<systemtreenode>` and what it holds; collects location Ids in document order.
fn system_node(
    doc: &Document,
    element: &Element,
    depth: usize,
    max_depth: usize,
    location_ids: &mut Vec<usize>,
) -> io::Result<SystemNode> {
    if depth > max_depth {
        return Err(bad(format!(
            "anchor.xml: system tree deeper than {max_depth} levels"
        )));
    }
    let mut node = SystemNode {
        name: doc.child_text(element, "name").to_string(),
        class: doc.child_text(element, "class").to_string(),
        description: doc.child_text(element, "descr").to_string(),
        groups: Vec::new(),
        children: Vec::new(),
    };
    for (_, group) in doc.named(element, "locationgroup") {
        let type_text = doc.child_text(group, "type");
        let kind = group_kind(type_text).ok_or_else(|| {
            bad(format!(
                "anchor.xml: unknown location group type {type_text:?}"
            ))
        })?;
        let mut locations = Vec::new();
        for (_, location) in doc.named(group, "location") {
            let id = required_id(location, "Id")?;
            let type_text = doc.child_text(location, "type");
            let kind = location_kind(type_text)
                .ok_or_else(|| bad(format!("anchor.xml: unknown location type {type_text:?}")))?;
            location_ids.push(usize::try_from(id).map_err(|_| bad("location Id out of range"))?);
            locations.push(Location {
                name: doc.child_text(location, "name").to_string(),
                rank: rank(doc.child_text(location, "rank"))?,
                kind,
            });
        }
        node.groups.push(LocationGroup {
            name: doc.child_text(group, "name").to_string(),
            rank: rank(doc.child_text(group, "rank"))?,
            kind,
            locations,
        });
    }
    for (_, child) in doc.named(element, "systemtreenode") {
        node.children
            .push(system_node(doc, child, depth + 1, max_depth, location_ids)?);
    }
    Ok(node)
}

fn rank(text: &str) -> io::Result<u32> {
    text.trim().parse::<u32>().map_err(|_| {
        bad(format!(
            "anchor.xml: rank {text:?} is not a non-negative integer"
        ))
    })
}
