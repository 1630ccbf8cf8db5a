package dev.skein.broker.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.FencedInstanceIdException;
import org.apache.kafka.common.errors.OffsetMetadataTooLarge;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Consumer groups on the classic protocol, driven by real kafka-clients consumers each polling in
 * its own thread and committing synchronously after every non-empty poll, so a rebalance never
 * hands over a partition with uncommitted records and every record must arrive exactly once.
 */
class ConsumerGroupIT {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static TestBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = TestBroker.start(Map.of("group.min.session.timeout.ms", "1000"));
    }

    @AfterAll
    static void stop() throws Exception {
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void groupOfThreeReceivesEveryRecordExactlyOnceInOffsetOrderPerPartition() throws Exception {
        String topic = "group-of-three";
        createTopic(topic, 6);
        List<Member> members = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                members.add(Member.start(broker, "g-three", topic, "m" + i, Map.of()));
            }
            awaitBalanced(members, 6);
            produce(topic, 0, 600);

            await().atMost(WAIT).untilAsserted(() -> assertThat(received(members)).hasSize(600));
            assertExactlyOnce(members, topic, 6, 600);
            for (Member m : members) {
                assertThat(m.received).as("every member got a share").isNotEmpty();
                assertOffsetOrderPerPartition(m);
            }
        } finally {
            closeAll(members);
        }
    }

    @Test
    void afterAMemberLeavesTheOthersResumeFromCommittedOffsetsWithoutRedelivery() throws Exception {
        String topic = "member-leaves";
        String group = "g-leaves";
        createTopic(topic, 6);
        List<Member> members = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                members.add(Member.start(broker, group, topic, "m" + i, Map.of()));
            }
            awaitBalanced(members, 6);
            produce(topic, 0, 300);
            await().atMost(WAIT).untilAsserted(() -> assertThat(received(members)).hasSize(300));

            Member leaver = members.getFirst();
            int assignmentsBeforeLeaving = leaver.assignedCount.get();
            leaver.close();
            List<Member> remaining = members.subList(1, 3);
            awaitBalanced(remaining, 6);
            // members join one by one, so the leaver may have seen more than one assignment; none after leaving
            assertThat(leaver.assignedCount.get()).isEqualTo(assignmentsBeforeLeaving);

            produce(topic, 300, 300);
            await().atMost(WAIT).untilAsserted(() -> assertThat(received(members)).hasSize(600));
            assertExactlyOnce(members, topic, 6, 600);
            for (Member m : remaining) {
                assertOffsetOrderPerPartition(m);
            }
            try (Admin admin = broker.admin()) {
                Map<TopicPartition, OffsetAndMetadata> committed =
                        admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
                long total = committed.values().stream().mapToLong(OffsetAndMetadata::offset).sum();
                assertThat(committed).hasSize(6);
                assertThat(total).as("committed offsets cover every record").isEqualTo(600);
            }
        } finally {
            closeAll(members);
        }
    }

    @Test
    void cooperativeStickyGroupAddsAThirdMemberWithoutLosingRecords() throws Exception {
        String topic = "cooperative";
        createTopic(topic, 6);
        Map<String, Object> cooperative = Map.of(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG,
                CooperativeStickyAssignor.class.getName());
        List<Member> members = new ArrayList<>();
        try {
            members.add(Member.start(broker, "g-coop", topic, "m0", cooperative));
            members.add(Member.start(broker, "g-coop", topic, "m1", cooperative));
            awaitBalanced(members, 6);
            produce(topic, 0, 300);
            await().atMost(WAIT).untilAsserted(() -> assertThat(received(members)).hasSize(300));

            Set<TopicPartition> keptByFirst = members.get(0).assignment;
            members.add(Member.start(broker, "g-coop", topic, "m2", cooperative));
            // the newcomer is served while the others keep polling: records keep flowing during the rebalance
            produce(topic, 300, 300);
            awaitBalanced(members, 6);
            produce(topic, 600, 300);

            await().atMost(WAIT).untilAsserted(() -> assertThat(received(members)).hasSize(900));
            assertExactlyOnce(members, topic, 6, 900);
            assertThat(members.get(2).assignment).hasSize(2);
            // sticky: the first member only gave partitions up, it was not handed new ones
            assertThat(keptByFirst).containsAll(members.get(0).assignment);
        } finally {
            closeAll(members);
        }
    }

    @Test
    void staticMemberRestartingWithinSessionTimeoutGetsItsPartitionsBackWithoutRebalancingOthers() throws Exception {
        String topic = "static";
        String group = "g-static";
        createTopic(topic, 4);
        Map<String, Object> staticA = Map.of(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "instance-a",
                ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 20_000);
        Map<String, Object> staticB = Map.of(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "instance-b",
                ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 20_000);
        List<Member> members = new ArrayList<>();
        try {
            members.add(Member.start(broker, group, topic, "a", staticA));
            members.add(Member.start(broker, group, topic, "b", staticB));
            awaitBalanced(members, 4);
            produce(topic, 0, 100);
            await().atMost(WAIT).untilAsserted(() -> assertThat(received(members)).hasSize(100));

            Member a = members.get(0);
            Member b = members.get(1);
            Set<TopicPartition> partitionsOfA = a.assignment;
            int generationOfB = b.generation;
            int assignmentsOfB = b.assignedCount.get();
            // b may have joined first and given partitions up when a joined: count from here
            int revocationsOfB = b.revokedCount.get();

            a.close();
            Member restarted = Member.start(broker, group, topic, "a2", staticA);
            members.add(restarted);
            await().atMost(WAIT).untilAsserted(() -> assertThat(restarted.assignment).isEqualTo(partitionsOfA));

            produce(topic, 100, 100);
            await().atMost(WAIT).untilAsserted(() -> assertThat(received(members)).hasSize(200));
            assertExactlyOnce(members, topic, 4, 200);
            assertThat(b.assignedCount.get()).as("b saw no rebalance").isEqualTo(assignmentsOfB);
            assertThat(b.revokedCount.get()).as("b gave nothing up").isEqualTo(revocationsOfB);
            assertThat(b.generation).isEqualTo(generationOfB);
            assertThat(restarted.generation).isEqualTo(generationOfB);
        } finally {
            closeAll(members);
        }
    }

    @Test
    void committedOffsetsSurviveABrokerRestart() throws Exception {
        try (TestBroker own = TestBroker.start()) {
            String topic = "restart-offsets";
            String group = "g-restart";
            try (Admin admin = own.admin()) {
                admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get();
            }
            try (KafkaProducer<String, String> producer = own.producer(Map.of())) {
                for (int i = 0; i < 100; i++) {
                    producer.send(new ProducerRecord<>(topic, i % 2, null, "v" + i));
                }
                producer.flush();
            }
            TopicPartition p0 = new TopicPartition(topic, 0);
            TopicPartition p1 = new TopicPartition(topic, 1);
            try (KafkaConsumer<String, String> consumer = own.consumer(group, Map.of())) {
                consumer.subscribe(List.of(topic));
                await().atMost(WAIT).until(() -> !consumer.poll(Duration.ofMillis(100)).isEmpty());
                consumer.commitSync(Map.of(p0, new OffsetAndMetadata(20, "meta-0"), p1, new OffsetAndMetadata(35)));
            }

            try (Admin admin = own.admin()) {
                // deletions are persisted too: a deleted group and deleted offsets stay deleted
                admin.alterConsumerGroupOffsets("g-deleted", Map.of(p0, new OffsetAndMetadata(1))).all().get();
                admin.deleteConsumerGroups(List.of("g-deleted")).all().get();
                admin.alterConsumerGroupOffsets("g-partly", Map.of(p0, new OffsetAndMetadata(2), p1, new OffsetAndMetadata(3))).all().get();
                admin.deleteConsumerGroupOffsets("g-partly", Set.of(p0)).all().get();
            }

            own.restart();

            try (Admin admin = own.admin()) {
                Map<TopicPartition, OffsetAndMetadata> committed =
                        admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
                assertThat(committed).containsOnlyKeys(p0, p1);
                assertThat(committed.get(p0).offset()).isEqualTo(20);
                assertThat(committed.get(p0).metadata()).isEqualTo("meta-0");
                assertThat(committed.get(p1).offset()).isEqualTo(35);
                ConsumerGroupDescription reloaded = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
                assertThat(reloaded.groupState()).isEqualTo(GroupState.EMPTY);
                assertThat(admin.listGroups().all().get()).extracting(GroupListing::groupId)
                        .contains(group, "g-partly").doesNotContain("g-deleted");
                assertThat(admin.listConsumerGroupOffsets("g-partly").partitionsToOffsetAndMetadata().get())
                        .containsOnlyKeys(p1);
            }
            try (KafkaConsumer<String, String> consumer = own.consumer(group, Map.of())) {
                consumer.subscribe(List.of(topic));
                Map<TopicPartition, Long> firstOffset = new HashMap<>();
                await().atMost(WAIT).untilAsserted(() -> {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
                        firstOffset.putIfAbsent(new TopicPartition(r.topic(), r.partition()), r.offset());
                    }
                    assertThat(firstOffset).containsOnlyKeys(p0, p1);
                });
                assertThat(firstOffset).containsEntry(p0, 20L).containsEntry(p1, 35L);
            }
        }
    }

    @Test
    void aGroupKeepsConsumingWithoutLossAcrossABrokerRestart() throws Exception {
        try (TestBroker own = TestBroker.start(Map.of("group.min.session.timeout.ms", "1000"))) {
            String topic = "restart-live";
            try (Admin admin = own.admin()) {
                admin.createTopics(List.of(new NewTopic(topic, 4, (short) 1))).all().get();
            }
            List<Member> members = new ArrayList<>();
            try {
                members.add(Member.start(own, "g-live", topic, "x", Map.of()));
                members.add(Member.start(own, "g-live", topic, "y", Map.of()));
                awaitBalanced(members, 4);
                produce(own, topic, 0, 200);
                await().atMost(WAIT).untilAsserted(() -> assertThat(received(members)).hasSize(200));

                own.restart();

                produce(own, topic, 200, 200);
                await().atMost(WAIT).untilAsserted(() -> assertThat(received(members)).hasSize(400));
                // a batch counts once its commit succeeded, so nothing counted before the restart is re-delivered after it
                assertExactlyOnce(members, topic, 4, 400);
            } finally {
                closeAll(members);
            }
        }
    }

    @Test
    void aStaticMemberThatNeverReturnsIsRemovedAfterItsSessionTimeout() throws Exception {
        String topic = "static-expiry";
        createTopic(topic, 2);
        List<Member> members = new ArrayList<>();
        try {
            members.add(Member.start(broker, "g-static-expiry", topic, "gone", Map.of(
                    ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "gone", ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 2000)));
            members.add(Member.start(broker, "g-static-expiry", topic, "stays", Map.of()));
            awaitBalanced(members, 2);
            Member gone = members.getFirst();
            // a static member's close does not leave the group: only its session timeout removes it
            gone.close();
            await().atMost(WAIT).untilAsserted(() -> assertThat(members.get(1).assignment).hasSize(2));
            produce(topic, 0, 50);
            await().atMost(WAIT).untilAsserted(() -> assertThat(members.get(1).received).hasSize(50));
        } finally {
            closeAll(members);
        }
    }

    @Test
    void aSecondConsumerWithTheSameInstanceIdFencesTheFirst() throws Exception {
        String topic = "fenced-instance";
        createTopic(topic, 1);
        Map<String, Object> sameInstance = Map.of(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "same");
        try (KafkaConsumer<String, String> first = broker.consumer("g-fenced-instance", sameInstance);
             KafkaConsumer<String, String> second = broker.consumer("g-fenced-instance", sameInstance)) {
            first.subscribe(List.of(topic));
            await().atMost(WAIT).untilAsserted(() -> {
                first.poll(Duration.ofMillis(50));
                assertThat(first.assignment()).hasSize(1);
            });
            second.subscribe(List.of(topic));
            await().atMost(WAIT).untilAsserted(() -> {
                second.poll(Duration.ofMillis(50));
                assertThat(second.assignment()).hasSize(1);
            });
            await().atMost(WAIT).untilAsserted(() -> assertThatThrownBy(() -> {
                first.poll(Duration.ofMillis(50));
                first.commitSync();
            }).isInstanceOf(FencedInstanceIdException.class));
        }
    }

    @Test
    void aMemberThatStopsPollingIsRemovedAndItsLateCommitFails() throws Exception {
        String topic = "slow-member";
        createTopic(topic, 2);
        produce(topic, 0, 10);
        try (KafkaConsumer<String, String> slow = broker.consumer("g-slow", Map.of(
                ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, 2000,
                ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 300));
             Admin admin = broker.admin()) {
            slow.subscribe(List.of(topic));
            List<ConsumerRecord<String, String>> got = new ArrayList<>();
            await().atMost(WAIT).untilAsserted(() -> {
                slow.poll(Duration.ofMillis(100)).forEach(got::add);
                assertThat(got).hasSize(10);
            });
            // no poll for longer than max.poll.interval.ms: the client leaves and the group empties
            await().atMost(WAIT).untilAsserted(() -> assertThat(admin.describeConsumerGroups(List.of("g-slow"))
                    .all().get().get("g-slow").members()).isEmpty());
            assertThatThrownBy(slow::commitSync).isInstanceOf(CommitFailedException.class);
            assertThat(admin.listConsumerGroupOffsets("g-slow").partitionsToOffsetAndMetadata().get()).isEmpty();
        }
    }

    @Test
    void aCommitWithMetadataOverTheLimitIsRejected() throws Exception {
        String topic = "big-metadata";
        createTopic(topic, 1);
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaConsumer<String, String> consumer = broker.consumer("g-big-metadata", Map.of())) {
            consumer.assign(List.of(tp));
            assertThatThrownBy(() -> consumer.commitSync(Map.of(tp, new OffsetAndMetadata(0, "x".repeat(5000)))))
                    .isInstanceOf(OffsetMetadataTooLarge.class);
            consumer.commitSync(Map.of(tp, new OffsetAndMetadata(0, "x".repeat(100))));
            assertThat(consumer.committed(Set.of(tp)).get(tp).metadata()).hasSize(100);
        }
    }

    private static void createTopic(String topic, int partitions) throws Exception {
        try (Admin admin = broker.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        }
    }

    /** Produces values v{from}..v{from+count-1} round-robin over the partitions, keyless, acked. */
    private static void produce(String topic, int from, int count) throws Exception {
        produce(broker, topic, from, count);
    }

    private static void produce(TestBroker target, String topic, int from, int count) throws Exception {
        try (KafkaProducer<String, String> producer = target.producer(Map.of())) {
            int partitions = producer.partitionsFor(topic).size();
            for (int i = from; i < from + count; i++) {
                producer.send(new ProducerRecord<>(topic, i % partitions, null, "v" + i));
            }
            producer.flush();
        }
    }

    /** Waits until the members' assignments are disjoint, cover every partition and are as even as possible. */
    private static void awaitBalanced(List<Member> members, int partitions) {
        await().atMost(WAIT).untilAsserted(() -> {
            Set<TopicPartition> all = new HashSet<>();
            int total = 0;
            for (Member m : members) {
                assertThat(m.error).isNull();
                assertThat(m.assignment.size()).isBetween(partitions / members.size(),
                        (partitions + members.size() - 1) / members.size());
                all.addAll(m.assignment);
                total += m.assignment.size();
            }
            assertThat(all).hasSize(partitions);
            assertThat(total).isEqualTo(partitions);
        });
    }

    private static List<ConsumerRecord<String, String>> received(List<Member> members) {
        List<ConsumerRecord<String, String>> out = new ArrayList<>();
        for (Member m : members) {
            assertThat(m.error).as("member " + m.name).isNull();
            out.addAll(m.received);
        }
        return out;
    }

    private static void assertExactlyOnce(List<Member> members, String topic, int partitions, int expected) {
        List<ConsumerRecord<String, String>> all = received(members);
        Map<TopicPartition, List<Long>> offsets = new HashMap<>();
        Set<String> values = new HashSet<>();
        for (ConsumerRecord<String, String> r : all) {
            offsets.computeIfAbsent(new TopicPartition(r.topic(), r.partition()), k -> new ArrayList<>()).add(r.offset());
            values.add(r.value());
        }
        assertThat(all).hasSize(expected);
        assertThat(values).as("no record lost or duplicated").hasSize(expected);
        for (int i = 0; i < expected; i++) {
            assertThat(values).contains("v" + i);
        }
        assertThat(offsets).hasSize(partitions);
        for (Map.Entry<TopicPartition, List<Long>> e : offsets.entrySet()) {
            assertThat(e.getKey().topic()).isEqualTo(topic);
            assertThat(new HashSet<>(e.getValue())).as("offsets of " + e.getKey()).hasSize(e.getValue().size());
        }
    }

    private static void assertOffsetOrderPerPartition(Member m) {
        Map<Integer, List<Long>> perPartition = new HashMap<>();
        for (ConsumerRecord<String, String> r : m.received) {
            perPartition.computeIfAbsent(r.partition(), k -> new ArrayList<>()).add(r.offset());
        }
        for (List<Long> offsets : perPartition.values()) {
            assertThat(offsets).isSorted().doesNotHaveDuplicates();
        }
    }

    private static void closeAll(List<Member> members) {
        for (Member m : members) {
            m.close();
        }
    }

    /**
     * One consumer polling in its own thread; commits synchronously after each non-empty poll and only
     * then counts the batch as received. A commit the group refuses (it rebalanced between the poll
     * and the commit, which Kafka allows at any time) drops the batch, to be read again from the
     * committed offset, so every record is still received exactly once.
     */
    static final class Member implements AutoCloseable {
        final String name;
        final ConcurrentLinkedQueue<ConsumerRecord<String, String>> received = new ConcurrentLinkedQueue<>();
        final AtomicInteger assignedCount = new AtomicInteger();
        final AtomicInteger revokedCount = new AtomicInteger();
        /** Commits refused because the group rebalanced meanwhile; their batches were not counted as received. */
        final AtomicInteger failedCommits = new AtomicInteger();
        volatile Set<TopicPartition> assignment = Set.of();
        volatile int generation = -1;
        volatile Throwable error;
        private volatile boolean running = true;
        private final Thread thread;

        private Member(String name, Runnable body) {
            this.name = name;
            this.thread = new Thread(body, "member-" + name);
        }

        static Member start(TestBroker broker, String group, String topic, String name, Map<String, Object> extra) {
            Map<String, Object> props = new HashMap<>();
            props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 6000);
            props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 500);
            props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 50);
            props.put(ConsumerConfig.CLIENT_ID_CONFIG, name);
            props.putAll(extra);
            Member[] self = new Member[1];
            self[0] = new Member(name, () -> self[0].run(broker, group, topic, props));
            self[0].thread.start();
            return self[0];
        }

        private void run(TestBroker broker, String group, String topic, Map<String, Object> props) {
            try (KafkaConsumer<String, String> consumer = broker.consumer(group, props)) {
                consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                    @Override
                    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                        if (!partitions.isEmpty()) {
                            revokedCount.incrementAndGet();
                        }
                    }

                    @Override
                    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                        assignedCount.incrementAndGet();
                    }
                });
                while (running) {
                    ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(100));
                    if (!records.isEmpty()) {
                        try {
                            consumer.commitSync();
                        } catch (CommitFailedException | RebalanceInProgressException e) {
                            // What an application does: the batch is not processed, and is read again by
                            // whoever holds its partitions next (from the last committed offset).
                            failedCommits.incrementAndGet();
                            for (TopicPartition tp : records.partitions()) {
                                if (consumer.assignment().contains(tp)) {
                                    consumer.seek(tp, records.records(tp).getFirst().offset());
                                }
                            }
                            continue;
                        }
                        records.forEach(received::add);
                    }
                    assignment = Set.copyOf(consumer.assignment());
                    generation = consumer.groupMetadata().generationId();
                }
            } catch (Throwable t) {
                error = t;
            }
        }

        @Override
        public void close() {
            running = false;
            try {
                thread.join(WAIT.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            assertThat(thread.isAlive()).as("member " + name + " stopped").isFalse();
        }
    }
}
