package dev.skein.broker.it;

import dev.skein.broker.config.BrokerConfig;
import dev.skein.broker.server.SkeinBroker;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Three controller voters and two brokers that are not voters ({@code process.roles=broker}) in
 * this JVM: the broker-only nodes register, lead and follow partitions, accept admin requests and
 * learn every change, also while a voter is down, so a cluster can grow beyond its quorum.
 */
class BrokerOnlyNodesIT {
    @TempDir
    Path dir;
    private InJvmCluster cluster;

    @BeforeEach
    void startCluster() throws Exception {
        cluster = InJvmCluster.start(dir, 3, 2, (i, p) -> {
            p.put("offsets.topic.replication.factor", "3");
            p.put("broker.heartbeat.interval.ms", "200");
            p.put("broker.session.timeout.ms", "3000");
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

    private String bootstrap() {
        return cluster.bootstrap();
    }

    private void awaitLiveBrokers(Admin admin, Set<Integer> ids) {
        await().atMost(Duration.ofSeconds(60)).ignoreExceptions().untilAsserted(() ->
                assertThat(admin.describeCluster().nodes().get().stream().map(Node::id).collect(Collectors.toSet()))
                        .isEqualTo(ids));
    }

    @Test
    void brokersThatAreNotVotersServeLeadAndFollowPartitions() throws Exception {
        try (Admin observerAdmin = admin(4)) {
            awaitLiveBrokers(observerAdmin, Set.of(0, 1, 2, 3, 4));
            // an admin request through a broker-only node, replicas on all five brokers
            observerAdmin.createTopics(List.of(new NewTopic("wide", 5, (short) 5)
                    .configs(Map.of("min.insync.replicas", "3")))).all().get();
            await().atMost(Duration.ofSeconds(60)).ignoreExceptions().untilAsserted(() -> {
                TopicDescription d = observerAdmin.describeTopics(List.of("wide")).allTopicNames().get().get("wide");
                Set<Integer> leaders = new HashSet<>();
                for (TopicPartitionInfo p : d.partitions()) {
                    assertThat(p.isr()).hasSize(5);
                    leaders.add(p.leader().id());
                }
                assertThat(leaders).as("leaders spread over voters and non-voters").contains(3, 4);
            });
        }

        produceAndConsume("wide", 0, 500);

        // a voter down: the quorum (two of three) keeps deciding, and the broker-only nodes keep learning
        cluster.broker(0).close();
        try (Admin observerAdmin = admin(3)) {
            awaitLiveBrokers(observerAdmin, Set.of(1, 2, 3, 4));
            observerAdmin.createTopics(List.of(new NewTopic("later", 3, (short) 3))).all().get();
            try (Admin otherObserver = admin(4)) {
                await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() ->
                        assertThat(otherObserver.describeTopics(List.of("later")).allTopicNames().get().get("later")
                                .partitions()).hasSize(3));
            }
        }
        produceAndConsume("wide", 500, 500);
    }

    @Test
    void describeQuorumListsTheBrokerOnlyNodesAsObserversWithTheirIncarnation() throws Exception {
        // asked through a voter, and through a broker-only node (which must not claim to be a quorum of one)
        List<java.util.Map<Integer, String>> voterDirectories = new java.util.ArrayList<>();
        for (int node : List.of(0, 3)) {
            voterDirectories.add(describeQuorumThrough(node));
        }
        // a broker-only node asks the active controller, so it names the voters' directory ids too
        assertThat(voterDirectories.get(1)).isEqualTo(voterDirectories.get(0)).hasSize(3)
                .doesNotContainValue(org.apache.kafka.common.Uuid.ZERO_UUID.toString());
    }

    /** The voters' directory ids by node id, as the cluster answered through {@code node}. */
    private java.util.Map<Integer, String> describeQuorumThrough(int node) throws Exception {
        java.util.Map<Integer, String> voterDirectories = new java.util.TreeMap<>();
        try (Admin admin = admin(node)) {
            awaitLiveBrokers(admin, Set.of(0, 1, 2, 3, 4));
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() -> {
                var quorum = admin.describeMetadataQuorum().quorumInfo().get(10, TimeUnit.SECONDS);
                assertThat(quorum.voters()).extracting(v -> v.replicaId()).containsExactlyInAnyOrder(0, 1, 2);
                assertThat(quorum.observers()).extracting(o -> o.replicaId()).containsExactlyInAnyOrder(3, 4);
                // the observer's directory id is its log dir's: what meta.properties holds
                for (var o : quorum.observers()) {
                    Properties meta = new Properties();
                    try (var in = java.nio.file.Files.newInputStream(Path.of(cluster.properties(o.replicaId())
                            .get("log.dirs").split(",")[0]).resolve("meta.properties"))) {
                        meta.load(in);
                    }
                    assertThat(o.replicaDirectoryId().toString()).isEqualTo(meta.getProperty("directory.id"));
                }
                quorum.voters().forEach(v -> voterDirectories.put(v.replicaId(), v.replicaDirectoryId().toString()));
            });
        }
        return voterDirectories;
    }

    @Test
    void aBrokerOnlyNodeRestartsAndCatchesUpBeforeItServes() throws Exception {
        try (Admin admin = admin(1)) {
            awaitLiveBrokers(admin, Set.of(0, 1, 2, 3, 4));
            admin.createTopics(List.of(new NewTopic("before", 2, (short) 3))).all().get();
        }
        cluster.broker(3).close();
        try (Admin admin = admin(1)) {
            awaitLiveBrokers(admin, Set.of(0, 1, 2, 4));
            admin.createTopics(List.of(new NewTopic("while-away", 2, (short) 3))).all().get();
        }
        cluster.restart(3);
        try (Admin admin = admin(3)) {
            // the first answer of the returning node already knows what happened while it was away
            Set<String> topics = admin.listTopics().names().get();
            assertThat(topics).contains("before", "while-away");
            awaitLiveBrokers(admin, Set.of(0, 1, 2, 3, 4));
        }
    }

    @Test
    void rolesThatDisagreeWithTheVotersAreRefusedWithAClearError() {
        // own log dirs: checked before anything is formatted or locked
        Map<String, String> voterWithoutRole = new HashMap<>(cluster.properties(0));
        voterWithoutRole.put("log.dirs", dir.resolve("refused-0").toString());
        voterWithoutRole.put("process.roles", "broker");
        assertThatThrownBy(() -> SkeinBroker.start(new BrokerConfig(voterWithoutRole)))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("process.roles").hasMessageContaining("controller.quorum.voters");

        Map<String, String> controllerNotListed = new HashMap<>(cluster.properties(3));
        controllerNotListed.put("log.dirs", dir.resolve("refused-3").toString());
        controllerNotListed.put("process.roles", "broker,controller");
        assertThatThrownBy(() -> SkeinBroker.start(new BrokerConfig(controllerNotListed)))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("not in controller.quorum.voters");
        assertThat(dir.resolve("refused-0")).doesNotExist();
        assertThat(dir.resolve("refused-3")).doesNotExist();
    }

    private void produceAndConsume(String topic, int from, int count) throws Exception {
        Map<String, Object> pp = new HashMap<>();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        pp.put(ProducerConfig.ACKS_CONFIG, "all");
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
            for (int i = from; i < from + count; i++) {
                producer.send(new ProducerRecord<>(topic, "k" + i, "v" + i));
            }
            producer.flush();
        }
        Map<String, Object> cp = new HashMap<>();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        cp.put(ConsumerConfig.GROUP_ID_CONFIG, "g-" + topic + "-" + from);
        cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        Set<String> seen = new HashSet<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(cp)) {
            consumer.subscribe(List.of(topic));
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    seen.add(r.value());
                }
                return seen.size() >= from + count;
            });
        }
        for (int i = 0; i < from + count; i++) {
            assertThat(seen).contains("v" + i);
        }
    }
}
