#!/usr/bin/env python3
"""Top frames of JFR execution samples: jfr-top.py [--events E] [--top N] FILE.jfr...

Prints, over all files, the share of samples per self frame (top of stack), per first Skein frame
(dev.skein.*, the broker code that led to the sample) and, for exception or allocation events, per
throwing/allocating site. Uses `jfr print --json` of the JDK that bin/find-jdk finds (JAVA_HOME)."""
import argparse, collections, json, os, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument("--events", default="jdk.ExecutionSample")
ap.add_argument("--top", type=int, default=15)
ap.add_argument("--depth", type=int, default=1, help="frames per self-frame key")
ap.add_argument("--weighted", action="store_true", help="sum the events' weight (allocation bytes)")
ap.add_argument("files", nargs="+")
a = ap.parse_args()
jfr = os.path.join(os.environ.get("JAVA_HOME", ""), "bin", "jfr") if os.environ.get("JAVA_HOME") else "jfr"

def name(f):
    m = f["method"]
    return f'{m["type"]["name"]}.{m["name"]}'.replace("/", ".")

self_c, skein_c, total = collections.Counter(), collections.Counter(), 0
for path in a.files:
    out = subprocess.run([jfr, "print", "--json", "--stack-depth", "64", "--events", a.events, path],
                         check=True, capture_output=True, text=True).stdout
    for ev in json.loads(out)["recording"]["events"]:
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
