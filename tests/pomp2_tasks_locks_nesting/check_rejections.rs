//! The checks themselves must reject broken traces.

use super::*;

/// Reads the trace again, breaks it with `mutate`, and requires `analyse` to reject it with a
/// message containing one of `expect`.
pub(crate) fn must_reject(
    r: &Traced,
    untied: bool,
    expect: &[&str],
    mutate: impl FnOnce(&mut View),
) {
    let mut view = View::read(&r.anchor);
    mutate(&mut view);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| analyse(&view, untied)));
    let Err(e) = result else {
        panic!(
            "{}: a trace broken for {expect:?} passed the checks",
            r.label
        );
    };
    let message = e
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(
        expect.iter().any(|x| message.contains(x)),
        "{}: rejected for another reason than {expect:?}: {message}",
        r.label
    );
}

/// (location id, index) of the events of `kind` matching `pick`.
pub(crate) fn find(
    view: &View,
    kind: &str,
    pick: impl Fn(&[Ev], usize) -> bool,
) -> Vec<(u64, usize)> {
    let mut found = Vec::new();
    for (loc, events) in &view.events {
        for (i, e) in events.iter().enumerate() {
            if e.kind == kind && pick(events, i) {
                found.push((*loc, i));
            }
        }
    }
    found
}

pub(crate) fn remove(view: &mut View, (loc, i): (u64, usize)) {
    view.events.get_mut(&loc).unwrap().remove(i);
    view.locations.get_mut(&loc).unwrap().1 -= 1;
}

pub(crate) fn event(view: &mut View, (loc, i): (u64, usize)) -> &mut Ev {
    &mut view.events.get_mut(&loc).unwrap()[i]
}

#[test]
fn the_checks_reject_broken_traces() {
    let p = Program::build("task_if0", &[]);
    let r = p.run(2, &[], false);
    let is_begin = |ev: &[Ev], i: usize| ev.get(i + 1).is_some_and(|n| n.kind == "Enter");
    let is_restore = |ev: &[Ev], i: usize| ev.get(i + 1).is_some_and(|n| n.kind == "Leave");
    // A switch back to an implicit task that names another location.
    must_reject(&r, false, &["names another location"], |v| {
        let at = find(v, "ThreadTaskSwitch", |ev, i| ev[i].detail[2] == "0")[0];
        event(v, at).detail[1] = "7".into();
    });
    // A task that never completes.
    must_reject(&r, false, &["never completed"], |v| {
        let at = find(v, "ThreadTaskComplete", |_, _| true)[0];
        remove(v, at);
    });
    // A task that begins without having been created.
    must_reject(
        &r,
        false,
        &["begins, but is None", "completes another task"],
        |v| {
            let at = find(v, "ThreadTaskSwitch", is_begin)[0];
            event(v, at).detail[2] = "999".into();
        },
    );
    // A task record with another team than the location's.
    must_reject(&r, false, &["another Comm"], |v| {
        let at = find(v, "ThreadTaskCreate", |_, _| true)[0];
        event(v, at).detail[0] = "0".into();
    });
    // A resume of another task than the one waiting in the scheduling point.
    must_reject(&r, false, &["resumes another task"], |v| {
        let at = find(v, "ThreadTaskSwitch", |ev, i| is_restore(ev, i))[0];
        let other = find(v, "ThreadTaskCreate", |_, _| true)[0];
        let detail = v.events[&other.0][other.1].detail.clone();
        let loc_number = v.locations.keys().position(|l| *l == at.0).unwrap();
        let e = event(v, at);
        if e.detail[2] == "0" {
            e.detail = detail;
        } else {
            e.detail[1] = loc_number.to_string();
            e.detail[2] = "0".into();
        }
    });
    // Events recorded on a completed task (between its completion and the switch back).
    must_reject(&r, false, &["Enter without a current task"], |v| {
        let (loc, i) = find(v, "ThreadTaskComplete", |ev, i| {
            ev.get(i + 1).is_some_and(|n| n.kind == "ThreadTaskSwitch")
        })[0];
        let events = v.events.get_mut(&loc).unwrap();
        let leave = events[i - 1].clone();
        let enter = Ev {
            kind: "Enter".into(),
            ..leave.clone()
        };
        let time = events[i].time;
        for (k, mut e) in [enter, leave].into_iter().enumerate() {
            e.time = time;
            events.insert(i + 1 + k, e);
        }
        v.locations.get_mut(&loc).unwrap().1 += 2;
    });

    let p = Program::build("lock_nest_test", &[]);
    let r = p.run(2, &[], false);
    let in_region = |name: &'static str| {
        move |ev: &[Ev], i: usize| {
            ev[..i]
                .iter()
                .rev()
                .find(|e| e.kind == "Enter")
                .is_some_and(|e| e.detail[0] == name)
        }
    };
    // An acquisition order that skips one.
    must_reject(&r, false, &["acquisition order", "release of order"], |v| {
        let at = find(v, "ThreadAcquireLock", in_region("omp_set_lock"))[0];
        let e = event(v, at);
        e.detail[1] = (e.detail[1].parse::<u64>().unwrap() + 1).to_string();
    });
    // A release that is missing.
    must_reject(&r, false, &["inside omp_unset_lock"], |v| {
        let at = find(v, "ThreadReleaseLock", in_region("omp_unset_lock"))[0];
        remove(v, at);
    });
    // A failed test that acquires.
    must_reject(&r, false, &["while held by"], |v| {
        let failed = find(v, "Leave", |ev, i| {
            ev[i].detail[0] == "omp_test_lock" && ev[i - 1].kind == "Enter"
        })[0];
        let acquire = find(v, "ThreadAcquireLock", in_region("omp_set_lock"))[0];
        let mut copy = v.events[&acquire.0][acquire.1].clone();
        copy.time = v.events[&failed.0][failed.1].time;
        v.events.get_mut(&failed.0).unwrap().insert(failed.1, copy);
        v.locations.get_mut(&failed.0).unwrap().1 += 1;
    });

    let p = Program::build("nested_2x3", &[]);
    let r = p.run(2, &[("OMP_MAX_ACTIVE_LEVELS", "2")], false);
    let outer = r.used_comm(&["Master thread", "OMP thread 1"], None);
    let inner0 = r.location_id("OMP thread 0:1");
    // A location in a team it is not a member of.
    must_reject(&r, false, &["not a member"], |v| {
        let events = v.events.get_mut(&inner0).unwrap();
        events[0].detail[0] = outer.to_string();
    });
    // A nested team whose Comm has no parent.
    must_reject(&r, false, &["parent Comm"], |v| {
        let c = v.events[&inner0][0].detail[0].parse::<u32>().unwrap();
        v.comms.get_mut(&c).unwrap().parent = None;
    });
    // Two logical threads mixed on one location: a worker's team begins inside another team.
    must_reject(&r, false, &["while in another one", "not a member"], |v| {
        let thread1 = r.location_id("OMP thread 1");
        let moved: Vec<Ev> = v.events.get_mut(&inner0).unwrap().drain(..).collect();
        v.locations.get_mut(&inner0).unwrap().1 = 0;
        let events = v.events.get_mut(&thread1).unwrap();
        let at = events.iter().position(|e| e.kind == "Enter").unwrap() + 1;
        let n = moved.len();
        for (k, mut e) in moved.into_iter().enumerate() {
            e.time = events[at - 1].time;
            events.insert(at + k, e);
        }
        v.locations.get_mut(&thread1).unwrap().1 += n as u64;
    });
}
