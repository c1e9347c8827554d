//! pomptrace: a POMP2 measurement library that writes OTF2 traces.
//!
//! Rooms (arrows point down only): `otf2` knows nothing of POMP2 and could be its own crate.

pub mod otf2;
