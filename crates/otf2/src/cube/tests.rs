//! Round trips through the writer and reader, the row orders, and malformed input.

use std::io;
use std::path::{Path, PathBuf};

use super::tar::TarWriter;
use super::*;

fn scratch(name: &str) -> PathBuf {
    let dir = super::super::test_dir(&format!("cube-{name}"));
    let _ = std::fs::remove_file(dir.join("p.cubex"));
    dir
}

fn thread(name: &str, rank: u32) -> Location {
    Location {
        name: name.into(),
        rank,
        kind: LocationKind::Thread,
    }
}

fn region(name: &str) -> Region {
    Region {
        name: name.into(),
        canonical_name: format!("{name}_c"),
        source_file: "src/a<b>.c".into(),
        begin_line: Some(3),
        end_line: None,
        paradigm: "user".into(),
        role: "function".into(),
        description: "d & \"q\" 'a'".into(),
    }
}

/// Two roots, a recursive path, a nested metric, all value types, a system tree with two
/// machines and an accelerator stream.
fn sample() -> Profile {
    let cnodes = vec![
        Cnode {
            region: 0,
            parent: None,
            line: None,
        }, // 0 main
        Cnode {
            region: 1,
            parent: Some(0),
            line: Some(7),
        }, // 1 main/f
        Cnode {
            region: 1,
            parent: Some(1),
            line: None,
        }, // 2 main/f/f
        Cnode {
            region: 2,
            parent: Some(0),
            line: None,
        }, // 3 main/g
        Cnode {
            region: 2,
            parent: Some(1),
            line: None,
        }, // 4 main/f/g
        Cnode {
            region: 3,
            parent: None,
            line: None,
        }, // 5 other root
        Cnode {
            region: 1,
            parent: Some(5),
            line: None,
        }, // 6 other/f
    ];
    let system = vec![
        SystemNode {
            name: "machine A".into(),
            class: "machine".into(),
            description: "first".into(),
            groups: vec![],
            children: vec![SystemNode {
                name: "node n1".into(),
                class: "node".into(),
                groups: vec![
                    LocationGroup {
                        name: "Process 0".into(),
                        rank: 0,
                        kind: LocationGroupKind::Process,
                        locations: vec![thread("Master thread", 0), thread("OMP thread 1", 1)],
                    },
                    LocationGroup {
                        name: "GPU".into(),
                        rank: 1,
                        kind: LocationGroupKind::Accelerator,
                        locations: vec![Location {
                            name: "stream".into(),
                            rank: 0,
                            kind: LocationKind::AcceleratorStream,
                        }],
                    },
                ],
                ..SystemNode::default()
            }],
        },
        SystemNode {
            name: "machine B".into(),
            class: "machine".into(),
            groups: vec![LocationGroup {
                name: "Process 1".into(),
                rank: 2,
                kind: LocationGroupKind::Metrics,
                locations: vec![Location {
                    name: "m".into(),
                    rank: 0,
                    kind: LocationKind::Metric,
                }],
            }],
            ..SystemNode::default()
        },
    ];
    let n = cnodes.len() * 4;
    let mut metrics = Metric::scorep_defaults().to_vec();
    metrics.push(Metric {
        unique_name: "cycles:=x_1".into(),
        display_name: "Cycles <hw>".into(),
        unit: "#".into(),
        description: "line one\nline two\ttab".into(),
        data_type: DataType::I64,
        kind: MetricKind::Inclusive,
        parent: Some(1),
    });
    Profile {
        attributes: vec![
            ("Creator".into(), "pomptrace test".into()),
            ("CUBE_CT_AGGR".into(), "SUM".into()),
            ("odd \"key\"".into(), "<&>".into()),
        ],
        metrics,
        regions: vec![region("main"), region("f"), region("g"), region("other")],
        cnodes,
        system,
        values: vec![
            Values::U64((0..n as u64).map(|i| i * 3 + u64::MAX / 2).collect()),
            Values::F64((0..n).map(|i| i as f64 * 0.125 + 1e-300).collect()),
            Values::F64((0..n).map(|i| -(i as f64)).collect()),
            Values::F64((0..n).map(|i| f64::from_bits(i as u64 + 1)).collect()),
            Values::I64((0..n as i64).map(|i| i - 5).collect()),
        ],
    }
}

#[test]
fn round_trip_gives_back_the_same_profile() {
    let dir = scratch("round-trip");
    let path = dir.join("p.cubex");
    let profile = sample();
    profile.write(&path).unwrap();
    let reading = read_with(&path, &ReadLimits::default()).unwrap();
    assert_eq!(reading.skipped_metrics, Vec::<String>::new());
    assert_eq!(reading.profile, profile);
    assert_eq!(read(&path).unwrap(), profile);
    // No temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("p.cubex")]);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        profile.to_bytes().unwrap()[..]
    );
}

#[test]
fn accessors_follow_the_column_and_row_layout() {
    let p = sample();
    assert_eq!(p.location_count(), 4);
    let names: Vec<&str> = p.locations().iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["Master thread", "OMP thread 1", "stream", "m"]);
    assert_eq!(p.location_groups().len(), 3);
    assert_eq!(p.roots(), [0, 5]);
    assert_eq!(p.children()[1], [2, 4]);
    assert_eq!(p.metric_index("time"), Some(1));
    assert_eq!(p.value(4, 2, 3), Some((2 * 4 + 3) as f64 - 5.0));
    assert_eq!(p.value(4, 2, 4), None);
    assert_eq!(p.value(9, 0, 0), None);
}

#[test]
fn row_orders_are_cubes() {
    //      0           5
    //    / | \         |
    //   1  2  3        6
    //  / \    |
    // 4   7   8
    let children = vec![
        vec![1, 2, 3],
        vec![4, 7],
        vec![],
        vec![8],
        vec![],
        vec![6],
        vec![],
        vec![],
        vec![],
    ];
    let roots = [0, 5];
    assert_eq!(
        deep_enumeration(&roots, &children),
        [0, 1, 4, 7, 2, 3, 8, 5, 6]
    );
    assert_eq!(
        wide_enumeration(&roots, &children),
        [0, 1, 2, 3, 4, 7, 8, 5, 6]
    );
}

#[test]
fn the_anchor_is_laid_out_as_cubew_writes_it() {
    let p = sample();
    let anchor = p.anchor_xml();
    assert!(anchor.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\n<cube version=\"4.7\">\n<attr key=\"CubePL Version\" value=\"1.1\"/>\n"));
    assert!(anchor.contains("<metric id=\"1\" type=\"INCLUSIVE\">\n<disp_name>Time</disp_name>\n<uniq_name>time</uniq_name>\n<dtype>DOUBLE</dtype>\n<uom>sec</uom>\n<url></url>\n<descr>Total CPU allocation time</descr>\n<metric id=\"4\""));
    assert!(anchor.contains("<dtype>MINDOUBLE</dtype>"));
    assert!(anchor.contains("<region id=\"0\" mod=\"src/a&lt;b&gt;.c\" begin=\"3\" end=\"-1\">\n<name>main</name>\n<mangled_name>main_c</mangled_name>\n"));
    assert!(anchor.contains("<cnode id=\"1\" line=\"7\" calleeId=\"1\">\n<cnode id=\"2\" calleeId=\"1\">\n</cnode>\n<cnode id=\"4\""));
    assert!(anchor.contains("<systemtreenode Id=\"0\">\n<name>machine A</name>\n<class>machine</class>\n<descr>first</descr>\n<systemtreenode Id=\"1\">"));
    assert!(anchor.contains("<location Id=\"2\">\n<name>stream</name>\n<rank>0</rank>\n<type>accelerator stream</type>\n</location>"));
    assert!(
        anchor.ends_with("</systemtreenode>\n<topologies>\n</topologies>\n</system>\n</cube>\n")
    );

    let mut threads_only = sample();
    threads_only.system.truncate(1);
    threads_only.system[0].children[0].groups.truncate(1);
    threads_only.values = threads_only
        .metrics
        .iter()
        .map(|m| m.data_type.zeros(threads_only.cnodes.len() * 2))
        .collect();
    assert!(threads_only.anchor_xml().contains("<cube version=\"4.4\">"));
}

#[test]
fn index_and_data_files_hold_the_rows_in_the_metrics_order() {
    let dir = scratch("layout");
    let path = dir.join("p.cubex");
    let p = sample();
    p.write(&path).unwrap();
    let mut file = std::fs::File::open(&path).unwrap();
    let len = file.metadata().unwrap().len();
    let members = tar::list(&mut file, len).unwrap();
    let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "0.data",
            "0.index",
            "1.data",
            "1.index",
            "2.data",
            "2.index",
            "3.data",
            "3.index",
            "4.data",
            "4.index",
            "anchor.xml"
        ]
    );
    let bytes = std::fs::read(&path).unwrap();
    let member = |name: &str| {
        let m = members.iter().find(|m| m.name == name).unwrap();
        &bytes[m.offset as usize..(m.offset + m.size) as usize]
    };
    let mut index = b"CUBEX.INDEX\x01\0\0\0\0\0\x01\x07\0\0\0".to_vec();
    for i in 0u32..7 {
        index.extend_from_slice(&i.to_le_bytes());
    }
    assert_eq!(member("1.index"), &index[..]);
    // time is inclusive: rows in the wide order 0, 1, 3, 2, 4, 5, 6.
    let data = member("1.data");
    assert_eq!(&data[..10], b"CUBEX.DATA");
    let Values::F64(time) = &p.values[1] else {
        unreachable!()
    };
    let row_of = |row: usize| -> Vec<f64> {
        (0..4)
            .map(|l| {
                let at = 10 + (row * 4 + l) * 8;
                f64::from_le_bytes(data[at..at + 8].try_into().unwrap())
            })
            .collect()
    };
    assert_eq!(row_of(2), time[3 * 4..4 * 4]);
    assert_eq!(row_of(3), time[2 * 4..3 * 4]);
    // visits is exclusive: rows in preorder 0, 1, 2, 4, 3, 5, 6.
    let data = member("0.data");
    let Values::U64(visits) = &p.values[0] else {
        unreachable!()
    };
    let at = 10 + 3 * 4 * 8;
    assert_eq!(
        u64::from_le_bytes(data[at..at + 8].try_into().unwrap()),
        visits[4 * 4]
    );
}

fn assert_invalid(p: &Profile, what: &str) {
    let dir = scratch("invalid");
    let path = dir.join("p.cubex");
    let err = p.write(&path).expect_err(what);
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{what}: {err}");
    assert!(!path.exists(), "{what}: file created");
    assert!(p.to_bytes().is_err());
}

#[test]
fn invalid_profiles_are_errors_not_panics_and_write_nothing() {
    type Change = fn(&mut Profile);
    let cases: Vec<(&str, Change)> = vec![
        ("no metric", |p: &mut Profile| {
            p.metrics.clear();
            p.values.clear();
        }),
        ("no region", |p: &mut Profile| p.regions.clear()),
        ("no cnode", |p: &mut Profile| p.cnodes.clear()),
        ("no system", |p: &mut Profile| p.system.clear()),
        ("empty group", |p: &mut Profile| {
            p.system[1].groups[0].locations.clear()
        }),
        ("values missing", |p: &mut Profile| {
            p.values.pop();
        }),
        ("values short", |p: &mut Profile| {
            if let Values::U64(v) = &mut p.values[0] {
                v.pop();
            }
        }),
        ("values of the wrong type", |p: &mut Profile| {
            p.values[0] = Values::F64(vec![0.0; 28])
        }),
        ("region out of range", |p: &mut Profile| {
            p.cnodes[3].region = 4
        }),
        ("parent after child", |p: &mut Profile| {
            p.cnodes[1].parent = Some(2)
        }),
        ("parent is self", |p: &mut Profile| {
            p.cnodes[1].parent = Some(1)
        }),
        ("metric parent after", |p: &mut Profile| {
            p.metrics[0].parent = Some(3)
        }),
        ("inclusive min", |p: &mut Profile| {
            p.metrics[2].kind = MetricKind::Inclusive
        }),
        ("duplicate unique name", |p: &mut Profile| {
            p.metrics[3].unique_name = "time".into()
        }),
        ("empty unique name", |p: &mut Profile| {
            p.metrics[3].unique_name.clear()
        }),
        ("unique name with space", |p: &mut Profile| {
            p.metrics[3].unique_name = "max time".into()
        }),
        ("control character", |p: &mut Profile| {
            p.regions[0].name = "a\u{1}".into()
        }),
        ("carriage return", |p: &mut Profile| {
            p.regions[0].description = "a\r\n".into()
        }),
        ("newline in attribute", |p: &mut Profile| {
            p.regions[0].source_file = "a\nb".into()
        }),
        ("noncharacter", |p: &mut Profile| {
            p.system[0].name = "\u{ffff}".into()
        }),
        ("format attribute", |p: &mut Profile| {
            p.attributes.push(("Cube Version".into(), "9".into()))
        }),
        ("clustering attribute", |p: &mut Profile| {
            p.attributes.push(("CLUSTERING".into(), "ON".into()))
        }),
        ("line out of range", |p: &mut Profile| {
            p.cnodes[0].line = Some(u32::MAX)
        }),
        ("rank out of range", |p: &mut Profile| {
            p.system[1].groups[0].rank = u32::MAX
        }),
    ];
    for (what, change) in cases {
        let mut p = sample();
        change(&mut p);
        assert_invalid(&p, what);
    }
    assert!(Profile::default().validate().is_err());
}

#[test]
fn paths_that_cannot_be_written_are_errors() {
    let dir = scratch("paths");
    let p = sample();
    assert!(p.write(Path::new("/")).is_err());
    assert!(p.write(&dir.join("missing-dir").join("p.cubex")).is_err());
    std::fs::create_dir_all(dir.join("a-directory")).unwrap();
    assert!(p.write(&dir.join("a-directory")).is_err());
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Writes `members` as a tar archive and reads it back.
fn read_members(name: &str, members: &[(&str, Vec<u8>)]) -> io::Result<Reading> {
    let dir = scratch(name);
    let path = dir.join("p.cubex");
    let mut tar = TarWriter::new(Vec::new());
    for (name, bytes) in members {
        tar.member(name, bytes.len() as u64, |w| {
            w.extend_from_slice(bytes);
            Ok(())
        })?;
    }
    std::fs::write(&path, tar.finish()?)?;
    read_with(&path, &ReadLimits::default())
}

fn index_be(format: u8, rows: &[u32]) -> Vec<u8> {
    let mut b = b"CUBEX.INDEX".to_vec();
    b.extend_from_slice(&1u32.to_be_bytes());
    b.extend_from_slice(&0u16.to_be_bytes());
    b.push(format);
    if format == 1 {
        b.extend_from_slice(&(rows.len() as u32).to_be_bytes());
        for r in rows {
            b.extend_from_slice(&r.to_be_bytes());
        }
    }
    b
}

/// An anchor shaped like Score-P's and Scalasca's: ids defined out of document order,
/// location Ids interleaved across processes, a derived metric, a TAU_ATOMIC one, mirrors,
/// indentation, a region with no mangled name.
const SCOREP_LIKE_ANCHOR: &str = r#"<?xml version="1.0" encoding="UTF-8"?>

<cube version="4.7">
  <attr key="CubePL Version" value="1.1"/>
  <attr key="Cube Version" value="4.8.2"/>
  <attr key="Cube anchor.xml syntax version" value="4.7"/>
  <attr key="Creator" value="Score-P 8.4"/>
  <attr key="CUBE_CT_AGGR" value="SUM"/>
  <doc><mirrors><murl>file:///doc/</murl></mirrors></doc>
  <metrics title="m">
    <metric id="1" type="INCLUSIVE" viztype="NORMAL">
      <disp_name>Time</disp_name><uniq_name>time</uniq_name><dtype>FLOAT</dtype><uom>sec</uom>
      <url>@mirror@x</url><descr>t</descr>
      <metric id="3" type="POSTDERIVED"><disp_name>D</disp_name><uniq_name>derived</uniq_name>
        <dtype>DOUBLE</dtype><uom></uom><url></url><descr></descr><cubepl>${a}</cubepl>
        <metric id="2" type="EXCLUSIVE"><disp_name>V</disp_name><uniq_name>visits</uniq_name>
          <dtype>UINT64</dtype><uom>occ</uom><url></url><descr>v</descr></metric>
      </metric>
    </metric>
    <metric id="0" type="EXCLUSIVE"><disp_name>T</disp_name><uniq_name>tau</uniq_name>
      <dtype>TAU_ATOMIC</dtype><uom>sec</uom><url></url><descr></descr></metric>
  </metrics>
  <program>
    <region id="1" mod="b.c" begin="5" end="9"><name>work</name><paradigm>openmp</paradigm><role>parallel</role><url></url><descr></descr><attr key="k" value="v"/></region>
    <region id="0" mod="a.c" begin="-1" end="-1"><name>main</name><mangled_name>main</mangled_name><paradigm>user</paradigm><role>function</role><url></url><descr></descr></region>
    <cnode id="0" calleeId="0">
      <parameter partype="numeric" parkey="n" parvalue="3" />
      <cnode id="1" calleeId="1">
        <cnode id="3" calleeId="0"></cnode>
      </cnode>
      <cnode id="2" line="12" calleeId="1"></cnode>
    </cnode>
  </program>
  <system>
    <systemtreenode Id="0"><name>machine Linux</name><class>machine</class>
      <systemtreenode Id="1"><name>node host</name><class>node</class><attr key="a" value="b"/>
        <locationgroup Id="0"><name>MPI Rank 0</name><rank>0</rank><type>process</type><attr key="x" value="y"/>
          <location Id="0"><name>Master thread</name><rank>0</rank><type>thread</type></location>
          <location Id="2"><name>OMP thread 1</name><rank>1</rank><type>thread</type></location>
        </locationgroup>
        <locationgroup Id="1"><name>MPI Rank 1</name><rank>1</rank><type>process</type>
          <location Id="1"><name>Master thread</name><rank>0</rank><type>thread</type></location>
          <location Id="3"><name>OMP thread 1</name><rank>1</rank><type>thread</type></location>
        </locationgroup>
      </systemtreenode>
    </systemtreenode>
    <topologies></topologies>
  </system>
</cube>
"#;

/// Data rows: `value(row, location id)` for 4 cnodes × 4 locations, big endian.
fn data_be(rows: &[usize], value: impl Fn(usize, usize) -> u64) -> Vec<u8> {
    let mut b = b"CUBEX.DATA".to_vec();
    for &r in rows {
        for id in 0..4 {
            b.extend_from_slice(&value(r, id).to_be_bytes());
        }
    }
    b
}

#[test]
fn scorep_shaped_archives_are_read() {
    // The document's call tree is id 0 {1 {3}, 2}. time (metric id 1, inclusive): dense index,
    // every row, numbered in the wide order 0, 1, 2, 3. visits (metric id 2, exclusive):
    // sparse, rows at positions 3 and 1 of the preorder 0, 1, 3, 2.
    let time = |row: usize, id: usize| (row * 10 + id) as f64;
    let time_data = data_be(&[0, 1, 2, 3], |r, id| time(r, id).to_bits());
    let visits_data = data_be(&[3, 1], |r, id| (r * 100 + id) as u64);
    let reading = read_members(
        "scorep-like",
        &[
            ("1.data", time_data),
            ("1.index", index_be(3, &[])),
            ("2.data", visits_data),
            ("2.index", index_be(1, &[3, 1])),
            ("scorep.spec", b"spec".to_vec()),
            ("anchor.xml", SCOREP_LIKE_ANCHOR.as_bytes().to_vec()),
        ],
    )
    .unwrap();
    assert_eq!(reading.skipped_metrics, ["derived", "tau"]);
    let p = &reading.profile;
    assert_eq!(
        p.attributes,
        [
            ("Creator".to_string(), "Score-P 8.4".to_string()),
            ("CUBE_CT_AGGR".into(), "SUM".into())
        ]
    );
    let names: Vec<&str> = p.metrics.iter().map(|m| m.unique_name.as_str()).collect();
    assert_eq!(names, ["time", "visits"]);
    assert_eq!(p.metrics[0].data_type, DataType::F64);
    assert_eq!(
        p.metrics[1].parent,
        Some(0),
        "visits hangs under time once derived is left out"
    );
    let regions: Vec<&str> = p.regions.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(regions, ["main", "work"]);
    assert_eq!(p.regions[1].canonical_name, "work");
    assert_eq!(
        (p.regions[1].begin_line, p.regions[0].begin_line),
        (Some(5), None)
    );
    // Model cnodes in id order: 0 main, 1 main/work, 2 main/work (line 12), 3 main/work/main.
    let shape: Vec<(usize, Option<usize>, Option<u32>)> = p
        .cnodes
        .iter()
        .map(|c| (c.region, c.parent, c.line))
        .collect();
    assert_eq!(
        shape,
        [
            (0, None, None),
            (1, Some(0), None),
            (1, Some(0), Some(12)),
            (0, Some(1), None)
        ]
    );
    // Columns in document order: ids 0, 2, 1, 3.
    let ids = [0usize, 2, 1, 3];
    for c in 0..4 {
        for (column, &id) in ids.iter().enumerate() {
            assert_eq!(
                p.value(0, c, column),
                Some(time(c, id)),
                "time c{c} l{column}"
            );
        }
    }
    // visits: preorder position 3 is cnode 2, position 1 cnode 1; the others have no row.
    for (column, &id) in ids.iter().enumerate() {
        assert_eq!(p.value(1, 2, column), Some((300 + id) as f64));
        assert_eq!(p.value(1, 1, column), Some((100 + id) as f64));
        assert_eq!(p.value(1, 3, column), Some(0.0));
        assert_eq!(p.value(1, 0, column), Some(0.0));
    }
    let groups: Vec<&str> = p
        .location_groups()
        .iter()
        .map(|g| g.name.as_str())
        .collect();
    assert_eq!(groups, ["MPI Rank 0", "MPI Rank 1"]);
    // A metric without data files reads as zeros.
    let reading = read_members(
        "no-data",
        &[("anchor.xml", SCOREP_LIKE_ANCHOR.as_bytes().to_vec())],
    )
    .unwrap();
    assert!(reading
        .profile
        .values
        .iter()
        .all(|v| (0..v.len()).all(|i| v.get_f64(i) == Some(0.0))));
}

#[test]
fn malformed_metric_files_are_errors() {
    let anchor = ("anchor.xml", SCOREP_LIKE_ANCHOR.as_bytes().to_vec());
    let good_data = data_be(&[3, 1], |_, _| 1);
    let cases: Vec<(&str, Vec<u8>, Vec<u8>)> = vec![
        ("bad marker", b"CUBEX.INDEY".to_vec(), good_data.clone()),
        (
            "no byte order",
            {
                let mut i = index_be(1, &[3, 1]);
                i[11] = 7;
                i
            },
            good_data.clone(),
        ),
        ("unknown format", index_be(2, &[]), good_data.clone()),
        (
            "count too big",
            {
                let mut i = index_be(1, &[3, 1]);
                i[21] = 9;
                i
            },
            good_data.clone(),
        ),
        (
            "position out of range",
            index_be(1, &[4, 1]),
            good_data.clone(),
        ),
        ("position repeated", index_be(1, &[1, 1]), good_data.clone()),
        (
            "truncated header",
            b"CUBEX.INDEX\0\0\0\x01".to_vec(),
            good_data.clone(),
        ),
        (
            "data too short",
            index_be(1, &[3, 1]),
            good_data[..good_data.len() - 1].to_vec(),
        ),
        (
            "data too long",
            index_be(1, &[3, 1]),
            [good_data.clone(), vec![0; 8]].concat(),
        ),
        ("compressed", index_be(1, &[3, 1]), b"ZCUBEX.DATA".to_vec()),
        ("data marker", index_be(1, &[3, 1]), b"CUBEX.DAT".to_vec()),
    ];
    for (what, index, data) in cases {
        let err = read_members(
            "bad-metric",
            &[("2.index", index), ("2.data", data), anchor.clone()],
        )
        .expect_err(what);
        assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{what}: {err}");
    }
    let err = read_members(
        "half-metric",
        &[("2.index", index_be(1, &[3, 1])), anchor.clone()],
    )
    .unwrap_err();
    assert!(err.to_string().contains("only one of"), "{err}");
}

#[test]
fn malformed_anchors_are_errors() {
    let replace = |from: &str, to: &str| SCOREP_LIKE_ANCHOR.replacen(from, to, 1);
    let cases = [
        ("not xml", "hello".to_string()),
        (
            "cube 3",
            replace("<cube version=\"4.7\">", "<cube version=\"3.0\">"),
        ),
        ("other root", "<notcube version=\"4\"/>".to_string()),
        (
            "no program",
            replace("<program>", "<programx>").replace("</program>", "</programx>"),
        ),
        (
            "no system",
            replace("<system>", "<sys>").replace("</system>", "</sys>"),
        ),
        (
            "unknown callee",
            replace("calleeId=\"1\">", "calleeId=\"9\">"),
        ),
        ("missing cnode id", replace("<cnode id=\"2\"", "<cnode")),
        (
            "duplicate cnode id",
            replace("<cnode id=\"3\"", "<cnode id=\"2\""),
        ),
        (
            "duplicate region id",
            replace("<region id=\"1\"", "<region id=\"0\""),
        ),
        (
            "duplicate metric id",
            replace("<metric id=\"0\"", "<metric id=\"1\""),
        ),
        (
            "location id gap",
            replace("<location Id=\"3\">", "<location Id=\"4\">"),
        ),
        (
            "location id repeated",
            replace("<location Id=\"3\">", "<location Id=\"0\">"),
        ),
        (
            "negative rank",
            replace(
                "<rank>1</rank><type>process",
                "<rank>-1</rank><type>process",
            ),
        ),
        (
            "unknown location type",
            replace("<type>thread</type>", "<type>fpga</type>"),
        ),
        (
            "unknown group type",
            replace("<type>process</type>", "<type>team</type>"),
        ),
        (
            "cube3 machine",
            replace("<topologies>", "<machine Id=\"0\"/><topologies>"),
        ),
        ("empty call tree", {
            let start = SCOREP_LIKE_ANCHOR.find("<cnode id=\"0\"").unwrap();
            let end = SCOREP_LIKE_ANCHOR.find("</program>").unwrap();
            format!(
                "{}{}",
                &SCOREP_LIKE_ANCHOR[..start],
                &SCOREP_LIKE_ANCHOR[end..]
            )
        }),
        ("doctype", format!("<!DOCTYPE cube>{SCOREP_LIKE_ANCHOR}")),
    ];
    for (what, anchor) in cases {
        let err =
            read_members("bad-anchor", &[("anchor.xml", anchor.into_bytes())]).expect_err(what);
        assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{what}: {err}");
    }
    let err = read_members("no-anchor", &[("0.data", vec![1])]).unwrap_err();
    assert!(err.to_string().contains("no anchor.xml"), "{err}");
    let err = read_members("gzip-anchor", &[("anchor.xml", vec![0x1f, 0x8b, 8, 0])]).unwrap_err();
    assert!(err.to_string().contains("compressed"), "{err}");
    let err = read_members(
        "latin1-anchor",
        &[("anchor.xml", b"<cube version=\"4\">\xe9</cube>".to_vec())],
    )
    .unwrap_err();
    assert!(err.to_string().contains("UTF-8"), "{err}");
}

#[test]
fn system_trees_deeper_than_the_limit_are_refused() {
    let depth = 300;
    let mut anchor = SCOREP_LIKE_ANCHOR.to_string();
    let open: String = (0..depth)
        .map(|i| {
            format!(
                "<systemtreenode Id=\"{}\"><name>n</name><class>c</class>",
                10 + i
            )
        })
        .collect();
    let close = "</systemtreenode>".repeat(depth);
    anchor = anchor.replacen("<topologies>", &format!("{open}{close}<topologies>"), 1);
    let err = read_members("deep", &[("anchor.xml", anchor.into_bytes())]).unwrap_err();
    assert!(err.to_string().contains("deeper"), "{err}");
}

#[test]
fn truncated_and_corrupted_archives_never_panic() {
    let bytes = sample().to_bytes().unwrap();
    let dir = scratch("corrupt");
    let _ = std::fs::remove_dir_all(dir.join("variants"));
    std::fs::create_dir_all(dir.join("variants")).unwrap();
    // A new file per variant: rewriting one file in place is far slower on some filesystems.
    let mut variant = 0;
    let mut read_variant = |content: &[u8]| {
        variant += 1;
        let path = dir.join("variants").join(variant.to_string());
        std::fs::write(&path, content).unwrap();
        read(&path)
    };
    // Every truncation that cuts into a member is an error.
    let anchor_len = sample().anchor_xml().len();
    let anchor_start = bytes.len() - 1024 - anchor_len.div_ceil(512) * 512;
    for cut in (0..bytes.len())
        .step_by(7)
        .chain([1, 511, 512, 513, anchor_start + 1])
    {
        let result = read_variant(&bytes[..cut]);
        if cut < anchor_start + anchor_len {
            assert!(
                result.is_err(),
                "truncated at {cut} of {} read fine",
                bytes.len()
            );
        }
    }
    // Flipped bytes: an error or a profile, never a panic.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..400 {
        let mut damaged = bytes.clone();
        for _ in 0..3 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let at = (state % damaged.len() as u64) as usize;
            damaged[at] ^= (state >> 32) as u8 | 1;
        }
        let _ = read_variant(&damaged);
    }
    std::fs::remove_dir_all(dir.join("variants")).unwrap();
}

#[test]
fn non_regular_files_and_oversized_archives_are_refused() {
    let dir = scratch("special");
    let err = read(&dir).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    let err = read(Path::new("/dev/zero")).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    assert!(read(&dir.join("does-not-exist")).is_err());

    let path = dir.join("p.cubex");
    sample().write(&path).unwrap();
    let len = std::fs::metadata(&path).unwrap().len();
    let limits = ReadLimits {
        max_file_bytes: len - 1,
        ..ReadLimits::default()
    };
    assert!(read_with(&path, &limits)
        .unwrap_err()
        .to_string()
        .contains("more than"));
    let limits = ReadLimits {
        max_anchor_bytes: 100,
        ..ReadLimits::default()
    };
    assert!(read_with(&path, &limits)
        .unwrap_err()
        .to_string()
        .contains("anchor.xml has"));
    let limits = ReadLimits {
        max_value_bytes: 7 * 4 * 8 * 5 - 1,
        ..ReadLimits::default()
    };
    assert!(read_with(&path, &limits).is_err());
    let limits = ReadLimits {
        max_value_bytes: 7 * 4 * 8 * 5,
        ..ReadLimits::default()
    };
    assert!(read_with(&path, &limits).is_ok());
}

#[test]
fn a_lone_zero_block_between_members_is_cubews_padding_not_the_end() {
    // cubew pads a member of exactly 512 bytes with a whole extra zero block.
    let dir = scratch("padding");
    let path = dir.join("p.cubex");
    let mut tar = TarWriter::new(Vec::new());
    tar.member("scorep.spec", 512, |w| {
        w.extend_from_slice(&[b'x'; 512]);
        w.extend_from_slice(&[0; 512]);
        Ok(())
    })
    .unwrap();
    tar.member("anchor.xml", SCOREP_LIKE_ANCHOR.len() as u64, |w| {
        w.extend_from_slice(SCOREP_LIKE_ANCHOR.as_bytes());
        Ok(())
    })
    .unwrap();
    std::fs::write(&path, tar.finish().unwrap()).unwrap();
    assert_eq!(
        read_with(&path, &ReadLimits::default())
            .unwrap()
            .profile
            .regions
            .len(),
        2
    );
}
