#!/usr/bin/env python3
"""Heap allocation of brokers in one measured phase: jfr-alloc.py [--top N] PHASES.LOG PHASE FILE.jfr...

Reads each broker's JFR recording (bench/run with BENCH_JFR=1, which samples every thread's
allocation counter each second) and prints, per file, the bytes its threads allocated between the
phase's start and end in PHASES.LOG (bench/run writes "<UTC time> start|end <phase>" lines into each
run directory), split by thread kind (thread names with their numbers taken out), and the sites that
allocated most in the window by first Skein frame (jdk.ObjectAllocationSample weights). A thread's
allocation in the window is its counter's last sample before the end minus its last sample before the
start (0 if it had none yet), so a window is measured to the sampling period (1 s) at each edge.
Uses `jfr print --json` of the JDK that bin/find-jdk finds (JAVA_HOME)."""
import argparse, collections, datetime, json, os, re, subprocess

ap = argparse.ArgumentParser()
ap.add_argument("--top", type=int, default=12)
ap.add_argument("phases")
ap.add_argument("phase")
ap.add_argument("files", nargs="+")
a = ap.parse_args()
jfr = os.path.join(os.environ["JAVA_HOME"], "bin", "jfr") if os.environ.get("JAVA_HOME") else "jfr"


def ts(text):
    """Seconds since the epoch of an ISO time, UTC when it names no zone; JFR's nanoseconds cut to micro."""
    text = re.sub(r"(\.\d{6})\d+", r"\1", text.replace("Z", "+00:00"))
    t = datetime.datetime.fromisoformat(text)
    if t.tzinfo is None:
        t = t.replace(tzinfo=datetime.timezone.utc)
    return t.timestamp()


window = {}
for line in open(a.phases):
    parts = line.split()
    if len(parts) == 3 and parts[2] == a.phase:
        window[parts[1]] = ts(parts[0])
if "start" not in window or "end" not in window:
    raise SystemExit(f"jfr-alloc: no start and end of phase {a.phase} in {a.phases}")
start, end = window["start"], window["end"]


def events(path, kind):
    out = subprocess.run([jfr, "print", "--json", "--stack-depth", "64", "--events", kind, path],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["recording"]["events"]


def frame(f):
    m = f["method"]
    return f'{m["type"]["name"]}.{m["name"]}'.replace("/", ".")


print(f"phase {a.phase}: {end - start:.1f} s")
for path in a.files:
    before, last, names = {}, {}, {}
    for ev in events(path, "jdk.ThreadAllocationStatistics"):
        v = ev["values"]
        t = ts(v["startTime"])
        tid = v["thread"]["javaThreadId"] if v.get("thread") else None
        if tid is None or t > end:
            continue
        names[tid] = re.sub(r"\d+", "N", v["thread"].get("javaName") or v["thread"].get("osName") or "?")
        if t <= start:
            before[tid] = v["allocated"]
        last[tid] = v["allocated"]
    by_kind = collections.Counter()
    for tid, value in last.items():
        by_kind[names[tid]] += value - before.get(tid, 0)
    total = sum(by_kind.values())
    print(f"\n{path}: {total / 1e6:.1f} MB allocated in the window")
    print("\n| MB | thread |\n|---:|---|")
    for k, v in by_kind.most_common(a.top):
        print(f"| {v / 1e6:.1f} | {k} |")
    sites, sampled = collections.Counter(), 0
    for ev in events(path, "jdk.ObjectAllocationSample"):
        v = ev["values"]
        if not start <= ts(v["startTime"]) <= end or not v.get("stackTrace"):
            continue
        frames = [frame(f) for f in v["stackTrace"]["frames"]]
        site = next((f for f in frames if f.startswith("dev.skein.") and "$$Lambda" not in f), None)
        key = f"{frames[0]} in {site}" if site else f"{frames[0]} <- {frames[1] if len(frames) > 1 else ''}"
        sites[key] += v["weight"]
        sampled += v["weight"]
    print(f"\n{sampled / 1e6:.1f} MB by jdk.ObjectAllocationSample weights in the window")
    print(f"\n| % of sampled | allocating frame in first Skein frame |\n|---:|---|")
    for k, v in sites.most_common(a.top):
        print(f"| {100.0 * v / max(1, sampled):.1f} | `{k}` |")
