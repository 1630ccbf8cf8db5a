package dev.skein.broker.it;

import dev.skein.broker.config.BrokerConfig;
import dev.skein.broker.server.SkeinBroker;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.ElectionNotNeededException;
import org.apache.kafka.common.errors.InvalidReplicaAssignmentException;
import org.apache.kafka.common.errors.NoReassignmentInProgressException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.AlterPartitionReassignmentsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Partition reassignment and requested leader elections on three full Skein brokers in this JVM,
 * each a voter of the controller quorum, driven by the real Admin, producer and consumer clients.
 */
class PartitionReassignmentIT {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;
    private final List<SkeinBroker> brokers = new ArrayList<>();
    private final List<Map<String, String>> configs = new ArrayList<>();

    @BeforeEach
    void startCluster() throws Exception {
        List<Map<String, String>> quorum = TestBroker.quorumProperties(dir, 3);
        for (int i = 0; i < 3; i++) {
            Map<String, String> p = quorum.get(i);
            p.put("broker.heartbeat.interval.ms", "200");
            p.put("broker.session.timeout.ms", "3000");
            p.put("auto.leader.rebalance.enable", "false");
            configs.add(p);
            brokers.add(SkeinBroker.start(new BrokerConfig(p)));
        }
        try (Admin admin = admin(0)) {
            await().atMost(WAIT).untilAsserted(() -> assertThat(admin.describeCluster().nodes().get()).hasSize(3));
        }
    }

    @AfterEach
    void stopCluster() {
        brokers.forEach(b -> {
            if (b != null) {
                b.close();
            }
        });
    }

    private void restart(int id) throws Exception {
        brokers.set(id, SkeinBroker.start(new BrokerConfig(configs.get(id))));
    }

    private void stop(int id) {
        brokers.get(id).close();
        brokers.set(id, null);
    }

    private Admin admin(int broker) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, brokers.get(broker).bootstrapServers(),
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000"));
    }

    private static TopicPartitionInfo describe(Admin admin, String topic) throws Exception {
        TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
        return d.partitions().getFirst();
    }

    private static List<Integer> ids(List<Node> nodes) {
        return nodes.stream().map(Node::id).toList();
    }

    private static void reassign(Admin admin, TopicPartition tp, List<Integer> target) throws Exception {
        admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(target)))).all().get();
    }

    private void awaitReassigned(Admin admin, TopicPartition tp, Integer... replicas) {
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(admin.listPartitionReassignments(Set.of(tp)).reassignments().get()).isEmpty();
            TopicPartitionInfo p = describe(admin, tp.topic());
            assertThat(ids(p.replicas())).containsExactly(replicas);
            assertThat(ids(p.isr())).containsExactlyInAnyOrder(replicas);
        });
    }

    private void awaitLogDropped(int broker, TopicPartition tp) {
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(brokers.get(broker).replicaManager().partition(tp)).isEmpty();
            assertThat(dir.resolve("broker-" + broker).resolve("logs").resolve(tp.toString())).doesNotExist();
        });
    }

    private List<String> produce(int viaBroker, String topic, int n) throws Exception {
        Map<String, Object> p = new HashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers.get(viaBroker).bootstrapServers());
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        List<String> values = new ArrayList<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            List<Future<RecordMetadata>> acks = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                values.add("v-" + i);
                acks.add(producer.send(new ProducerRecord<>(topic, 0, "k" + i, "v-" + i)));
            }
            for (Future<RecordMetadata> f : acks) {
                f.get();
            }
        }
        return values;
    }

    private List<String> consume(int viaBroker, TopicPartition tp, int n) {
        Map<String, Object> p = new HashMap<>();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers.get(viaBroker).bootstrapServers());
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        List<String> out = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (out.size() < n && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    out.add(r.value());
                }
            }
        }
        return out;
    }

    @Test
    void replicaMovesToTheThirdBrokerWithEveryRecordAndTheReplicationFactorChangesBothWays() throws Exception {
        TopicPartition tp = new TopicPartition("moved", 0);
        try (Admin admin = admin(0)) {
            admin.createTopics(List.of(new NewTopic("moved", 1, (short) 2))).all().get();
        }
        List<Integer> before;
        try (Admin admin = admin(0)) {
            before = ids(describe(admin, "moved").replicas());
        }
        int a = before.get(0);
        int b = before.get(1);
        int c = 3 - a - b;
        List<String> written = produce(a, "moved", 300);

        // the new replica's broker is down, so the reassignment is observably in progress
        stop(c);
        try (Admin admin = admin(a)) {
            reassign(admin, tp, List.of(c, a));
            Map<TopicPartition, PartitionReassignment> ongoing = admin.listPartitionReassignments().reassignments().get();
            assertThat(ongoing).containsOnlyKeys(tp);
            assertThat(ongoing.get(tp).replicas()).containsExactly(c, a, b);
            assertThat(ongoing.get(tp).addingReplicas()).containsExactly(c);
            assertThat(ongoing.get(tp).removingReplicas()).containsExactly(b);

            restart(c);
            awaitReassigned(admin, tp, c, a);
            awaitLogDropped(b, tp);

            // the moved replica leads once elected and serves every acknowledged record
            assertThat(admin.electLeaders(ElectionType.PREFERRED, Set.of(tp)).partitions().get().get(tp)).isEmpty();
            await().atMost(WAIT).untilAsserted(() -> assertThat(describe(admin, "moved").leader().id()).isEqualTo(c));
            assertThat(consume(a, tp, written.size())).containsExactlyElementsOf(written);

            // replication factor 2 -> 3 -> 2
            reassign(admin, tp, List.of(c, a, b));
            awaitReassigned(admin, tp, c, a, b);
            await().atMost(WAIT).untilAsserted(() ->
                    assertThat(brokers.get(b).replicaManager().partition(tp).orElseThrow().log().logEndOffset())
                            .isEqualTo(written.size()));
            reassign(admin, tp, List.of(c, a));
            awaitReassigned(admin, tp, c, a);
            awaitLogDropped(b, tp);
            assertThat(consume(b, tp, written.size())).containsExactlyElementsOf(written);
        }
    }

    @Test
    void badReassignmentsFailWithKafkasErrors() throws Exception {
        TopicPartition tp = new TopicPartition("strict", 0);
        try (Admin admin = admin(1)) {
            admin.createTopics(List.of(new NewTopic("strict", 1, (short) 2))).all().get();
            int a = ids(describe(admin, "strict").replicas()).getFirst();

            assertThatThrownBy(() -> reassign(admin, tp, List.of(a, 9)))
                    .isInstanceOf(ExecutionException.class).cause()
                    .isInstanceOf(InvalidReplicaAssignmentException.class).hasMessageContaining("Broker 9");
            assertThatThrownBy(() -> reassign(admin, tp, List.of(a, a)))
                    .isInstanceOf(ExecutionException.class).cause()
                    .isInstanceOf(InvalidReplicaAssignmentException.class).hasMessageContaining("Broker " + a);
            // the Admin client refuses an empty list itself; on the wire the broker answers as Kafka does
            try (KafkaWire wire = new KafkaWire(brokers.get(1).port())) {
                AlterPartitionReassignmentsResponseData r = wire.call(ApiKeys.ALTER_PARTITION_REASSIGNMENTS, (short) 0,
                        new AlterPartitionReassignmentsRequestData().setTopics(List.of(
                                new AlterPartitionReassignmentsRequestData.ReassignableTopic().setName("strict")
                                        .setPartitions(List.of(new AlterPartitionReassignmentsRequestData.ReassignablePartition()
                                                .setPartitionIndex(0).setReplicas(List.of()))))));
                assertThat(r.responses().getFirst().partitions().getFirst().errorCode())
                        .isEqualTo(Errors.INVALID_REPLICA_ASSIGNMENT.code());
            }
            assertThatThrownBy(() -> reassign(admin, new TopicPartition("strict", 4), List.of(a)))
                    .isInstanceOf(ExecutionException.class).cause()
                    .isInstanceOf(UnknownTopicOrPartitionException.class);
            assertThatThrownBy(() -> reassign(admin, new TopicPartition("absent", 0), List.of(a)))
                    .isInstanceOf(ExecutionException.class).cause()
                    .isInstanceOf(UnknownTopicOrPartitionException.class);
            assertThatThrownBy(() -> admin.alterPartitionReassignments(Map.of(tp, Optional.empty())).all().get())
                    .isInstanceOf(ExecutionException.class).cause()
                    .isInstanceOf(NoReassignmentInProgressException.class);
            assertThat(admin.listPartitionReassignments().reassignments().get()).isEmpty();
        }
    }

    @Test
    void preferredElectionMovesLeadershipBackAfterALeaderChange() throws Exception {
        TopicPartition tp = new TopicPartition("elect", 0);
        int preferred;
        try (Admin admin = admin(0)) {
            admin.createTopics(List.of(new NewTopic("elect", 1, (short) 3))).all().get();
            preferred = ids(describe(admin, "elect").replicas()).getFirst();
            await().atMost(WAIT).untilAsserted(() -> assertThat(describe(admin, "elect").leader().id()).isEqualTo(preferred));
        }
        int other = (preferred + 1) % 3;
        stop(preferred);
        restart(preferred);
        try (Admin admin = admin(other)) {
            await().atMost(WAIT).untilAsserted(() -> {
                TopicPartitionInfo p = describe(admin, "elect");
                assertThat(p.leader().id()).isNotEqualTo(preferred);
                assertThat(ids(p.isr())).contains(preferred);
            });

            assertThat(admin.electLeaders(ElectionType.PREFERRED, Set.of(tp)).partitions().get().get(tp)).isEmpty();

            await().atMost(WAIT).untilAsserted(() -> assertThat(describe(admin, "elect").leader().id()).isEqualTo(preferred));
            assertThat(admin.electLeaders(ElectionType.PREFERRED, Set.of(tp)).partitions().get().get(tp))
                    .containsInstanceOf(ElectionNotNeededException.class);
            assertThat(admin.electLeaders(ElectionType.UNCLEAN, Set.of(tp)).partitions().get().get(tp))
                    .containsInstanceOf(ElectionNotNeededException.class);
            // all partitions: those already led by their preferred replica are left out of the answer
            assertThat(admin.electLeaders(ElectionType.PREFERRED, null).partitions().get()).doesNotContainKey(tp);
        }
    }
}
