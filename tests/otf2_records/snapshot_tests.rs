//! Snapshots through `otf2-print` and our reader.

use super::*;

#[test]
fn snapshots() {
    let w = write_archive();
    let ctx = &Ctx { w: &w };
    let out = otf2_print(&["-A"], &w.anchor, &[SPARSE_REGION_WARNING]);
    let actual = printed_section(&out, "Snapshots", 2);
    // libotf2 3.0.2 does not translate snapshot records through the mapping tables, so the
    // snapshot records use ids the tables leave alone.
    let expected: Vec<Printed> = w
        .snaps
        .iter()
        .flat_map(|(location, records)| {
            records.iter().map(move |(time, list, record)| {
                let (kind, column, rest) = ctx.p_snap(*location, *time, record);
                printed(
                    kind,
                    vec![location.to_string(), column.to_string()],
                    rest,
                    ctx.p_attributes(list.entries()),
                )
            })
        })
        .collect();
    assert_same("otf2-print -A snapshots", &actual, &expected);

    let mut kinds: Vec<String> = w
        .snaps
        .iter()
        .flat_map(|(_, s)| {
            s.iter()
                .map(|r| format!("{:?}", std::mem::discriminant(&r.2)))
        })
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    assert_eq!(kinds.len(), 20, "every snapshot record kind");

    // Our reader; L1 has the empty .snap file `finish` wrote.
    let reader = ArchiveReader::open(&w.anchor).unwrap();
    for (location, records) in &w.snaps {
        let ours: Vec<Timed<SnapRecord>> = reader
            .snapshots(*location)
            .unwrap()
            .into_iter()
            .map(|r| (r.time, r.attributes, r.record))
            .collect();
        assert_eq!(&ours, records);
    }
    assert_eq!(reader.snapshots(L1).unwrap(), vec![]);
    // The python module does not read snapshots, but must read the archive that has them.
    assert!(!dump(&w).get("events").arr().is_empty());
}
