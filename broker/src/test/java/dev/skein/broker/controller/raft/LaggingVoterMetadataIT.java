package dev.skein.broker.controller.raft;

import dev.skein.broker.controller.Controller;
import dev.skein.broker.controller.Controllers;
import dev.skein.broker.it.InJvmCluster;
import dev.skein.broker.it.KafkaWire;
import dev.skein.broker.testing.Kcat;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DeleteTopicsResponseData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Three brokers, each a voter; one has not applied the newest metadata (its apply is held up here)
 * when librdkafka asks it for a topic created through another broker a moment before. A broker
 * that called the topic unknown would make librdkafka drop every record it holds for it ("Unknown
 * partition"); this one catches up with the active controller first and answers with the topic.
 * And a broker behind does not undo a config change it has not applied yet, nor call a topic it is
 * asked to delete unknown.
 */
class LaggingVoterMetadataIT {
    @TempDir
    Path dir;

    @Test
    void aBrokerBehindTheQuorumCatchesUpBeforeItAnswersKcatAboutATopicCreatedElsewhere() throws Exception {
        Kcat.assumeInstalled();
        Map<Integer, Controller> controllers = new ConcurrentHashMap<>();
        try (InJvmCluster cluster = startLive(3, 0, controllers)) {
            Map<Integer, RaftController> voters = new java.util.HashMap<>();
            controllers.forEach((id, c) -> voters.put(id, (RaftController) c));
            await().atMost(Duration.ofSeconds(30)).until(() -> voters.values().stream().anyMatch(RaftController::isActive));
            int behind = voters.entrySet().stream().filter(e -> !e.getValue().isActive()).findFirst().orElseThrow().getKey();
            int other = voters.keySet().stream().filter(id -> id != behind).findFirst().orElseThrow();

            Path out = dir.resolve("kcat.json");
            Path err = dir.resolve("kcat.err");
            Process kcat = null;
            try (HeldApply held = HeldApply.hold(voters.get(behind))) {
                try (Admin admin = cluster.admin(other)) {
                    admin.createTopics(List.of(new NewTopic("created-elsewhere", 2, (short) 3))).all().get(30, TimeUnit.SECONDS);
                }
                assertThat(voters.get(behind).image().topic("created-elsewhere")).as("broker %d is behind", behind).isNull();

                kcat = new ProcessBuilder("kcat", "-L", "-J", "-b", cluster.broker(behind).bootstrapServers(),
                        "-t", "created-elsewhere").redirectOutput(out.toFile()).redirectError(err.toFile())
                        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
                // the broker got the Metadata request and waits for its apply, which is still held (a broker
                // that answered from the metadata it has lets kcat finish at once, the topic unknown)
                Process started = kcat;
                await().atMost(Duration.ofSeconds(30)).until(() -> voters.get(behind).catchUps() >= 1 || !started.isAlive());
                held.release();
                assertThat(kcat.waitFor(60, TimeUnit.SECONDS)).as("kcat exited; stderr: %s", Files.readString(err)).isTrue();
                String json = Files.readString(out).replace(" ", "");
                assertThat(kcat.exitValue()).as("kcat exit; stderr: %s", Files.readString(err)).isZero();
                assertThat(json).as("kcat's metadata from broker %d", behind).contains("\"topic\":\"created-elsewhere\"")
                        .doesNotContain("\"error\"").contains("{\"partition\":0,").contains("{\"partition\":1,")
                        .doesNotContain("{\"partition\":2,");
            } finally {
                if (kcat != null) {
                    kcat.destroyForcibly();
                }
            }
        }
    }

    /**
     * Two brokers alter different configs of one topic a moment apart, the second before it has applied
     * the first change: the active controller applies each IncrementalAlterConfigs to the overrides it
     * holds, so both changes stay (a broker that read, modified and wrote back its own stale overrides
     * would undo the first, which was acknowledged).
     */
    @Test
    void anIncrementalAlterThroughABrokerBehindTheQuorumKeepsTheChangeMadeElsewhere() throws Exception {
        Map<Integer, Controller> controllers = new ConcurrentHashMap<>();
        try (InJvmCluster cluster = startLive(3, 0, controllers)) {
            Map<Integer, RaftController> voters = new java.util.HashMap<>();
            controllers.forEach((id, c) -> voters.put(id, (RaftController) c));
            await().atMost(Duration.ofSeconds(30)).until(() -> voters.values().stream().anyMatch(RaftController::isActive));
            int active = voters.entrySet().stream().filter(e -> e.getValue().isActive()).findFirst().orElseThrow().getKey();
            int behind = voters.keySet().stream().filter(id -> id != active).findFirst().orElseThrow();
            ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, "altered-twice");
            try (Admin atActive = cluster.admin(active); Admin atBehind = cluster.admin(behind);
                 KafkaWire toActive = new KafkaWire(cluster.broker(active).port());
                 KafkaWire toBehind = new KafkaWire(cluster.broker(behind).port())) {
                atActive.createTopics(List.of(new NewTopic("altered-twice", 1, (short) 3)
                        .configs(Map.of("cleanup.policy", "delete")))).all().get(30, TimeUnit.SECONDS);
                await().atMost(Duration.ofSeconds(30)).until(() -> voters.get(behind).image().topic("altered-twice") != null);

                // an Admin client sends a topic's IncrementalAlterConfigs to any broker; these go to the one named
                try (HeldApply held = HeldApply.hold(voters.get(behind))) {
                    IncrementalAlterConfigsResponseData first = toActive.call(ApiKeys.INCREMENTAL_ALTER_CONFIGS, ALTER_VERSION,
                            alter("altered-twice", op("retention.ms", AlterConfigOp.OpType.SET, "123456")));
                    assertThat(first.responses().getFirst().errorCode()).as("first alter: %s", first).isZero();
                    assertThat(voters.get(behind).image().topic("altered-twice").configs())
                            .as("broker %d is behind", behind).doesNotContainKey("retention.ms");

                    toBehind.write(ApiKeys.INCREMENTAL_ALTER_CONFIGS, ALTER_VERSION, alter("altered-twice",
                            op("segment.ms", AlterConfigOp.OpType.SET, "654321"),
                            op("cleanup.policy", AlterConfigOp.OpType.APPEND, "compact")));
                    // the second change is decided at the active controller; the broker that took it
                    // answers once it has applied it, so its apply is let go from here
                    await().atMost(Duration.ofSeconds(30)).until(() -> voters.get(active).image().topic("altered-twice")
                            .configs().containsKey("segment.ms"));
                    held.release();
                }
                IncrementalAlterConfigsResponseData second = toBehind.read(ApiKeys.INCREMENTAL_ALTER_CONFIGS, ALTER_VERSION);
                assertThat(second.responses().getFirst().errorCode()).as("second alter: %s", second).isZero();

                Map<String, String> expected = Map.of("retention.ms", "123456", "segment.ms", "654321",
                        "cleanup.policy", "delete,compact");
                for (int id : voters.keySet()) {
                    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(
                            voters.get(id).image().topic("altered-twice").configs()).as("overrides at broker %d", id)
                            .isEqualTo(expected));
                }
                Config described = atBehind.describeConfigs(List.of(topic)).all().get(30, TimeUnit.SECONDS).get(topic);
                assertThat(described.get("retention.ms").value()).isEqualTo("123456");
                assertThat(described.get("segment.ms").value()).isEqualTo("654321");
                assertThat(described.get("cleanup.policy").value()).isEqualTo("delete,compact");
            }
        }
    }

    /**
     * DeleteTopics through a broker that has not applied the topic's creation: an answer of "unknown
     * topic" fails the caller's delete, or reads to it as "already gone" while the topic stays. The
     * broker catches up first and deletes it.
     */
    @Test
    void aDeleteThroughABrokerBehindTheQuorumDeletesATopicCreatedElsewhere() throws Exception {
        Map<Integer, Controller> controllers = new ConcurrentHashMap<>();
        try (InJvmCluster cluster = startLive(3, 0, controllers)) {
            Map<Integer, RaftController> voters = new java.util.HashMap<>();
            controllers.forEach((id, c) -> voters.put(id, (RaftController) c));
            await().atMost(Duration.ofSeconds(30)).until(() -> voters.values().stream().anyMatch(RaftController::isActive));
            int active = voters.entrySet().stream().filter(e -> e.getValue().isActive()).findFirst().orElseThrow().getKey();
            int behind = voters.keySet().stream().filter(id -> id != active).findFirst().orElseThrow();
            try (Admin atActive = cluster.admin(active); KafkaWire toBehind = new KafkaWire(cluster.broker(behind).port())) {
                long before = voters.get(behind).catchUps();
                try (HeldApply held = HeldApply.hold(voters.get(behind))) {
                    atActive.createTopics(List.of(new NewTopic("short-lived", 1, (short) 3))).all().get(30, TimeUnit.SECONDS);
                    assertThat(voters.get(behind).image().topic("short-lived")).as("broker %d is behind", behind).isNull();
                    toBehind.write(ApiKeys.DELETE_TOPICS, (short) 6, new DeleteTopicsRequestData().setTimeoutMs(30_000)
                            .setTopics(List.of(new DeleteTopicsRequestData.DeleteTopicState().setName("short-lived"))));
                    // the broker got the request and waits for its apply to catch up, which is still held
                    await().atMost(Duration.ofSeconds(30)).until(() -> voters.get(behind).catchUps() > before);
                    held.release();
                }
                DeleteTopicsResponseData response = toBehind.read(ApiKeys.DELETE_TOPICS, (short) 6);
                assertThat(response.responses()).singleElement().satisfies(r -> {
                    assertThat(r.errorCode()).as("%s", r).isZero();
                    assertThat(r.name()).isEqualTo("short-lived");
                });
                for (int id : voters.keySet()) {
                    await().atMost(Duration.ofSeconds(30)).until(() -> voters.get(id).image().topic("short-lived") == null);
                }
            }
        }
    }

    private static final short ALTER_VERSION = 1;

    private static IncrementalAlterConfigsRequestData alter(String topic,
                                                            IncrementalAlterConfigsRequestData.AlterableConfig... ops) {
        IncrementalAlterConfigsRequestData.AlterConfigsResource r = new IncrementalAlterConfigsRequestData.AlterConfigsResource()
                .setResourceType(ConfigResource.Type.TOPIC.id()).setResourceName(topic);
        for (IncrementalAlterConfigsRequestData.AlterableConfig op : ops) {
            r.configs().add(op);
        }
        IncrementalAlterConfigsRequestData request = new IncrementalAlterConfigsRequestData();
        request.resources().add(r);
        return request;
    }

    private static IncrementalAlterConfigsRequestData.AlterableConfig op(String name, AlterConfigOp.OpType type, String value) {
        return new IncrementalAlterConfigsRequestData.AlterableConfig().setName(name).setConfigOperation(type.id())
                .setValue(value);
    }

    /**
     * A broker that is not a voter asks the active controller for its applied index over its Ratis
     * client, and is caught up once it has received the metadata that far: it then knows a topic
     * created through a voter.
     */
    @Test
    void aBrokerThatIsNotAVoterCatchesUpThroughTheActiveController() throws Exception {
        Map<Integer, Controller> controllers = new ConcurrentHashMap<>();
        try (InJvmCluster cluster = startLive(2, 1, controllers)) {
            QuorumObserver observer = (QuorumObserver) controllers.get(2);
            try (Admin admin = cluster.admin(0)) {
                admin.createTopics(List.of(new NewTopic("created-at-a-voter", 2, (short) 3))).all().get(30, TimeUnit.SECONDS);
            }
            assertThat(observer.catchUp(10_000)).isTrue();
            assertThat(observer.image().topic("created-at-a-voter")).isNotNull();
            assertThat(observer.image().topic("created-at-a-voter").partitionCount()).isEqualTo(2);
        }
    }

    /** A cluster whose brokers' controllers go into {@code controllers}, returned once each knows every broker live. */
    private InJvmCluster startLive(int voters, int observers, Map<Integer, Controller> controllers) throws Exception {
        InJvmCluster cluster = InJvmCluster.start(dir, voters, observers, (i, p) -> {
            p.put("broker.heartbeat.interval.ms", "200");
            p.put("broker.session.timeout.ms", "3000");
        }, (config, clusterId, self) -> {
            Controller c = Controllers.start(config, clusterId, self, Time.SYSTEM);
            controllers.put(config.nodeId(), c);
            return c;
        });
        int brokers = voters + observers;
        try {
            await().atMost(Duration.ofSeconds(60)).until(() -> controllers.size() == brokers && controllers.values().stream()
                    .allMatch(c -> c.image().brokers().stream().filter(b -> !b.fenced()).count() == brokers));
        } catch (RuntimeException | Error e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }
}
