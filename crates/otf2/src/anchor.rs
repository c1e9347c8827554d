//! The anchor file `NAME.otf2`: one unchunked buffer naming the format, chunk sizes and counts.

use super::chunk::{CHUNK_HEADER, END_OF_BUFFER, END_OF_CHUNK, END_OF_FILE, LITTLE_ENDIAN};
use super::wire::{put_cstr, put_u32, put_u64, DecodeResult, Decoder};

const MAGIC: &str = "OTF2";
const ANCHOR_FORMAT: u8 = 3;
const TRACE_FORMAT: u8 = 2;
/// The OTF2 version whose format this crate writes.
pub const OTF2_VERSION: (u8, u8, u8) = (3, 0, 3);
/// File substrate POSIX, compression none: the only combination every reader handles.
const SUBSTRATE_POSIX: u8 = 1;
const COMPRESSION_NONE: u8 = 1;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Anchor {
    pub version: (u8, u8, u8),
    pub event_chunk_size: u64,
    pub def_chunk_size: u64,
    pub file_substrate: u8,
    pub compression: u8,
    pub number_of_locations: u64,
    pub number_of_global_defs: u64,
    pub machine_name: String,
    pub creator: String,
    pub description: String,
    /// Names must look like `NS::NAME` with `[A-Za-z0-9_]` components.
    pub properties: Vec<(String, String)>,
    pub trace_id: u64,
    pub number_of_snapshots: u32,
    pub number_of_thumbnails: u32,
}

impl Anchor {
    pub fn new(event_chunk_size: u64, def_chunk_size: u64) -> Self {
        Self {
            version: OTF2_VERSION,
            event_chunk_size,
            def_chunk_size,
            file_substrate: SUBSTRATE_POSIX,
            compression: COMPRESSION_NONE,
            number_of_locations: 0,
            number_of_global_defs: 0,
            machine_name: String::new(),
            creator: String::new(),
            description: String::new(),
            properties: Vec::new(),
            trace_id: 0,
            number_of_snapshots: 0,
            number_of_thumbnails: 0,
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut b = vec![CHUNK_HEADER, LITTLE_ENDIAN];
        put_cstr(&mut b, MAGIC.as_bytes());
        b.extend_from_slice(&[ANCHOR_FORMAT, TRACE_FORMAT]);
        b.extend_from_slice(&[self.version.0, self.version.1, self.version.2]);
        put_u64(&mut b, self.event_chunk_size);
        put_u64(&mut b, self.def_chunk_size);
        b.extend_from_slice(&[self.file_substrate, self.compression]);
        put_u64(&mut b, self.number_of_locations);
        put_u64(&mut b, self.number_of_global_defs);
        put_cstr(&mut b, self.machine_name.as_bytes());
        put_cstr(&mut b, self.creator.as_bytes());
        put_cstr(&mut b, self.description.as_bytes());
        put_u32(&mut b, self.properties.len() as u32);
        for (name, value) in &self.properties {
            put_cstr(&mut b, name.as_bytes());
            put_cstr(&mut b, value.as_bytes());
        }
        put_u64(&mut b, self.trace_id);
        put_u32(&mut b, self.number_of_snapshots);
        put_u32(&mut b, self.number_of_thumbnails);
        b.extend_from_slice(&[END_OF_FILE, END_OF_BUFFER, END_OF_CHUNK]);
        b
    }

    pub fn decode(data: &[u8]) -> DecodeResult<Anchor> {
        let mut d = Decoder::new(data, 0);
        if d.u8()? != CHUNK_HEADER {
            return Decoder::new(data, 0).error("not an OTF2 anchor file (no header byte)");
        }
        if d.u8()? != LITTLE_ENDIAN {
            return Decoder::new(data, 1).error("unsupported byte order (only little endian)");
        }
        if d.cstr()? != MAGIC {
            return Decoder::new(data, 2).error("magic does not match \"OTF2\"");
        }
        let format = d.u8()?;
        if format == 0 || format > ANCHOR_FORMAT {
            return d.error(format!("unsupported anchor format {format}"));
        }
        let trace_format = d.u8()?;
        if trace_format > TRACE_FORMAT {
            return d.error(format!("unsupported trace format {trace_format}"));
        }
        let version = (d.u8()?, d.u8()?, d.u8()?);
        let mut a = Anchor::new(d.u64()?, d.u64()?);
        a.version = version;
        a.file_substrate = d.u8()?;
        a.compression = d.u8()?;
        a.number_of_locations = d.u64()?;
        a.number_of_global_defs = d.u64()?;
        a.machine_name = d.cstr()?;
        a.creator = d.cstr()?;
        a.description = d.cstr()?;
        if format >= 2 {
            let n = d.u32()?;
            for _ in 0..n {
                a.properties.push((d.cstr()?, d.cstr()?));
            }
            a.trace_id = d.u64()?;
        }
        if format >= 3 {
            a.number_of_snapshots = d.u32()?;
            a.number_of_thumbnails = d.u32()?;
            if d.u8()? != END_OF_FILE {
                return d.error("anchor file does not end with END_OF_FILE");
            }
        }
        Ok(a)
    }
}
