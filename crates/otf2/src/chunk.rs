//! Chunked files: the 18-byte chunk header, chunk-size padding, END_OF_FILE, and where full
//! chunks go (a [`ChunkSink`]).
//!
//! Every non-final chunk is exactly `chunk_size` bytes; a record never straddles two chunks.

use std::io;

pub use super::chunk_buffer::ChunkBuffer;
use super::chunk_file::ChunkFile;

pub const CHUNK_HEADER: u8 = 0x03;
pub const LITTLE_ENDIAN: u8 = 0x42;
pub const END_OF_CHUNK: u8 = 0x00;
pub const END_OF_BUFFER: u8 = 0x01;
pub const END_OF_FILE: u8 = 0x02;
pub const CHUNK_HEADER_LEN: usize = 18;

/// Limits every OTF2 reader enforces on the chunk sizes in the anchor file.
pub const MIN_CHUNK_SIZE: usize = 256 * 1024;
pub const MAX_CHUNK_SIZE: usize = 16 * 1024 * 1024;

/// Checks that a chunk size is one the reference readers accept.
pub fn validate_chunk_size(size: usize) -> io::Result<()> {
    if (MIN_CHUNK_SIZE..=MAX_CHUNK_SIZE).contains(&size) {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("OTF2 chunk size {size} outside [{MIN_CHUNK_SIZE}, {MAX_CHUNK_SIZE}] bytes"),
        ))
    }
}

/// Writes the chunk header: marker, byte order, first and last event number.
pub fn write_chunk_header(chunk: &mut [u8], first_event: u64, last_event: u64) {
    chunk[0] = CHUNK_HEADER;
    chunk[1] = LITTLE_ENDIAN;
    chunk[2..10].copy_from_slice(&first_event.to_le_bytes());
    chunk[10..18].copy_from_slice(&last_event.to_le_bytes());
}

/// Where finished chunks go. A sink takes ownership of a finished chunk and hands back a buffer
/// of the same size to continue in (the same one after a synchronous write, or a recycled one
/// from a pool), so no chunk is ever allocated on the recording path once the pool is warm.
pub trait ChunkSink {
    /// `chunk[..len]` belongs to the file: `len == chunk.len()` for every chunk but the last.
    /// Errors are kept by the sink and reported by [`ChunkSink::finish`]; recording goes on.
    fn submit(&mut self, chunk: ChunkBuffer, len: usize) -> ChunkBuffer;
    /// The final chunk, `chunk[..len]`, right before [`ChunkSink::finish`]: as `submit`, but no
    /// buffer is needed back (a sink that would have to allocate or wait for one need not).
    fn submit_last(&mut self, chunk: ChunkBuffer, len: usize) {
        drop(self.submit(chunk, len));
    }
    /// Called once after the final chunk: flushes and reports the first error, if any.
    fn finish(&mut self) -> io::Result<()>;
    /// Writes the full chunks the sink held back instead of writing them when they filled (see
    /// [`crate::BackgroundSink::hold_back`]), if any; a sink that holds none back does nothing.
    fn write_held(&mut self) {}
    /// If the last `submit` had to wait for a free buffer, the time the wait ended (in the
    /// writer's clock); the writer then records a BufferFlush event covering the wait.
    fn stall_end(&mut self) -> Option<u64> {
        None
    }
}

/// Writes chunks straight to a file, one after the other, each with its own write.
pub struct FileSink {
    file: Option<ChunkFile>,
    error: Option<io::Error>,
    bytes_written: u64,
}

impl FileSink {
    pub fn new(file: ChunkFile) -> Self {
        Self {
            file: Some(file),
            error: None,
            bytes_written: 0,
        }
    }
    pub fn bytes_written(&self) -> u64 {
        self.bytes_written
    }
}

impl ChunkSink for FileSink {
    fn submit(&mut self, chunk: ChunkBuffer, len: usize) -> ChunkBuffer {
        if self.error.is_none() {
            if let Some(file) = self.file.as_ref() {
                match file.write_at(self.bytes_written, &chunk[..len]) {
                    Ok(()) => self.bytes_written += len as u64,
                    Err(e) => self.error = Some(e),
                }
            }
        }
        chunk
    }

    fn finish(&mut self) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        // Every chunk is already in the kernel; forcing it to disk would cost the traced program
        // far more than it gains.
        self.file.take();
        Ok(())
    }
}

/// Collects chunks in memory (tests, small files, and the definition files).
#[derive(Default)]
pub struct VecSink {
    pub bytes: Vec<u8>,
    pub chunks: usize,
}

impl ChunkSink for VecSink {
    fn submit(&mut self, chunk: ChunkBuffer, len: usize) -> ChunkBuffer {
        self.bytes.extend_from_slice(&chunk[..len]);
        self.chunks += 1;
        chunk
    }
    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<S: ChunkSink + ?Sized> ChunkSink for Box<S> {
    fn submit(&mut self, chunk: ChunkBuffer, len: usize) -> ChunkBuffer {
        (**self).submit(chunk, len)
    }
    fn submit_last(&mut self, chunk: ChunkBuffer, len: usize) {
        (**self).submit_last(chunk, len)
    }
    fn finish(&mut self) -> io::Result<()> {
        (**self).finish()
    }
    fn stall_end(&mut self) -> Option<u64> {
        (**self).stall_end()
    }
    fn write_held(&mut self) {
        (**self).write_held()
    }
}

/// A chunked definition file (global or local definitions): records framed with a length,
/// chunk headers saying first = 1, last = 0 as libotf2 writes them.
pub struct DefChunks {
    chunk_size: usize,
    bytes: Vec<u8>,
    chunk_start: usize,
    records: u64,
    oversized: u64,
}

impl DefChunks {
    pub fn new(chunk_size: usize) -> Self {
        let mut s = Self {
            chunk_size,
            bytes: Vec::new(),
            chunk_start: 0,
            records: 0,
            oversized: 0,
        };
        s.start_chunk();
        s
    }

    fn start_chunk(&mut self) {
        self.chunk_start = self.bytes.len();
        self.bytes.resize(self.chunk_start + CHUNK_HEADER_LEN, 0);
        write_chunk_header(&mut self.bytes[self.chunk_start..], 1, 0);
    }

    /// Appends one framed record (`id`, length, `payload`). A record that does not fit into an
    /// empty chunk is left out and counted (see [`DefChunks::oversized`]): readers reject a
    /// record that straddles two chunks, and the chunk size is fixed for the whole archive.
    pub fn add(&mut self, id: u8, payload: &[u8]) {
        let long = payload.len() >= 255;
        let need = 1 + if long { 9 } else { 1 } + payload.len();
        if need >= self.chunk_size - CHUNK_HEADER_LEN {
            self.oversized += 1;
            return;
        }
        let used = self.bytes.len() - self.chunk_start;
        if need >= self.chunk_size - used && used > CHUNK_HEADER_LEN {
            // END_OF_CHUNK and zero padding up to the chunk size.
            self.bytes
                .resize(self.chunk_start + self.chunk_size, END_OF_CHUNK);
            self.start_chunk();
        }
        super::wire::put_framed(&mut self.bytes, id, payload, long);
        self.records += 1;
    }

    pub fn records(&self) -> u64 {
        self.records
    }

    /// Records left out because they are larger than a chunk.
    pub fn oversized(&self) -> u64 {
        self.oversized
    }

    /// The finished file: END_OF_FILE and END_OF_BUFFER after the last record.
    pub fn finish(mut self) -> Vec<u8> {
        self.bytes.push(END_OF_FILE);
        if self.bytes.len() - self.chunk_start < self.chunk_size {
            self.bytes.push(END_OF_BUFFER);
        }
        self.bytes
    }
}
