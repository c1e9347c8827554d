#!/usr/bin/python3
"""otf2_lock_flushes.py -- where the reference reader finds BufferFlush events relative to
the locks each location holds.

Usage: /usr/bin/python3 tests/support/otf2_lock_flushes.py ARCHIVE.otf2

Prints one JSON object: for each location id, {"acquires": <ThreadAcquireLock events>,
"flushes": <BufferFlush events>, "flushes_holding_a_lock": <BufferFlush events between a
ThreadAcquireLock and its ThreadReleaseLock on that location>}.
"""

import json
import sys

import otf2

counts = {}
held = {}
with otf2.reader.open(sys.argv[1]) as trace:
    for location, event in trace.events:
        key = location._ref
        c = counts.setdefault(key, {"acquires": 0, "flushes": 0, "flushes_holding_a_lock": 0})
        if isinstance(event, otf2.events.ThreadAcquireLock):
            c["acquires"] += 1
            held[key] = held.get(key, 0) + 1
        elif isinstance(event, otf2.events.ThreadReleaseLock):
            held[key] = held.get(key, 0) - 1
        elif isinstance(event, otf2.events.BufferFlush):
            c["flushes"] += 1
            if held.get(key, 0) > 0:
                c["flushes_holding_a_lock"] += 1
print(json.dumps(counts, sort_keys=True))
