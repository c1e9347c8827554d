//! The start: the first call that may record brings the measurement up, once, under the start
//! lock; every later call finds it running with one load. Registers what the lifecycle needs from
//! the process (exit, signal and fork handlers) before the first event.

use std::sync::atomic::Ordering;

use super::measurement::Measurement;
use super::state::{
    update_hot, DISABLED, FINISHED, MEASUREMENT, RUNNING, STARTING, START_LOCK, STATE,
};
use super::{membarrier, process, streaming};
use crate::base::config::Config;
use crate::base::diagnostics::warn;
use crate::metrics::synchronous as metrics;
use crate::output::registry::load_filter_once;

/// The running measurement, starting it if this is the first call. None when it is disabled,
/// failed to start, or has finished.
#[inline]
pub(crate) fn started() -> Option<&'static Measurement> {
    if STATE.load(Ordering::Acquire) == RUNNING {
        return MEASUREMENT.get();
    }
    start_slow()
}

#[cold]
fn start_slow() -> Option<&'static Measurement> {
    if matches!(STATE.load(Ordering::Acquire), FINISHED | DISABLED) {
        // Final states: no lock (in a forked child another thread of the parent may have held
        // it at the fork, and every call after the end comes here).
        return None;
    }
    let guard = START_LOCK.lock();
    match STATE.load(Ordering::Acquire) {
        RUNNING => return MEASUREMENT.get(),
        // A call made while starting (the init file assigning handles): not yet recording.
        STARTING | FINISHED | DISABLED => return None,
        _ => {}
    }
    STATE.store(STARTING, Ordering::Release);
    // Also when disabled: a forked child still assigns handles and registers locks.
    process::register_fork_handler();
    let config = Config::from_env(|m| warn(&m));
    if config.enabled && !config.tracing && !config.profiling {
        warn(
            "POMPTRACE_ENABLE_TRACING=0 and POMPTRACE_ENABLE_PROFILING is not 1: nothing will \
             be recorded",
        );
    }
    if !config.enabled || !(config.tracing || config.profiling) {
        STATE.store(DISABLED, Ordering::Release);
        update_hot();
        return None;
    }
    membarrier::register_membarrier_if_alone();
    load_filter_once(|| config.clone());
    metrics::configure(config.metrics.as_deref(), |m| warn(&m));
    let measurement = match Measurement::new(config, streaming::new_writer) {
        Ok(m) => m,
        Err(message) => {
            warn(&format!("{message}; nothing will be recorded"));
            STATE.store(DISABLED, Ordering::Release);
            update_hot();
            return None;
        }
    };
    let m = MEASUREMENT.get_or_init(|| measurement);
    // The init file (if linked) assigns all handles now, before any event.
    crate::openmp::call_init_regions();
    process::register_exit_handler();
    process::register_signal_handlers();
    crate::model::thread::set_exit_hook(super::thread_exit::thread_ends);
    m.program_begin();
    STATE.store(RUNNING, Ordering::Release);
    update_hot();
    drop(guard);
    Some(m)
}
