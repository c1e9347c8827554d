"""The reference reader's (python `otf2` module) view of a trace with many locations: all its
definitions, and the events of every STEP-th location (and the last one). Reading every
location's events at once would take a buffer of the archive's chunk size per location, more
memory than a test may take with tens of thousands of them.

Usage: /usr/bin/python3 tests/support/otf2_sample.py ARCHIVE.otf2 STEP

Prints "LOCATIONS <count> <sum of number_of_events>", "COMMS <count>", then one line per
location read, "LOCATION <id> <name> <number_of_events> <kinds>", kinds being the event kinds
read from it, in order, comma-separated. Exit status 1 (message on stderr) if reading fails or
a location holds another number of events than its definition says.
"""
import sys

import otf2


def main(path, step):
    with otf2.reader.open(path) as trace:
        d = trace.definitions
        locations = list(d.locations)
        out = ["LOCATIONS\t%d\t%d" % (len(locations), sum(l.number_of_events for l in locations)),
               "COMMS\t%d" % len(d.comms)]
        sample = locations[::step]
        if locations and sample[-1] is not locations[-1]:
            sample.append(locations[-1])
        kinds = {l._ref: [] for l in sample}
        for location, event in trace.events(sample):
            kinds[location._ref].append(type(event).__name__)
        for l in sample:
            if len(kinds[l._ref]) != l.number_of_events:
                sys.stderr.write("location %d (%s): %d events read, %d defined\n"
                                 % (l._ref, l.name, len(kinds[l._ref]), l.number_of_events))
                sys.exit(1)
            out.append("LOCATION\t%d\t%s\t%d\t%s" % (l._ref, l.name, l.number_of_events,
                                                     ",".join(kinds[l._ref])))
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
