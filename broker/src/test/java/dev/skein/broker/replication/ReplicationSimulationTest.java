package dev.skein.broker.replication;

import dev.skein.broker.metadata.PartitionRegistration;
import dev.skein.broker.storage.EpochEndOffset;
import dev.skein.broker.testing.ManualTime;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * A seeded, single-threaded simulation of one partition with three replicas: the real
 * {@link LeaderState} and {@link Divergence} rules, an in-memory log per replica (with the storage
 * layer's epoch semantics), a simulated network that delays and drops fetches, ISR changes and
 * metadata images, and a simulated controller that applies ISR changes by compare-and-set and
 * elects a new leader from the ISR when the leader is fenced (crashed, or isolated while it still
 * runs). Replicas crash and restart, some with an empty disk. After every step it checks: one
 * leader per epoch; a leader's high watermark never goes back; the high watermark is at most the
 * log end offset of every ISR member; every committed record is in every later leader's log at
 * its offset; no two replicas hold different records below their high watermarks. At the end the
 * faults stop and every replica must converge on the leader's log.
 */
class ReplicationSimulationTest {
    private static final int REPLICAS = 3;
    private static final int MIN_ISR = 2;
    private static final long LAG_MS = 300;
    private static final int MAX_FETCH_ENTRIES = 7;

    @Test
    void invariantsHoldForManySeeds() {
        for (long seed = 0; seed < 200; seed++) {
            Sim sim = new Sim(seed);
            try {
                sim.run(1_500);
                sim.heal();
            } catch (AssertionError e) {
                throw new AssertionError("seed " + seed + " step " + sim.step + ": " + e.getMessage() + "\n" + sim.trace(), e);
            }
        }
    }

    record Entry(int epoch, long value) {
    }

    /** An in-memory log with the storage layer's leader-epoch semantics. */
    static final class Log {
        final List<Entry> entries = new ArrayList<>();

        long end() {
            return entries.size();
        }

        int latestEpoch() {
            return entries.isEmpty() ? -1 : entries.getLast().epoch();
        }

        /** Mirrors LeaderEpochCache.endOffsetFor. */
        EpochEndOffset endOffsetFor(int requested) {
            if (requested < 0 || entries.isEmpty()) {
                return EpochEndOffset.UNDEFINED;
            }
            if (requested == latestEpoch()) {
                return new EpochEndOffset(requested, end());
            }
            Integer floor = null;
            for (int i = 0; i < entries.size(); i++) {
                int e = entries.get(i).epoch();
                if (e <= requested) {
                    floor = e;
                } else {
                    return new EpochEndOffset(floor == null ? requested : floor, i);
                }
            }
            return EpochEndOffset.UNDEFINED;
        }

        /** Bumped on every truncation, so invariant checks can trust a prefix they verified before. */
        int truncations;

        void truncateTo(long offset) {
            if (entries.size() > offset) {
                truncations++;
            }
            while (entries.size() > offset) {
                entries.removeLast();
            }
        }
    }

    static final class Replica {
        final int id;
        boolean alive = true;
        Log log = new Log();
        PartitionRegistration known;
        LeaderState leader;
        long hw;
        boolean fetchInFlight;
        long fetchSentAt;

        Replica(int id) {
            this.id = id;
        }
    }

    sealed interface Msg permits FetchReq, FetchResp, AlterReq, AlterResp, Image {
    }

    record FetchReq(int from, int to, int leaderEpoch, long fetchOffset, int lastFetchedEpoch) implements Msg {
    }

    record FetchResp(int from, int to, int leaderEpoch, long startOffset, List<Entry> entries, long hw,
                     EpochEndOffset diverging) implements Msg {
    }

    record AlterReq(int leaderId, int leaderEpoch, int partitionEpoch, List<Integer> isr) implements Msg {
    }

    record AlterResp(int to, PartitionRegistration result, String error) implements Msg {
    }

    record Image(int to, PartitionRegistration registration) implements Msg {
    }

    record Pending(long at, long seq, Msg msg) {
    }

    static final class Sim {
        final Random rnd;
        final ManualTime time = new ManualTime(0);
        final Replica[] replicas = new Replica[REPLICAS];
        final PriorityQueue<Pending> net = new PriorityQueue<>((a, b) -> a.at != b.at ? Long.compare(a.at, b.at) : Long.compare(a.seq, b.seq));
        final Set<Integer> fenced = new HashSet<>();
        final Map<Long, Entry> committed = new HashMap<>();
        final Map<Integer, Integer> leaderOfEpoch = new HashMap<>();
        final Map<String, Long> lastHw = new HashMap<>();
        /** Per replica pair: the truncation counts and the prefix length already found identical. */
        final Map<String, long[]> verifiedPrefix = new HashMap<>();
        final List<String> events = new ArrayList<>();
        PartitionRegistration reg;
        long seq;
        long nextValue = 1;
        int step;
        double dropRate;

        Sim(long seed) {
            rnd = new Random(seed);
            dropRate = rnd.nextDouble() * 0.2;
            reg = PartitionRegistration.of(List.of(0, 1, 2));
            leaderOfEpoch.put(0, 0);
            for (int i = 0; i < REPLICAS; i++) {
                replicas[i] = new Replica(i);
                applyImage(replicas[i], reg);
            }
        }

        long now() {
            return time.milliseconds();
        }

        void send(Msg m, long minDelay, long maxDelay, boolean droppable) {
            if (droppable && rnd.nextDouble() < dropRate) {
                return;
            }
            net.add(new Pending(now() + minDelay + (long) (rnd.nextDouble() * (maxDelay - minDelay)), seq++, m));
        }

        void log(String s) {
            events.add(now() + " " + s);
            if (events.size() > 60) {
                events.removeFirst();
            }
        }

        String trace() {
            return String.join("\n", events);
        }

        // ------------------------------------------------------------------ the loop

        void run(int steps) {
            for (step = 0; step < steps; step++) {
                time.advance(1 + rnd.nextInt(15));
                deliverDue();
                randomAction();
                for (Replica r : replicas) {
                    tick(r);
                }
                checkInvariants();
            }
        }

        /** Stops faults, restarts everyone, unfences, and lets replication settle. */
        void heal() {
            dropRate = 0;
            for (Replica r : replicas) {
                if (!r.alive) {
                    restart(r, false);
                }
            }
            for (int i = 0; i < 4000 && !converged(); i++) {
                step++;
                time.advance(5);
                deliverDue();
                if (i % 50 == 0) {
                    append();
                }
                for (Replica r : replicas) {
                    tick(r);
                }
                checkInvariants();
            }
            assertThat(converged()).as("replicas converge once faults stop: reg %s, logs %s", reg,
                    List.of(replicas[0].log.entries.size(), replicas[1].log.entries.size(), replicas[2].log.entries.size())).isTrue();
        }

        boolean converged() {
            if (!reg.hasLeader() || reg.isr().size() != REPLICAS) {
                return false;
            }
            Replica l = replicas[reg.leader()];
            if (l.leader == null || l.hw != l.log.end()) {
                return false;
            }
            for (Replica r : replicas) {
                if (!r.log.entries.equals(l.log.entries)) {
                    return false;
                }
            }
            return true;
        }

        void deliverDue() {
            while (!net.isEmpty() && net.peek().at <= now()) {
                Msg m = net.poll().msg;
                switch (m) {
                    case FetchReq f -> onFetch(f);
                    case FetchResp f -> onFetchResponse(f);
                    case AlterReq a -> onAlter(a);
                    case AlterResp a -> onAlterResponse(a);
                    case Image i -> {
                        Replica r = replicas[i.to()];
                        if (r.alive) {
                            applyImage(r, i.registration());
                        }
                    }
                }
            }
        }

        void randomAction() {
            double x = rnd.nextDouble();
            if (x < 0.35) {
                append();
            } else if (x < 0.36) {
                Replica victim = replicas[rnd.nextInt(REPLICAS)];
                if (victim.alive) {
                    crash(victim);
                }
            } else if (x < 0.37) {
                if (reg.hasLeader()) {
                    int old = reg.leader();
                    log("controller fences live leader " + old + " (isolated)");
                    fence(old);
                    // it registers again at once, but learns of its demotion late
                    unfence(old);
                }
            } else if (x < 0.41) {
                Replica r = replicas[rnd.nextInt(REPLICAS)];
                if (!r.alive) {
                    restart(r, !reg.isInSync(r.id) && rnd.nextDouble() < 0.4);
                }
            }
        }

        void append() {
            for (Replica r : replicas) {
                if (r.alive && r.leader != null && rnd.nextBoolean()) {
                    int n = 1 + rnd.nextInt(3);
                    for (int i = 0; i < n; i++) {
                        r.log.entries.add(new Entry(r.leader.leaderEpoch(), nextValue++));
                    }
                    advanceHw(r);
                }
            }
        }

        void tick(Replica r) {
            if (!r.alive) {
                return;
            }
            if (r.leader != null) {
                r.leader.shrinkProposal(r.log.end(), now(), LAG_MS).ifPresent(isr -> propose(r, isr));
                return;
            }
            if (r.fetchInFlight && now() - r.fetchSentAt > 200) {
                r.fetchInFlight = false; // timed out
            }
            if (!r.fetchInFlight && r.known.hasLeader() && r.known.leader() != r.id) {
                r.fetchInFlight = true;
                r.fetchSentAt = now();
                send(new FetchReq(r.id, r.known.leader(), r.known.leaderEpoch(), r.log.end(), r.log.latestEpoch()), 1, 30, true);
            }
        }

        // ------------------------------------------------------------------ leader side

        void onFetch(FetchReq f) {
            Replica l = replicas[f.to()];
            if (!l.alive || l.leader == null || l.leader.leaderEpoch() != f.leaderEpoch()) {
                return; // NOT_LEADER / FENCED / UNKNOWN epoch: the follower times out and retries
            }
            Optional<EpochEndOffset> diverging = Divergence.leaderCheck(f.lastFetchedEpoch(), f.fetchOffset(),
                    l.leader.leaderEpoch(), l.log.latestEpoch(), l.log.end(), l.log::endOffsetFor);
            if (diverging.isPresent()) {
                send(new FetchResp(l.id, f.from(), f.leaderEpoch(), f.fetchOffset(), List.of(), l.hw, diverging.get()), 1, 30, true);
                return;
            }
            if (f.fetchOffset() > l.log.end()) {
                return;
            }
            l.leader.recordFollowerFetch(f.from(), f.fetchOffset(), l.log.end(), now());
            advanceHw(l);
            l.leader.expandProposal(f.from()).ifPresent(isr -> propose(l, isr));
            int to = (int) Math.min(l.log.end(), f.fetchOffset() + MAX_FETCH_ENTRIES);
            List<Entry> batch = List.copyOf(l.log.entries.subList((int) f.fetchOffset(), to));
            send(new FetchResp(l.id, f.from(), f.leaderEpoch(), f.fetchOffset(), batch, l.hw, null), 1, 30, true);
        }

        void advanceHw(Replica l) {
            long before = l.hw;
            if (l.leader.maybeAdvanceHighWatermark(l.log.end(), MIN_ISR)) {
                l.hw = l.leader.highWatermark();
                for (long o = before; o < l.hw; o++) {
                    Entry e = l.log.entries.get((int) o);
                    Entry prev = committed.putIfAbsent(o, e);
                    assertThat(prev == null || prev.equals(e)).as("offset %d committed twice: %s then %s (by %d)",
                            o, prev, e, l.id).isTrue();
                }
            }
        }

        void propose(Replica l, List<Integer> isr) {
            l.leader.markPending(isr);
            send(new AlterReq(l.id, l.leader.leaderEpoch(), l.leader.partitionEpoch(), isr), 1, 40, false);
        }

        void onAlterResponse(AlterResp a) {
            Replica l = replicas[a.to()];
            if (!l.alive || l.leader == null) {
                return;
            }
            if (a.result() != null) {
                l.leader.applyRegistration(a.result(), now());
                advanceHw(l);
            } else if (!a.error().equals("INVALID_UPDATE_VERSION")) {
                l.leader.abandonPendingIsrChange();
            }
        }

        // ------------------------------------------------------------------ follower side

        void onFetchResponse(FetchResp f) {
            Replica r = replicas[f.to()];
            if (!r.alive) {
                return;
            }
            r.fetchInFlight = false;
            if (r.leader != null || r.known.leaderEpoch() != f.leaderEpoch() || r.log.end() != f.startOffset()) {
                return; // stale response
            }
            if (f.diverging() != null) {
                long to = Divergence.truncationOffset(f.diverging(), r.log.endOffsetFor(f.diverging().epoch()), r.log.end());
                log("replica " + r.id + " truncates " + r.log.end() + " -> " + to + " (diverging " + f.diverging() + ")");
                r.log.truncateTo(to);
                r.hw = Math.min(r.hw, r.log.end());
                return;
            }
            r.log.entries.addAll(f.entries());
            r.hw = Math.max(r.hw, Math.min(f.hw(), r.log.end()));
        }

        // ------------------------------------------------------------------ metadata

        void applyImage(Replica r, PartitionRegistration next) {
            if (r.known != null && next.partitionEpoch() <= r.known.partitionEpoch()) {
                return;
            }
            boolean newEpoch = r.known == null || next.leaderEpoch() != r.known.leaderEpoch();
            r.known = next;
            if (next.leader() == r.id) {
                if (newEpoch || r.leader == null) {
                    r.leader = new LeaderState(r.id, next, r.log.end(), r.hw, now());
                    log("replica " + r.id + " leads epoch " + next.leaderEpoch() + " with log end " + r.log.end()
                            + ", hw " + r.hw + ", isr " + next.isr());
                    for (Map.Entry<Long, Entry> c : committed.entrySet()) {
                        assertThat(c.getKey() < r.log.end() && r.log.entries.get((int) (long) c.getKey()).equals(c.getValue()))
                                .as("new leader %d of epoch %d holds committed offset %d", r.id, next.leaderEpoch(), c.getKey())
                                .isTrue();
                    }
                } else {
                    r.leader.applyRegistration(next, now());
                    advanceHw(r);
                }
            } else {
                r.leader = null;
                r.fetchInFlight = false;
            }
        }

        void publish() {
            for (Replica r : replicas) {
                send(new Image(r.id, reg), 1, r.id == reg.leader() ? 20 : 60, false);
            }
        }

        void onAlter(AlterReq a) {
            String error = null;
            if (a.leaderEpoch() != reg.leaderEpoch()) {
                error = "FENCED_LEADER_EPOCH";
            } else if (a.partitionEpoch() != reg.partitionEpoch()) {
                error = "INVALID_UPDATE_VERSION";
            } else if (!a.isr().contains(a.leaderId())) {
                error = "INVALID_REQUEST";
            } else {
                for (int b : a.isr()) {
                    if (fenced.contains(b)) {
                        error = "INELIGIBLE_REPLICA";
                    }
                }
            }
            if (error != null) {
                send(new AlterResp(a.leaderId(), null, error), 1, 40, false);
                return;
            }
            reg = reg.withIsr(a.isr());
            log("controller: isr " + a.isr() + " (partition epoch " + reg.partitionEpoch() + ")");
            send(new AlterResp(a.leaderId(), reg, null), 1, 40, false);
            publish();
        }

        /** The controller stops trusting broker {@code id}: out of the ISR, and a new leader if it led. */
        void fence(int id) {
            fenced.add(id);
            List<Integer> isr = new ArrayList<>(reg.isr());
            if (isr.size() > 1) {
                isr.remove(Integer.valueOf(id));
            }
            if (reg.leader() == id) {
                int next = isr.stream().filter(b -> !fenced.contains(b)).findFirst().orElse(PartitionRegistration.NO_LEADER);
                reg = reg.withLeader(next, isr);
                recordLeader(reg);
                log("controller: leader " + next + " epoch " + reg.leaderEpoch() + " isr " + isr);
            } else if (!isr.equals(reg.isr())) {
                reg = reg.withIsr(isr);
                log("controller: isr " + isr + " after fencing " + id);
            }
            publish();
        }

        void unfence(int id) {
            fenced.remove(id);
            electIfLeaderless();
        }

        void electIfLeaderless() {
            if (reg.hasLeader()) {
                return;
            }
            for (int b : reg.isr()) {
                if (!fenced.contains(b)) {
                    reg = reg.withLeader(b, reg.isr());
                    recordLeader(reg);
                    log("controller: leader " + b + " epoch " + reg.leaderEpoch() + " (was leaderless)");
                    publish();
                    return;
                }
            }
        }

        void recordLeader(PartitionRegistration r) {
            if (r.hasLeader()) {
                Integer prev = leaderOfEpoch.putIfAbsent(r.leaderEpoch(), r.leader());
                assertThat(prev == null || prev == r.leader()).as("one leader in epoch %d", r.leaderEpoch()).isTrue();
            }
        }

        void crash(Replica r) {
            log("replica " + r.id + " crashes");
            r.alive = false;
            r.leader = null;
            r.fetchInFlight = false;
            fence(r.id);
        }

        void restart(Replica r, boolean lostDisk) {
            log("replica " + r.id + " restarts" + (lostDisk ? " with an empty disk" : ""));
            r.alive = true;
            if (lostDisk) {
                int truncations = r.log.truncations;
                r.log = new Log();
                r.log.truncations = truncations + 1;
            }
            r.hw = 0;
            r.known = null;
            r.leader = null;
            fenced.remove(r.id);
            applyImage(r, reg);
            electIfLeaderless();
        }

        // ------------------------------------------------------------------ invariants

        void checkInvariants() {
            Map<Integer, Integer> leaders = new HashMap<>();
            for (Replica r : replicas) {
                if (!r.alive || r.leader == null) {
                    continue;
                }
                Integer other = leaders.put(r.leader.leaderEpoch(), r.id);
                assertThat(other).as("two replicas lead epoch %d", r.leader.leaderEpoch()).isNull();
                Integer elected = leaderOfEpoch.get(r.leader.leaderEpoch());
                assertThat(elected).as("leader of epoch %d was elected by the controller", r.leader.leaderEpoch()).isEqualTo(r.id);
                String key = r.id + "@" + r.leader.leaderEpoch();
                Long prev = lastHw.put(key, r.hw);
                assertThat(r.hw).as("high watermark of %s never goes back", key).isGreaterThanOrEqualTo(prev == null ? 0 : prev);
                if (r.known.leaderEpoch() == reg.leaderEpoch() && reg.leader() == r.id) {
                    for (int m : reg.isr()) {
                        assertThat(replicas[m].log.end()).as("ISR member %d holds the high watermark %d of leader %d", m, r.hw, r.id)
                                .isGreaterThanOrEqualTo(r.hw);
                    }
                    for (Map.Entry<Long, Entry> c : committed.entrySet()) {
                        if (c.getKey() >= r.log.end() || !r.log.entries.get((int) (long) c.getKey()).equals(c.getValue())) {
                            fail("leader " + r.id + " lost committed offset " + c.getKey());
                        }
                    }
                }
            }
            for (Replica a : replicas) {
                for (Replica b : replicas) {
                    if (a.id >= b.id) {
                        continue;
                    }
                    long below = Math.min(Math.min(a.hw, b.hw), Math.min(a.log.end(), b.log.end()));
                    long[] v = verifiedPrefix.get(a.id + "-" + b.id);
                    int from = v != null && v[0] == a.log.truncations && v[1] == b.log.truncations ? (int) Math.min(v[2], below) : 0;
                    verifiedPrefix.put(a.id + "-" + b.id, new long[]{a.log.truncations, b.log.truncations, Math.max(below, from)});
                    for (int o = from; o < below; o++) {
                        if (!a.log.entries.get(o).equals(b.log.entries.get(o))) {
                            fail("offset " + o + " differs on replicas " + a.id + " and " + b.id + " below their high watermarks: "
                                    + a.log.entries.get(o) + " vs " + b.log.entries.get(o));
                        }
                    }
                }
                for (long o = 0; o < Math.min(a.hw, a.log.end()); o++) {
                    Entry c = committed.get(o);
                    if (c != null && !a.log.entries.get((int) o).equals(c)) {
                        fail("replica " + a.id + " holds " + a.log.entries.get((int) o) + " below its high watermark at " + o
                                + " where " + c + " was committed");
                    }
                }
            }
        }
    }
}
