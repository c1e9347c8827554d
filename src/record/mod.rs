//! The hot path's memory: a location's current chunk, into which each event is encoded once, in
//! OTF2's wire format, by the one thread that owns the location. Never locks, never allocates in
//! the steady state, never blocks except where a full chunk must wait for a free one.

pub(crate) mod budget;
pub(crate) mod location;
pub(crate) mod open_regions;
pub(crate) mod profile;
