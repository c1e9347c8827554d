#!/usr/bin/python3
"""otf2_dump.py -- the test suite's view of the reference OTF2 reader.

Usage: /usr/bin/python3 tests/support/otf2_dump.py ARCHIVE.otf2

Reads ARCHIVE.otf2 with the OTF2 3.0 Python bindings (Debian python3-otf2; it
needs the *system* interpreter) and prints ONE JSON document on stdout:

  {"clock": {ClockProperties fields},
   "definitions": [{"kind": <class name>, "ref": <id or null>, <field>: ...}, ...],
   "events": [{"location": <id>, "time": <int>, "kind": <class name>, <field>: ...,
               "attributes": [[<attribute id>, <type name>, <value>], ...]}, ...]}

Nothing is hand-picked: definition fields come from each definition class's
`_fields` (snake_case names as in otf2.definitions), event fields from the
attributes the binding sets on each event object (snake_case as in
otf2.events).  Values are made plain JSON:
  * a reference to another definition -> that definition's numeric id (`_ref`);
    an undefined reference (None) -> null;
  * enums -> their name ("OPENMP"); a bitset without a single name -> names of
    its set bits joined by "|" (plus the leftover bits as a number), e.g.
    "DYNAMIC|PHASE"; an enum value the binding has no name for -> the integer;
  * strings -> str (the binding resolves StringRefs to text everywhere, so e.g.
    ParameterString.string, ProgramBegin.program_name/program_arguments, names
    and descriptions are the *text*, not the string id); undefined string -> null;
  * property definitions (…Property, CallpathParameter): "type" is the type
    name, "value" the plain value (refs -> id, strings -> text);
  * Group.members: what the reader gives, as ids -- for COMM_GROUP the binding
    maps the on-disk ranks through the COMM_LOCATIONS group of the same
    paradigm, so these are *location ids*, not ranks;
  * Metric.values -> [[<value type name>, <value>], ...], the type being the
    metric member's value_type (UINT64/INT64 ints, DOUBLE floats);
  * non-finite floats -> the strings "NaN", "Infinity", "-Infinity".
Definitions are grouped by kind in the reader's registry order (ClockProperties
first); registries mixing kinds (metrics, comms, io files) are split by kind in
order of first appearance.  Events are in the merged (by time) order of
trace.events.  Exit status 1 and a message on stderr if reading fails (stdout
stays empty).  Limits of the binding itself (3.0.2), not of this script: an
event's attributes are kept in a dict keyed by Attribute (a list naming one
attribute twice shows it once); IoParadigm properties are dropped by its
_construct (so they are not dumped); any InterComm definition makes reading fail
(its _fields inherit Comm's, so the arguments are mis-assigned).
"""

import json
import math
import sys

import _otf2
import otf2
from _otf2.Config import EnumBase, EnumBitset
from otf2.attribute_value import AttributeValue
from otf2.definitions import ClockProperties, MetricClass, MetricInstance
from otf2.registry import _Registry

DEF_KEYS = ("kind", "ref")  # keys the dump itself adds; a clashing field gets "field_"
EVENT_KEYS = ("kind", "location", "time", "attributes")


def enum_name(e):
    names = getattr(type(e), "_names", {})
    value = int(e.value)
    if value in names:
        return names[value]
    if isinstance(e, EnumBitset) and value > 0:
        parts, rest = [], value
        for bit_value, name in sorted(names.items()):
            if bit_value > 0 and bit_value & (bit_value - 1) == 0 and rest & bit_value:
                parts.append(name)
                rest &= ~bit_value
        if rest:
            parts.append(str(rest))
        return "|".join(parts)
    return value


def conv(v):
    """Convert a value from the binding to plain JSON data."""
    if v is None:
        return None
    if isinstance(v, EnumBase):
        return enum_name(v)
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return v
    if isinstance(v, str):
        return v
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, AttributeValue):
        return conv(v.value)
    if hasattr(v, "_ref") and hasattr(type(v), "_fields"):  # a referenced definition
        return conv(v._ref)
    if isinstance(v, (list, tuple)):
        return [conv(x) for x in v]
    if hasattr(v, "value") and not callable(v.value):  # bare ctypes scalar
        return conv(v.value)
    raise TypeError("cannot convert {!r} ({})".format(v, type(v).__name__))


def put(out, key, value, reserved):
    out[("field_" + key) if key in reserved else key] = value


def dump_definition(d):
    out = {"kind": type(d).__name__, "ref": conv(getattr(d, "_ref", None))}
    for field in type(d)._fields:
        put(out, field.name, conv(getattr(d, field.name)), DEF_KEYS)
    return out


def dump_definitions(registry):
    result = []
    for value in vars(registry).values():
        if isinstance(value, ClockProperties):
            result.append(dump_definition(value))
        elif isinstance(value, _Registry):
            by_kind = {}  # dicts keep insertion order: kinds in order of first appearance
            for d in value:
                by_kind.setdefault(type(d), []).append(d)
            for defs in by_kind.values():
                result.extend(dump_definition(d) for d in defs)
    return result


def dump_attributes(attributes):
    if not attributes:
        return []
    return [[attr._ref, enum_name(attr.type), conv(val)] for attr, val in attributes.items()]


def dump_event(location, event):
    out = {"location": conv(location._ref), "time": conv(event.time),
           "kind": type(event).__name__, "attributes": dump_attributes(event.attributes)}
    for key, value in vars(event).items():
        if key in ("time", "attributes"):
            continue
        if key == "values" and isinstance(event, otf2.events.Metric) \
                and isinstance(event.metric, (MetricClass, MetricInstance)):
            # The binding decodes metric values with the members' value types.
            put(out, key, [[enum_name(m.value_type), conv(x)]
                           for m, x in zip(event.metric.members, value)], EVENT_KEYS)
        else:
            put(out, key, conv(value), EVENT_KEYS)
    return out


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: {} ARCHIVE.otf2\n".format(argv[0]))
        return 2
    try:
        with otf2.reader.open(argv[1]) as trace:
            clock = trace.definitions.clock_properties
            doc = {
                "clock": {f.name: conv(getattr(clock, f.name)) for f in ClockProperties._fields},
                "definitions": dump_definitions(trace.definitions),
                "events": [dump_event(loc, ev) for loc, ev in trace.events],
            }
        text = json.dumps(doc, sort_keys=True, indent=None, ensure_ascii=False,
                          allow_nan=False)
    except (Exception, _otf2.Error) as exc:  # any failure: message on stderr, nothing on stdout
        sys.stderr.write("otf2_dump: reading {} failed: {}: {}\n"
                         .format(argv[1], type(exc).__name__, exc))
        return 1
    sys.stdout.buffer.write(text.encode("utf-8") + b"\n")
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
