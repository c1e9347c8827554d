"""The reference reader's (python otf2 module) view of a trace, one tab-separated line per item.

Usage: /usr/bin/python3 tests/support/otf2_view.py ARCHIVE.otf2

Lines:
  CLOCK  <timer_resolution> <global_offset> <trace_length>
  REGION <id> <name> <role> <paradigm> <source file> <begin line> <end line>
  LOCATION <id> <name> <number_of_events> <location type> <location group name>
  METRIC_CLASS <id> <occurrence> <member name:unit:mode, comma-separated>
  COMM <id> <name> <parent id or -> <member location ids, comma-separated>
  EVENT <location id> <time> <kind> <details...>
where details are, per kind: Enter/Leave <region name>; ThreadFork <threads>;
ThreadTeamBegin/End <comm id>; ThreadAcquireLock/ReleaseLock <lock id> <order>;
ThreadTaskCreate/Switch/Complete <comm id> <creating thread> <generation>;
ProgramBegin <name>; ProgramEnd <status>; BufferFlush <stop time>;
Metric <metric class or instance id> <value>...;
MpiSend/MpiRecv <peer rank> <comm id> <tag> <length>; MpiIsend/MpiIrecv the same and <request>;
MpiIsendComplete/MpiIrecvRequest/MpiRequestTest/MpiRequestCancelled/NonBlockingCollectiveRequest
<request>; MpiCollectiveEnd <operation> <comm id> <root> <sent> <received>;
NonBlockingCollectiveComplete the same and <request>; others: nothing.
Events come per location, in file order. Exit status 1 (message on stderr) if reading fails.
"""
import sys

import otf2


def name(enum):
    return str(enum).split(".")[-1]


def ref(x):
    return "-" if x is None else str(x._ref)


def main(path):
    out = []
    with otf2.reader.open(path) as trace:
        d = trace.definitions
        cp = d.clock_properties
        out.append("CLOCK\t%d\t%d\t%d" % (cp.timer_resolution, cp.global_offset, cp.trace_length))
        for r in d.regions:
            out.append("REGION\t%d\t%s\t%s\t%s\t%s\t%d\t%d" % (
                r._ref, r.name, name(r.region_role), name(r.paradigm),
                r.source_file if r.source_file is not None else "-",
                r.begin_line_number, r.end_line_number))
        for l in d.locations:
            out.append("LOCATION\t%d\t%s\t%d\t%s\t%s" % (
                l._ref, l.name, l.number_of_events, name(l.type), l.group.name))
        for m in d.metrics:
            if hasattr(m, "members"):
                out.append("METRIC_CLASS\t%d\t%s\t%s" % (
                    m._ref, name(m.occurrence),
                    ",".join("%s:%s:%s" % (x.name, x.unit, name(x.metric_mode)) for x in m.members)))
        for c in d.comms:
            members = ",".join(str(m._ref) for m in c.group.members) if c.group is not None else ""
            out.append("COMM\t%d\t%s\t%s\t%s" % (c._ref, c.name, ref(c.parent), members))
        per_location = {}
        for location, ev in trace.events:
            kind = type(ev).__name__
            if kind in ("Enter", "Leave"):
                detail = [ev.region.name]
            elif kind == "ThreadFork":
                detail = [ev.number_of_requested_threads]
            elif kind in ("ThreadTeamBegin", "ThreadTeamEnd"):
                detail = [ev.thread_team._ref]
            elif kind in ("ThreadAcquireLock", "ThreadReleaseLock"):
                detail = [ev.lock_id, ev.acquisition_order]
            elif kind in ("ThreadTaskCreate", "ThreadTaskSwitch", "ThreadTaskComplete"):
                detail = [ev.thread_team._ref, ev.creating_thread, ev.generation_number]
            elif kind == "ProgramBegin":
                detail = [ev.program_name]
            elif kind == "ProgramEnd":
                detail = [ev.exit_status]
            elif kind == "BufferFlush":
                detail = [ev.stop_time]
            elif kind == "Metric":
                detail = [ev.metric._ref] + list(ev.values)
            elif kind in ("MpiSend", "MpiIsend"):
                detail = [ev.receiver, ev.communicator._ref, ev.msg_tag, ev.msg_length]
                if kind == "MpiIsend":
                    detail.append(ev.request_id)
            elif kind in ("MpiRecv", "MpiIrecv"):
                detail = [ev.sender, ev.communicator._ref, ev.msg_tag, ev.msg_length]
                if kind == "MpiIrecv":
                    detail.append(ev.request_id)
            elif kind in ("MpiIsendComplete", "MpiIrecvRequest", "MpiRequestTest",
                          "MpiRequestCancelled", "NonBlockingCollectiveRequest"):
                detail = [ev.request_id]
            elif kind == "MpiCollectiveEnd":
                detail = [name(ev.collective_op), ev.communicator._ref, ev.root,
                          ev.size_sent, ev.size_received]
            elif kind == "NonBlockingCollectiveComplete":
                detail = [name(ev.collective_op), ev.communicator._ref, ev.root,
                          ev.size_sent, ev.size_received, ev.request_id]
            else:
                detail = []
            per_location.setdefault(location._ref, []).append(
                "\t".join(["EVENT", str(location._ref), str(ev.time), kind] + [str(x) for x in detail]))
        # The merged stream is ordered by time; keep each location's own order (stable sort).
        for loc in sorted(per_location):
            out.extend(per_location[loc])
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: otf2_view.py ARCHIVE.otf2")
    try:
        main(sys.argv[1])
    except Exception as e:  # the reader's own errors, and anything unexpected
        sys.stderr.write("otf2_view: reading %s failed: %s\n" % (sys.argv[1], e))
        sys.exit(1)
