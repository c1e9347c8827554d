//! Many events through the smallest chunks (256 KiB, the floor of POMPTRACE_CHUNK_SIZE).

use super::*;

/// robust_many_events.c: iterations per thread, four events each.
const PER_THREAD: u64 = 250_000;

#[test]
fn no_event_is_lost_with_the_smallest_chunks_and_a_million_events_per_thread() {
    let scratch = Scratch::new("robust-many");
    let source = instrument("robust_many_events.c", &scratch.path, &[]);
    let exe = Build::c(&scratch.path).executable(&[source], "robust_many_events");
    for threads in [2u64, 4] {
        let r = run_traced(
            &exe,
            threads as u32,
            &format!("many-{threads}"),
            &[("POMPTRACE_CHUNK_SIZE", "256K")],
        );
        assert_eq!(r.stdout(), format!("total={}\n", PER_THREAD * threads));
        // The summary line, and (on a fast machine) the note that the trace grows by more than
        // 100 MB/s.
        let lines = r
            .stderr()
            .lines()
            .filter(|l| !l.contains("the trace grows by"))
            .count();
        assert_eq!(lines, 1, "{}", r.stderr());
        // The other reference reader, which is fast enough for this size.
        support::otf2_print(&["--silent"], &r.anchor(), &[]);

        let reader = ArchiveReader::open(r.anchor()).unwrap();
        assert_eq!(reader.anchor().event_chunk_size, 256 * 1024);
        let defs = reader.global_defs().unwrap();
        let strings: BTreeMap<u32, String> = defs
            .iter()
            .filter_map(|d| match d {
                GlobalDef::String { id, string } => Some((*id, string.clone())),
                _ => None,
            })
            .collect();
        let region_names: BTreeMap<u32, String> = defs
            .iter()
            .filter_map(|d| match d {
                GlobalDef::Region { id, name, .. } => Some((*id, strings[name].clone())),
                _ => None,
            })
            .collect();
        let defined: BTreeMap<u64, u64> = defs
            .iter()
            .filter_map(|d| match d {
                GlobalDef::Location {
                    id,
                    number_of_events,
                    ..
                } => Some((*id, *number_of_events)),
                _ => None,
            })
            .collect();
        assert_eq!(defined.len() as u64, threads);

        let (mut total, mut total_flushes) = (0u64, 0u64);
        for (&location, &number_of_events) in &defined {
            let mut events = 0u64;
            let mut flushes = 0u64;
            let mut enters: BTreeMap<&str, u64> = BTreeMap::new();
            let mut open: Vec<u32> = Vec::new();
            let mut last = 0;
            for record in reader.events(location).unwrap() {
                let record = record.unwrap_or_else(|e| panic!("location {location}: {e}"));
                events += 1;
                assert!(record.time >= last, "location {location}: time goes back");
                last = record.time;
                match record.event {
                    Event::BufferFlush { .. } => flushes += 1,
                    Event::Enter { region } => {
                        *enters.entry(region_names[&region].as_str()).or_default() += 1;
                        open.push(region);
                    }
                    Event::Leave { region } => {
                        assert_eq!(open.pop(), Some(region), "location {location}");
                    }
                    _ => {}
                }
            }
            assert!(open.is_empty(), "location {location}: open regions");
            assert_eq!(
                events, number_of_events,
                "location {location}: defined count"
            );
            // Per iteration: Enter/Leave of the user region and of the atomic. Per thread:
            // team begin/end, the parallel region and its implicit barrier. The master also
            // has ProgramBegin/End and ThreadFork/Join.
            let expected = 4 * PER_THREAD + 6 + if location == 0 { 4 } else { 0 };
            assert_eq!(events - flushes, expected, "location {location}");
            let iterations = |prefix: &str| {
                enters
                    .iter()
                    .filter(|(n, _)| n.starts_with(prefix))
                    .map(|(_, c)| *c)
                    .sum::<u64>()
            };
            assert_eq!(iterations("!$pomp user(iteration)"), PER_THREAD);
            assert_eq!(iterations("!$omp atomic"), PER_THREAD);
            total += events - flushes;
            total_flushes += flushes;
        }
        assert_eq!(total, threads * (4 * PER_THREAD + 6) + 4);
        let (_, locations, events, _) = summary(&r.stderr());
        assert_eq!(locations, threads);
        assert_eq!(events, total + total_flushes);
    }
}
