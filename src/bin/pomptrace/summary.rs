//! `pomptrace summary`: visits and inclusive time per region and location of an OTF2 trace.
//!
//! Inclusive time is the sum over visits of (Leave time − Enter time), matched with a stack of
//! (region, enter time) per location. Damaged nesting never panics:
//! * a Leave whose region is not open on its location is ignored and counted in a warning;
//! * a Leave of a region that is open but not innermost closes the regions above it at that
//!   time (counted in a warning);
//! * a region still open at the end of its location is closed at the location's last event
//!   time (counted in a warning).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use pomptrace::otf2::{ArchiveReader, Event, GlobalDef};

use crate::{print_stdout, Failure};

/// Print visits and inclusive time per region and thread of an OTF2 trace.
#[derive(clap::Args)]
#[command(override_usage = "pomptrace summary ARCHIVE.otf2")]
pub struct SummaryArgs {
    /// The trace's anchor file (traces.otf2).
    #[arg(value_name = "ARCHIVE.otf2")]
    archive: PathBuf,
}

pub fn run(args: &SummaryArgs) -> Result<(), Failure> {
    print_stdout(&summarize(&args.archive).map_err(Failure::Error)?)
}

#[derive(Default, Clone, Copy)]
struct Stats {
    visits: u64,
    ticks: u128,
}

struct Location {
    id: u64,
    name: String,
    number_of_events: u64,
}

#[derive(Default)]
struct Warnings {
    unmatched_leaves: u64,
    misnested: u64,
    open_at_end: u64,
}

/// Reads the trace behind `anchor` and renders the summary; Err(message) on a read error.
pub fn summarize(anchor: &Path) -> Result<String, String> {
    let reader = ArchiveReader::open(anchor).map_err(|e| e.to_string())?;
    let defs = reader.global_defs().map_err(|e| e.to_string())?;

    let mut strings: HashMap<u32, String> = HashMap::new();
    let mut region_names: HashMap<u32, u32> = HashMap::new();
    let mut location_defs: Vec<(u64, u32, u64)> = Vec::new();
    let mut resolution: Option<u64> = None;
    for def in defs {
        match def {
            GlobalDef::String { id, string } => {
                strings.insert(id, string);
            }
            GlobalDef::Region { id, name, .. } => {
                region_names.insert(id, name);
            }
            GlobalDef::Location {
                id,
                name,
                number_of_events,
                ..
            } => location_defs.push((id, name, number_of_events)),
            GlobalDef::ClockProperties {
                timer_resolution, ..
            } => resolution = Some(timer_resolution),
            _ => {}
        }
    }
    let string = |id: u32| strings.get(&id).cloned();
    let locations: Vec<Location> = location_defs
        .into_iter()
        .map(|(id, name, number_of_events)| Location {
            id,
            name: string(name).unwrap_or_else(|| format!("location {id}")),
            number_of_events,
        })
        .collect();
    let region_name = |region: u32| {
        region_names
            .get(&region)
            .and_then(|name| string(*name))
            .unwrap_or_else(|| format!("region {region}"))
    };

    // (region, location index) → stats
    let mut stats: HashMap<(u32, usize), Stats> = HashMap::new();
    let mut warnings = Warnings::default();
    let mut events = 0u64;
    let mut first_time: Option<u64> = None;
    let mut last_time: Option<u64> = None;
    for (index, location) in locations.iter().enumerate() {
        let iter = match reader.events(location.id) {
            Ok(iter) => iter,
            // A location that never recorded anything may have no event file.
            Err(_)
                if location.number_of_events == 0 && !reader.event_path(location.id).exists() =>
            {
                continue
            }
            Err(e) => return Err(e.to_string()),
        };
        let mut stack: Vec<(u32, u64)> = Vec::new();
        let mut last: Option<u64> = None;
        let mut add = |region: u32, from: u64, to: u64| {
            let s = stats.entry((region, index)).or_default();
            s.visits += 1;
            s.ticks += u128::from(to.saturating_sub(from));
        };
        for record in iter {
            let record = record.map_err(|e| e.to_string())?;
            let time = record.time;
            events += 1;
            last = Some(time);
            first_time = Some(first_time.map_or(time, |t| t.min(time)));
            last_time = Some(last_time.map_or(time, |t| t.max(time)));
            match record.event {
                Event::Enter { region } => stack.push((region, time)),
                Event::Leave { region } => match stack.iter().rposition(|(r, _)| *r == region) {
                    Some(pos) => {
                        warnings.misnested += (stack.len() - 1 - pos) as u64;
                        for (r, enter) in stack.drain(pos..).rev() {
                            add(r, enter, time);
                        }
                    }
                    None => warnings.unmatched_leaves += 1,
                },
                _ => {}
            }
        }
        let end = last.unwrap_or(0);
        warnings.open_at_end += stack.len() as u64;
        for (r, enter) in stack.drain(..).rev() {
            add(r, enter, end);
        }
    }

    let (ticks_per_second, clock_note) = match resolution {
        Some(r) if r > 0 => (r as f64, None),
        _ => (
            1e9,
            Some("no valid clock resolution in the trace; assuming 1 tick = 1 ns"),
        ),
    };
    let ms = |ticks: u128| ticks as f64 * 1000.0 / ticks_per_second;

    // Regions by total inclusive time, descending; ties by name, then id.
    let mut totals: HashMap<u32, u128> = HashMap::new();
    for (&(region, _), s) in &stats {
        *totals.entry(region).or_default() += s.ticks;
    }
    let mut regions: Vec<(u32, String, u128)> = totals
        .into_iter()
        .map(|(region, total)| (region, region_name(region), total))
        .collect();
    regions.sort_by(|a, b| {
        b.2.cmp(&a.2)
            .then_with(|| a.1.cmp(&b.1))
            .then(a.0.cmp(&b.0))
    });

    let duration = match (first_time, last_time) {
        (Some(first), Some(last)) => last.saturating_sub(first),
        _ => 0,
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "trace {}: {} location{}, {} event{}, duration {:.3} ms",
        anchor.display(),
        locations.len(),
        plural(locations.len() as u64),
        events,
        plural(events),
        ms(u128::from(duration))
    );
    out.push('\n');

    let width = |s: &str| s.chars().count();
    let region_w = regions
        .iter()
        .map(|r| width(&r.1))
        .chain([40])
        .max()
        .unwrap_or(40);
    let thread_w = locations
        .iter()
        .map(|l| width(&l.name))
        .chain([16])
        .max()
        .unwrap_or(16);
    let _ = writeln!(
        out,
        "{:<region_w$} {:<thread_w$} {:>10} {:>18}",
        "region", "thread", "visits", "incl. time [ms]"
    );
    if regions.is_empty() {
        out.push_str("(no region was entered)\n");
    }
    for (region, name, _) in &regions {
        let mut first = true;
        for (index, location) in locations.iter().enumerate() {
            let Some(s) = stats.get(&(*region, index)) else {
                continue;
            };
            let label = if first { name.as_str() } else { "" };
            first = false;
            let _ = writeln!(
                out,
                "{:<region_w$} {:<thread_w$} {:>10} {:>18.3}",
                label,
                location.name,
                s.visits,
                ms(s.ticks)
            );
        }
    }

    let mut notes: Vec<String> = Vec::new();
    if let Some(note) = clock_note {
        notes.push(note.to_string());
    }
    if warnings.unmatched_leaves > 0 {
        notes.push(format!(
            "{} Leave event{} without a matching Enter (ignored)",
            warnings.unmatched_leaves,
            plural(warnings.unmatched_leaves)
        ));
    }
    if warnings.misnested > 0 {
        notes.push(format!(
            "{} region visit{} closed by the Leave of an enclosing region",
            warnings.misnested,
            plural(warnings.misnested)
        ));
    }
    if warnings.open_at_end > 0 {
        notes.push(format!(
            "{} region visit{} never left (counted up to the last event of the location)",
            warnings.open_at_end,
            plural(warnings.open_at_end)
        ));
    }
    if !notes.is_empty() {
        out.push('\n');
        for note in notes {
            let _ = writeln!(out, "warning: {note}");
        }
    }
    Ok(out)
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
