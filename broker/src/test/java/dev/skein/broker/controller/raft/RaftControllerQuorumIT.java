package dev.skein.broker.controller.raft;

import dev.skein.broker.testing.FreePorts;
import dev.skein.broker.controller.BrokerLifecycle;
import dev.skein.broker.metadata.ClusterImage;
import dev.skein.broker.metadata.PartitionRegistration;
import dev.skein.broker.metadata.TopicMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.FencedLeaderEpochException;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.InvalidUpdateVersionException;
import org.apache.kafka.common.errors.NotControllerException;
import org.apache.kafka.common.errors.PolicyViolationException;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** Three RaftControllers in this JVM over loopback: a real Ratis quorum. */
class RaftControllerQuorumIT {
    private static final long SESSION_TIMEOUT_MS = 1500;

    @TempDir
    Path dir;
    private List<QuorumVoter> voters;
    private final Map<Integer, RaftController> controllers = new HashMap<>();
    private final Map<Integer, BrokerLifecycle> lifecycles = new HashMap<>();
    private final Map<Integer, Uuid> incarnations = new HashMap<>();

    @BeforeEach
    void startQuorum() throws Exception {
        // the voters share this JVM: a Ratis failure must fail the test, not call System.exit
        org.apache.ratis.util.ExitUtils.disableSystemExit();
        voters = new ArrayList<>();
        for (int id = 0; id < 3; id++) {
            voters.add(new QuorumVoter(id, "127.0.0.1", FreePorts.pick()));
            incarnations.put(id, Uuid.randomUuid());
        }
        for (int id = 0; id < 3; id++) {
            startController(id);
        }
        for (int id = 0; id < 3; id++) {
            startLifecycle(id);
        }
        awaitLiveBrokers(3);
    }

    @AfterEach
    void stop() {
        lifecycles.values().forEach(BrokerLifecycle::close);
        controllers.values().forEach(RaftController::close);
    }

    private RaftController startController(int id) throws IOException {
        RaftControllerSettings settings = new RaftControllerSettings(id, voters, "127.0.0.1", "test-cluster",
                dir.resolve("node-" + id).resolve("skein-raft"), SESSION_TIMEOUT_MS, 100, true, 60_000, 5000, 10,
                Map.of("min.insync.replicas", "1", "unclean.leader.election.enable", "false"));
        RaftController c = new RaftController(settings, Time.SYSTEM, new Random(42 + id));
        c.start();
        controllers.put(id, c);
        return c;
    }

    private void startLifecycle(int id) {
        BrokerLifecycle l = new BrokerLifecycle(controllers.get(id),
                new ClusterImage.BrokerInfo(id, "127.0.0.1", 9092 + id, "rack-" + id, incarnations.get(id), true), 200, 3000);
        l.start();
        lifecycles.put(id, l);
    }

    private void awaitLiveBrokers(int n) {
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            for (RaftController c : controllers.values()) {
                assertThat(c.image().brokers().stream().filter(b -> !b.fenced()).count()).isEqualTo(n);
            }
        });
    }

    private RaftController leader() {
        await().atMost(Duration.ofSeconds(20)).until(() -> controllers.values().stream().anyMatch(RaftController::isActive));
        return controllers.values().stream().filter(RaftController::isActive).findFirst().orElseThrow();
    }

    @Test
    void topicCreatedOnAnyNodeAppearsOnEveryNodeWithTheSameIdAndPlacement() {
        RaftController follower = controllers.values().stream().filter(c -> !c.isActive()).findFirst().orElseThrow();
        TopicMetadata created = follower.createTopic("orders", 6, (short) 3, Map.of(), false);

        assertThat(created.partitionCount()).isEqualTo(6);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            for (RaftController c : controllers.values()) {
                assertThat(c.image().topic("orders")).isEqualTo(created);
                assertThat(c.image().controllerId()).isEqualTo(leaderId());
            }
        });
        Set<Integer> leaders = new HashSet<>();
        created.partitions().forEach(p -> leaders.add(p.leader()));
        assertThat(leaders).containsExactlyInAnyOrder(0, 1, 2);
        assertThatThrownBy(() -> follower.createTopic("too-wide", 1, (short) 4, Map.of(), false))
                .isInstanceOf(InvalidReplicationFactorException.class).hasMessageContaining("4").hasMessageContaining("3");
    }

    @Test
    void aChangeTooLargeForOneLogEntryIsRefusedAndTheQuorumGoesOn() {
        RaftController follower = controllers.values().stream().filter(c -> !c.isActive()).findFirst().orElseThrow();
        // 300,000 partitions at RF 3 encode to 4.8 MB, more than one append of the quorum carries:
        // in the log it could never be replicated, and nothing after it either
        assertThatThrownBy(() -> follower.createTopic("too-large", 300_000, (short) 3, Map.of(), false))
                .isInstanceOf(PolicyViolationException.class)
                .hasMessageContaining("excessively large").hasMessageContaining("CreateTopic")
                .hasMessageContaining(String.valueOf(RaftController.MAX_ENTRY_BYTES));

        TopicMetadata after = follower.createTopic("after-too-large", 2, (short) 3, Map.of(), false);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            for (RaftController c : controllers.values()) {
                assertThat(c.image().topic("after-too-large")).isEqualTo(after);
                assertThat(c.image().topic("too-large")).isNull();
            }
        });
    }

    /**
     * A voter that has not applied the newest entries yet (its apply is held up here) knows nothing
     * of a topic created through another voter; asked to catch up, it learns the active controller's
     * applied index and waits until it has applied as much, and then it knows the topic.
     */
    @Test
    void aVoterBehindTheActiveControllerCatchesUpWhenAskedAndThenKnowsTheNewTopic() throws Exception {
        RaftController leader = leader();
        RaftController behind = controllers.values().stream().filter(c -> !c.isActive()).findFirst().orElseThrow();
        assertThat(leader.catchUp(1_000)).as("the active controller is always caught up").isTrue();
        try (HeldApply held = HeldApply.hold(behind)) {
            TopicMetadata created = leader.createTopic("created-elsewhere", 2, (short) 3, Map.of(), false);
            assertThat(behind.image().topic("created-elsewhere")).as("not applied by the voter held up").isNull();

            CompletableFuture<Boolean> caughtUp = CompletableFuture.supplyAsync(() -> {
                try {
                    return behind.catchUp(10_000);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            await().atMost(Duration.ofSeconds(10)).until(() -> behind.catchUps() == 1);
            assertThat(caughtUp).as("cannot be caught up while its apply is held").isNotDone();
            held.release();
            assertThat(caughtUp.get(10, TimeUnit.SECONDS)).isTrue();
            assertThat(behind.image().topic("created-elsewhere")).isEqualTo(created);
        }
    }

    private int leaderId() {
        return controllers.entrySet().stream().filter(e -> e.getValue().isActive()).findFirst().orElseThrow().getKey();
    }

    @Test
    void closingTheLeaderElectsAnotherAndLosesNoCommittedMetadata() {
        RaftController first = leader();
        int firstId = leaderId();
        TopicMetadata created = first.createTopic("before-failover", 3, (short) 2, Map.of(), false);

        lifecycles.remove(firstId).close();
        controllers.remove(firstId).close();

        RaftController next = leader();
        assertThat(leaderId()).isNotEqualTo(firstId);
        assertThat(next.image().topic("before-failover").id()).isEqualTo(created.id());
        TopicMetadata after = next.createTopic("after-failover", 2, (short) 2, Map.of(), false);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            for (RaftController c : controllers.values()) {
                assertThat(c.image().topic("after-failover")).isEqualTo(after);
                assertThat(c.image().controllerId()).isEqualTo(leaderId());
            }
        });
    }

    @Test
    void producerIdsNeverRepeatAcrossControllerFailover() {
        Set<Long> ids = new HashSet<>();
        for (RaftController c : controllers.values()) {
            ids.add(c.allocateProducerId());
            ids.add(c.allocateProducerId());
        }
        int firstId = leaderId();
        controllers.remove(firstId).close();
        lifecycles.remove(firstId).close();
        for (RaftController c : controllers.values()) {
            long id = c.allocateProducerId();
            assertThat(ids.add(id)).as("producer id %s handed out twice", id).isTrue();
        }
    }

    @Test
    void stoppedNodeRestartedOnItsDirCatchesUpFromSnapshotAndLog() throws Exception {
        int stopped = controllers.keySet().stream().filter(id -> !controllers.get(id).isActive()).findFirst().orElseThrow();
        VoterKey key = controllers.get(stopped).voterKey();
        lifecycles.remove(stopped).close();
        controllers.remove(stopped).close();
        RaftController live = leader();
        for (int i = 0; i < 30; i++) {
            live.createTopic("t" + i, 1, (short) 1, Map.of(), false);
        }
        Path raftDir = dir.resolve("node-" + stopped).resolve("skein-raft");
        RaftController restarted = startController(stopped);

        // its disk intact, it rejoins as itself: same key, no configuration change
        assertThat(restarted.voterKey()).isEqualTo(key);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(restarted.image().topics()).hasSize(30);
            assertThat(restarted.state()).usingRecursiveComparison().isEqualTo(live.state());
            assertThat(restarted.isQuorumMember()).isTrue();
            assertThat(live.voters()).contains(key).hasSize(3);
        });
        try (var files = Files.walk(dir)) {
            assertThat(files.anyMatch(f -> f.getFileName().toString().startsWith("snapshot."))).isTrue();
        }
        assertThat(raftDir).exists();
    }

    @Test
    void brokerThatStopsHeartbeatingIsFencedAndItsLeadershipMovesToAnIsrMember() {
        RaftController c = leader();
        TopicMetadata t = c.createTopic("fenced", 3, (short) 3, Map.of(), false);
        int victim = t.partition(0).leader();

        lifecycles.remove(victim).close();

        await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
            for (RaftController node : controllers.values()) {
                ClusterImage image = node.image();
                assertThat(image.broker(victim).fenced()).isTrue();
                for (PartitionRegistration p : image.topic("fenced").partitions()) {
                    assertThat(p.leader()).isNotEqualTo(victim).isNotEqualTo(PartitionRegistration.NO_LEADER);
                    assertThat(p.isr()).doesNotContain(victim);
                }
            }
        });
        PartitionRegistration moved = c.image().topic("fenced").partition(0);
        assertThat(moved.leaderEpoch()).isEqualTo(t.partition(0).leaderEpoch() + 1);
    }

    @Test
    void nodeThatCannotReachTheQuorumAnswersNotControllerWithinTheRequestTimeout() {
        RaftController alone = controllers.get(0);
        for (int id : List.of(1, 2)) {
            lifecycles.remove(id).close();
            controllers.remove(id).close();
        }
        long start = System.nanoTime();

        assertThatThrownBy(() -> alone.createTopic("nowhere", 1, (short) 1, Map.of(), false))
                .isInstanceOf(NotControllerException.class);

        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
        assertThat(alone.image().topic("nowhere")).isNull();
    }

    @Test
    void alterPartitionIsAcceptedOnceAndTheStaleRetryIsRejected() {
        RaftController any = controllers.get(1);
        TopicMetadata t = any.createTopic("cas", 1, (short) 3, Map.of(), false);
        PartitionRegistration p = t.partition(0);
        TopicPartition tp = new TopicPartition("cas", 0);
        List<Integer> shrunk = List.of(p.leader());

        PartitionRegistration after = any.alterPartition(tp, p.leader(), p.leaderEpoch(), p.partitionEpoch(), shrunk);

        assertThat(after.isr()).isEqualTo(shrunk);
        assertThat(after.partitionEpoch()).isEqualTo(p.partitionEpoch() + 1);
        assertThatThrownBy(() -> any.alterPartition(tp, p.leader(), p.leaderEpoch(), p.partitionEpoch(), p.replicas()))
                .isInstanceOf(InvalidUpdateVersionException.class);
        assertThatThrownBy(() -> any.alterPartition(tp, p.leader(), p.leaderEpoch() - 1, after.partitionEpoch(), p.replicas()))
                .isInstanceOf(FencedLeaderEpochException.class);
    }

    @Test
    void voterRestartedWithAnEmptyDiskRejoinsAsANewMemberAndNoCommittedMetadataIsLost() throws Exception {
        Set<Integer> alreadyWiped = new HashSet<>();
        for (int round = 0; round < 2; round++) {
            RaftController live = leader();
            // a different follower each round
            int wiped = controllers.keySet().stream()
                    .filter(id -> !controllers.get(id).isActive() && !alreadyWiped.contains(id)).findFirst().orElseThrow();
            alreadyWiped.add(wiped);
            for (int i = 0; i < 15; i++) {
                live.createTopic("r" + round + "-t" + i, 1, (short) 1, Map.of(), false);
            }
            VoterKey old = controllers.get(wiped).voterKey();
            lifecycles.remove(wiped).close();
            controllers.remove(wiped).close();
            deleteRecursively(dir.resolve("node-" + wiped));

            RaftController fresh = startController(wiped);

            VoterKey now = fresh.voterKey();
            assertThat(now.nodeId()).isEqualTo(wiped);
            assertThat(now).isNotEqualTo(old);
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                assertThat(fresh.isQuorumMember()).isTrue();
                for (RaftController c : controllers.values()) {
                    assertThat(c.voters()).as("voters seen by %s", c.voterKey()).contains(now).doesNotContain(old).hasSize(3);
                }
                assertThat(fresh.state()).usingRecursiveComparison().isEqualTo(live.state());
            });
            startLifecycle(wiped);
            awaitLiveBrokers(3);
            String name = "after-wipe-" + round;
            int topics = 16 * (round + 1);
            TopicMetadata after = fresh.createTopic(name, 3, (short) 3, Map.of(), false);
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                for (RaftController c : controllers.values()) {
                    assertThat(c.image().topic(name)).isEqualTo(after);
                    assertThat(c.image().topics()).hasSize(topics);
                }
            });
        }
    }

    private static void deleteRecursively(Path root) throws IOException {
        try (var files = Files.walk(root)) {
            for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
