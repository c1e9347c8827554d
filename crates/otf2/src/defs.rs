//! Global and local definition writers.
//!
//! Definitions are small and written once, so they are collected in memory and written as one
//! file when the archive is closed. The global writer counts records and locations for the
//! anchor file.

use super::chunk::DefChunks;
use super::records::{GlobalDef, LocalDef, Record};
use super::types::IdMap;

/// Writes `NAME.def`. Order matters to the Python reader: a definition must come after every
/// definition it references, and ClockProperties exactly once (best first).
pub struct GlobalDefWriter {
    chunks: DefChunks,
    payload: Vec<u8>,
    locations: u64,
}

impl GlobalDefWriter {
    pub fn new(chunk_size: usize) -> Self {
        Self {
            chunks: DefChunks::new(chunk_size),
            payload: Vec::with_capacity(256),
            locations: 0,
        }
    }

    /// Writes a definition; one larger than a definition chunk is left out and counted (see
    /// [`GlobalDefWriter::oversized`]).
    pub fn write(&mut self, def: &GlobalDef) {
        self.payload.clear();
        def.encode_payload(&mut self.payload);
        let before = self.chunks.records();
        self.chunks.add(def.record_id(), &self.payload);
        if self.chunks.records() > before && matches!(def, GlobalDef::Location { .. }) {
            self.locations += 1;
        }
    }

    /// Definitions left out because they are larger than a definition chunk.
    pub fn oversized(&self) -> u64 {
        self.chunks.oversized()
    }

    /// Number of records written (the anchor's global definition count).
    pub fn records(&self) -> u64 {
        self.chunks.records()
    }
    /// Number of Location records written (the anchor's location count).
    pub fn locations(&self) -> u64 {
        self.locations
    }

    pub fn finish(self) -> Vec<u8> {
        self.chunks.finish()
    }
}

/// Writes `NAME/<L>.def`: mapping tables and clock offsets of one location.
pub struct LocalDefWriter {
    chunks: DefChunks,
    payload: Vec<u8>,
}

impl LocalDefWriter {
    pub fn new(chunk_size: usize) -> Self {
        Self {
            chunks: DefChunks::new(chunk_size),
            payload: Vec::with_capacity(64),
        }
    }

    /// Writes a local definition. An empty mapping table maps nothing and libotf2 cannot read
    /// one back, so it is left out.
    pub fn write(&mut self, def: &LocalDef) {
        if let LocalDef::MappingTable { map, .. } = def {
            let empty = match map {
                IdMap::Dense(v) => v.is_empty(),
                IdMap::Sparse(v) => v.is_empty(),
            };
            if empty {
                return;
            }
        }
        self.payload.clear();
        def.encode_payload(&mut self.payload);
        self.chunks.add(def.record_id(), &self.payload);
    }

    pub fn records(&self) -> u64 {
        self.chunks.records()
    }

    pub fn finish(self) -> Vec<u8> {
        self.chunks.finish()
    }
}
