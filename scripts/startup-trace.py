#!/usr/bin/env python3
"""startup-trace: where the milliseconds of `dsh-fs exec -- true` go.

Runs a dshtrace build of dsh-fs (go build -tags dshtrace) N times and
prints, as a markdown table, the median and the range of each step between
two marks (internal/shell/trace.go): the supervisor's, from before the
process is started to after it is waited for, then the child's (the
session's PID 1), which runs beside the supervisor's planning. Benchmark tooling: run by scripts/bench.sh (BENCH_ONLY=trace).

    startup-trace.py N BIN ARGS...
"""
import statistics
import subprocess
import sys
import time


def run(argv):
    t0 = time.time_ns()
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    t1 = time.time_ns()
    if p.returncode != 0:
        sys.exit(f"startup-trace: {argv}: exit {p.returncode}: {p.stderr}")
    # Three streams of marks: the supervisor's, from before the process
    # is started to after it is waited for; its plan's (plan-*), from
    # network-ready on, planned beside the child's fork and start; and
    # the child's,
    # from the supervisor's start of it (network-ready) to its last
    # layer. The child starts while the supervisor still plans, so each
    # stream's steps are its own; the supervisor's "launched → planned"
    # is its wait for the plan, "record → child-started" its wait for
    # the child.
    sup, plan, child = [("start", t0)], [], []
    for line in p.stderr.splitlines():
        f = line.split()
        if len(f) != 4 or f[0] != "dsh-fs-trace":
            continue
        if f[1] == "1" or f[2].startswith("child-") and f[2] not in ("child-started", "child-ended"):
            child.append(("child-main" if f[2] == "main" else f[2], int(f[3])))
        elif f[2].startswith("plan-"):
            plan.append((f[2], int(f[3])))
        else:
            sup.append((f[2], int(f[3])))
            if f[2] == "network-ready":
                child.append(("network-ready", int(f[3])))
                plan.append(("network-ready", int(f[3])))
    sup.append(("waited", t1))
    segs = []
    for marks, who in ((sup, ""), (plan, "plan: "), (child, "child: ")):
        marks.sort(key=lambda m: m[1])
        segs += [(f"{who}{a[0]} → {b[0]}", (b[1] - a[1]) / 1e6) for a, b in zip(marks, marks[1:])]
    return segs, (t1 - t0) / 1e6


def main():
    n, argv = int(sys.argv[1]), sys.argv[2:]
    run(argv)  # warm-up
    steps, totals = {}, []
    order = []
    for _ in range(n):
        segs, total = run(argv)
        totals.append(total)
        for name, ms in segs:
            if name not in steps:
                order.append(name)
            steps.setdefault(name, []).append(ms)
    print("| step | median ms | min–max ms |")
    print("| --- | ---: | ---: |")
    for name in order:
        v = steps[name]
        print(f"| {name} | {statistics.median(v):.2f} | {min(v):.2f}–{max(v):.2f} |")
    print(f"| **whole call** | **{statistics.median(totals):.2f}** | {min(totals):.2f}–{max(totals):.2f} |")


main()
