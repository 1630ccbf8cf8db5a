package dev.skein.broker.controller.raft;

import dev.skein.broker.controller.Controller;
import dev.skein.broker.controller.Controllers;
import dev.skein.broker.it.InJvmCluster;
import dev.skein.broker.testing.Kcat;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
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
