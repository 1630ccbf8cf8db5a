#!/usr/bin/env python3
"""Where the machine's CPU went: perf-top.py [--top N] < `perf script -F pid,tid,comm,ip,sym,dso` output.

Reads whole-machine samples (`perf record -a -g`, see BENCH_PERF in bench/run) and prints, as
Markdown: the share of samples per process (named by its role: a Skein or Kafka broker, the producer
client, ...), per thread group within the brokers (thread names without their numbers), and the
hottest self frames of the brokers, split into user and kernel, with the first user frame under each
kernel frame (which call went into the kernel). JIT-compiled Java frames resolve only while the
JVMs' /tmp/perf-<pid>.map files exist (-XX:+DumpPerfMapAtExit)."""
import argparse, collections, re, sys

ap = argparse.ArgumentParser()
ap.add_argument("--top", type=int, default=25)
a = ap.parse_args()

HEADER = re.compile(r"^\s*(.+?)\s+(\d+)/(\d+)\s*$")
FRAME = re.compile(r"^\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$")

samples = []  # (pid, comm, frames[(sym, dso)] innermost first)
cur = None
for line in sys.stdin:
    line = line.rstrip("\n")
    if not line.strip():
        if cur:
            samples.append(cur)
        cur = None
        continue
    if cur is None:
        m = HEADER.match(line)
        if m:
            cur = (int(m.group(2)), m.group(1), [])
        continue
    m = FRAME.match(line)
    if m:
        sym = re.sub(r"\+0x[0-9a-f]+$", "", m.group(1))
        cur[2].append((sym, m.group(2)))
if cur:
    samples.append(cur)
if not samples:
    print("no samples")
    sys.exit(0)

def group(comm):
    return re.sub(r"[-_ ]?\d+$", "", comm).rstrip("-") or comm

threads = collections.defaultdict(set)
for pid, comm, _ in samples:
    threads[pid].add(comm)

def role(pid):
    names = " ".join(threads[pid])
    if "skein-" in names:
        return "Skein broker"
    if "kafka-producer" in names:
        return "producer client"
    if "kafka-consumer" in names or "consumer" in names:
        return "consumer client"
    if any(k in names for k in ("data-plane", "kafka-request", "KafkaRaft", "ReplicaFetcher", "kafka-scheduler")):
        return "Kafka broker"
    return sorted(threads[pid])[0] if len(threads[pid]) == 1 else "other JVM"

total = len(samples)
def pct(n):
    return f"{100.0 * n / total:.1f}"

print(f"{total} samples over all CPUs\n")
print("| % | process |\n|---:|---|")
by_proc = collections.Counter((role(pid), pid) for pid, _, _ in samples)
for (r, pid), n in by_proc.most_common(a.top):
    print(f"| {pct(n)} | {r} (pid {pid}) |")

broker = [s for s in samples if role(s[0]) in ("Skein broker", "Kafka broker")]
print("\n| % | broker thread group (all brokers) |\n|---:|---|")
for g, n in collections.Counter(group(c) for _, c, _ in broker).most_common(a.top):
    print(f"| {pct(n)} | {g} |")

def kernel(dso):
    return dso.startswith("[kernel")

def table(title, counter, width=140):
    print(f"\n| % | {title} |\n|---:|---|")
    for s, n in counter.most_common(a.top):
        print(f"| {pct(n)} | `{s[:width]}` |")

user, kern, entry = collections.Counter(), collections.Counter(), collections.Counter()
for _, _, f in broker:
    if not f:
        continue
    if not kernel(f[0][1]):
        user[f[0][0]] += 1
        continue
    first_user = next((s for s, d in f if not kernel(d)), "?")
    kern[f"{f[0][0]} <- {first_user[:100]}"] += 1
    entry[first_user] += 1
table("broker self frame (user)", user)
table("broker self frame (kernel) <- first user frame", kern, 240)
table("broker samples in the kernel, by first user frame (the call that entered it)", entry)

# the busiest broker thread groups other than the JIT compilers: their self frames, and the Java
# methods their samples are under (inclusive: each method once per sample)
groups = collections.Counter(group(c) for _, c, _ in broker)
busy = [g for g, _ in groups.most_common() if "Compiler" not in g][:4]
for g in busy:
    mine = [f for _, c, f in broker if group(c) == g]
    print(f"\n| % | {g}: self frame |\n|---:|---|")
    for s, n in collections.Counter(f[0][0][:140] for f in mine if f).most_common(12):
        print(f"| {pct(n)} | `{s}` |")
    print(f"\n| % | {g}: under Java method (inclusive) |\n|---:|---|")
    inc = collections.Counter()
    for f in mine:
        seen = set()
        for s, d in f:
            if "(" in s and "." in s and not kernel(d):
                m = re.sub(r"\(.*", "", s).split(" ")[-1]
                if m not in seen:
                    seen.add(m)
                    inc[m] += 1
    for s, n in inc.most_common(20):
        print(f"| {pct(n)} | `{s}` |")
