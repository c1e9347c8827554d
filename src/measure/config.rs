//! Configuration from `POMPTRACE_*` environment variables, read once at measurement start.

use std::path::PathBuf;

/// Smallest in-memory chunk we accept; OTF2 file chunks are at least 256 KiB, smaller memory
/// chunks are padded to that in the file (as sparse holes).
pub const MIN_CHUNK_SIZE: usize = 4 * 1024;
pub const MAX_CHUNK_SIZE: usize = 16 * 1024 * 1024;

#[derive(Clone, Debug)]
pub struct Config {
    /// `POMPTRACE_ENABLE=0` turns the measurement off (every call still performs its OpenMP
    /// duty, e.g. the real lock operation).
    pub enabled: bool,
    /// `POMPTRACE_EXPERIMENT_DIRECTORY`: where `traces.otf2` goes; default
    /// `pomptrace-<program>-<YYYYmmdd_HHMMSS>-<pid>` in the working directory.
    pub experiment_directory: Option<PathBuf>,
    /// `POMPTRACE_CHUNK_SIZE`: bytes per event chunk (default 1 MiB).
    pub chunk_size: usize,
    /// `POMPTRACE_BUFFER_SIZE`: memory for events per location (default 8 MiB); at least two
    /// chunks. When the writer falls behind, recording waits instead of dropping events.
    pub buffer_size: usize,
    /// `POMPTRACE_KEEP_IN_MEMORY`: a location's first full event chunks, up to this many bytes
    /// (at most the buffer less one chunk), stay in memory until the end of the run; past that
    /// they are written in the background as they fill. Default: the whole buffer.
    pub keep_in_memory: Option<usize>,
    /// `POMPTRACE_CLOCK=tsc|monotonic` (default: tsc where the CPU has an invariant TSC).
    pub clock: ClockChoice,
    /// `POMPTRACE_VERBOSE=0|1|2`: 0 silences the closing summary line (warnings still show).
    pub verbose: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockChoice {
    Auto,
    Tsc,
    Monotonic,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            enabled: true,
            experiment_directory: None,
            chunk_size: 1024 * 1024,
            buffer_size: 8 * 1024 * 1024,
            keep_in_memory: None,
            clock: ClockChoice::Auto,
            verbose: 1,
        }
    }
}

/// Parses sizes like `65536`, `64K`, `64KiB`, `1M`, `1MB`, `2G`.
pub fn parse_size(text: &str) -> Option<usize> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let n: usize = digits.parse().ok()?;
    let factor = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(factor)
}

impl Config {
    /// Reads the environment; every unusable value is reported (through `warn`) and replaced
    /// by its default.
    pub fn from_env(mut warn: impl FnMut(String)) -> Self {
        let mut c = Config::default();
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        if let Some(v) = var("POMPTRACE_ENABLE") {
            match v.trim().to_ascii_lowercase().as_str() {
                "0" | "false" | "no" | "off" => c.enabled = false,
                "1" | "true" | "yes" | "on" => {}
                _ => warn(format!(
                    "POMPTRACE_ENABLE={v} is not a boolean; tracing stays on"
                )),
            }
        }
        c.experiment_directory = var("POMPTRACE_EXPERIMENT_DIRECTORY").map(PathBuf::from);
        if let Some(v) = var("POMPTRACE_CHUNK_SIZE") {
            match parse_size(&v) {
                Some(n) if (MIN_CHUNK_SIZE..=MAX_CHUNK_SIZE).contains(&n) => c.chunk_size = n,
                _ => warn(format!(
                    "POMPTRACE_CHUNK_SIZE={v} is not a size in [4K, 16M]; using {}",
                    c.chunk_size
                )),
            }
        }
        if let Some(v) = var("POMPTRACE_BUFFER_SIZE") {
            match parse_size(&v) {
                Some(n) if n > 0 => c.buffer_size = n,
                _ => warn(format!(
                    "POMPTRACE_BUFFER_SIZE={v} is not a size; using {}",
                    c.buffer_size
                )),
            }
        }
        if let Some(v) = var("POMPTRACE_KEEP_IN_MEMORY") {
            match parse_size(&v) {
                Some(n) => c.keep_in_memory = Some(n),
                None => warn(format!(
                    "POMPTRACE_KEEP_IN_MEMORY={v} is not a size; using the buffer size"
                )),
            }
        }
        if c.buffer_size < 2 * c.chunk_size {
            // A location needs one chunk to fill while another is written.
            c.chunk_size = (c.buffer_size / 2).clamp(MIN_CHUNK_SIZE, MAX_CHUNK_SIZE);
            c.buffer_size = c.buffer_size.max(2 * c.chunk_size);
        }
        if let Some(v) = var("POMPTRACE_CLOCK") {
            match v.trim().to_ascii_lowercase().as_str() {
                "tsc" => c.clock = ClockChoice::Tsc,
                "monotonic" | "clock_gettime" => c.clock = ClockChoice::Monotonic,
                "auto" => {}
                _ => warn(format!(
                    "POMPTRACE_CLOCK={v} is not tsc or monotonic; using auto"
                )),
            }
        }
        if let Some(v) = var("POMPTRACE_VERBOSE") {
            match v.trim().parse() {
                Ok(n) => c.verbose = n,
                Err(_) => warn(format!("POMPTRACE_VERBOSE={v} is not a number; using 1")),
            }
        }
        c
    }

    /// Chunks per location.
    pub fn buffers_per_location(&self) -> usize {
        (self.buffer_size / self.chunk_size).max(2)
    }

    /// Full chunks per location kept from the writer thread (the sink caps it).
    pub fn chunks_kept_in_memory(&self) -> usize {
        self.keep_in_memory.unwrap_or(self.buffer_size) / self.chunk_size
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_units() {
        assert_eq!(parse_size("65536"), Some(65536));
        assert_eq!(parse_size("64K"), Some(65536));
        assert_eq!(parse_size("64KiB"), Some(65536));
        assert_eq!(parse_size("1M"), Some(1 << 20));
        assert_eq!(parse_size("1mb"), Some(1 << 20));
        assert_eq!(parse_size("2G"), Some(2 << 30));
        assert_eq!(parse_size("12X"), None);
        assert_eq!(parse_size("K"), None);
        assert_eq!(parse_size("99999999999999999999999G"), None);
    }
}
