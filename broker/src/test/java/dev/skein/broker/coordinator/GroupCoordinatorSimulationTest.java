package dev.skein.broker.coordinator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Seeded simulation: dynamic and static clients behave as Kafka's consumer does (rejoin on
 * REBALANCE_IN_PROGRESS/ILLEGAL_GENERATION, reset on UNKNOWN_MEMBER_ID) while the clock jumps, clients
 * pause past their session timeout, restart (static members come back under a new member id) and leave. After every step: one leader per generation,
 * generations never go back, every synced assignment is the one the leader sent, committed offsets
 * match a model. At the end, without chaos, every client must settle in one Stable generation.
 */
@Timeout(120)
class GroupCoordinatorSimulationTest {
    private static final String GROUP = "sim";

    private enum Phase { IDLE, JOINING, SYNCING, STABLE }

    private static final class Client {
        final String instanceId;
        String memberId = "";
        int generation = -1;
        Phase phase = Phase.IDLE;
        CompletableFuture<JoinGroupResponseData> join;
        CompletableFuture<SyncGroupResponseData> sync;
        long pausedUntil;

        Client(String instanceId) {
            this.instanceId = instanceId;
        }

        String key() {
            return instanceId != null ? instanceId : memberId;
        }
    }

    private final class Simulation {
        final long seed;
        final Random rnd;
        final Harness h = new Harness();
        final List<Client> clients = new ArrayList<>();
        /** Leader member ids seen per generation; a static leader that restarts keeps leading under a new id. */
        final Map<Integer, java.util.Set<String>> leadersOfGeneration = new HashMap<>();
        final Map<String, String> keyOfMember = new HashMap<>();
        final Map<Integer, Long> committed = new HashMap<>();
        int lastGeneration;
        int ghosts;
        final List<String> trace = new ArrayList<>();

        void trace(String what) {
            ClassicGroup g = h.state.group(GROUP);
            trace.add(h.now() + " " + what + " | " + (g == null ? "no group" : g.state() + " gen " + g.generationId()
                    + " leader " + g.leaderId() + " members " + g.members().stream().map(GroupMember::memberId).toList()));
        }
        long nextOffset = 1;

        Simulation(long seed) {
            this.seed = seed;
            this.rnd = new Random(seed * 0x9E3779B97F4A7C15L);
            int n = 2 + rnd.nextInt(4);
            for (int i = 0; i < n; i++) {
                clients.add(new Client(rnd.nextInt(3) == 0 ? "instance-" + i : null));
            }
        }

        void step(boolean chaos) {
            int action = rnd.nextInt(100);
            if (action < 25) {
                h.advance(rnd.nextInt(chaos ? 4000 : 1500));
            } else if (chaos && action < 28) {
                pick().pausedUntil = h.now() + rnd.nextInt(2 * Harness.SESSION_MS);
            } else if (chaos && action < 31) {
                // The process restarts: it forgets its member id and abandons in-flight requests.
                Client c = pick();
                if (c.instanceId == null && !c.memberId.isEmpty()) {
                    ghosts++;
                }
                c.memberId = "";
                c.phase = Phase.IDLE;
            } else if (chaos && action < 33) {
                Client c = pick();
                if (c.phase == Phase.STABLE) {
                    h.leave(GROUP, c.instanceId == null ? Harness.member(c.memberId) : Harness.staticMember(c.memberId, c.instanceId));
                    c.phase = Phase.IDLE;
                    c.memberId = "";
                }
            } else {
                drive(pick());
            }
            checkInvariants();
        }

        Client pick() {
            return clients.get(rnd.nextInt(clients.size()));
        }

        void drive(Client c) {
            if (h.now() < c.pausedUntil) {
                return;
            }
            switch (c.phase) {
                case IDLE -> {
                    trace("join by " + c.key() + " instance " + c.instanceId + " member '" + c.memberId + "'");
                    c.join = h.join(Harness.joinRequest(GROUP, c.memberId).setGroupInstanceId(c.instanceId));
                    c.phase = Phase.JOINING;
                }
                case JOINING -> {
                    if (c.join.isDone()) {
                        onJoin(c, c.join.join());
                    }
                }
                case SYNCING -> {
                    if (c.sync.isDone()) {
                        onSync(c, c.sync.join());
                    }
                }
                case STABLE -> onHeartbeat(c, h.heartbeat(GROUP, c.memberId, c.instanceId, c.generation));
            }
        }

        void onJoin(Client c, JoinGroupResponseData r) {
            Errors e = Errors.forCode(r.errorCode());
            trace("join response to " + c.key() + ": " + e + " member " + r.memberId() + " gen " + r.generationId() + " leader " + r.leader());
            switch (e) {
                case NONE -> {
                    c.memberId = r.memberId();
                    c.generation = r.generationId();
                    keyOfMember.put(r.memberId(), c.key());
                    leadersOfGeneration.computeIfAbsent(r.generationId(), k -> new java.util.HashSet<>()).add(r.leader());
                    Map<String, byte[]> assignment = new HashMap<>();
                    if (r.leader().equals(r.memberId()) && !r.skipAssignment()) {
                        for (JoinGroupResponseData.JoinGroupResponseMember m : r.members()) {
                            String key = m.groupInstanceId() != null ? m.groupInstanceId() : m.memberId();
                            assignment.put(m.memberId(), expected(r.generationId(), key));
                        }
                    }
                    c.sync = h.sync(GROUP, c.memberId, c.instanceId, c.generation, assignment);
                    c.phase = Phase.SYNCING;
                }
                case MEMBER_ID_REQUIRED -> {
                    c.memberId = r.memberId();
                    c.phase = Phase.IDLE;
                }
                case UNKNOWN_MEMBER_ID -> {
                    c.memberId = "";
                    c.phase = Phase.IDLE;
                }
                case REBALANCE_IN_PROGRESS -> c.phase = Phase.IDLE;
                default -> fail("seed %d: unexpected JoinGroup error %s", seed, e);
            }
        }

        void onSync(Client c, SyncGroupResponseData r) {
            Errors e = Errors.forCode(r.errorCode());
            trace("sync response to " + c.key() + ": " + e);
            switch (e) {
                case NONE -> {
                    assertThat(new String(r.assignment(), StandardCharsets.UTF_8)).as("seed %d: assignment of %s", seed, c.key())
                            .isEqualTo(new String(expected(c.generation, c.key()), StandardCharsets.UTF_8));
                    c.phase = Phase.STABLE;
                }
                case REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION -> c.phase = Phase.IDLE;
                case UNKNOWN_MEMBER_ID -> {
                    c.memberId = "";
                    c.phase = Phase.IDLE;
                }
                default -> fail("seed %d: unexpected SyncGroup error %s", seed, e);
            }
        }

        void onHeartbeat(Client c, Errors e) {
            trace("heartbeat of " + c.key() + ": " + e);
            switch (e) {
                case NONE -> {
                    if (rnd.nextInt(4) == 0) {
                        int partition = rnd.nextInt(4);
                        long offset = nextOffset++;
                        assertThat(h.commit(GROUP, c.memberId, c.generation, "topic-a", partition, offset))
                                .as("seed %d: commit by a member in good standing", seed).isEqualTo(Errors.NONE);
                        committed.put(partition, offset);
                    }
                }
                case REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION -> c.phase = Phase.IDLE;
                case UNKNOWN_MEMBER_ID -> {
                    c.memberId = "";
                    c.phase = Phase.IDLE;
                }
                default -> fail("seed %d: unexpected Heartbeat error %s", seed, e);
            }
        }

        byte[] expected(int generation, String key) {
            return ("gen-" + generation + "-" + key).getBytes(StandardCharsets.UTF_8);
        }

        void checkInvariants() {
            ClassicGroup g = h.state.group(GROUP);
            if (g == null) {
                // An Empty group without offsets is deleted by the expiry check; a new one starts over.
                leadersOfGeneration.clear();
                lastGeneration = 0;
                return;
            }
            assertThat(g.generationId()).as("seed %d: generation never goes back", seed).isGreaterThanOrEqualTo(lastGeneration);
            lastGeneration = g.generationId();
            assertThat(g.size()).as("seed %d: members <= clients", seed).isLessThanOrEqualTo(clients.size() + ghosts);
            if (g.isInState(GroupState.STABLE) || g.isInState(GroupState.COMPLETING_REBALANCE)) {
                assertThat(g.leaderId()).isNotNull();
                assertThat(g.hasMember(g.leaderId())).isTrue();
            }
            leadersOfGeneration.forEach((gen, ids) -> assertThat(ids.stream()
                    .filter(keyOfMember::containsKey).map(keyOfMember::get).distinct().count())
                    .as("seed %d: one leader in generation %d: %s", seed, gen, ids).isLessThanOrEqualTo(1));
            committed.forEach((p, o) -> assertThat(h.committed(GROUP, "topic-a", p)).as("seed %d: committed offset", seed).isEqualTo(o));
        }

        boolean settled() {
            ClassicGroup g = h.state.group(GROUP);
            return g != null && g.isInState(GroupState.STABLE) && g.size() == clients.size()
                    && clients.stream().allMatch(c -> c.phase == Phase.STABLE && c.generation == g.generationId());
        }
    }

    @Test
    void randomJoinsPausesAndLeavesKeepInvariantsAndSettle() {
        for (long seed = 1; seed <= 60; seed++) {
            Simulation sim = new Simulation(seed);
            try {
                for (int i = 0; i < 600; i++) {
                    sim.step(true);
                }
            } catch (AssertionError e) {
                sim.trace.subList(Math.max(0, sim.trace.size() - 60), sim.trace.size()).forEach(System.out::println);
                throw e;
            }
            sim.clients.forEach(c -> c.pausedUntil = 0);
            int i = 0;
            while (!sim.settled()) {
                assertThat(i++).as("seed %d: group settles without chaos", seed).isLessThan(20_000);
                sim.step(false);
            }
        }
    }
}
