#!/usr/bin/env python3
"""Top frames of JFR execution samples: jfr-top.py [--events E] [--top N] [--from T --to T] FILE.jfr...

Prints, over all files, the share of samples per self frame (top of stack), per first Skein frame
(dev.skein.*, the broker code that led to the sample) and, for exception or allocation events, per
throwing/allocating site. --from and --to (epoch ms or ISO time, UTC) keep the events that started
in that window, e.g. one measured phase of bench/run (its phases.log). Uses `jfr print --json` of the JDK that bin/find-jdk finds (JAVA_HOME)."""
import argparse, collections, datetime, json, os, subprocess, sys


def millis(t):
    if t.isdigit():
        return int(t)
    t = t.rstrip("Z")
    return int(datetime.datetime.fromisoformat(t).replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)


ap = argparse.ArgumentParser()
ap.add_argument("--events", default="jdk.ExecutionSample")
ap.add_argument("--top", type=int, default=15)
ap.add_argument("--depth", type=int, default=1, help="frames per self-frame key")
ap.add_argument("--weighted", action="store_true", help="sum the events' weight (allocation bytes)")
ap.add_argument("--from", dest="start", help="keep events from this time (epoch ms or ISO, UTC)")
ap.add_argument("--to", dest="end", help="keep events up to this time")
ap.add_argument("files", nargs="+")
a = ap.parse_args()
start = millis(a.start) if a.start else None
end = millis(a.end) if a.end else None
jfr = os.path.join(os.environ.get("JAVA_HOME", ""), "bin", "jfr") if os.environ.get("JAVA_HOME") else "jfr"

def name(f):
    m = f["method"]
    return f'{m["type"]["name"]}.{m["name"]}'.replace("/", ".")

self_c, skein_c, total = collections.Counter(), collections.Counter(), 0
for path in a.files:
    out = subprocess.run([jfr, "print", "--json", "--stack-depth", "64", "--events", a.events, path],
                         check=True, capture_output=True, text=True).stdout
    for ev in json.loads(out)["recording"]["events"]:
        if start is not None or end is not None:
            # JFR prints UTC with nanoseconds ("...T20:13:25.248560903Z"): to the millisecond
            t = millis(ev["values"]["startTime"][:23])
            if (start is not None and t < start) or (end is not None and t > end):
                continue
        st = ev["values"].get("stackTrace")
        if not st or not st["frames"]:
            continue
        frames = st["frames"]
        w = ev["values"].get("weight", 1) if a.weighted else 1
        total += w
        self_c[" <- ".join(name(f) for f in frames[:a.depth])] += w
        sk = next((name(f) for f in frames if name(f).startswith("dev.skein.") and "$$Lambda" not in name(f)),
                  "(no Skein frame)")
        skein_c[sk] += w
print(f"{total} {'bytes of ' if a.weighted else ''}{a.events} events in {len(a.files)} file(s)")
for title, c in (("self frame", self_c), ("first Skein frame", skein_c)):
    print(f"\n| % | {title} |\n|---:|---|")
    for k, v in c.most_common(a.top):
        print(f"| {100.0 * v / total:.1f} | `{k}` |")
