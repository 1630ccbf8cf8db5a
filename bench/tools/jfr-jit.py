#!/usr/bin/env python3
"""The JIT's work in a time window: jfr-jit.py --from T --to T [--top N] FILE.jfr...

T is epoch milliseconds or an ISO time (UTC). Over all files (one per broker), prints the
compilations that started in the window (count and wall time per compiler tier, the longest ones
with their size) and the deoptimizations in it (per method, line and reason): which code a phase
compiled for the first time, and which compiled code it threw away. The recordings need
jdk.Compilation with threshold 0 and jdk.Deoptimization, as BENCH_JFR=1 records them. Uses
`jfr print --json` of the JDK that bin/find-jdk finds (JAVA_HOME)."""
import argparse, collections, datetime, json, os, subprocess


def millis(t):
    if t.isdigit():
        return int(t)
    t = t.rstrip("Z")
    return int(datetime.datetime.fromisoformat(t).replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)


def event_millis(v):
    # JFR prints UTC with nanoseconds ("...T20:13:25.248560903Z"): to the millisecond
    return millis(v["startTime"][:23])


def seconds(d):
    # JFR's JSON durations are ISO-8601 ("PT0.001234S"); "PT0S" for none
    d = d[2:-1] if d.startswith("PT") else d
    if "M" in d:
        m, s = d.split("M")
        return int(m) * 60 + float(s or 0)
    return float(d or 0)


def name(m):
    return f'{m["type"]["name"]}.{m["name"]}'.replace("/", ".")


ap = argparse.ArgumentParser()
ap.add_argument("--from", dest="start", required=True)
ap.add_argument("--to", dest="end", required=True)
ap.add_argument("--top", type=int, default=25)
ap.add_argument("files", nargs="+")
a = ap.parse_args()
start, end = millis(a.start), millis(a.end)
jfr = os.path.join(os.environ["JAVA_HOME"], "bin", "jfr") if os.environ.get("JAVA_HOME") else "jfr"

tiers = collections.defaultdict(lambda: [0, 0.0])  # level -> [count, seconds]
compiles = []  # (seconds, tier, code bytes, inlined bytes, method, node dir)
by_method = collections.defaultdict(lambda: [0, 0.0])
deopts = collections.Counter()
for path in a.files:
    out = subprocess.run([jfr, "print", "--json", "--stack-depth", "1", "--events",
                          "jdk.Compilation,jdk.Deoptimization", path],
                         check=True, capture_output=True, text=True).stdout
    for ev in json.loads(out)["recording"]["events"]:
        v = ev["values"]
        t = event_millis(v)
        if not start <= t < end:
            continue
        if ev["type"] == "jdk.Compilation":
            s = seconds(v["duration"])
            lvl = f'{"C2" if v["compileLevel"] == 4 else "C1"} L{v["compileLevel"]}{" OSR" if v["isOsr"] else ""}'
            tiers[lvl][0] += 1
            tiers[lvl][1] += s
            m = name(v["method"])
            compiles.append((s, lvl, v.get("codeSize", 0), v.get("inlinedBytes", 0), m, os.path.basename(os.path.dirname(path))))
            by_method[m][0] += 1
            by_method[m][1] += s
        else:
            m = name(v["method"])
            deopts[(m, v.get("lineNumber"), v.get("reason"), v.get("action"))] += 1

total = sum(c for c, _ in tiers.values())
print(f"{total} compilations starting in the window, {sum(s for _, s in tiers.values()):.2f} s of compiler wall time")
print("\n| tier | compilations | wall s |\n|---|---:|---:|")
for lvl, (c, s) in sorted(tiers.items()):
    print(f"| {lvl} | {c} | {s:.2f} |")
print(f"\n| wall s | tier | code bytes | inlined bytes | method | file |\n|---:|---|---:|---:|---|---|")
for s, lvl, size, inl, m, f in sorted(compiles, reverse=True)[:a.top]:
    print(f"| {s:.3f} | {lvl} | {size} | {inl} | {m} | {f} |")
print(f"\n| compilations | wall s | method (all tiers, all files) |\n|---:|---:|---|")
for m, (c, s) in sorted(by_method.items(), key=lambda kv: -kv[1][1])[:a.top]:
    print(f"| {c} | {s:.3f} | {m} |")
print(f"\n{sum(deopts.values())} deoptimizations in the window")
print("\n| count | method | line | reason | action |\n|---:|---|---:|---|---|")
for (m, line, reason, action), c in deopts.most_common(a.top):
    print(f"| {c} | {m} | {line} | {reason} | {action} |")
