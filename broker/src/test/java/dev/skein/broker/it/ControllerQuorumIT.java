package dev.skein.broker.it;

import dev.skein.broker.metadata.Topics;
import dev.skein.broker.server.SkeinBroker;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.InvalidReplicaAssignmentException;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** Three full Skein brokers in this JVM, each a voter of the controller quorum, driven by the real Admin client. */
class ControllerQuorumIT {
    @TempDir
    Path dir;
    private InJvmCluster cluster;

    @BeforeEach
    void startCluster() throws Exception {
        cluster = InJvmCluster.start(dir, 3, 0, (i, p) -> {
            p.put("offsets.topic.replication.factor", "3");
            p.put("broker.heartbeat.interval.ms", "200");
            p.put("broker.session.timeout.ms", "3000");
            p.put("broker.rack", "rack-" + i);
            p.put("auto.leader.rebalance.enable", "false");
            p.put("replica.high.watermark.checkpoint.interval.ms", "200");
        });
    }

    @AfterEach
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private Admin admin(int broker) {
        return cluster.admin(broker);
    }

    @Test
    void describeClusterShowsThreeBrokersAndAController() {
        try (Admin admin = admin(0)) {
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                DescribeClusterResult cluster = admin.describeCluster();
                assertThat(cluster.nodes().get().stream().map(Node::id).collect(Collectors.toSet()))
                        .containsExactlyInAnyOrder(0, 1, 2);
                assertThat(cluster.controller().get().id()).isBetween(0, 2);
            });
        }
    }

    @Test
    void topicWithReplicationFactorThreeHasLeadersSpreadOverThreeBrokers() throws Exception {
        awaitThreeLiveBrokers();
        try (Admin admin = admin(1)) {
            admin.createTopics(List.of(new NewTopic("spread", 6, (short) 3))).all().get();
            try (Admin other = admin(2)) {
                await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                    TopicDescription d = other.describeTopics(List.of("spread")).allTopicNames().get().get("spread");
                    assertThat(d.partitions()).hasSize(6);
                    Set<Integer> leaders = d.partitions().stream().map(p -> p.leader().id()).collect(Collectors.toSet());
                    assertThat(leaders).containsExactlyInAnyOrder(0, 1, 2);
                    for (TopicPartitionInfo p : d.partitions()) {
                        assertThat(p.replicas()).hasSize(3);
                    }
                });
            }
            assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("too-wide", 1, (short) 4))).all().get())
                    .isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(InvalidReplicationFactorException.class).hasMessageContaining("4");
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() ->
                    assertThat(admin.describeTopics(List.of(Topics.GROUP_METADATA_TOPIC)).allTopicNames().get()
                            .get(Topics.GROUP_METADATA_TOPIC).partitions().getFirst().replicas()).hasSize(3));
        }
    }

    @Test
    void aTopicAndNewPartitionsGetExactlyTheReplicasAssignedByHand() throws Exception {
        awaitThreeLiveBrokers();
        try (Admin admin = admin(0)) {
            admin.createTopics(List.of(new NewTopic("placed", Map.of(0, List.of(2, 1), 1, List.of(1, 0))))).all().get();
            admin.createPartitions(Map.of("placed", NewPartitions.increaseTo(3, List.of(List.of(0, 2))))).all().get();

            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                TopicDescription d = admin.describeTopics(List.of("placed")).allTopicNames().get().get("placed");
                assertThat(d.partitions()).extracting(p -> p.replicas().stream().map(Node::id).toList())
                        .containsExactly(List.of(2, 1), List.of(1, 0), List.of(0, 2));
                // the first replica assigned is the preferred, and with all up the actual, leader
                assertThat(d.partitions()).extracting(p -> p.leader().id()).containsExactly(2, 1, 0);
            });

            assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("nowhere", Map.of(0, List.of(0, 7)))))
                    .all().get()).isInstanceOf(ExecutionException.class).cause()
                    .isInstanceOf(InvalidReplicaAssignmentException.class).hasMessageContaining("broker 7");
            assertThatThrownBy(() -> admin.createPartitions(Map.of("placed",
                    NewPartitions.increaseTo(4, List.of(List.of(1))))).all().get())
                    .isInstanceOf(ExecutionException.class).cause()
                    .isInstanceOf(InvalidReplicaAssignmentException.class).hasMessageContaining("same number of replicas");
            assertThat(admin.describeTopics(List.of("placed")).allTopicNames().get().get("placed").partitions()).hasSize(3);
            assertThat(admin.listTopics().names().get()).doesNotContain("nowhere");
        }
    }

    @Test
    void closingABrokerMovesItsLeadershipsAwayFirst() throws Exception {
        awaitThreeLiveBrokers();
        try (Admin admin = admin(1)) {
            admin.createTopics(List.of(new NewTopic("handover", 6, (short) 3))).all().get();
            cluster.broker(0).close();

            // sooner than the 3 s session timeout could fence it: the controlled shutdown did the move
            await().atMost(Duration.ofMillis(2500)).untilAsserted(() -> {
                TopicDescription d = admin.describeTopics(List.of("handover")).allTopicNames().get().get("handover");
                for (TopicPartitionInfo p : d.partitions()) {
                    assertThat(p.leader()).isNotNull();
                    assertThat(p.leader().id()).isNotEqualTo(0);
                    assertThat(p.isr().stream().map(Node::id)).doesNotContain(0);
                }
            });
        }
    }

    @Test
    void consumerGroupsFindTheLeaderOfTheirOffsetsPartitionAsCoordinator() throws Exception {
        awaitThreeLiveBrokers();
        String bootstrap = cluster.brokers().stream().map(SkeinBroker::bootstrapServers).collect(Collectors.joining(","));
        try (Admin admin = admin(0)) {
            admin.createTopics(List.of(new NewTopic("grouped", 3, (short) 3))).all().get();
            // the offsets topic is created once the brokers are live: until then describing it fails
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() -> assertThat(admin.describeTopics(
                    List.of(Topics.GROUP_METADATA_TOPIC)).allTopicNames().get().get(Topics.GROUP_METADATA_TOPIC)
                    .partitions()).allSatisfy(p -> assertThat(p.isr()).hasSize(3)));
        }
        Map<String, Object> producerProps = Map.of(
                org.apache.kafka.clients.producer.ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                org.apache.kafka.clients.producer.ProducerConfig.ACKS_CONFIG, "all",
                org.apache.kafka.clients.producer.ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
                org.apache.kafka.common.serialization.StringSerializer.class.getName(),
                org.apache.kafka.clients.producer.ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
                org.apache.kafka.common.serialization.StringSerializer.class.getName());
        try (var producer = new org.apache.kafka.clients.producer.KafkaProducer<String, String>(producerProps)) {
            for (int i = 0; i < 300; i++) {
                producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>("grouped", "k" + i, "v" + i));
            }
            producer.flush();
        }
        // several groups, so their coordinators land on different brokers
        for (String group : List.of("g-a", "g-b", "g-c", "g-d")) {
            Map<String, Object> consumerProps = Map.of(
                    org.apache.kafka.clients.consumer.ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                    org.apache.kafka.clients.consumer.ConsumerConfig.GROUP_ID_CONFIG, group,
                    org.apache.kafka.clients.consumer.ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                    org.apache.kafka.clients.consumer.ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                    org.apache.kafka.clients.consumer.ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
                    org.apache.kafka.common.serialization.StringDeserializer.class.getName(),
                    org.apache.kafka.clients.consumer.ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                    org.apache.kafka.common.serialization.StringDeserializer.class.getName());
            Set<String> seen = new java.util.HashSet<>();
            try (var consumer = new org.apache.kafka.clients.consumer.KafkaConsumer<String, String>(consumerProps)) {
                consumer.subscribe(List.of("grouped"));
                await().atMost(Duration.ofSeconds(60)).until(() -> {
                    consumer.poll(Duration.ofMillis(200)).forEach(r -> seen.add(r.value()));
                    consumer.commitSync();
                    return seen.size() == 300;
                });
            }
            try (Admin admin = admin(1)) {
                long committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get()
                        .values().stream().mapToLong(o -> o.offset()).sum();
                assertThat(committed).as("offsets committed by %s", group).isEqualTo(300);
            }
        }
    }

    /**
     * The coordinator of a group is the leader of its {@code __consumer_offsets} partition, so it
     * moves when that leadership moves: the broker taking over must serve the offsets committed
     * through the previous coordinator (it replicated them as a follower), and a broker that gets
     * the leadership back must serve what was committed while it was away.
     */
    @Test
    void committedOffsetsFollowTheCoordinatorWhenItsPartitionChangesLeader() throws Exception {
        awaitThreeLiveBrokers();
        String group = "g-moving";
        TopicPartition tp = new TopicPartition("moving", 0);
        int first;
        try (Admin admin = admin(0)) {
            admin.createTopics(List.of(new NewTopic("moving", 1, (short) 3))).all().get();
            // the offsets topic is created once the brokers are live: until then describing it fails
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() -> assertThat(admin.describeTopics(
                    List.of(Topics.GROUP_METADATA_TOPIC)).allTopicNames().get().get(Topics.GROUP_METADATA_TOPIC)
                    .partitions()).allSatisfy(p -> assertThat(p.isr()).hasSize(3)));
            first = coordinatorOf(admin, group);
            admin.alterConsumerGroupOffsets(group, Map.of(tp, new OffsetAndMetadata(17))).all().get();
            assertThat(committed(admin, group, tp)).isEqualTo(17);
        }

        int survivor = (first + 1) % 3;
        cluster.broker(first).close();
        try (Admin admin = admin(survivor)) {
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() ->
                    assertThat(coordinatorOf(admin, group)).isNotEqualTo(first));
            assertThat(committed(admin, group, tp)).as("offset served by the new coordinator").isEqualTo(17);
            admin.alterConsumerGroupOffsets(group, Map.of(tp, new OffsetAndMetadata(29))).all().get();
        }

        // the first coordinator returns, catches up as a follower, and takes its preferred leadership back
        cluster.restart(first);
        try (Admin admin = admin(survivor)) {
            int offsetsPartition = org.apache.kafka.common.utils.Utils.abs(group.hashCode()) % admin.describeTopics(
                    List.of(Topics.GROUP_METADATA_TOPIC)).allTopicNames().get().get(Topics.GROUP_METADATA_TOPIC).partitions().size();
            TopicPartition offsets = new TopicPartition(Topics.GROUP_METADATA_TOPIC, offsetsPartition);
            await().atMost(Duration.ofSeconds(60)).ignoreExceptions().untilAsserted(() -> {
                TopicPartitionInfo p = admin.describeTopics(List.of(Topics.GROUP_METADATA_TOPIC)).allTopicNames().get()
                        .get(Topics.GROUP_METADATA_TOPIC).partitions().get(offsetsPartition);
                assertThat(p.isr().stream().map(Node::id)).contains(first);
            });
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() -> {
                admin.electLeaders(ElectionType.PREFERRED, Set.of(offsets)).partitions().get();
                assertThat(coordinatorOf(admin, group)).isEqualTo(first);
            });
            assertThat(committed(admin, group, tp)).as("offset served by the returning coordinator").isEqualTo(29);
        }
    }

    /** Every replica saves its high watermark, so after a restart it need not learn it again from the log start. */
    @Test
    void everyReplicaCheckpointsItsHighWatermark() throws Exception {
        awaitThreeLiveBrokers();
        try (Admin admin = admin(0)) {
            admin.createTopics(List.of(new NewTopic("watermarked", 1, (short) 3))).all().get();
        }
        Map<String, Object> producerProps = Map.of(
                org.apache.kafka.clients.producer.ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.broker(0).bootstrapServers(),
                org.apache.kafka.clients.producer.ProducerConfig.ACKS_CONFIG, "all",
                org.apache.kafka.clients.producer.ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
                org.apache.kafka.common.serialization.StringSerializer.class.getName(),
                org.apache.kafka.clients.producer.ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
                org.apache.kafka.common.serialization.StringSerializer.class.getName());
        try (var producer = new org.apache.kafka.clients.producer.KafkaProducer<String, String>(producerProps)) {
            for (int i = 0; i < 100; i++) {
                producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>("watermarked", "k", "v" + i));
            }
            producer.flush();
        }
        TopicPartition tp = new TopicPartition("watermarked", 0);
        for (int i = 0; i < 3; i++) {
            Path logDir = Path.of(cluster.properties(i).get("log.dirs"));
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(dev.skein.broker.storage.HighWatermarkCheckpoint.read(logDir)).containsEntry(tp, 100L));
        }
        cluster.broker(2).close();
        assertThat(dev.skein.broker.storage.HighWatermarkCheckpoint.read(Path.of(cluster.properties(2).get("log.dirs"))))
                .containsEntry(tp, 100L);
    }

    /** FindCoordinator's answer: the leader of the group's {@code __consumer_offsets} partition. */
    private static int coordinatorOf(Admin admin, String group) throws Exception {
        List<TopicPartitionInfo> partitions = admin.describeTopics(List.of(Topics.GROUP_METADATA_TOPIC)).allTopicNames().get()
                .get(Topics.GROUP_METADATA_TOPIC).partitions();
        return partitions.get(org.apache.kafka.common.utils.Utils.abs(group.hashCode()) % partitions.size()).leader().id();
    }

    private static long committed(Admin admin, String group, TopicPartition tp) throws Exception {
        OffsetAndMetadata o = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().get(tp);
        return o == null ? -1 : o.offset();
    }

    private void awaitThreeLiveBrokers() {
        try (Admin admin = admin(0)) {
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(admin.describeCluster().nodes().get()).hasSize(3));
        }
    }
}
