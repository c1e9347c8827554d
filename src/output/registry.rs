//! Regions: what a construct handle points at, and the definitions behind it.
//!
//! A handle is assigned once (under the registry lock) to a [`Construct`] that is never freed, so
//! enter/leave read region ids from it with one load and no lookup. The OTF2 regions of a
//! construct follow the reference (Score-P's OPARI2 adapter): parallel, outer, inner and
//! implicit-barrier regions named `!$omp <word> @<file>:<line>`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU8};

use super::facts::{Fact, RegionDef};
use crate::base::config::Config;
use crate::base::diagnostics::warn;
use crate::base::signal_safe_mutex::SignalSafeMutex;
use crate::ctc::{self, RegionInfo, RegionType};
use crate::filter::Filter;
use crate::output::journal;
use otf2::{EncodedU32, Paradigm, RegionRole};

/// No region of this kind for the construct.
pub const NO_REGION: u32 = u32::MAX;

/// The lock behind a critical section: one per critical name (all unnamed ones share one).
pub struct CriticalLock {
    pub id: u32,
    /// Successful acquisitions so far; the holder's number is the order it writes.
    pub acquisitions: AtomicU32,
    /// The acquisition number of the current holder (read by the release).
    pub holder_order: AtomicU32,
}

/// What an assigned handle points at. Immutable and never freed. Read by every thread on every
/// event, so it has cache lines of its own: a neighbour in the heap that some thread writes (a
/// critical section's lock, allocated just before its construct) would otherwise take the
/// line from all the others.
#[repr(align(64))]
pub struct Construct {
    pub parallel: u32,
    pub outer: u32,
    pub inner: u32,
    pub implicit_barrier: u32,
    pub critical: Option<&'static CriticalLock>,
    /// Excluded by the filter file: its filterable region ids are NO_REGION, so enter and leave
    /// skip it with the check they make anyway.
    pub filtered: bool,
    /// For a parallel construct, whether its teams receive `pomp_tpd` from the forking thread
    /// (instrumented with `opari2 --omp-tpd`), as its first worker to begin found out:
    /// `TPD_UNKNOWN`, `TPD_COPIED`, `TPD_NOT_COPIED`.
    pub copies_tpd: AtomicU8,
    /// `outer`, `inner` and `implicit_barrier` with their wire forms, for the fast paths'
    /// writes (set once, from the final ids, before the construct is published).
    pub fast: FastRegions,
}

/// A region id with its wire form, as the fast paths take it: their writes store the encoded
/// region (see `otf2::EncodedU32`) instead of encoding it.
#[derive(Clone, Copy)]
pub struct FastRegion {
    pub id: u32,
    pub wire: EncodedU32,
}

impl FastRegion {
    /// No region (stands in until `Construct::set_fast_regions`).
    const UNSET: FastRegion = FastRegion {
        id: NO_REGION,
        wire: EncodedU32::ZERO,
    };

    fn new(id: u32) -> Self {
        FastRegion {
            id,
            wire: EncodedU32::new(id),
        }
    }
}

/// A construct's regions that have fast paths.
pub struct FastRegions {
    pub outer: FastRegion,
    pub inner: FastRegion,
    pub implicit_barrier: FastRegion,
}

impl FastRegions {
    const UNSET: FastRegions = FastRegions {
        outer: FastRegion::UNSET,
        inner: FastRegion::UNSET,
        implicit_barrier: FastRegion::UNSET,
    };
}

impl Construct {
    fn set_fast_regions(&mut self) {
        self.fast = FastRegions {
            outer: FastRegion::new(self.outer),
            inner: FastRegion::new(self.inner),
            implicit_barrier: FastRegion::new(self.implicit_barrier),
        };
    }
}

pub const TPD_UNKNOWN: u8 = 0;
pub const TPD_COPIED: u8 = 1;
pub const TPD_NOT_COPIED: u8 = 2;

/// Strings, regions and critical-section locks defined so far.
#[derive(Default)]
pub struct Registry {
    strings: Vec<String>,
    string_ids: HashMap<String, u32>,
    regions: Vec<RegionDef>,
    region_ids: HashMap<RegionDef, u32>,
    criticals: HashMap<String, &'static CriticalLock>,
    /// Lock ids are shared by critical sections and OpenMP locks, never reused.
    next_lock_id: u32,
    /// Set at measurement start from POMPTRACE_FILTERING_FILE.
    filter: Option<Filter>,
}

/// The ten lock API regions, defined at start whether used or not (as the reference does).
pub const LOCK_API_REGIONS: [&str; 10] = [
    "omp_init_lock",
    "omp_destroy_lock",
    "omp_set_lock",
    "omp_unset_lock",
    "omp_test_lock",
    "omp_init_nest_lock",
    "omp_destroy_nest_lock",
    "omp_set_nest_lock",
    "omp_unset_nest_lock",
    "omp_test_nest_lock",
];

impl Registry {
    pub fn string(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.string_ids.get(s) {
            return id;
        }
        let id = self.strings.len() as u32;
        self.strings.push(s.to_string());
        self.string_ids.insert(s.to_string(), id);
        journal::record_string(id, s);
        id
    }

    pub fn strings(&self) -> &[String] {
        &self.strings
    }
    pub fn regions(&self) -> &[RegionDef] {
        &self.regions
    }
    /// A region's name as the trace shows it (`!$omp critical @file.c:12`), for messages.
    pub fn region_name(&self, region: u32) -> Option<&str> {
        let def = self.regions.get(region as usize)?;
        self.strings.get(def.name as usize).map(String::as_str)
    }

    pub fn region(
        &mut self,
        name: &str,
        file: &str,
        lines: (u32, u32),
        role: RegionRole,
        paradigm: Paradigm,
    ) -> u32 {
        let def = RegionDef {
            name: self.string(name),
            file: self.string(file),
            begin_line: lines.0,
            end_line: lines.1,
            role,
            paradigm,
        };
        if let Some(&id) = self.region_ids.get(&def) {
            return id;
        }
        let id = self.regions.len() as u32;
        self.regions.push(def.clone());
        journal_region(id, &def);
        self.region_ids.insert(def, id);
        id
    }

    /// Regions defined from now on are checked against `filter`.
    pub fn set_filter(&mut self, filter: Filter) {
        self.filter = Some(filter);
    }

    pub fn new_lock_id(&mut self) -> u32 {
        let id = self.next_lock_id;
        self.next_lock_id += 1;
        id
    }

    fn critical_lock(&mut self, name: &str) -> &'static CriticalLock {
        if let Some(lock) = self.criticals.get(name) {
            return lock;
        }
        let lock: &'static CriticalLock = Box::leak(Box::new(CriticalLock {
            id: self.new_lock_id(),
            acquisitions: AtomicU32::new(0),
            holder_order: AtomicU32::new(0),
        }));
        self.criticals.insert(name.to_string(), lock);
        lock
    }

    /// Defines the lock API regions; returns their ids in `LOCK_API_REGIONS` order.
    pub fn define_lock_api_regions(&mut self) -> [u32; 10] {
        LOCK_API_REGIONS
            .map(|name| self.region(name, "OMP", (0, 0), RegionRole::WRAPPER, Paradigm::OPENMP))
    }

    /// Defines the regions of a construct from its CTC string. Problems are returned as one
    /// message (the caller reports it once); the construct is defined as well as it can be.
    pub fn define_construct(
        &mut self,
        ctc_text: &[u8],
        user: bool,
    ) -> (&'static Construct, Option<String>) {
        let (info, problems) = ctc::parse(ctc_text);
        let mut messages: Vec<String> = problems.into_iter().map(|p| p.message).collect();
        let construct = match info {
            Some(info) => {
                if info.region_type.is_user() != user {
                    messages.push(format!(
                        "region type `{}` passed to the {} interface",
                        info.region_type.ctc_name(),
                        if user { "user-region" } else { "OpenMP" }
                    ));
                }
                self.construct_from(&info)
            }
            None => {
                // Name the region from what could be parsed, so its events still show.
                let name = ctc::parse_lossy_name(ctc_text);
                let id = self.region(
                    &name,
                    "",
                    (0, 0),
                    RegionRole::UNKNOWN,
                    if user {
                        Paradigm::USER
                    } else {
                        Paradigm::OPENMP
                    },
                );
                Construct {
                    parallel: id,
                    outer: id,
                    inner: id,
                    implicit_barrier: id,
                    critical: None,
                    filtered: false,
                    copies_tpd: AtomicU8::new(TPD_UNKNOWN),
                    fast: FastRegions::UNSET,
                }
            }
        };
        let message = (!messages.is_empty()).then(|| {
            // Control characters escaped: the warning must stay one line, and must not pass
            // terminal escape sequences from the program's strings through.
            let mut quoted = String::new();
            for c in String::from_utf8_lossy(&ctc_text[..ctc_text.len().min(200)]).chars() {
                if c.is_control() {
                    quoted.extend(c.escape_debug());
                } else {
                    quoted.push(c);
                }
            }
            format!("malformed CTC string \"{quoted}\": {}", messages.join("; "))
        });
        let mut construct = construct;
        construct.set_fast_regions();
        (Box::leak(Box::new(construct)), message)
    }

    fn construct_from(&mut self, info: &RegionInfo) -> Construct {
        use RegionType as T;
        let base = info.start.file.rsplit('/').next().unwrap_or("");
        let file = info.start.file.as_str();
        let (s1, s2) = (info.start.first_line, info.start.last_line);
        let (e1, e2) = (info.end.first_line, info.end.last_line);
        let at = format!("@{base}:{s1}");
        let combined = matches!(
            info.region_type,
            T::ParallelFor | T::ParallelDo | T::ParallelSections | T::ParallelWorkshare
        );
        let omp = Paradigm::OPENMP;
        let mut c = Construct {
            parallel: NO_REGION,
            outer: NO_REGION,
            inner: NO_REGION,
            implicit_barrier: NO_REGION,
            critical: None,
            filtered: false,
            copies_tpd: AtomicU8::new(TPD_UNKNOWN),
            fast: FastRegions::UNSET,
        };
        let outer_lines = if combined { (s2, e1) } else { (s1, e2) };
        let outer = |reg: &mut Self, word: &str, role| {
            reg.region(&format!("!$omp {word} {at}"), file, outer_lines, role, omp)
        };
        let inner = |reg: &mut Self, word: &str, role| {
            reg.region(&format!("!$omp {word} {at}"), file, (s2, e1), role, omp)
        };
        if matches!(info.region_type, T::Parallel) || combined {
            c.parallel = self.region(
                &format!("!$omp parallel {at}"),
                file,
                (s1, e2),
                RegionRole::PARALLEL,
                omp,
            );
        }
        let first_filterable = self.regions.len();
        match info.region_type {
            T::Parallel => {}
            T::For | T::ParallelFor => c.outer = outer(self, "for", RegionRole::LOOP),
            T::Do | T::ParallelDo => c.outer = outer(self, "do", RegionRole::LOOP),
            T::Sections | T::ParallelSections => {
                c.outer = outer(self, "sections", RegionRole::SECTIONS);
                c.inner = inner(self, "section", RegionRole::SECTION);
            }
            T::Workshare | T::ParallelWorkshare => {
                c.outer = outer(self, "workshare", RegionRole::WORKSHARE)
            }
            T::Single => {
                c.outer = outer(self, "single", RegionRole::SINGLE);
                c.inner = inner(self, "single sblock", RegionRole::SINGLE_SBLOCK);
            }
            T::Master => c.inner = inner(self, "master", RegionRole::MASTER),
            T::Critical => {
                let word = match &info.critical_name {
                    Some(name) => format!("critical ({name})"),
                    None => "critical".to_string(),
                };
                c.outer = outer(self, &word, RegionRole::CRITICAL);
                c.inner = inner(self, "critical sblock", RegionRole::CRITICAL_SBLOCK);
                c.critical = Some(self.critical_lock(info.critical_name.as_deref().unwrap_or("")));
            }
            T::Ordered => {
                c.outer = outer(self, "ordered", RegionRole::ORDERED);
                c.inner = inner(self, "ordered sblock", RegionRole::ORDERED_SBLOCK);
            }
            T::Atomic => c.outer = outer(self, "atomic", RegionRole::ATOMIC),
            T::Flush => c.outer = outer(self, "flush", RegionRole::FLUSH),
            T::Barrier => c.outer = outer(self, "barrier", RegionRole::BARRIER),
            T::Taskwait => c.outer = outer(self, "taskwait", RegionRole::TASK_WAIT),
            T::Task => {
                c.outer = outer(self, "create task", RegionRole::TASK_CREATE);
                c.inner = inner(self, "task", RegionRole::TASK);
            }
            T::TaskUntied => {
                c.outer = outer(self, "create untied", RegionRole::TASK_CREATE);
                c.inner = inner(self, "untied task", RegionRole::TASK_UNTIED);
            }
            T::UserRegion => {
                let name = info.user_region_name.as_deref().unwrap_or("");
                let id = self.region(
                    &format!("!$pomp user({name}) {at}"),
                    file,
                    (s1, e2),
                    RegionRole::FUNCTION,
                    Paradigm::USER,
                );
                c.outer = id;
            }
        }
        let named_by = if c.outer != NO_REGION {
            c.outer
        } else {
            c.inner
        };
        if self.excluded(info, named_by) {
            // Worksharing, synchronisation and user regions only: the parallel region, barriers,
            // taskwait and tasks carry the structure of the trace (teams, task switches), and
            // the implicit barrier of a filtered construct stays a barrier.
            c.filtered = true;
            c.outer = NO_REGION;
            c.inner = NO_REGION;
            c.critical = None;
            // Not in the trace's definitions either (those defined just now for it).
            for def in self.regions.drain(first_filterable..) {
                self.region_ids.remove(&def);
            }
            journal::record(&Fact::RegionsDropped {
                from: first_filterable as u32,
            });
        }
        let has_implicit_barrier = matches!(
            info.region_type,
            T::Parallel | T::For | T::Do | T::Sections | T::Workshare | T::Single
        ) || combined;
        if has_implicit_barrier {
            c.implicit_barrier = self.region(
                &format!("!$omp implicit barrier @{base}:{e1}"),
                file,
                (e1, e2),
                RegionRole::IMPLICIT_BARRIER,
                omp,
            );
        }
        c
    }
}

fn journal_region(id: u32, def: &RegionDef) {
    journal::record(&Fact::Region {
        id,
        def: def.clone(),
    });
}

impl Registry {
    /// Whether the filter excludes the construct: user regions by their name, constructs by the
    /// name of their outer (or only) region `named_by`, e.g. `!$omp atomic @file.c:12`; both
    /// by their file.
    fn excluded(&self, info: &RegionInfo, named_by: u32) -> bool {
        use RegionType as T;
        let Some(filter) = &self.filter else {
            return false;
        };
        if named_by == NO_REGION
            || matches!(
                info.region_type,
                T::Parallel | T::Barrier | T::Taskwait | T::Task | T::TaskUntied
            )
        {
            return false;
        }
        let name = match (&info.region_type, &info.user_region_name) {
            (T::UserRegion, Some(name)) => name.as_str(),
            _ => &self.strings[self.regions[named_by as usize].name as usize],
        };
        filter.excludes(name, &info.start.file)
    }
}

/// Strings, regions and critical-section locks: process-wide, so that handles can be assigned
/// in any state (by the init file while starting, after the end, with the measurement off).
pub(crate) static REGISTRY: std::sync::LazyLock<SignalSafeMutex<Registry>> =
    std::sync::LazyLock::new(|| SignalSafeMutex::new(Registry::default()));

/// Loads the filter file once, before the first construct is defined: by the start, or by an
/// assignment that comes earlier (an init file's, or a handle assigned while nothing else has
/// started the measurement, which an assignment alone must not do).
pub(crate) fn load_filter_once(config: impl FnOnce() -> Config) {
    static LOADED: std::sync::Once = std::sync::Once::new();
    LOADED.call_once(|| {
        if let Some(filter) = config().load_filter(|m| warn(&m)) {
            REGISTRY.lock().set_filter(filter);
        }
    });
}
