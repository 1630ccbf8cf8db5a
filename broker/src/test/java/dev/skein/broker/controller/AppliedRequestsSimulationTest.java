package dev.skein.broker.controller;

import dev.skein.broker.metadata.ClusterImage;
import dev.skein.broker.testing.ManualTime;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * At-most-once application of controller requests, on the replicated state alone (no Ratis, no
 * threads): a request delivered again (a Raft client's retry, a resend after a leader change) is
 * decided again by the active controller and may reach the log as a second entry with the same
 * request id, before or after the first. The seeded simulation interleaves deliveries, decisions
 * and commits at random and replays the log on a second replica that restarts from snapshots.
 */
class AppliedRequestsSimulationTest {
    private final ManualTime time = new ManualTime();

    private static MetadataState withBrokers(int n) {
        MetadataState s = MetadataState.EMPTY;
        long index = 0;
        for (int id = 0; id < n; id++) {
            s = s.apply(List.of(new MetadataCommand.RegisterBroker(id, "h" + id, 9092, null, Uuid.randomUuid())), ++index).state();
            s = s.apply(List.of(new MetadataCommand.UnfenceBroker(id, index)), ++index).state();
        }
        return s;
    }

    @Test
    void aCreateTopicDecidedTwiceCreatesTheTopicOnceAndBothAttemptsGetTheFirstOutcome() {
        ActiveController logic = new ActiveController(time, new Random(1), 9000, Map.of());
        MetadataState s = withBrokers(3);
        AppliedRequests requests = new AppliedRequests();
        Uuid request = Uuid.randomUuid();
        // the first attempt's entry is still on its way when the retry is decided against the same state
        List<MetadataCommand> first = logic.createTopic(s, "orders", 3, (short) 2, Map.of());
        List<MetadataCommand> retry = logic.createTopic(s, "orders", 3, (short) 2, Map.of());
        assertThat(retry).isNotEqualTo(first); // another topic id: a decision made anew

        AppliedRequests.Result applied = requests.apply(s, new MetadataEntry(request, first), 100);
        AppliedRequests.Result again = requests.apply(applied.state(), new MetadataEntry(request, retry), 101);

        assertThat(applied.outcome().isError()).isFalse();
        assertThat(again.duplicate()).isTrue();
        assertThat(again.outcome()).isEqualTo(applied.outcome());
        assertThat(again.outcome().index()).isEqualTo(100);
        assertThat(again.state()).isSameAs(applied.state());
        assertThat(again.state().topic("orders").id()).isEqualTo(((MetadataCommand.CreateTopic) first.getFirst()).topicId());
        // a retry that reaches the controller after the entry was applied is answered from the table
        assertThat(requests.outcome(request)).isEqualTo(applied.outcome());
    }

    @Test
    void withoutARequestIdTheSameDecisionAppliedTwiceIsRejectedTheSecondTime() {
        // what a retry decided anew used to be answered: the topic its first attempt created "already exists"
        ActiveController logic = new ActiveController(time, new Random(1), 9000, Map.of());
        MetadataState s = withBrokers(3);
        AppliedRequests requests = new AppliedRequests();
        MetadataState after = requests.apply(s, new MetadataEntry(null, logic.createTopic(s, "orders", 1, (short) 1,
                Map.of())), 100).state();
        AppliedRequests.Result second = requests.apply(after, new MetadataEntry(null, List.of(new MetadataCommand.CreateTopic(
                "orders", Uuid.randomUuid(), List.of(List.of(0)), Map.of()))), 101);
        assertThat(second.outcome().errorCode()).isEqualTo(Errors.TOPIC_ALREADY_EXISTS.code());
        assertThat(requests.size()).isZero();
    }

    @Test
    void aProducerIdBlockRequestedTwiceIsReservedOnce() {
        AppliedRequests requests = new AppliedRequests();
        Uuid request = Uuid.randomUuid();
        MetadataEntry entry = new MetadataEntry(request, List.of(new MetadataCommand.ProducerIdBlock(1000)));
        AppliedRequests.Result first = requests.apply(MetadataState.EMPTY, entry, 5);
        AppliedRequests.Result second = requests.apply(first.state(), entry, 6);
        assertThat(second.state().nextProducerId()).isEqualTo(1000);
        assertThat(second.outcome().value()).isEqualTo(0);
        assertThat(second.outcome().index()).isEqualTo(5);
    }

    @Test
    void aRejectedEntryIsTheOutcomeOfItsRequest() {
        AppliedRequests requests = new AppliedRequests();
        Uuid request = Uuid.randomUuid();
        MetadataEntry delete = new MetadataEntry(request, List.of(new MetadataCommand.DeleteTopic(Uuid.randomUuid())));
        AppliedRequests.Result first = requests.apply(MetadataState.EMPTY, delete, 7);
        assertThat(first.outcome().errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_ID.code());
        assertThat(requests.apply(first.state(), delete, 8).outcome()).isEqualTo(first.outcome());
    }

    @Test
    void outcomesSurviveASnapshotAndTheOldestAreForgottenFirst() {
        AppliedRequests requests = new AppliedRequests(3);
        MetadataState s = MetadataState.EMPTY;
        List<Uuid> ids = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            Uuid id = new Uuid(7, i);
            ids.add(id);
            s = requests.apply(s, new MetadataEntry(id, List.of(new MetadataCommand.ProducerIdBlock(10))), 10 + i).state();
        }
        assertThat(requests.size()).isEqualTo(3);
        assertThat(requests.outcome(ids.get(0))).isNull();
        assertThat(requests.outcome(ids.get(1))).isNull();
        assertThat(requests.outcome(ids.get(2)).value()).isEqualTo(20);

        MetadataCodec.Snapshot restored = MetadataCodec.decodeSnapshot(MetadataCodec.encodeSnapshot(s, requests), 3);
        assertThat(restored.state()).usingRecursiveComparison().isEqualTo(s);
        assertThat(restored.requests().entries()).isEqualTo(requests.entries());
        // the restored table forgets in the same order
        restored.requests().apply(restored.state(), new MetadataEntry(new Uuid(8, 0), List.of()), 20);
        assertThat(restored.requests().outcome(ids.get(2))).isNull();
        assertThat(restored.requests().outcome(ids.get(3))).isNotNull();
    }

    @Test
    void entriesAndSnapshotsWrittenBeforeRequestIdsStillRead() {
        List<MetadataCommand> commands = List.of(new MetadataCommand.ProducerIdBlock(3));
        assertThat(MetadataCodec.decodeEntry(MetadataCodec.encodeBatch(commands))).isEqualTo(new MetadataEntry(null, commands));
        MetadataEntry withId = new MetadataEntry(Uuid.randomUuid(), commands);
        assertThat(MetadataCodec.decodeEntry(MetadataCodec.encodeEntry(withId))).isEqualTo(withId);
        // a reader that predates request ids reads the commands and ignores the id
        assertThat(MetadataCodec.decodeBatch(MetadataCodec.encodeEntry(withId))).isEqualTo(commands);

        MetadataState s = withBrokers(2);
        MetadataCodec.Snapshot old = MetadataCodec.decodeSnapshot(MetadataCodec.encodeState(s), 10);
        assertThat(old.state()).usingRecursiveComparison().isEqualTo(s);
        assertThat(old.requests().size()).isZero();
        assertThat(MetadataCodec.decodeState(MetadataCodec.encodeSnapshot(s, new AppliedRequests())))
                .usingRecursiveComparison().isEqualTo(s);
    }

    // ---- the simulation ----

    /** One request of a client: its id, what it asks, how many times it is delivered. */
    private record Request(Uuid id, int kind, String topic, int amount, int deliveries) {
    }

    /** What a delivery was answered: from an applied entry (or the table), or by the controller's validation. */
    private record Answer(AppliedRequests.Outcome outcome, short validationError) {
    }

    /** A replica of the state machine: the state and the table, snapshotted and restored at random (replica B). */
    private static final class Replica {
        MetadataState state;
        AppliedRequests requests;
        final int capacity;

        Replica(MetadataState state, int capacity) {
            this.state = state;
            this.capacity = capacity;
            this.requests = new AppliedRequests(capacity);
        }

        AppliedRequests.Result apply(MetadataEntry entry, long index) {
            AppliedRequests.Result r = requests.apply(state, entry, index);
            state = r.state();
            return r;
        }

        void restartFromSnapshot() {
            MetadataCodec.Snapshot snap = MetadataCodec.decodeSnapshot(MetadataCodec.encodeSnapshot(state, requests), capacity);
            state = snap.state();
            requests = snap.requests();
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
    void everyRequestTakesEffectAtMostOnceAndEveryAnswerIsThatOfItsFirstEntry(long seed) {
        Random random = new Random(seed);
        ActiveController logic = new ActiveController(time, new Random(seed), 9000, Map.of());
        MetadataState initial = withBrokers(3);
        int capacity = 10_000;
        Replica leader = new Replica(initial, capacity);
        Replica restarted = new Replica(initial, capacity);

        List<Request> all = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            int kind = random.nextInt(3);
            all.add(new Request(new Uuid(seed, i), kind, "t" + random.nextInt(8), 1 + random.nextInt(3),
                    1 + random.nextInt(3)));
        }
        Map<Uuid, Integer> delivered = new HashMap<>();
        List<Request> waiting = new ArrayList<>();
        List<MetadataEntry> inFlight = new ArrayList<>();
        Map<Uuid, List<Answer>> answers = new HashMap<>();
        Map<Uuid, AppliedRequests.Outcome> firstOutcome = new LinkedHashMap<>();
        Map<MetadataEntry, List<Uuid>> waitingFor = new HashMap<>();
        Set<Uuid> createdTopicIds = new HashSet<>();
        long index = 1000;
        int next = 0;
        int duplicates = 0;

        while (next < all.size() || !waiting.isEmpty() || !inFlight.isEmpty()) {
            int action = random.nextInt(10);
            if (action < 2 && next < all.size()) {
                waiting.add(all.get(next++));
            } else if (action < 7 && !waiting.isEmpty()) {
                // a delivery reaches the active controller: answered from the table, or decided anew
                Request r = waiting.get(random.nextInt(waiting.size()));
                int n = delivered.merge(r.id(), 1, Integer::sum);
                if (n >= r.deliveries()) {
                    waiting.remove(r);
                }
                AppliedRequests.Outcome earlier = leader.requests.outcome(r.id());
                if (earlier != null) {
                    answers.computeIfAbsent(r.id(), k -> new ArrayList<>()).add(new Answer(earlier, Errors.NONE.code()));
                    continue;
                }
                try {
                    MetadataEntry entry = new MetadataEntry(r.id(), decide(logic, leader.state, r));
                    inFlight.add(entry);
                } catch (ApiException e) {
                    answers.computeIfAbsent(r.id(), k -> new ArrayList<>()).add(new Answer(null, Errors.forException(e).code()));
                }
            } else if (!inFlight.isEmpty()) {
                // an entry commits: entries of one request may commit in either order
                MetadataEntry entry = inFlight.remove(random.nextInt(inFlight.size()));
                index++;
                MetadataState before = leader.state;
                AppliedRequests.Result a = leader.apply(entry, index);
                AppliedRequests.Result b = restarted.apply(entry, index);
                if (random.nextInt(20) == 0) {
                    restarted.restartFromSnapshot();
                }
                assertThat(b.outcome()).isEqualTo(a.outcome());
                assertThat(b.duplicate()).isEqualTo(a.duplicate());
                AppliedRequests.Outcome first = firstOutcome.putIfAbsent(entry.requestId(), a.outcome());
                if (first == null) {
                    assertThat(a.duplicate()).isFalse();
                    if (!a.outcome().isError() && entry.commands().getFirst() instanceof MetadataCommand.CreateTopic c) {
                        createdTopicIds.add(c.topicId());
                    }
                } else {
                    // a later entry of the same request: nothing changes, the answer is the first one's
                    duplicates++;
                    assertThat(a.duplicate()).isTrue();
                    assertThat(a.state()).isSameAs(before);
                    assertThat(a.outcome()).isEqualTo(first);
                }
                answers.computeIfAbsent(entry.requestId(), k -> new ArrayList<>()).add(new Answer(a.outcome(), Errors.NONE.code()));
            } else if (next < all.size()) {
                waiting.add(all.get(next++));
            }
        }

        assertThat(restarted.state).usingRecursiveComparison().isEqualTo(leader.state);
        assertThat(restarted.requests.entries()).isEqualTo(leader.requests.entries());
        long reserved = 0;
        for (Request r : all) {
            AppliedRequests.Outcome first = firstOutcome.get(r.id());
            for (Answer answer : answers.getOrDefault(r.id(), List.of())) {
                if (answer.outcome() != null) {
                    assertThat(answer.outcome()).as("an answer of request %s", r).isEqualTo(first);
                } else if (first != null && !first.isError()) {
                    // decided anew while its own entry was still on its way: only a rejection by another request's change
                    assertThat(answer.validationError()).isNotEqualTo(Errors.NONE.code());
                }
            }
            if (r.kind() == 0 && first != null && !first.isError()) {
                reserved += r.amount() * 10L;
            }
        }
        // each producer id block reserved once per request, whatever the number of its entries
        assertThat(leader.state.nextProducerId()).isEqualTo(reserved);
        // every topic was created by exactly one entry, and it is the topic of that entry
        assertThat(leader.state.topics().values()).allSatisfy(t -> assertThat(createdTopicIds).contains(t.id()));
        assertThat(firstOutcome).isNotEmpty();
        assertThat(duplicates).as("entries of a request decided twice").isPositive();
    }

    private static List<MetadataCommand> decide(ActiveController logic, MetadataState s, Request r) {
        return switch (r.kind()) {
            case 0 -> List.of(new MetadataCommand.ProducerIdBlock(r.amount() * 10));
            case 1 -> logic.createTopic(s, r.topic(), r.amount(), (short) Math.min(3, r.amount()), Map.of());
            default -> {
                var t = s.topic(r.topic());
                yield logic.createPartitions(s, r.topic(), (t == null ? 1 : t.partitionCount()) + r.amount());
            }
        };
    }
}
