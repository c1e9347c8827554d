"""Checks a run's profile (CUBE4, read by pycubexr) against its trace (read by the python otf2
module): for every call path and every location, the profile's visits must equal the number of
Enters the trace has on that call path, and its time the sum of the trace's inclusive times
(Leave - Enter, in seconds of the trace's clock: exactly, as the same integer sum over the same
resolution; a rank other than 0 of an MPI job to a part in 10^6, see
same_up_to_calibration).

Usage: /usr/bin/python3 tests/support/profile_check.py [--metric NAME] [TRACE.otf2] PROFILE.cubex

Without a trace, only the profile is read (and printed); with --metric, each line of the table
ends with that metric's value.

Call paths are rebuilt from the trace independently of the runtime, by the rules the profile
documents (src/record/profile.rs):
  - a location's regions nest as its Enter/Leave records do; every path starts at the
    program's root, which the initial location visits once, from ProgramBegin to ProgramEnd;
  - a team member other than thread 0 (the first member of the team's group) starts, at its
    k-th ThreadTeamBegin of a team, under the call path the team's thread 0 was in at its own
    k-th ThreadTeamBegin of that team;
  - the Enter of a task region (role TASK or TASK_UNTIED) begins a task: the task's path starts
    under the call path of the implicit task of the innermost team (the task the location ran
    at its last ThreadTeamBegin), and a task running above it is suspended until this one's
    region is left; a suspended task's time does not count;
  - a call path a location did not visit itself but that leads to paths it did gets the sums of
    its children (zero visits);
  - a trace without ProgramEnd (a killed run, recovered) counts the program's root up to the
    latest Enter, Leave or team event of any location, and each location's regions still open
    are left, innermost first, at that location's own last such event (a visit that began
    counts).
A profile measures each process in its own clock, so the trace's events are read in the same
one: location by location with libotf2's local event readers told not to apply the clock offsets
of an MPI job's ranks (the global event reader always applies them, to line every rank up with
rank 0: a drift of a few parts in 10^7).
Prints the profile, one line per call path and location with visits or time:
  PATH <tab> <location group> <tab> <location> <tab> <visits> <tab> <seconds> <tab> <regions, / between>
and `checked N call paths on M locations`, and exits 0; or lists the differences and exits 1.
"""
import os
import sys
from collections import defaultdict

import _otf2
import otf2
from pycubexr import CubexParser

TASK_ROLES = ("TASK", "TASK_UNTIED")


def role_name(region):
    return str(region.region_role).split(".")[-1]


def events_in_own_clock(trace):
    """{location ref: [(kind, time, argument)]} in file order, in each process's own clock;
    the argument is a region (Enter, Leave), a comm ref (ThreadTeamBegin, ThreadTeamEnd), the
    program name (ProgramBegin) or None."""
    d = trace.definitions
    handle = trace._handle
    locations = [l for l in d.locations]
    for location in locations:
        _otf2.Reader_SelectLocation(handle, location._ref)
    try:
        _otf2.Reader_OpenDefFiles(handle)
        for location in locations:
            def_reader = _otf2.Reader_GetDefReader(handle, location._ref)
            if def_reader:
                _otf2.Reader_ReadAllLocalDefinitions(handle, def_reader)
                _otf2.Reader_CloseDefReader(handle, def_reader)
        _otf2.Reader_CloseDefFiles(handle)
    except _otf2.Error:
        pass
    _otf2.Reader_OpenEvtFiles(handle)
    regions = {r._ref: r for r in d.regions}
    strings = {s._ref: s for s in d.strings}
    out = {}
    # The bindings tie each C function pointer to its python function: keep them alive.
    alive = []
    for location in locations:
        records = out.setdefault(location._ref, [])
        reader = _otf2.Reader_GetEvtReader(handle, location._ref)
        _otf2.EvtReader_ApplyClockOffsets(reader, False)
        callbacks = _otf2.EvtReaderCallbacks_New()

        def keep(kind, convert):
            def callback(_location, time, _position, _user, _attributes, *args):
                records.append((kind, time, convert(*args)))
            alive.append(callback)
            return callback

        _otf2.EvtReaderCallbacks_SetEnterCallback(
            callbacks, keep("Enter", lambda r: regions[r]))
        _otf2.EvtReaderCallbacks_SetLeaveCallback(
            callbacks, keep("Leave", lambda r: regions[r]))
        _otf2.EvtReaderCallbacks_SetThreadTeamBeginCallback(
            callbacks, keep("ThreadTeamBegin", lambda c: c))
        _otf2.EvtReaderCallbacks_SetThreadTeamEndCallback(
            callbacks, keep("ThreadTeamEnd", lambda c: c))
        _otf2.EvtReaderCallbacks_SetProgramBeginCallback(
            callbacks, keep("ProgramBegin", lambda name, *_: strings[name].name))
        _otf2.EvtReaderCallbacks_SetProgramEndCallback(
            callbacks, keep("ProgramEnd", lambda *_: None))
        _otf2.Reader_RegisterEvtCallbacks(handle, reader, callbacks, None)
        _otf2.EvtReaderCallbacks_Delete(callbacks)
        while _otf2.EvtReader_ReadEvents(reader, 1 << 20) == 1 << 20:
            pass
        _otf2.Reader_CloseEvtReader(handle, reader)
    _otf2.Reader_CloseEvtFiles(handle)
    return out


def trace_stats(anchor):
    """{(group name, location name): {path (tuple of region names, program root first):
    [visits, ticks]}}, the timer resolution, and the program's name."""
    with otf2.reader.open(anchor) as trace:
        d = trace.definitions
        resolution = d.clock_properties.timer_resolution
        events = events_in_own_clock(trace)
        names = {l._ref: (l.group.name, l.name) for l in d.locations}
        masters = {}
        for c in d.comms:
            if c.group is not None and len(c.group.members) > 0:
                masters[c._ref] = c.group.members[0]._ref
        program = None
        for evs in events.values():
            for kind, _, name in evs:
                if kind == "ProgramBegin":
                    program = name.split("/")[-1]
        if program is None:
            # A run killed before its first chunk of the initial thread reached the disk: the
            # program is named in the experiment's pomptrace.cfg.
            cfg = os.path.join(os.path.dirname(os.path.abspath(anchor)), "pomptrace.cfg")
            with open(cfg) as f:
                for line in f:
                    if line.startswith("# program: "):
                        program = line[len("# program: "):].rstrip("\n").split("/")[-1]
        # Thread 0 of every team a location is a member of goes first.
        depends = {
            l: {masters[team] for kind, _, team in evs
                if kind == "ThreadTeamBegin" and masters.get(team, l) != l}
            for l, evs in events.items()
        }
        order, done = [], set()

        def visit(l, stack):
            if l in done or l in stack:
                return
            stack.add(l)
            for m in sorted(depends.get(l, ())):
                visit(m, stack)
            done.add(l)
            order.append(l)

        for l in sorted(events):
            visit(l, set())
        fork_paths = {}
        result = {}
        root = (program,)
        latest = max((t for evs in events.values() for kind, t, _ in evs
                      if kind not in ("ProgramBegin", "ProgramEnd")), default=0)
        ended = any(kind == "ProgramEnd" for evs in events.values() for kind, _, _ in evs)
        for l in order:
            stats = defaultdict(lambda: [0, 0])
            instances = defaultdict(int)
            segments = [{"start": 0, "current": root, "offset": 0, "suspended": 0}]
            bases = [0]
            frames = []
            last = 0

            def leave(t):
                path, start, restore = frames.pop()
                segment = segments[-1]
                segment["current"] = restore
                stats[path][0] += 1
                stats[path][1] += (t - segment["offset"]) - start
                if len(segments) > 1 and len(frames) == segment["start"]:
                    segments.pop()
                    base = min(bases[-1], len(segments) - 1)
                    if len(segments) - 1 > base:
                        segments[-1]["offset"] += t - segments[-1]["suspended"]

            for kind, t, argument in events[l]:
                if kind == "ProgramBegin":
                    program_begin = t
                    if not ended:
                        stats[root][0] += 1
                        stats[root][1] += latest - t
                elif kind == "ProgramEnd":
                    stats[root][0] += 1
                    stats[root][1] += t - program_begin
                elif kind == "ThreadTeamBegin":
                    team = argument
                    k = instances[team]
                    instances[team] += 1
                    if masters.get(team, l) == l:
                        fork_paths[(team, k)] = segments[-1]["current"]
                    elif not frames and len(segments) == 1:
                        segments[0]["current"] = fork_paths.get((team, k), root)
                    bases.append(len(segments) - 1)
                elif kind == "ThreadTeamEnd":
                    if len(bases) > 1:
                        bases.pop()
                elif kind == "Enter":
                    if role_name(argument) in TASK_ROLES:
                        base = min(bases[-1], len(segments) - 1)
                        if len(segments) - 1 > base:
                            segments[-1]["suspended"] = t
                        segments.append({"start": len(frames),
                                         "current": segments[base]["current"],
                                         "offset": 0, "suspended": 0})
                    segment = segments[-1]
                    path = segment["current"] + (argument.name,)
                    frames.append((path, t - segment["offset"], segment["current"]))
                    segment["current"] = path
                elif kind == "Leave":
                    leave(t)
                if kind not in ("ProgramBegin", "ProgramEnd"):
                    last = t
            if frames and ended:
                raise SystemExit("location %s ends with regions open: %s" % (names[l], frames))
            while frames:
                leave(last)
            # Paths leading to visited ones take their children's sums.
            measured = set(stats)
            pending = sorted(stats, key=len, reverse=True)
            while pending:
                path = pending.pop(0)
                parent = path[:-1]
                if not parent or parent in measured:
                    continue
                new = parent not in stats
                stats[parent][1] += stats[path][1]
                if new:
                    pending.append(parent)
                    pending.sort(key=len, reverse=True)
            result[names[l]] = dict(stats)
        return result, resolution, program


def profile_stats(path, metric=None):
    """{(group name, location name): {path: [visits, seconds(, metric)]}} from the profile."""
    result = {}
    with CubexParser(path) as cube:
        visits = cube.get_metric_values(cube.get_metric_by_name("visits"))
        time = cube.get_metric_values(cube.get_metric_by_name("time"))
        extra = None
        if metric is not None:
            extra = cube.get_metric_values(cube.get_metric_by_name(metric))
        columns = []
        for group in cube._anchor_result.system_tree_nodes[0].all_location_groups():
            for location in group._locations:
                columns.append((location.id, (group.name, location.name)))
        roots = cube.get_root_cnodes()
        stack = [(root, (cube.get_region(root).name,)) for root in roots]
        while stack:
            cnode, path = stack.pop()
            v = visits.cnode_values(cnode)
            s = time.cnode_values(cnode)
            m = extra.cnode_values(cnode) if extra is not None else None
            for column, key in columns:
                if v[column] != 0 or s[column] != 0.0:
                    row = [int(v[column]), float(s[column])]
                    if m is not None:
                        row.append(int(m[column]))
                    result.setdefault(key, {})[path] = row
            for child in cnode.get_children():
                stack.append((child, path + (cube.get_region(child).name,)))
    return result


def same_up_to_calibration(location, want, have):
    """Whether a rank other than 0 of an MPI job has the trace's visits and its time to a
    part in 10^6: each rank calibrated the same clock (the node's TSC) itself, and measures
    its profile by its own figure, while the unified trace has one timer resolution, rank 0's
    (two calibrations of one TSC differ by parts in 10^8)."""
    group = location[0]
    if not group.startswith("MPI Rank ") or group == "MPI Rank 0":
        return False
    return want[0] == have[0] and abs(want[1] - have[1]) <= 1e-6 * max(abs(want[1]), 1e-9)


def main(anchor, cubex, metric=None):
    profile = profile_stats(cubex, metric)
    for location in sorted(profile):
        for path, row in sorted(profile[location].items()):
            print("PATH\t%s\t%s\t%d\t%r\t%s%s" % (
                location[0], location[1], row[0], row[1], " / ".join(path),
                "".join("\t%d" % x for x in row[2:])))
        profile[location] = {path: row[:2] for path, row in profile[location].items()}
    if anchor is None:
        return
    trace, resolution, program = trace_stats(anchor)
    problems = []
    paths = set()
    for location in sorted(set(trace) | set(profile)):
        expected = trace.get(location, {})
        got = profile.get(location, {})
        for path in sorted(set(expected) | set(got)):
            paths.add(path)
            visits, ticks = expected.get(path, [0, 0])
            want = [visits, ticks / resolution]
            have = got.get(path, [0, 0.0])
            if want != have and not same_up_to_calibration(location, want, have):
                problems.append("%s %s: trace %s, profile %s" % (
                    location, " / ".join(path), want, have))
    if problems:
        sys.stdout.write("\n".join(problems[:50]) + "\n")
        sys.exit("%d differences" % len(problems))
    print("checked %d call paths on %d locations" % (len(paths), len(trace)))


if __name__ == "__main__":
    args = sys.argv[1:]
    metric = None
    if args[:1] == ["--metric"] and len(args) >= 2:
        metric = args[1]
        args = args[2:]
    if len(args) == 1:
        main(None, args[0], metric)
    elif len(args) == 2:
        main(args[0], args[1], metric)
    else:
        sys.exit("usage: profile_check.py [--metric NAME] [TRACE.otf2] PROFILE.cubex")
