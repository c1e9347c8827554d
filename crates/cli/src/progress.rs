//! A progress bar for long passes over a trace, on stderr and only when stderr is a terminal
//! (scripts and tests see nothing).

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

/// Below this many events a pass takes well under a second: no bar.
const WORTH_A_BAR: u64 = 2_000_000;

pub struct Progress(Option<ProgressBar>);

impl Progress {
    pub fn new(total_events: u64, what: &str) -> Self {
        if total_events < WORTH_A_BAR || !std::io::stderr().is_terminal() {
            return Self(None);
        }
        let bar = ProgressBar::new(total_events);
        if let Ok(style) = ProgressStyle::with_template(
            "{msg} [{bar:40}] {human_pos}/{human_len} events, {eta} left",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(what.to_string());
        Self(Some(bar))
    }

    pub fn add(&self, events: u64) {
        if let Some(bar) = &self.0 {
            bar.inc(events);
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}
