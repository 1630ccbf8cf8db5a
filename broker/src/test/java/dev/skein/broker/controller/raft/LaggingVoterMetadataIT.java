package dev.skein.broker.controller.raft;

import dev.skein.broker.controller.Controller;
import dev.skein.broker.controller.Controllers;
import dev.skein.broker.it.InJvmCluster;
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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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
        boolean present = onPath("kcat");
        if (!present && "true".equalsIgnoreCase(System.getenv("CI"))) {
            fail("kcat is not on PATH, and CI=true: install it (Debian package kcat; .ci/run does)");
        }
        assumeTrue(present, "kcat is not on PATH; install the Debian package kcat to run this test");
        Map<Integer, RaftController> voters = new ConcurrentHashMap<>();
        try (InJvmCluster cluster = InJvmCluster.start(dir, 3, 0, (i, p) -> {
            p.put("broker.heartbeat.interval.ms", "200");
            p.put("broker.session.timeout.ms", "3000");
        }, (config, clusterId, self) -> {
            Controller c = Controllers.start(config, clusterId, self, Time.SYSTEM);
            voters.put(config.nodeId(), (RaftController) c);
            return c;
        })) {
            await().atMost(Duration.ofSeconds(60)).until(() -> voters.size() == 3
                    && voters.values().stream().anyMatch(RaftController::isActive)
                    && voters.values().stream().allMatch(c -> c.image().brokers().stream().filter(b -> !b.fenced()).count() == 3));
            int behind = voters.entrySet().stream().filter(e -> !e.getValue().isActive()).findFirst().orElseThrow().getKey();
            int other = voters.keySet().stream().filter(id -> id != behind).findFirst().orElseThrow();

            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            Thread holder = new Thread(() -> {
                synchronized (voters.get(behind).applyLock()) {
                    held.countDown();
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }, "hold-apply");
            holder.start();
            Path out = dir.resolve("kcat.json");
            Path err = dir.resolve("kcat.err");
            Process kcat = null;
            try {
                held.await();
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
                release.countDown();
                assertThat(kcat.waitFor(60, TimeUnit.SECONDS)).as("kcat exited; stderr: %s", Files.readString(err)).isTrue();
                String json = Files.readString(out).replace(" ", "");
                assertThat(kcat.exitValue()).as("kcat exit; stderr: %s", Files.readString(err)).isZero();
                assertThat(json).as("kcat's metadata from broker %d", behind).contains("\"topic\":\"created-elsewhere\"")
                        .doesNotContain("\"error\"").contains("{\"partition\":0,").contains("{\"partition\":1,")
                        .doesNotContain("{\"partition\":2,");
            } finally {
                release.countDown();
                holder.join();
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
        try (InJvmCluster cluster = InJvmCluster.start(dir, 2, 1, (i, p) -> {
            p.put("broker.heartbeat.interval.ms", "200");
            p.put("broker.session.timeout.ms", "3000");
        }, (config, clusterId, self) -> {
            Controller c = Controllers.start(config, clusterId, self, Time.SYSTEM);
            controllers.put(config.nodeId(), c);
            return c;
        })) {
            await().atMost(Duration.ofSeconds(60)).until(() -> controllers.size() == 3 && controllers.values().stream()
                    .allMatch(c -> c.image().brokers().stream().filter(b -> !b.fenced()).count() == 3));
            QuorumObserver observer = (QuorumObserver) controllers.get(2);
            try (Admin admin = cluster.admin(0)) {
                admin.createTopics(List.of(new NewTopic("created-at-a-voter", 2, (short) 3))).all().get(30, TimeUnit.SECONDS);
            }
            assertThat(observer.catchUp(10_000)).isTrue();
            assertThat(observer.image().topic("created-at-a-voter")).isNotNull();
            assertThat(observer.image().topic("created-at-a-voter").partitionCount()).isEqualTo(2);
        }
    }

    private static boolean onPath(String binary) {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String d : path.split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(d, binary))) {
                return true;
            }
        }
        return false;
    }
}
