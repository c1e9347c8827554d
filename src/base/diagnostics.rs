//! The one way pomptrace speaks to the user: a `pomptrace:` line on stderr, at most once per
//! cause where a cause can repeat. Safe in any state and from a signal handler's finalize (the
//! set of causes seen is behind a signal-blocking lock).

use std::collections::HashSet;

use super::signal_safe_mutex::SignalSafeMutex;

/// Prints one `pomptrace:` line on stderr.
pub(crate) fn warn(message: &str) {
    eprintln!("pomptrace: {message}");
}

/// The keys `warn_once` has warned about.
pub(crate) static WARNED: SignalSafeMutex<Option<HashSet<String>>> = SignalSafeMutex::new(None);

/// Prints a warning the first time `key` is seen.
pub(crate) fn warn_once(key: &str, message: impl FnOnce() -> String) {
    let mut seen = WARNED.lock();
    if seen
        .get_or_insert_with(HashSet::new)
        .insert(key.to_string())
    {
        warn(&message());
    }
}
