#!/usr/bin/env python3
"""The brokers' CPU by thread group, user and system time apart, in each phase of a bench/run.

  python3 bench/tools/broker-threads.py sample OUT [INTERVAL_S]
      Every INTERVAL_S (default 1) appends, for every thread of every broker JVM on the machine
      (a java process with server.properties on its command line: Skein or Apache Kafka), a line
      "epoch_s pid tid name utime stime" (clock ticks) to OUT, until killed.
  python3 bench/tools/broker-threads.py report OUT LOGDIR
      For each run directory of LOGDIR (bench/target/bench-logs: A-kafka-round1, B-skein-round1, ...)
      and each phase its phases.log names, the CPU seconds per thread group between the first and
      the last sample inside the phase, user and system apart.

Run the sampler beside bench/run, e.g.
  python3 bench/tools/broker-threads.py sample /tmp/threads.txt & p=$!
  BENCH_ROUNDS=1 bench/run --cluster; kill $p
  python3 bench/tools/broker-threads.py report /tmp/threads.txt bench/target/bench-logs
Thread names are the kernel's 15-character ones. Kafka's network threads and request handlers share
the prefix data-plane-kafka-, so Skein's two pools are one group too, to compare like with like.
"""
import collections
import datetime
import glob
import os
import re
import sys
import time

GROUPS = [
    (r'^C2_Compiler', 'JIT C2'),
    (r'^C1_Compiler', 'JIT C1'),
    (r'^(GC_Thread|G1_)', 'GC'),
    (r'^(skein-network|skein-request|skein-acceptor|data-plane)', 'network + request handlers'),
    (r'^(skein-replica|ReplicaFetcher)', 'replica fetchers'),
    (r'^(skein-fetch-pur|ExpirationReape)', 'purgatory'),
    (r'^(grpc|\d-|skein-controlle|JvmPause|kafka-\d+-raft|quorum|controller-|broker-\d+-to|raft-)', 'controller quorum'),
    (r'^(skein-scheduler|kafka-scheduler|skein-metadata|kafka-\d+-metadat)', 'scheduler, metadata'),
]


def group(name):
    for pattern, label in GROUPS:
        if re.search(pattern, name):
            return label
    return 'other'


def brokers():
    for pid in os.listdir('/proc'):
        if not pid.isdigit():
            continue
        try:
            with open(f'/proc/{pid}/comm') as f:
                if f.read().strip() != 'java':
                    continue
            with open(f'/proc/{pid}/cmdline', 'rb') as f:
                cmd = f.read()
        except OSError:
            continue
        if b'server.properties' in cmd and (b'kafka.Kafka' in cmd or b'.jar' in cmd):
            yield pid


def sample(out, interval):
    with open(out, 'a') as f:
        while True:
            now = time.time()
            for pid in brokers():
                try:
                    tids = os.listdir(f'/proc/{pid}/task')
                except OSError:
                    continue
                for tid in tids:
                    try:
                        with open(f'/proc/{pid}/task/{tid}/stat') as s:
                            line = s.read()
                    except OSError:
                        continue
                    name = line[line.index('(') + 1:line.rindex(')')].replace(' ', '_')
                    fields = line[line.rindex(')') + 2:].split()
                    f.write(f'{now:.3f} {pid} {tid} {name} {fields[11]} {fields[12]}\n')
            f.flush()
            time.sleep(interval)


def report(out, logdir):
    hz = os.sysconf('SC_CLK_TCK')
    rows = collections.defaultdict(dict)
    with open(out) as f:
        for line in f:
            p = line.split()
            if len(p) == 6:
                rows[float(p[0])][(p[1], p[2])] = (p[3], int(p[4]), int(p[5]))
    times = sorted(rows)
    for run in sorted(glob.glob(os.path.join(logdir, '[AB]-*'))):
        phases_log = os.path.join(run, 'phases.log')
        if not os.path.exists(phases_log):
            continue
        phases = {}
        with open(phases_log) as f:
            for line in f:
                stamp, what, name = line.split()
                phases.setdefault(name, {})[what] = datetime.datetime.fromisoformat(stamp).timestamp()
        for name, w in phases.items():
            inside = [t for t in times if w.get('start', 1e99) <= t <= w.get('end', 0)]
            if len(inside) < 2:
                continue
            first, last = rows[inside[0]], rows[inside[-1]]
            cpu = collections.defaultdict(lambda: [0.0, 0.0])
            for key, (thread, user, system) in last.items():
                _, user0, system0 = first.get(key, (thread, 0, 0))  # born in the phase: all of it
                cpu[group(thread)][0] += (user - user0) / hz
                cpu[group(thread)][1] += (system - system0) / hz
            total_user = sum(v[0] for v in cpu.values())
            total_system = sum(v[1] for v in cpu.values())
            print(f'{os.path.basename(run)} {name}, {inside[-1] - inside[0]:.1f} s: '
                  f'user {total_user:.2f} s, system {total_system:.2f} s')
            for label, (user, system) in sorted(cpu.items(), key=lambda kv: -sum(kv[1])):
                print(f'  {label:28s} user {user:6.2f}  system {system:6.2f}')


if __name__ == '__main__':
    if len(sys.argv) >= 3 and sys.argv[1] == 'sample':
        sample(sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 1.0)
    elif len(sys.argv) == 4 and sys.argv[1] == 'report':
        report(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
