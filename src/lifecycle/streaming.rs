//! What the measurement adds to the writing of event chunks (`otf2::WriterHooks`): the
//! definitions journal goes to disk before any chunk that may refer to it, a chunk written on a
//! thread of the program is not interrupted by a fatal signal's handler on that thread, the
//! writer's threads are pomptrace's helper threads, and a chunk filling up is the moment to
//! register for membarrier in a process that could not do it at the start.

use std::fs::File;
use std::io;

use super::membarrier;
use crate::base::clock;
use crate::base::config::{Config, WriterChoice};
use crate::base::helper_threads;
use crate::base::signal_safe_mutex::with_async_fatal_signals_blocked;
use crate::output::facts::Fact;
use crate::output::journal::{self, Journal};
use otf2::{BackgroundWriter, StreamFrom, WriterHooks};

struct Hooks {
    journal: &'static Journal,
}

impl WriterHooks for Hooks {
    fn before_write(&self, kept: Option<&mut Option<File>>) -> io::Result<()> {
        journal::record(&Fact::Clock(clock::sample()));
        match kept {
            // The writer thread keeps the journal open in its own descriptor table.
            Some(file) => self.journal.flush_to(file),
            None => self.journal.flush(),
        }
    }

    fn on_program_thread(&self, write: &mut dyn FnMut()) {
        // A handler on this thread would wait for the journal's lock held here.
        with_async_fatal_signals_blocked(write)
    }

    fn spawn(&self, name: String, body: Box<dyn FnOnce() + Send>) -> io::Result<()> {
        helper_threads::spawn(name, body)
    }

    fn chunk_filled(&self) {
        membarrier::register_once_the_run_is_long();
    }
}

/// The measurement's event writer: chunks journaled in `journal`, streaming as
/// `POMPTRACE_WRITER` says. Starts no thread.
pub(crate) fn new_writer(config: &Config, journal: &'static Journal) -> BackgroundWriter {
    let stream_from = match config.writer {
        WriterChoice::Thread => StreamFrom::FillingThread,
        WriterChoice::Background => StreamFrom::WriterThread,
        WriterChoice::Direct => StreamFrom::WriterThreadDirect,
        WriterChoice::Auto => StreamFrom::Auto,
    };
    BackgroundWriter::new("pomptrace-writer", stream_from, Box::new(Hooks { journal }))
}
