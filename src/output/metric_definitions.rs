//! The metric definitions of a trace: the synchronous class of `POMPTRACE_METRICS` and, when
//! the sampler ran, its METRIC location and asynchronous class. Written at the end of a run and
//! by `pomptrace recover` (from the names the journal kept), so both define the same classes.

use super::facts::ExtraDefinitions;
use crate::metrics::sampler;
use crate::metrics::synchronous::{self as metrics, ClassDefinition, Member};
use otf2::*;

/// The metric definitions of a run: the synchronous class of `POMPTRACE_METRICS` and, when the
/// sampler ran, its METRIC location and asynchronous class.
pub(crate) struct MetricDefinitions {
    synchronous: Vec<Member>,
    /// (location id, number of events) of the sampler's location.
    metric_location: Option<(u64, u64)>,
}

impl MetricDefinitions {
    pub(crate) fn new(synchronous: Vec<Member>, metric_location: Option<(u64, u64)>) -> Self {
        Self {
            synchronous,
            metric_location,
        }
    }

    /// The synchronous metrics named (as the journal holds them), from the catalog; a name
    /// the catalog does not know is left out.
    pub(crate) fn named(names: &[String]) -> Self {
        let synchronous = names
            .iter()
            .filter_map(|name| metrics::CATALOG.iter().find(|m| m.member.name == name))
            .map(|m| m.member)
            .collect();
        Self::new(synchronous, None)
    }

    fn sampled(&self) -> &'static [Member] {
        if self.metric_location.is_some() {
            &sampler::MEMBERS
        } else {
            &[]
        }
    }
}

impl ExtraDefinitions for MetricDefinitions {
    fn strings(&mut self, intern: &mut dyn FnMut(&str) -> u32) {
        for s in metrics::member_strings(&self.synchronous)
            .chain(metrics::member_strings(self.sampled()))
        {
            intern(s);
        }
        if self.metric_location.is_some() {
            intern(sampler::LOCATION_NAME);
        }
    }

    fn after_locations(&mut self, defs: &mut GlobalDefWriter, intern: &mut dyn FnMut(&str) -> u32) {
        if let Some((id, number_of_events)) = self.metric_location {
            defs.write(&GlobalDef::Location {
                id,
                name: intern(sampler::LOCATION_NAME),
                location_type: LocationType::METRIC,
                number_of_events,
                location_group: 0,
            });
        }
        let mut next_member = 0;
        if !self.synchronous.is_empty() {
            let class = ClassDefinition {
                id: metrics::SYNCHRONOUS_CLASS,
                occurrence: MetricOccurrence::SYNCHRONOUS_STRICT,
                members: &self.synchronous,
                recorder: None,
            };
            next_member = metrics::write_class(defs, &class, next_member, &mut *intern);
        }
        if let Some((id, _)) = self.metric_location {
            let class = ClassDefinition {
                id: sampler::class_id(),
                occurrence: MetricOccurrence::ASYNCHRONOUS,
                members: self.sampled(),
                recorder: Some(id),
            };
            metrics::write_class(defs, &class, next_member, &mut *intern);
        }
    }
}
