#!/usr/bin/env python3
"""Several builds of libpomptrace.so side by side on one prebuilt syncbench program.

For a machine without the toolchain (no cargo, opari2 or compiler: only python3 and the
prebuilt files), or for comparing more builds than `syncbench --against` takes. It runs the
instrumented syncbench program (`syncbench.c` through opari2, linked with `-lpomptrace`) once
per *configuration* in every round: a program, the directory whose `libpomptrace.so` it loads
(`LD_LIBRARY_PATH` comes before the program's runpath) and settings. Within a round the
configurations of one construct and thread count run back to back, in an order rotated (and
every other cycle reversed) from round to round; rounds are outermost, so a time limit leaves
every row with the same rounds. A configuration named `off` (recording off) and one named
`base` are required: each other configuration's row is the median over the rounds of
(its time − base's time) per construct, per event of the program's table (`--list`), ± a robust
standard error (1.4826 × MAD / √rounds); `base+` is base − off, what base's recording adds.

  paired_libraries.py --threads 2,8 --constructs parallel,reduction --seconds 370 \\
      --config off=sb:today:POMPTRACE_ENABLE=0 --config base=sb:c8e4153 \\
      --config today=sb:today --config tpd=sb_tpd:today

Each `--config NAME=PROGRAM:LIBDIR[:VAR=VALUE...]` names paths relative to `--dir` (default:
this script's directory). Build the programs as README.md's manual build does, from
`examples/syncbench/syncbench.c`: `opari2 syncbench.c syncbench.mod.c` (or `opari2 --omp-tpd`),
`cc -O2 -fopenmp -I include -c syncbench.mod.c`, `pomptrace init-regions -o pomp2_init.c
syncbench.o`, then link both objects with `-lpomptrace -lm`. A program instrumented with
`--omp-tpd` needs a library that has `pomp_tpd`. A `gomp/` directory beside the libraries, if
present, is put after them in `LD_LIBRARY_PATH` (the OpenMP runtime the programs were linked
against, for a machine that lacks it). Traces go to a temp directory and are deleted after each
run. Writes `rounds.jsonl` (every round's times) and `table.txt` into `--out`; the table
opens with what decides how chunks are written (the cores, the system's load, the traces' file
system) and, per configuration and thread count, who wrote them in one run of `parallel`
(`POMPTRACE_VERBOSE=2`).
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

OUTER = 10


def parse_config(text):
    name, sep, spec = text.partition("=")
    parts = spec.split(":")
    if not sep or len(parts) < 2 or not name:
        raise argparse.ArgumentTypeError(f"bad configuration `{text}` (NAME=PROGRAM:LIBDIR[:VAR=VALUE...])")
    settings = {}
    for part in parts[2:]:
        var, sep, value = part.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"bad setting `{part}` in `{text}`")
        settings[var] = value
    return name, (parts[0], parts[1], settings)


def robust(values):
    median = statistics.median(values)
    mad = statistics.median([abs(v - median) for v in values])
    return median, 1.4826 * mad / max(1, len(values)) ** 0.5


class Runner:
    def __init__(self, directory, configs, traces):
        self.directory = directory
        self.configs = configs
        self.traces = traces
        gomp = os.path.join(directory, "gomp")
        self.gomp = [gomp] if os.path.isdir(gomp) else []

    def env(self, library, settings, threads):
        env = dict(os.environ)
        env.update(settings)
        env["OMP_NUM_THREADS"] = str(threads)
        env["LD_LIBRARY_PATH"] = ":".join([os.path.join(self.directory, library)] + self.gomp)
        env["POMPTRACE_EXPERIMENT_DIRECTORY"] = os.path.join(self.traces, "trace")
        env["POMPTRACE_VERBOSE"] = "0"
        return env

    def run(self, config, construct, threads, inner, warm_up_ms=30, extra=None):
        program, library, settings = self.configs[config]
        shutil.rmtree(self.traces, ignore_errors=True)
        os.makedirs(self.traces)
        return subprocess.run(
            [os.path.join(self.directory, program), "--only", construct, "--inner", str(inner),
             "--outer", str(OUTER), "--delay", "10", "--warm-up", str(warm_up_ms)],
            env={**self.env(library, settings, threads), **(extra or {})},
            capture_output=True, text=True, timeout=300)

    def time(self, config, construct, threads, inner, warm_up_ms=30):
        """The program's us= for one run (None, with its output shown, if it failed)."""
        run = self.run(config, construct, threads, inner, warm_up_ms)
        found = re.search(r" us=([\d.]+) events=", run.stdout)
        if not found:
            print(f"{config} {construct} {threads} threads failed ({run.returncode}):\n"
                  f"{run.stdout}{run.stderr}", file=sys.stderr, flush=True)
            return None
        return float(found.group(1))

    def writer_census(self, config, construct, threads, inner):
        """Who wrote the chunks in one run of `config`: its POMPTRACE_VERBOSE=2 cost line's
        helper threads (the writer thread and the buffer preparer: 0 where each recording
        thread writes its own chunks, or where every chunk stayed in memory), the times
        recording threads stopped to write a chunk or wait for a buffer, and who wrote the
        chunks that streamed, how (builds since the direct writer)."""
        run = self.run(config, construct, threads, inner, extra={"POMPTRACE_VERBOSE": "2"})
        helpers = re.search(r"(\d+) helper threads started", run.stderr)
        waits = re.search(r"threads waited (\d+) times for a free buffer or to write a chunk "
                          r"\(([\d.]+) ms\)", run.stderr)
        if not helpers or not waits:
            return "no cost line (a build before POMPTRACE_VERBOSE=2's)"
        streamed = re.search(r"; (chunks streamed [^;]*|no chunk streamed);", run.stderr)
        return (f"{helpers.group(1)} helper threads, recording threads stopped "
                f"{waits.group(1)} times ({waits.group(2)} ms)"
                + (f", {streamed.group(1)}" if streamed else ""))

    def constructs(self):
        program, library, _ = self.configs["base"]
        listing = subprocess.run([os.path.join(self.directory, program), "--list"],
                                 env=self.env(library, {}, 1), capture_output=True, text=True,
                                 check=True)
        return [(c, int(e)) for c, e in re.findall(r"construct=(\w+) events=(\d+)", listing.stdout)]


def mount_of(path):
    """The file system type and mount point that hold `path`: the longest mount point of
    /proc/mounts that contains it."""
    path = os.path.realpath(path)
    best = ("?", "")
    try:
        with open("/proc/mounts") as mounts:
            for fields in (line.split() for line in mounts):
                if len(fields) < 3:
                    continue
                point = fields[1]
                inside = path == point or path.startswith(point.rstrip("/") + "/")
                if inside and len(point) > len(best[1]):
                    best = (fields[2], point)
    except OSError:
        pass
    return best[0], best[1] or "?"


def machine_facts(traces):
    """What decides how the runs write their chunks: the cores this process may use against
    the system's, the system's runnable threads, and the traces' file system."""
    def read(path):
        try:
            with open(path) as f:
                return f.read().strip()
        except OSError:
            return "(unreadable)"
    fs, mount = mount_of(traces)
    return "\n".join([
        f"# cores usable {len(os.sched_getaffinity(0))} of {os.cpu_count()} online; "
        f"cgroup cpu.max {read('/sys/fs/cgroup/cpu.max')}",
        f"# /proc/loadavg {read('/proc/loadavg')}",
        f"# traces in {traces}: {fs} mounted at {mount}",
    ])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", action="append", type=parse_config, required=True)
    parser.add_argument("--threads", default="2,4,8,16")
    parser.add_argument("--constructs", help="comma-separated; default: all")
    parser.add_argument("--seconds", type=float, default=380, help="time for the rounds")
    parser.add_argument("--rounds", type=int, default=200, help="at most this many rounds")
    parser.add_argument("--target-ms", type=float, default=60, help="timed part of one run")
    parser.add_argument("--dir", default=os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--out", default=".")
    args = parser.parse_args()
    configs = dict(args.config)
    if "off" not in configs or "base" not in configs:
        parser.error("configurations named `off` and `base` are required")
    threads = [int(t) for t in args.threads.split(",")]
    traces = tempfile.mkdtemp(prefix="paired-libraries-")
    runner = Runner(args.dir, configs, traces)
    constructs = runner.constructs()
    if args.constructs:
        wanted = args.constructs.split(",")
        unknown = set(wanted) - {c for c, _ in constructs}
        if unknown:
            parser.error(f"no construct {', '.join(sorted(unknown))}")
        constructs = [(c, e) for c, e in constructs if c in wanted]
    events = dict(constructs)
    names = [c for c, _ in constructs]

    # The same inner count for every configuration of a row: about --target-ms with recording off.
    inner = {}
    for t in threads:
        for c in names:
            us = runner.time("off", c, t, 500, warm_up_ms=5) or 1.0
            inner[(t, c)] = max(200, min(200_000, int(args.target_ms * 1000 / (OUTER * max(us, 0.01)))))

    facts = [machine_facts(traces)]
    census_construct = "parallel" if "parallel" in names else names[0]
    for t in threads:
        for k in configs:
            if k != "off":
                census = runner.writer_census(k, census_construct, t, inner[(t, census_construct)])
                facts.append(f"# {k}, {census_construct}, {t} threads: {census}")
    print("\n".join(facts), flush=True)

    deadline = time.time() + args.seconds
    keys = list(configs)
    data = {(t, c): {k: [] for k in keys} for t in threads for c in names}
    os.makedirs(args.out, exist_ok=True)
    rounds = 0
    with open(os.path.join(args.out, "rounds.jsonl"), "w") as log:
        while rounds < args.rounds and time.time() < deadline:
            shift = rounds % len(keys)
            order = keys[shift:] + keys[:shift]
            if (rounds // len(keys)) % 2:
                order.reverse()
            for t in threads:
                for c in names:
                    row = {k: runner.time(k, c, t, inner[(t, c)]) for k in order}
                    if None in row.values():
                        continue
                    for k in keys:
                        data[(t, c)][k].append(row[k])
                    log.write(json.dumps({"round": rounds, "threads": t, "construct": c, **row}) + "\n")
                    log.flush()
            rounds += 1
            print(f"round {rounds} done, {deadline - time.time():.0f} s left", flush=True)
    shutil.rmtree(traces, ignore_errors=True)

    others = [k for k in keys if k not in ("off", "base")]
    lines = facts + [f"# {rounds} rounds; off us per construct; base+ = base - off (us); "
             f"X-base: ns per event, median over the rounds +- robust standard error",
             f"{'T':>3} {'construct':13} {'ev':>3} {'off us':>8} {'base+':>8} "
             + " ".join(f"{k + '-base':>17}" for k in others)]
    for t in threads:
        for c in names:
            d = data[(t, c)]
            if not d["off"]:
                continue
            base_added = statistics.median([b - o for b, o in zip(d["base"], d["off"])])
            cells = []
            for k in others:
                median, error = robust([(x - b) * 1000 / events[c] for x, b in zip(d[k], d["base"])])
                cells.append(f"{median:+8.2f} +-{error:6.2f}")
            lines.append(f"{t:>3} {c:13} {events[c]:>3} {statistics.median(d['off']):8.4f} "
                         f"{base_added:8.4f} " + " ".join(cells))
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(args.out, "table.txt"), "w") as table:
        table.write(text + "\n")


if __name__ == "__main__":
    main()
