//! Configuration from `POMPTRACE_*` environment variables, read once at measurement start.

use std::path::PathBuf;
use std::time::Duration;

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
    /// `POMPTRACE_CLOCK=tsc|monotonic` (default: tsc where the CPU has an invariant TSC).
    pub clock: ClockChoice,
    /// `POMPTRACE_VERBOSE=0|1|2`: 0 silences the closing summary line (warnings still show).
    pub verbose: u8,
    /// `POMPTRACE_METRICS`: counters recorded at every Enter/Leave (see `metrics::CATALOG`).
    pub metrics: Option<String>,
    /// `POMPTRACE_SAMPLING_INTERVAL`: period of the process-metrics sampler (off by default).
    pub sampling_interval: Option<Duration>,
    /// `POMPTRACE_SNAPSHOT_INTERVAL`: period of the snapshots (off by default).
    pub snapshot_interval: Option<Duration>,
    /// `POMPTRACE_SNAPSHOT_AT_END=1`: one more snapshot at the end of the measurement.
    pub snapshot_at_end: bool,
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
            clock: ClockChoice::Auto,
            verbose: 1,
            metrics: None,
            sampling_interval: None,
            snapshot_interval: None,
            snapshot_at_end: false,
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

/// Parses durations like `10ms`, `1.5s`, `250us`, `100000ns`; a bare number is milliseconds.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let n: f64 = number.parse().ok()?;
    let seconds_per_unit = match unit.trim().to_ascii_lowercase().as_str() {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "" | "ms" => 1e-3,
        "s" => 1.0,
        _ => return None,
    };
    Duration::try_from_secs_f64(n * seconds_per_unit).ok()
}

/// Parses a boolean setting; None if it is not one.
fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "0" | "false" | "no" | "off" => Some(false),
        "1" | "true" | "yes" | "on" => Some(true),
        _ => None,
    }
}

/// Shortest interval accepted for the sampler and the snapshots: below it they would cost
/// more than they show.
pub const MIN_INTERVAL: Duration = Duration::from_micros(100);

impl Config {
    /// Reads the environment; every unusable value is reported (through `warn`) and replaced
    /// by its default.
    pub fn from_env(mut warn: impl FnMut(String)) -> Self {
        let mut c = Config::default();
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        if let Some(v) = var("POMPTRACE_ENABLE") {
            match parse_bool(&v) {
                Some(on) => c.enabled = on,
                None => warn(format!(
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
        c.metrics = var("POMPTRACE_METRICS");
        for (name, slot) in [
            ("POMPTRACE_SAMPLING_INTERVAL", &mut c.sampling_interval),
            ("POMPTRACE_SNAPSHOT_INTERVAL", &mut c.snapshot_interval),
        ] {
            if let Some(v) = var(name) {
                match parse_duration(&v) {
                    Some(d) if d >= MIN_INTERVAL => *slot = Some(d),
                    _ => warn(format!(
                        "{name}={v} is not a duration of at least 100us (e.g. 10ms, 1s); \
                         it stays off"
                    )),
                }
            }
        }
        if let Some(v) = var("POMPTRACE_SNAPSHOT_AT_END") {
            match parse_bool(&v) {
                Some(on) => c.snapshot_at_end = on,
                None => warn(format!(
                    "POMPTRACE_SNAPSHOT_AT_END={v} is not a boolean; no snapshot at the end"
                )),
            }
        }
        c
    }

    /// Whether snapshots are written at all.
    pub fn snapshots(&self) -> bool {
        self.snapshot_interval.is_some() || self.snapshot_at_end
    }

    /// Chunks per location.
    pub fn buffers_per_location(&self) -> usize {
        (self.buffer_size / self.chunk_size).max(2)
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

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("10ms"), Some(Duration::from_millis(10)));
        assert_eq!(parse_duration("10"), Some(Duration::from_millis(10)));
        assert_eq!(parse_duration("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_duration("250us"), Some(Duration::from_micros(250)));
        assert_eq!(parse_duration("100000ns"), Some(Duration::from_micros(100)));
        assert_eq!(parse_duration("5 min"), None);
        assert_eq!(parse_duration("ms"), None);
        assert_eq!(parse_duration("-1s"), None);
    }
}
