#!/usr/bin/python3
"""otf2_region_counts.py -- what the reference reader counts in a trace, for traces too large to
dump event by event (tests/support/otf2_dump.py).

Usage: /usr/bin/python3 tests/support/otf2_region_counts.py ARCHIVE.otf2

Reads ARCHIVE.otf2 with the OTF2 Python bindings (Debian python3-otf2, the system interpreter)
and prints one JSON document:

  {"regions": {<region name>: {"description": str, "role": str, "paradigm": str}},
   "counts": {<location name>: {<region name>: [enters, leaves]}},
   "events": {<location name>: {<event class name>: count}},
   "nesting_errors": [<location name>: <what>, ...],
   "parameter_strings": [[<location name>, <parameter name>, <string>, <time>], ...],
   "parameters": [<parameter name>, ...],
   "location_properties": [[<location name>, <property name>, <value>], ...]}

Nesting: every Leave must close the innermost region its location has open, and nothing may be
open at the end of a location; each violation is one entry of "nesting_errors".
"""

import json
import sys

import otf2


def name_of(value):
    return getattr(value, "name", str(value))


def main(anchor):
    counts = {}
    events = {}
    stacks = {}
    errors = []
    parameter_strings = []
    with otf2.reader.open(anchor) as trace:
        defs = trace.definitions
        regions = {
            r.name: {
                "description": r.description or "",
                "role": name_of(r.region_role),
                "paradigm": name_of(r.paradigm),
            }
            for r in defs.regions
        }
        for location, event in trace.events:
            where = location.name
            kind = type(event).__name__
            per_kind = events.setdefault(where, {})
            per_kind[kind] = per_kind.get(kind, 0) + 1
            if isinstance(event, (otf2.events.Enter, otf2.events.Leave)):
                region = event.region.name
                pair = counts.setdefault(where, {}).setdefault(region, [0, 0])
                stack = stacks.setdefault(where, [])
                if isinstance(event, otf2.events.Enter):
                    pair[0] += 1
                    stack.append(region)
                else:
                    pair[1] += 1
                    if not stack or stack[-1] != region:
                        errors.append("%s: Leave of %s with %s innermost"
                                      % (where, region, stack[-1] if stack else "nothing"))
                    else:
                        stack.pop()
            elif isinstance(event, otf2.events.ParameterString):
                parameter_strings.append(
                    [where, event.parameter.name, event.string, event.time])
        for where, stack in stacks.items():
            if stack:
                errors.append("%s: %s still open at the end" % (where, ", ".join(stack)))
        document = {
            "regions": regions,
            "counts": counts,
            "events": events,
            "nesting_errors": errors,
            "parameter_strings": parameter_strings,
            "parameters": [p.name for p in defs.parameters],
            "location_properties": [
                [p.location.name, p.name, p.value] for p in defs.location_properties
            ],
        }
    json.dump(document, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
