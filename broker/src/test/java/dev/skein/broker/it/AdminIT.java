package dev.skein.broker.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.AlterConfigsOptions;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.MemberToRemove;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicCollection;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.GroupNotEmptyException;
import org.apache.kafka.common.errors.GroupSubscribedToTopicException;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.apache.kafka.common.errors.PolicyViolationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownMemberIdException;
import org.apache.kafka.common.errors.UnknownTopicIdException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** The real Kafka AdminClient against one broker: topics, configs, offsets, groups, cluster. */
class AdminIT {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static TestBroker broker;
    private static Admin admin;

    @BeforeAll
    static void start() throws Exception {
        broker = TestBroker.start(Map.of("auto.create.topics.enable", "false"));
        admin = broker.admin();
    }

    @AfterAll
    static void stop() throws Exception {
        try {
            if (admin != null) {
                admin.close();
            }
        } finally {
            if (broker != null) {
                broker.close();
            }
        }
    }

    // ---- the controller quorum ----

    @Test
    void describeMetadataQuorumOfASingleNodeListsItAsTheOnlyVoterAndLeader() throws Exception {
        var quorum = admin.describeMetadataQuorum().quorumInfo().get();

        assertThat(quorum.leaderId()).isEqualTo(1);
        assertThat(quorum.voters()).extracting(v -> v.replicaId()).containsExactly(1);
        assertThat(quorum.observers()).isEmpty();
    }

    // ---- topics ----

    @Test
    void createTopicWithConfigsReturnsIdAndConfigsAndIsDescribed() throws Exception {
        CreateTopicsResult result = admin.createTopics(List.of(new NewTopic("created", 3, (short) 1)
                .configs(Map.of("retention.ms", "3600000", "cleanup.policy", "compact"))));
        result.all().get();
        Uuid id = result.topicId("created").get();
        assertThat(id).isNotNull().isNotEqualTo(Uuid.ZERO_UUID);
        assertThat(result.numPartitions("created").get()).isEqualTo(3);
        assertThat(result.replicationFactor("created").get()).isEqualTo(1);
        Config config = result.config("created").get();
        assertThat(config.get("retention.ms").value()).isEqualTo("3600000");
        assertThat(config.get("cleanup.policy").value()).isEqualTo("compact");

        TopicDescription d = admin.describeTopics(List.of("created")).allTopicNames().get().get("created");
        assertThat(d.topicId()).isEqualTo(id);
        assertThat(d.isInternal()).isFalse();
        assertThat(d.partitions()).hasSize(3);
        for (int p = 0; p < 3; p++) {
            TopicPartitionInfo info = d.partitions().get(p);
            assertThat(info.partition()).isEqualTo(p);
            assertThat(info.leader().id()).isEqualTo(1);
            assertThat(info.replicas()).extracting(Node::id).containsExactly(1);
            assertThat(info.isr()).extracting(Node::id).containsExactly(1);
        }
        assertThat(admin.listTopics().names().get()).contains("created");
    }

    @Test
    void validateOnlyCreatesNothing() throws Exception {
        admin.createTopics(List.of(new NewTopic("validate-only", 2, (short) 1)),
                new CreateTopicsOptions().validateOnly(true)).all().get();
        assertThat(admin.listTopics().names().get()).doesNotContain("validate-only");
        assertThatThrownBy(() -> admin.describeTopics(List.of("validate-only")).allTopicNames().get())
                .hasCauseInstanceOf(UnknownTopicOrPartitionException.class);
    }

    @Test
    void createTopicRejectsDuplicateInvalidNameBadConfigAndTooHighReplicationFactor() throws Exception {
        admin.createTopics(List.of(new NewTopic("dup", 1, (short) 1))).all().get();
        assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("dup", 1, (short) 1))).all().get())
                .hasCauseInstanceOf(TopicExistsException.class);
        assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("bad name!", 1, (short) 1))).all().get())
                .hasCauseInstanceOf(InvalidTopicException.class);
        assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("bad-config", 1, (short) 1)
                .configs(Map.of("retention.ms", "forever")))).all().get())
                .hasCauseInstanceOf(InvalidConfigurationException.class)
                .cause().hasMessageContaining("retention.ms");
        assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("rf3", 1, (short) 3))).all().get())
                .hasCauseInstanceOf(InvalidReplicationFactorException.class);
        assertThat(admin.listTopics().names().get()).doesNotContain("bad-config", "rf3");
    }

    @Test
    void deletedTopicsDisappearFromMetadataAndCannotBeProducedTo() throws Exception {
        CreateTopicsResult created = admin.createTopics(List.of(new NewTopic("del-by-name", 2, (short) 1),
                new NewTopic("del-by-id", 2, (short) 1)));
        created.all().get();
        Uuid id = created.topicId("del-by-id").get();

        admin.deleteTopics(TopicCollection.ofTopicNames(List.of("del-by-name"))).all().get();
        admin.deleteTopics(TopicCollection.ofTopicIds(List.of(id))).all().get();

        await().atMost(WAIT).untilAsserted(() ->
                assertThat(admin.listTopics().names().get()).doesNotContain("del-by-name", "del-by-id"));
        assertThatThrownBy(() -> admin.describeTopics(List.of("del-by-name")).allTopicNames().get())
                .hasCauseInstanceOf(UnknownTopicOrPartitionException.class);
        try (KafkaProducer<String, String> producer = broker.producer(Map.of(ProducerConfig.MAX_BLOCK_MS_CONFIG, 2000))) {
            assertThatThrownBy(() -> producer.send(new ProducerRecord<>("del-by-name", "k", "v")).get())
                    .isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOfAny(TimeoutException.class, UnknownTopicOrPartitionException.class);
        }
        // deleting again is an unknown topic
        assertThatThrownBy(() -> admin.deleteTopics(List.of("del-by-name")).all().get())
                .hasCauseInstanceOf(UnknownTopicOrPartitionException.class);
    }

    @Test
    void aTopicDeletedWhileAConsumerReadsItLeavesNoFileOfItOpen() throws Exception {
        admin.createTopics(List.of(new NewTopic("deleted-while-read", 1, (short) 1)
                .configs(Map.of("segment.bytes", "1048576")))).all().get();
        String value = "v".repeat(1000);
        try (KafkaProducer<String, String> producer = broker.producer(Map.of())) {
            for (int i = 0; i < 6000; i++) {
                producer.send(new ProducerRecord<>("deleted-while-read", 0, "k", value));
            }
            producer.flush();
        }
        Path dir = broker.dataDir().resolve("logs").resolve("deleted-while-read-0");
        assertThat(openFilesUnder(dir)).as("the segments are open").isNotEmpty();

        // a consumer reads the topic over and over (segment ranges in flight) while it is deleted
        TopicPartition tp = new TopicPartition("deleted-while-read", 0);
        AtomicLong read = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        Thread reader = new Thread(() -> {
            try (KafkaConsumer<String, String> consumer = broker.consumer("g-deleted-while-read", Map.of())) {
                consumer.assign(List.of(tp));
                consumer.seekToBeginning(List.of(tp));
                while (!stop.get()) {
                    try {
                        ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(50));
                        read.addAndGet(records.count());
                        if (!records.isEmpty() && records.records(tp).getLast().offset() == 5999) {
                            consumer.seekToBeginning(List.of(tp));
                        }
                    } catch (RuntimeException e) {
                        // the partition went away under it: what a client sees of a deleted topic
                    }
                }
            }
        }, "deleted-while-read-consumer");
        reader.start();
        try {
            await().atMost(WAIT).until(() -> read.get() > 6000);
            admin.deleteTopics(List.of("deleted-while-read")).all().get();
            await().atMost(WAIT).untilAsserted(() ->
                    assertThat(admin.listTopics().names().get()).doesNotContain("deleted-while-read"));
        } finally {
            stop.set(true);
            reader.join(WAIT.toMillis());
        }
        assertThat(Files.exists(dir)).isFalse();
        await("every segment file of the deleted topic closed").atMost(WAIT)
                .untilAsserted(() -> assertThat(openFilesUnder(dir)).isEmpty());
    }

    /** The files under {@code dir} this JVM (the broker's) holds open, from {@code /proc/self/fd}. */
    private static List<String> openFilesUnder(Path dir) throws IOException {
        List<String> open = new ArrayList<>();
        try (var fds = Files.list(Path.of("/proc/self/fd"))) {
            for (Path fd : fds.toList()) {
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    if (target.startsWith(dir + "/")) {
                        open.add(target);
                    }
                } catch (IOException e) {
                    // closed since the listing
                }
            }
        }
        return open;
    }

    @Test
    void describeTopicsByIdFindsTheTopicAndAnUnknownIdFails() throws Exception {
        Uuid id = admin.createTopics(List.of(new NewTopic("by-id", 2, (short) 1))).topicId("by-id").get();
        TopicDescription d = admin.describeTopics(TopicCollection.ofTopicIds(List.of(id))).allTopicIds().get().get(id);
        assertThat(d.name()).isEqualTo("by-id");
        assertThat(d.topicId()).isEqualTo(id);
        assertThat(d.partitions()).hasSize(2);
        Uuid unknown = Uuid.randomUuid();
        assertThatThrownBy(() -> admin.describeTopics(TopicCollection.ofTopicIds(List.of(unknown))).allTopicIds().get())
                .hasCauseInstanceOf(UnknownTopicIdException.class);
    }

    @Test
    void createTopicsRejectsZeroPartitionsZeroReplicasAndUnknownConfigsAndUsesBrokerDefaults() throws Exception {
        assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("zero-partitions", 0, (short) 1))).all().get())
                .hasCauseInstanceOf(InvalidPartitionsException.class);
        assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("zero-replicas", 1, (short) 0))).all().get())
                .hasCauseInstanceOf(InvalidReplicationFactorException.class);
        assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("unknown-config", 1, (short) 1)
                .configs(Map.of("no.such.config", "1")))).all().get())
                .hasCauseInstanceOf(InvalidConfigurationException.class);
        admin.createTopics(List.of(new NewTopic("broker-defaults", Optional.empty(), Optional.empty()))).all().get();
        TopicDescription d = admin.describeTopics(List.of("broker-defaults")).allTopicNames().get().get("broker-defaults");
        assertThat(d.partitions()).hasSize(1);
        assertThat(d.partitions().getFirst().replicas()).hasSize(1);
    }

    @Test
    void aRequestAddingMoreThanTenThousandPartitionsIsRefusedWholeAndCreatesNothing() throws Exception {
        // Kafka's limit over all topics of one request: 6,000 + 4,001 is one partition too many
        CreateTopicsResult tooMany = admin.createTopics(List.of(new NewTopic("huge-a", 6_000, (short) 1),
                new NewTopic("huge-b", 4_001, (short) 1)));
        for (String topic : List.of("huge-a", "huge-b")) {
            assertThatThrownBy(() -> tooMany.values().get(topic).get())
                    .hasCauseInstanceOf(PolicyViolationException.class)
                    .cause().hasMessageStartingWith("Excessively large number of partitions per request.")
                    .hasMessageContaining("10001").hasMessageContaining("10000");
        }
        // at the limit the request is fine (validate-only: a single broker is not the place for 10,000 logs)
        admin.createTopics(List.of(new NewTopic("huge-a", 6_000, (short) 1), new NewTopic("huge-b", 4_000, (short) 1)),
                new CreateTopicsOptions().validateOnly(true)).all().get();
        assertThat(admin.listTopics().names().get()).doesNotContain("huge-a", "huge-b");

        admin.createTopics(List.of(new NewTopic("grow-huge", 1, (short) 1))).all().get();
        assertThatThrownBy(() -> admin.createPartitions(Map.of("grow-huge", NewPartitions.increaseTo(10_002))).all().get())
                .hasCauseInstanceOf(PolicyViolationException.class)
                .cause().hasMessageStartingWith("Excessively large number of partitions per request.");
        assertThat(admin.describeTopics(List.of("grow-huge")).allTopicNames().get().get("grow-huge").partitions()).hasSize(1);
        admin.createPartitions(Map.of("grow-huge", NewPartitions.increaseTo(10_001)),
                new org.apache.kafka.clients.admin.CreatePartitionsOptions().validateOnly(true)).all().get();
    }

    @Test
    void createPartitionsIncreasesAndRefusesToDecrease() throws Exception {
        admin.createTopics(List.of(new NewTopic("grow", 2, (short) 1))).all().get();
        admin.createPartitions(Map.of("grow", NewPartitions.increaseTo(5))).all().get();
        await().atMost(WAIT).untilAsserted(() -> assertThat(
                admin.describeTopics(List.of("grow")).allTopicNames().get().get("grow").partitions()).hasSize(5));
        try (KafkaProducer<String, String> producer = broker.producer(Map.of())) {
            assertThat(producer.send(new ProducerRecord<>("grow", 4, "k", "v")).get().partition()).isEqualTo(4);
        }
        assertThatThrownBy(() -> admin.createPartitions(Map.of("grow", NewPartitions.increaseTo(3))).all().get())
                .hasCauseInstanceOf(InvalidPartitionsException.class);
        assertThatThrownBy(() -> admin.createPartitions(Map.of("grow", NewPartitions.increaseTo(5))).all().get())
                .hasCauseInstanceOf(InvalidPartitionsException.class);
        assertThatThrownBy(() -> admin.createPartitions(Map.of("no-such-topic", NewPartitions.increaseTo(3))).all().get())
                .hasCauseInstanceOf(UnknownTopicOrPartitionException.class);
    }

    // ---- configs ----

    @Test
    void describeConfigsShowsTopicOverridesAsDynamicAndTheRestAsDefaults() throws Exception {
        admin.createTopics(List.of(new NewTopic("described", 1, (short) 1)
                .configs(Map.of("retention.ms", "7200000")))).all().get();
        ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, "described");
        ConfigResource brokerResource = new ConfigResource(ConfigResource.Type.BROKER, "1");
        Map<ConfigResource, Config> configs = admin.describeConfigs(List.of(topic, brokerResource)).all().get();

        Config t = configs.get(topic);
        ConfigEntry retention = t.get("retention.ms");
        assertThat(retention.value()).isEqualTo("7200000");
        assertThat(retention.source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG);
        assertThat(retention.isDefault()).isFalse();
        ConfigEntry segmentBytes = t.get("segment.bytes");
        assertThat(segmentBytes).isNotNull();
        assertThat(segmentBytes.source()).isIn(ConfigEntry.ConfigSource.DEFAULT_CONFIG,
                ConfigEntry.ConfigSource.STATIC_BROKER_CONFIG);
        assertThat(t.get("cleanup.policy").value()).isEqualTo("delete");
        for (ConfigEntry e : t.entries()) {
            if (!e.name().equals("retention.ms")) {
                assertThat(e.source()).as(e.name()).isIn(ConfigEntry.ConfigSource.DEFAULT_CONFIG,
                        ConfigEntry.ConfigSource.STATIC_BROKER_CONFIG);
            }
        }

        Config b = configs.get(brokerResource);
        assertThat(b.entries()).isNotEmpty();
        assertThat(b.get("node.id")).isNotNull();
        assertThat(b.get("node.id").value()).isEqualTo("1");
        assertThat(b.get("auto.create.topics.enable").value()).isEqualTo("false");
    }

    @Test
    void describeConfigsOfAnUnknownTopicFails() {
        ConfigResource missing = new ConfigResource(ConfigResource.Type.TOPIC, "no-such-topic");
        assertThatThrownBy(() -> admin.describeConfigs(List.of(missing)).all().get())
                .hasCauseInstanceOf(UnknownTopicOrPartitionException.class);
    }

    @Test
    void incrementalAlterConfigsSetsAppendsAndDeletesCleanupPolicy() throws Exception {
        admin.createTopics(List.of(new NewTopic("altered", 1, (short) 1))).all().get();
        ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, "altered");

        alter(r, new AlterConfigOp(new ConfigEntry("cleanup.policy", "compact"), AlterConfigOp.OpType.SET));
        assertThat(entry(r, "cleanup.policy").value()).isEqualTo("compact");
        assertThat(entry(r, "cleanup.policy").source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG);

        alter(r, new AlterConfigOp(new ConfigEntry("cleanup.policy", "delete"), AlterConfigOp.OpType.APPEND));
        assertThat(Set.of(entry(r, "cleanup.policy").value().split(","))).containsExactlyInAnyOrder("compact", "delete");

        alter(r, new AlterConfigOp(new ConfigEntry("cleanup.policy", "compact"), AlterConfigOp.OpType.SUBTRACT));
        assertThat(entry(r, "cleanup.policy").value()).isEqualTo("delete");

        alter(r, new AlterConfigOp(new ConfigEntry("cleanup.policy", ""), AlterConfigOp.OpType.DELETE));
        ConfigEntry reset = entry(r, "cleanup.policy");
        assertThat(reset.value()).isEqualTo("delete");
        assertThat(reset.source()).isNotEqualTo(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG);

        assertThatThrownBy(() -> alter(r, new AlterConfigOp(new ConfigEntry("cleanup.policy", "sometimes"),
                AlterConfigOp.OpType.SET)))
                .hasCauseInstanceOf(InvalidConfigurationException.class);
        assertThat(entry(r, "cleanup.policy").value()).isEqualTo("delete");
    }

    @Test
    void incrementalAlterConfigsValidateOnlyChangesNothingAndABadValueNamesTheKey() throws Exception {
        admin.createTopics(List.of(new NewTopic("validated-config", 1, (short) 1))).all().get();
        ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, "validated-config");
        admin.incrementalAlterConfigs(Map.of(r, List.of(new AlterConfigOp(new ConfigEntry("retention.ms", "1000"),
                AlterConfigOp.OpType.SET))), new AlterConfigsOptions().validateOnly(true)).all().get();
        assertThat(entry(r, "retention.ms").value()).isEqualTo("604800000");
        assertThatThrownBy(() -> alter(r, new AlterConfigOp(new ConfigEntry("retention.ms", "soon"), AlterConfigOp.OpType.SET)))
                .hasCauseInstanceOf(InvalidConfigurationException.class)
                .cause().hasMessageContaining("retention.ms");
        admin.incrementalAlterConfigs(Map.of(r, List.of(
                new AlterConfigOp(new ConfigEntry("retention.ms", "1000"), AlterConfigOp.OpType.SET),
                new AlterConfigOp(new ConfigEntry("max.message.bytes", "2000"), AlterConfigOp.OpType.SET)))).all().get();
        assertThat(entry(r, "retention.ms").value()).isEqualTo("1000");
        assertThat(entry(r, "max.message.bytes").value()).isEqualTo("2000");
    }

    private static void alter(ConfigResource r, AlterConfigOp op) throws Exception {
        admin.incrementalAlterConfigs(Map.of(r, List.of(op))).all().get();
    }

    private static ConfigEntry entry(ConfigResource r, String name) throws Exception {
        return admin.describeConfigs(List.of(r)).all().get().get(r).get(name);
    }

    // ---- offsets ----

    @Test
    void listOffsetsAnswersEarliestLatestByTimestampAndMaxTimestamp() throws Exception {
        admin.createTopics(List.of(new NewTopic("timed", 1, (short) 1))).all().get();
        TopicPartition tp = new TopicPartition("timed", 0);
        long base = 1_700_000_000_000L;
        try (KafkaProducer<String, String> producer = broker.producer(Map.of())) {
            for (int i = 0; i < 10; i++) {
                // timestamps rise by 1000 ms, except offset 7 carries the largest one
                long ts = i == 7 ? base + 50_000 : base + i * 1000L;
                producer.send(new ProducerRecord<>("timed", 0, ts, "k", "v" + i)).get();
            }
        }
        assertThat(offset(tp, OffsetSpec.earliest()).offset()).isZero();
        assertThat(offset(tp, OffsetSpec.latest()).offset()).isEqualTo(10);
        ListOffsetsResultInfo byTime = offset(tp, OffsetSpec.forTimestamp(base + 2500));
        assertThat(byTime.offset()).isEqualTo(3);
        assertThat(byTime.timestamp()).isEqualTo(base + 3000);
        ListOffsetsResultInfo max = offset(tp, OffsetSpec.maxTimestamp());
        assertThat(max.offset()).isEqualTo(7);
        assertThat(max.timestamp()).isEqualTo(base + 50_000);
        assertThat(offset(tp, OffsetSpec.forTimestamp(base + 60_000)).offset()).isEqualTo(-1);
        assertThat(offset(tp, OffsetSpec.earliestLocal()).offset()).isZero();
        assertThat(admin.listOffsets(Map.of(tp, OffsetSpec.latest()), new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
                .partitionResult(tp).get().offset()).isEqualTo(10);
    }

    @Test
    void deleteRecordsMovesTheEarliestOffsetAndConsumersStartThere() throws Exception {
        admin.createTopics(List.of(new NewTopic("trimmed", 1, (short) 1))).all().get();
        TopicPartition tp = new TopicPartition("trimmed", 0);
        produce("trimmed", 20);

        long low = admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(12))).lowWatermarks().get(tp).get().lowWatermark();
        assertThat(low).isEqualTo(12);
        assertThat(offset(tp, OffsetSpec.earliest()).offset()).isEqualTo(12);
        assertThat(offset(tp, OffsetSpec.latest()).offset()).isEqualTo(20);
        assertThatThrownBy(() -> admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(21))).all().get())
                .hasCauseInstanceOf(OffsetOutOfRangeException.class);

        try (KafkaConsumer<String, String> consumer = broker.consumer(null, Map.of())) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            assertThat(consumer.position(tp)).isEqualTo(12);
            List<ConsumerRecord<String, String>> got = pollUntil(consumer, 8);
            assertThat(got.getFirst().offset()).isEqualTo(12);
            assertThat(got.getFirst().value()).isEqualTo("v12");
        }
    }

    // ---- groups ----

    @Test
    void listAndDescribeConsumerGroupsShowStateMembersAndAssignment() throws Exception {
        admin.createTopics(List.of(new NewTopic("described-group", 2, (short) 1))).all().get();
        try (KafkaConsumer<String, String> consumer = broker.consumer("g-described", Map.of("client.id", "describer"))) {
            consumer.subscribe(List.of("described-group"));
            await().atMost(WAIT).untilAsserted(() -> {
                consumer.poll(Duration.ofMillis(100));
                assertThat(consumer.assignment()).hasSize(2);
            });

            Collection<GroupListing> groups = admin.listGroups(ListGroupsOptions.forConsumerGroups()).all().get();
            assertThat(groups).filteredOn(g -> g.groupId().equals("g-described")).singleElement().satisfies(g -> {
                assertThat(g.groupState()).contains(GroupState.STABLE);
                assertThat(g.isSimpleConsumerGroup()).isFalse();
            });

            ConsumerGroupDescription d = admin.describeConsumerGroups(List.of("g-described"))
                    .describedGroups().get("g-described").get();
            assertThat(d.groupState()).isEqualTo(GroupState.STABLE);
            assertThat(d.partitionAssignor()).isEqualTo("range");
            assertThat(d.coordinator().id()).isEqualTo(1);
            MemberDescription member = d.members().iterator().next();
            assertThat(d.members()).hasSize(1);
            assertThat(member.clientId()).isEqualTo("describer");
            assertThat(member.assignment().topicPartitions()).containsExactlyInAnyOrder(
                    new TopicPartition("described-group", 0), new TopicPartition("described-group", 1));

            assertThatThrownBy(() -> admin.deleteConsumerGroups(List.of("g-described")).all().get())
                    .hasCauseInstanceOf(GroupNotEmptyException.class);
        }
        ConsumerGroupDescription empty = admin.describeConsumerGroups(List.of("g-described"))
                .describedGroups().get("g-described").get();
        assertThat(empty.groupState()).isEqualTo(GroupState.EMPTY);
        assertThat(empty.members()).isEmpty();
        admin.deleteConsumerGroups(List.of("g-described")).all().get();
        Set<String> ids = admin.listGroups().all().get().stream().map(GroupListing::groupId).collect(Collectors.toSet());
        assertThat(ids).doesNotContain("g-described");
    }

    @Test
    void alteredOffsetsOfAnEmptyGroupAreWhereItsConsumerStarts() throws Exception {
        admin.createTopics(List.of(new NewTopic("altered-offsets", 1, (short) 1))).all().get();
        TopicPartition tp = new TopicPartition("altered-offsets", 0);
        produce("altered-offsets", 10);

        admin.alterConsumerGroupOffsets("g-altered", Map.of(tp, new OffsetAndMetadata(6))).all().get();
        assertThat(admin.listConsumerGroupOffsets("g-altered").partitionsToOffsetAndMetadata().get())
                .containsEntry(tp, new OffsetAndMetadata(6));

        try (KafkaConsumer<String, String> consumer = broker.consumer("g-altered", Map.of())) {
            consumer.subscribe(List.of("altered-offsets"));
            List<ConsumerRecord<String, String>> got = pollUntil(consumer, 4);
            assertThat(got).extracting(ConsumerRecord::offset).containsExactly(6L, 7L, 8L, 9L);
        }
    }

    @Test
    void deletedGroupOffsetsAreGoneAndTheConsumerFallsBackToItsResetPolicy() throws Exception {
        admin.createTopics(List.of(new NewTopic("offsets-deleted", 2, (short) 1))).all().get();
        TopicPartition p0 = new TopicPartition("offsets-deleted", 0);
        TopicPartition p1 = new TopicPartition("offsets-deleted", 1);
        admin.alterConsumerGroupOffsets("g-offsets-deleted",
                Map.of(p0, new OffsetAndMetadata(0), p1, new OffsetAndMetadata(0))).all().get();

        admin.deleteConsumerGroupOffsets("g-offsets-deleted", Set.of(p0)).all().get();
        assertThat(admin.listConsumerGroupOffsets("g-offsets-deleted").partitionsToOffsetAndMetadata().get())
                .containsOnlyKeys(p1);
    }

    @Test
    void offsetsOfAnActiveGroupCannotBeAlteredNorDeletedForASubscribedTopic() throws Exception {
        admin.createTopics(List.of(new NewTopic("active-group", 1, (short) 1))).all().get();
        TopicPartition tp = new TopicPartition("active-group", 0);
        try (KafkaConsumer<String, String> consumer = broker.consumer("g-active", Map.of())) {
            consumer.subscribe(List.of("active-group"));
            await().atMost(WAIT).untilAsserted(() -> {
                consumer.poll(Duration.ofMillis(100));
                assertThat(consumer.assignment()).hasSize(1);
            });
            consumer.commitSync(Map.of(tp, new OffsetAndMetadata(0)));
            assertThatThrownBy(() -> admin.alterConsumerGroupOffsets("g-active", Map.of(tp, new OffsetAndMetadata(1))).all().get())
                    .hasCauseInstanceOf(UnknownMemberIdException.class);
            assertThatThrownBy(() -> admin.deleteConsumerGroupOffsets("g-active", Set.of(tp)).all().get())
                    .hasCauseInstanceOf(GroupSubscribedToTopicException.class);
        }
        assertThat(admin.listConsumerGroupOffsets("g-active").partitionsToOffsetAndMetadata().get())
                .containsEntry(tp, new OffsetAndMetadata(0));
    }

    @Test
    void unknownGroupsAreNotFound() {
        assertThatThrownBy(() -> admin.describeConsumerGroups(List.of("no-such-group")).all().get())
                .hasCauseInstanceOf(GroupIdNotFoundException.class);
        assertThatThrownBy(() -> admin.deleteConsumerGroups(List.of("no-such-group")).all().get())
                .hasCauseInstanceOf(GroupIdNotFoundException.class);
    }

    @Test
    void aRecreatedTopicDoesNotInheritTheOffsetsCommittedOnItsPredecessor() throws Exception {
        admin.createTopics(List.of(new NewTopic("recreated", 1, (short) 1))).all().get();
        produce("recreated", 10);
        TopicPartition tp = new TopicPartition("recreated", 0);
        admin.alterConsumerGroupOffsets("g-recreated", Map.of(tp, new OffsetAndMetadata(8))).all().get();
        admin.deleteTopics(List.of("recreated")).all().get();
        await().atMost(WAIT).untilAsserted(() -> assertThat(admin.listTopics().names().get()).doesNotContain("recreated"));
        assertThat(admin.listConsumerGroupOffsets("g-recreated").partitionsToOffsetAndMetadata().get()).isEmpty();

        admin.createTopics(List.of(new NewTopic("recreated", 1, (short) 1))).all().get();
        produce("recreated", 3);
        try (KafkaConsumer<String, String> consumer = broker.consumer("g-recreated", Map.of())) {
            consumer.subscribe(List.of("recreated"));
            assertThat(pollUntil(consumer, 3)).extracting(ConsumerRecord::offset).containsExactly(0L, 1L, 2L);
        }
    }

    @Test
    void aCommittedOffsetBelowTheLogStartResetsPerTheConsumersPolicy() throws Exception {
        admin.createTopics(List.of(new NewTopic("below-start", 1, (short) 1))).all().get();
        produce("below-start", 10);
        TopicPartition tp = new TopicPartition("below-start", 0);
        admin.alterConsumerGroupOffsets("g-below", Map.of(tp, new OffsetAndMetadata(2))).all().get();
        admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(6))).all().get();
        try (KafkaConsumer<String, String> consumer = broker.consumer("g-below", Map.of())) {
            consumer.subscribe(List.of("below-start"));
            assertThat(pollUntil(consumer, 4).getFirst().offset()).isEqualTo(6);
        }
    }

    @Test
    void aSimpleGroupIsListedEmptyAndStateFiltersSeparateItFromAStableGroup() throws Exception {
        admin.createTopics(List.of(new NewTopic("simple-group", 2, (short) 1))).all().get();
        TopicPartition p0 = new TopicPartition("simple-group", 0);
        TopicPartition p1 = new TopicPartition("simple-group", 1);
        produce("simple-group", 5);
        try (KafkaConsumer<String, String> consumer = broker.consumer("g-simple", Map.of())) {
            consumer.assign(List.of(p0));
            pollUntil(consumer, 5);
            consumer.commitSync();
        }
        ConsumerGroupDescription simple = admin.describeConsumerGroups(List.of("g-simple")).all().get().get("g-simple");
        assertThat(simple.isSimpleConsumerGroup()).isTrue();
        assertThat(simple.groupState()).isEqualTo(GroupState.EMPTY);
        Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(Map.of("g-simple",
                new ListConsumerGroupOffsetsSpec().topicPartitions(List.of(p0, p1)))).partitionsToOffsetAndMetadata("g-simple").get();
        assertThat(offsets.get(p0).offset()).isEqualTo(5);
        assertThat(offsets.get(p1)).as("no commit for p1").isNull();

        try (KafkaConsumer<String, String> consumer = broker.consumer("g-subscribed", Map.of())) {
            consumer.subscribe(List.of("simple-group"));
            await().atMost(WAIT).untilAsserted(() -> {
                consumer.poll(Duration.ofMillis(100));
                assertThat(consumer.assignment()).hasSize(2);
            });
            assertThat(admin.listGroups(new ListGroupsOptions().inGroupStates(Set.of(GroupState.STABLE))).all().get())
                    .extracting(GroupListing::groupId).contains("g-subscribed").doesNotContain("g-simple");
            assertThat(admin.listGroups(new ListGroupsOptions().inGroupStates(Set.of(GroupState.EMPTY))).all().get())
                    .extracting(GroupListing::groupId).contains("g-simple").doesNotContain("g-subscribed");
        }
    }

    @Test
    void removingAStaticMemberRebalancesItsPartitionsToTheRest() throws Exception {
        admin.createTopics(List.of(new NewTopic("remove-member", 2, (short) 1))).all().get();
        Map<String, Object> a = Map.of(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "ia", ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 30_000);
        Map<String, Object> b = Map.of(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "ib", ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 30_000);
        try (KafkaConsumer<String, String> stays = broker.consumer("g-remove", b)) {
            try (KafkaConsumer<String, String> removed = broker.consumer("g-remove", a)) {
                removed.subscribe(List.of("remove-member"));
                stays.subscribe(List.of("remove-member"));
                await().atMost(WAIT).untilAsserted(() -> {
                    removed.poll(Duration.ofMillis(50));
                    stays.poll(Duration.ofMillis(50));
                    assertThat(removed.assignment()).hasSize(1);
                    assertThat(stays.assignment()).hasSize(1);
                });
                ConsumerGroupDescription d = admin.describeConsumerGroups(List.of("g-remove")).all().get().get("g-remove");
                assertThat(d.members()).extracting(m -> m.groupInstanceId().orElse(null)).containsExactlyInAnyOrder("ia", "ib");
            }
            // a closed static member stays in the group until removed (or its 30 s session expires)
            admin.removeMembersFromConsumerGroup("g-remove", new RemoveMembersFromConsumerGroupOptions(
                    List.of(new MemberToRemove("ia")))).all().get();
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                stays.poll(Duration.ofMillis(100));
                assertThat(stays.assignment()).hasSize(2);
            });
            assertThatThrownBy(() -> admin.removeMembersFromConsumerGroup("g-remove", new RemoveMembersFromConsumerGroupOptions(
                    List.of(new MemberToRemove("nobody")))).all().get())
                    .hasCauseInstanceOf(UnknownMemberIdException.class);
        }
    }

    @Test
    void describeClusterShowsTheOneNodeAsControllerWithAClusterId() throws Exception {
        DescribeClusterResult cluster = admin.describeCluster();
        Collection<Node> nodes = cluster.nodes().get();
        assertThat(nodes).singleElement().satisfies(n -> {
            assertThat(n.id()).isEqualTo(1);
            assertThat(n.host()).isEqualTo("127.0.0.1");
            assertThat(n.port()).isEqualTo(broker.port());
        });
        assertThat(cluster.controller().get().id()).isEqualTo(1);
        assertThat(cluster.clusterId().get()).isNotBlank();
    }

    private static ListOffsetsResultInfo offset(TopicPartition tp, OffsetSpec spec) throws Exception {
        return admin.listOffsets(Map.of(tp, spec)).partitionResult(tp).get();
    }

    private static void produce(String topic, int count) throws Exception {
        try (KafkaProducer<String, String> producer = broker.producer(Map.of())) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, 0, "k", "v" + i));
            }
            producer.flush();
        }
    }

    private static List<ConsumerRecord<String, String>> pollUntil(KafkaConsumer<String, String> consumer, int count) {
        List<ConsumerRecord<String, String>> got = new ArrayList<>();
        await().atMost(WAIT).untilAsserted(() -> {
            ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(100));
            records.forEach(got::add);
            assertThat(got).hasSizeGreaterThanOrEqualTo(count);
        });
        return got;
    }
}
