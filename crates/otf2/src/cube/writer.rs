//! Validating a [`Profile`] and writing it as a `.cubex` archive in cubew's layout.

use std::fmt::Write as _;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::model::{
    DataType, LocationKind, MetricKind, Profile, SystemNode, Values, FORMAT_ATTRIBUTE_KEYS,
};
use super::tar::{TarWriter, MAX_MEMBER_SIZE};
use super::xml::{check_text, escape};
use super::{
    deep_enumeration, wide_enumeration, ANCHOR_NAME, ANCHOR_VERSION, ANCHOR_VERSION_ACCELERATOR,
    CUBEPL_VERSION, CUBEW_VERSION, DATA_MARKER, ENDIANNESS_MARK, INDEX_FORMAT_SPARSE, INDEX_MARKER,
    INDEX_VERSION,
};
use crate::directory::{temporary_name, Directory};

fn invalid(message: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message.into())
}

/// The largest index CUBE's readers take: ids are printed with `%d` and pycubexr reads index
/// entries as signed 32-bit integers.
const MAX_ID: usize = i32::MAX as usize;

fn check_line(line: Option<u32>, what: &dyn Fn() -> String) -> io::Result<()> {
    match line {
        Some(l) if l > i32::MAX as u32 => {
            Err(invalid(format!("{}: line {l} is out of range", what())))
        }
        _ => Ok(()),
    }
}

fn check_rank(rank: u32, what: &dyn Fn() -> String) -> io::Result<()> {
    if rank > i32::MAX as u32 {
        return Err(invalid(format!("{}: rank {rank} is out of range", what())));
    }
    Ok(())
}

fn is_unique_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '=')
}

impl Profile {
    /// Checks everything [`Profile::write`] needs, without writing: indices in range, parents
    /// before children, value matrices of the right type and size, names and texts an anchor
    /// can carry, and the shape CUBE's grammar wants (at least one metric, region, call path
    /// and system tree node; at least one location per group). Errors are
    /// [`io::ErrorKind::InvalidInput`] and say what is wrong.
    pub fn validate(&self) -> io::Result<()> {
        for (key, value) in &self.attributes {
            check_text(key, true, &|| format!("attribute key {key:?}"))?;
            check_text(value, true, &|| format!("attribute {key:?}"))?;
            if FORMAT_ATTRIBUTE_KEYS.contains(&key.as_str()) {
                return Err(invalid(format!(
                    "attribute {key:?} is written by the CUBE writer itself"
                )));
            }
            if key.starts_with("CLUSTER") {
                return Err(invalid(format!(
                    "attribute {key:?} would make cubelib look for clustering data this profile does not have"
                )));
            }
        }
        if self.metrics.is_empty()
            || self.regions.is_empty()
            || self.cnodes.is_empty()
            || self.system.is_empty()
        {
            return Err(invalid(
                "a CUBE profile needs at least one metric, region, call path and system tree node",
            ));
        }
        if self.cnodes.len() > MAX_ID || self.regions.len() > MAX_ID || self.metrics.len() > MAX_ID
        {
            return Err(invalid(
                "too many metrics, regions or call paths for CUBE's 32-bit ids",
            ));
        }
        let locations = self.check_system_tree()?;
        if self.values.len() != self.metrics.len() {
            return Err(invalid(format!(
                "{} metrics but {} value matrices",
                self.metrics.len(),
                self.values.len()
            )));
        }
        let entries = self
            .cnodes
            .len()
            .checked_mul(locations)
            .filter(|&n| {
                (n as u64)
                    .checked_mul(8)
                    .and_then(|b| b.checked_add(DATA_MARKER.len() as u64))
                    .is_some_and(|b| b <= MAX_MEMBER_SIZE)
            })
            .ok_or_else(|| invalid("call paths × locations is too large for one CUBE data file"))?;
        for (i, metric) in self.metrics.iter().enumerate() {
            let name = &metric.unique_name;
            let what = || format!("metric {name:?}");
            if name.is_empty() || !name.chars().all(is_unique_name_char) {
                return Err(invalid(format!(
                    "metric unique name {name:?} must be non-empty and use only [A-Za-z0-9_:=]"
                )));
            }
            if self.metrics[..i].iter().any(|m| &m.unique_name == name) {
                return Err(invalid(format!(
                    "metric unique name {name:?} is used twice"
                )));
            }
            check_text(&metric.display_name, false, &what)?;
            check_text(&metric.unit, false, &what)?;
            check_text(&metric.description, false, &what)?;
            if let Some(parent) = metric.parent {
                if parent >= i {
                    return Err(invalid(format!(
                        "metric {name:?}: parent {parent} must be an earlier metric"
                    )));
                }
            }
            if metric.kind == MetricKind::Inclusive
                && matches!(metric.data_type, DataType::MinF64 | DataType::MaxF64)
            {
                return Err(invalid(format!(
                    "metric {name:?}: CUBE allows {} only for exclusive metrics",
                    metric.data_type.as_str()
                )));
            }
            let values = &self.values[i];
            if !values.fits(metric.data_type) {
                return Err(invalid(format!(
                    "metric {name:?}: values do not match data type {}",
                    metric.data_type.as_str()
                )));
            }
            if values.len() != entries {
                return Err(invalid(format!(
                    "metric {name:?}: {} values, but {} call paths × {locations} locations",
                    values.len(),
                    self.cnodes.len()
                )));
            }
        }
        for (i, region) in self.regions.iter().enumerate() {
            let what = || format!("region {i} ({:?})", region.name);
            check_text(&region.name, false, &what)?;
            check_text(&region.canonical_name, false, &what)?;
            check_text(&region.source_file, true, &what)?;
            check_text(&region.paradigm, false, &what)?;
            check_text(&region.role, false, &what)?;
            check_text(&region.description, false, &what)?;
            check_line(region.begin_line, &what)?;
            check_line(region.end_line, &what)?;
        }
        for (i, cnode) in self.cnodes.iter().enumerate() {
            let what = || format!("call path {i}");
            if cnode.region >= self.regions.len() {
                return Err(invalid(format!(
                    "call path {i}: region {} does not exist",
                    cnode.region
                )));
            }
            if let Some(parent) = cnode.parent {
                if parent >= i {
                    return Err(invalid(format!(
                        "call path {i}: parent {parent} must be an earlier call path"
                    )));
                }
            }
            check_line(cnode.line, &what)?;
        }
        Ok(())
    }

    /// Checks the system tree's texts and shape; gives back the number of locations.
    fn check_system_tree(&self) -> io::Result<usize> {
        let mut nodes = 0usize;
        let mut groups = 0usize;
        let mut locations = 0usize;
        let mut stack: Vec<&SystemNode> = self.system.iter().collect();
        while let Some(node) = stack.pop() {
            nodes += 1;
            let what = || format!("system tree node {:?}", node.name);
            check_text(&node.name, false, &what)?;
            check_text(&node.class, false, &what)?;
            check_text(&node.description, false, &what)?;
            for group in &node.groups {
                groups += 1;
                let what = || format!("location group {:?}", group.name);
                check_text(&group.name, false, &what)?;
                check_rank(group.rank, &what)?;
                if group.locations.is_empty() {
                    return Err(invalid(format!(
                        "{}: CUBE wants at least one location",
                        what()
                    )));
                }
                for location in &group.locations {
                    locations += 1;
                    let what = || format!("location {:?}", location.name);
                    check_text(&location.name, false, &what)?;
                    check_rank(location.rank, &what)?;
                }
            }
            stack.extend(node.children.iter());
        }
        if nodes > MAX_ID || groups > MAX_ID || locations > MAX_ID {
            return Err(invalid("system tree too large for CUBE's 32-bit ids"));
        }
        if locations == 0 {
            return Err(invalid("a CUBE profile needs at least one location"));
        }
        Ok(locations)
    }

    /// Writes the profile as a CUBE4 archive at `path`: first to a temporary file beside it,
    /// synced, then renamed over `path`, so a reader never sees half a profile. Checks the
    /// profile first ([`Profile::validate`]); nothing is created when that fails.
    pub fn write(&self, path: &Path) -> io::Result<()> {
        self.validate()?;
        let file_name = path
            .file_name()
            .ok_or_else(|| invalid(format!("{} does not name a file", path.display())))?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let tmp = dir.join(temporary_name(&file_name.to_string_lossy()));
        let result = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .and_then(|mut file| self.write_synced(&mut file))
            .and_then(|()| fs::rename(&tmp, path));
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    }

    /// [`write`](Self::write) as `name` in `dir`, never through a symbolic link (see
    /// [`Directory`]): how a measurement writes into its experiment directory.
    pub fn write_in(&self, dir: &Directory, name: &str) -> io::Result<()> {
        self.validate()?;
        dir.write_file_atomically_with(name, |file| self.write_synced(file))
    }

    fn write_synced(&self, file: &mut File) -> io::Result<()> {
        let mut out = BufWriter::with_capacity(1 << 18, &mut *file);
        self.write_archive(&mut out)?;
        out.flush()?;
        drop(out);
        file.sync_all()
    }

    /// The archive's bytes, in memory (for tests and for callers that send profiles elsewhere).
    pub fn to_bytes(&self) -> io::Result<Vec<u8>> {
        self.validate()?;
        let mut out = Vec::new();
        self.write_archive(&mut out)?;
        Ok(out)
    }

    fn write_archive<W: Write>(&self, out: W) -> io::Result<()> {
        let locations = self.location_count();
        let children = self.children();
        let roots = self.roots();
        let deep = deep_enumeration(&roots, &children);
        let wide = wide_enumeration(&roots, &children);
        let mut tar = TarWriter::new(out);
        // cubew's order: each metric's data, then its index; the anchor last.
        for (id, (metric, values)) in self.metrics.iter().zip(&self.values).enumerate() {
            let order = match metric.kind {
                MetricKind::Inclusive => &wide,
                MetricKind::Exclusive => &deep,
            };
            let data_size = DATA_MARKER.len() as u64 + (values.len() as u64) * 8;
            tar.member(&format!("{id}.data"), data_size, |w| {
                write_data(w, values, order, locations)
            })?;
            let index = index_bytes(self.cnodes.len());
            tar.member(&format!("{id}.index"), index.len() as u64, |w| {
                w.write_all(&index)
            })?;
        }
        let anchor = self.anchor_xml();
        tar.member(ANCHOR_NAME, anchor.len() as u64, |w| {
            w.write_all(anchor.as_bytes())
        })?;
        tar.finish()?.flush()
    }

    /// The `anchor.xml` text, element for element as cubew writes it (cubew_cube.c
    /// `cube_write_def` and the `*_writeXML` functions).
    pub(super) fn anchor_xml(&self) -> String {
        let mut x = String::new();
        let version = if self
            .locations()
            .iter()
            .any(|l| l.kind == LocationKind::AcceleratorStream)
        {
            ANCHOR_VERSION_ACCELERATOR
        } else {
            ANCHOR_VERSION
        };
        x.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\n");
        let _ = writeln!(x, "<cube version=\"{version}\">");
        let _ = writeln!(
            x,
            "<attr key=\"{}\" value=\"{CUBEPL_VERSION}\"/>",
            FORMAT_ATTRIBUTE_KEYS[0]
        );
        let _ = writeln!(
            x,
            "<attr key=\"{}\" value=\"{CUBEW_VERSION}\"/>",
            FORMAT_ATTRIBUTE_KEYS[1]
        );
        let _ = writeln!(
            x,
            "<attr key=\"{}\" value=\"{version}\"/>",
            FORMAT_ATTRIBUTE_KEYS[2]
        );
        for (key, value) in &self.attributes {
            let _ = writeln!(
                x,
                "<attr key=\"{}\" value=\"{}\"/>",
                escape(key),
                escape(value)
            );
        }
        x.push_str("<doc>\n<mirrors>\n</mirrors>\n</doc>\n");

        x.push_str("<metrics>\n");
        let mut metric_children = vec![Vec::new(); self.metrics.len()];
        for (i, metric) in self.metrics.iter().enumerate() {
            if let Some(parent) = metric.parent {
                metric_children[parent].push(i);
            }
        }
        let metric_roots: Vec<usize> = (0..self.metrics.len())
            .filter(|&i| self.metrics[i].parent.is_none())
            .collect();
        write_nested(
            &mut x,
            &metric_roots,
            &metric_children,
            "</metric>\n",
            |x, id| {
                let m = &self.metrics[id];
                let _ = write!(
                x,
                "<metric id=\"{id}\" type=\"{}\">\n<disp_name>{}</disp_name>\n<uniq_name>{}</uniq_name>\n\
                 <dtype>{}</dtype>\n<uom>{}</uom>\n<url></url>\n<descr>{}</descr>\n",
                m.kind.as_str(),
                escape(&m.display_name),
                escape(&m.unique_name),
                m.data_type.as_str(),
                escape(&m.unit),
                escape(&m.description)
            );
            },
        );
        x.push_str("</metrics>\n");

        x.push_str("<program>\n");
        let line = |l: Option<u32>| l.map_or(-1, i64::from);
        for (id, r) in self.regions.iter().enumerate() {
            let _ = write!(
                x,
                "<region id=\"{id}\" mod=\"{}\" begin=\"{}\" end=\"{}\">\n<name>{}</name>\n\
                 <mangled_name>{}</mangled_name>\n<paradigm>{}</paradigm>\n<role>{}</role>\n\
                 <url></url>\n<descr>{}</descr>\n</region>\n",
                escape(&r.source_file),
                line(r.begin_line),
                line(r.end_line),
                escape(&r.name),
                escape(&r.canonical_name),
                escape(&r.paradigm),
                escape(&r.role),
                escape(&r.description)
            );
        }
        let children = self.children();
        write_nested(&mut x, &self.roots(), &children, "</cnode>\n", |x, id| {
            let c = &self.cnodes[id];
            let _ = write!(x, "<cnode id=\"{id}\" ");
            if let Some(l) = c.line {
                let _ = write!(x, "line=\"{l}\" ");
            }
            let _ = writeln!(x, "calleeId=\"{}\">", c.region);
        });
        x.push_str("</program>\n");

        x.push_str("<system>\n");
        self.write_system_tree(&mut x);
        x.push_str("<topologies>\n</topologies>\n</system>\n</cube>\n");
        x
    }

    fn write_system_tree(&self, x: &mut String) {
        enum Step<'a> {
            Open(&'a SystemNode),
            Close,
        }
        let (mut node_id, mut group_id, mut location_id) = (0usize, 0usize, 0usize);
        let mut stack: Vec<Step> = self.system.iter().rev().map(Step::Open).collect();
        while let Some(step) = stack.pop() {
            let node = match step {
                Step::Close => {
                    x.push_str("</systemtreenode>\n");
                    continue;
                }
                Step::Open(node) => node,
            };
            let _ = write!(
                x,
                "<systemtreenode Id=\"{node_id}\">\n<name>{}</name>\n<class>{}</class>\n",
                escape(&node.name),
                escape(&node.class)
            );
            node_id += 1;
            if !node.description.is_empty() {
                let _ = writeln!(x, "<descr>{}</descr>", escape(&node.description));
            }
            for group in &node.groups {
                let _ = write!(
                    x,
                    "<locationgroup Id=\"{group_id}\">\n<name>{}</name>\n<rank>{}</rank>\n<type>{}</type>\n",
                    escape(&group.name),
                    group.rank,
                    group.kind.as_str()
                );
                group_id += 1;
                for location in &group.locations {
                    let _ = write!(
                        x,
                        "<location Id=\"{location_id}\">\n<name>{}</name>\n<rank>{}</rank>\n<type>{}</type>\n</location>\n",
                        escape(&location.name),
                        location.rank,
                        location.kind.as_str()
                    );
                    location_id += 1;
                }
                x.push_str("</locationgroup>\n");
            }
            stack.push(Step::Close);
            stack.extend(node.children.iter().rev().map(Step::Open));
        }
    }
}

/// Writes a forest of nested elements without recursion: `open` writes an element's start
/// and its own content, `close` ends it after its children.
fn write_nested(
    x: &mut String,
    roots: &[usize],
    children: &[Vec<usize>],
    close: &str,
    mut open: impl FnMut(&mut String, usize),
) {
    // (node, index of the next child to write)
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for &root in roots {
        open(x, root);
        stack.push((root, 0));
        while let Some(top) = stack.last_mut() {
            let (node, next) = *top;
            if let Some(&child) = children[node].get(next) {
                top.1 += 1;
                open(x, child);
                stack.push((child, 0));
            } else {
                x.push_str(close);
                stack.pop();
            }
        }
    }
}

/// The data file: the marker, then one row per call path in the metric's enumeration order,
/// each row the call path's value on every location, little endian.
fn write_data<W: Write>(
    w: &mut W,
    values: &Values,
    order: &[usize],
    locations: usize,
) -> io::Result<()> {
    w.write_all(DATA_MARKER)?;
    let mut row = Vec::with_capacity(locations * 8);
    for &cnode in order {
        row.clear();
        let range = cnode * locations..(cnode + 1) * locations;
        match values {
            Values::U64(v) => v[range]
                .iter()
                .for_each(|x| row.extend_from_slice(&x.to_le_bytes())),
            Values::I64(v) => v[range]
                .iter()
                .for_each(|x| row.extend_from_slice(&x.to_le_bytes())),
            Values::F64(v) => v[range]
                .iter()
                .for_each(|x| row.extend_from_slice(&x.to_le_bytes())),
        }
        w.write_all(&row)?;
    }
    Ok(())
}

/// The index file, sparse format listing every row (what Score-P writes when every call path
/// has data; pycubexr reads only this format): marker, endianness mark 1, version 0, format,
/// row count, then the enumeration positions 0..n.
fn index_bytes(cnodes: usize) -> Vec<u8> {
    let mut b = Vec::with_capacity(INDEX_MARKER.len() + 11 + cnodes * 4);
    b.extend_from_slice(INDEX_MARKER);
    b.extend_from_slice(&ENDIANNESS_MARK.to_le_bytes());
    b.extend_from_slice(&INDEX_VERSION.to_le_bytes());
    b.push(INDEX_FORMAT_SPARSE);
    b.extend_from_slice(&(cnodes as u32).to_le_bytes());
    for position in 0..cnodes as u32 {
        b.extend_from_slice(&position.to_le_bytes());
    }
    b
}
