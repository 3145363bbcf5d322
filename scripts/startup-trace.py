#!/usr/bin/env python3
"""startup-trace: where the milliseconds of `dsh-fs exec -- true` go.

Runs a dshtrace build of dsh-fs (go build -tags dshtrace) N times and
prints, as a markdown table, the median and the range of each step between
two marks (internal/shell/trace.go): the supervisor's, then the child's
(the session's PID 1), from before the process is started to after it is
waited for. Benchmark tooling: run by scripts/bench.sh (BENCH_ONLY=trace).

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
    marks = [("start", t0)]
    for line in p.stderr.splitlines():
        f = line.split()
        if len(f) == 4 and f[0] == "dsh-fs-trace":
            who = "child" if f[1] == "1" or f[2].startswith("child") else "supervisor"
            label = f[2] if not (f[2] == "main" and who == "child") else "child-main"
            marks.append((label, int(f[3])))
    marks.append(("waited", t1))
    marks.sort(key=lambda m: m[1])
    return [(f"{a[0]} → {b[0]}", (b[1] - a[1]) / 1e6) for a, b in zip(marks, marks[1:])], (t1 - t0) / 1e6


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
