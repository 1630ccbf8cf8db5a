package dev.skein.broker.it;

import dev.skein.broker.controller.raft.QuorumJoin;
import dev.skein.broker.controller.raft.QuorumProbe;
import dev.skein.broker.controller.raft.VoterKey;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Three brokers, each its own JVM and a controller voter. A voter is killed with SIGKILL, all its
 * data dirs are deleted and it is started again: it must come back as a new member of the quorum
 * (a new voter key replaces the old one in the Raft configuration), never as its old self, and every
 * committed topic must still be there on every broker. Then a second voter goes through the same.
 */
class ControllerVoterReplacementIT {
    private ClusterProcesses cluster;

    @BeforeEach
    void startCluster() throws Exception {
        cluster = new ClusterProcesses(3, Map.of(
                "broker.heartbeat.interval.ms", "250",
                "broker.session.timeout.ms", "4000",
                "num.partitions", "3",
                "default.replication.factor", "3"));
        cluster.startAll();
        for (int i = 0; i < cluster.size(); i++) {
            cluster.awaitReady(i, 3);
        }
    }

    @AfterEach
    void stopCluster() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void voterRestartedWithAnEmptyDiskRejoinsAsANewMemberAndTheQuorumLosesNoMetadata() throws Exception {
        List<String> topics = new ArrayList<>();
        try (Admin admin = cluster.admin(List.of(0, 1, 2), Duration.ofSeconds(30))) {
            for (int i = 0; i < 5; i++) {
                topics.add("before-" + i);
            }
            admin.createTopics(topics.stream().map(t -> new NewTopic(t, 3, (short) 3)).toList()).all().get(30, TimeUnit.SECONDS);
        }
        String clusterId = metaProperties(cluster.logDir(0).resolve("meta.properties")).getProperty("cluster.id");

        for (int victim : List.of(2, 0)) {
            VoterKey old = voterKey(victim);
            assertThat(votersSeenBy(clusterId, survivor(victim))).contains(old);

            long killedAt = System.nanoTime();
            cluster.kill(victim);
            cluster.wipe(victim);
            // two of three voters keep the quorum serving while the third is gone
            String whileDown = "while-" + victim + "-is-down";
            try (Admin admin = cluster.admin(List.of(survivor(victim)), Duration.ofSeconds(30))) {
                admin.createTopics(List.of(new NewTopic(whileDown, 3, (short) 2))).all().get(30, TimeUnit.SECONDS);
            }
            topics.add(whileDown);
            cluster.start(victim);

            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).ignoreExceptions().untilAsserted(() -> {
                VoterKey fresh = voterKey(victim);
                assertThat(fresh.nodeId()).isEqualTo(victim);
                assertThat(fresh).isNotEqualTo(old);
                for (int node = 0; node < cluster.size(); node++) {
                    assertThat(votersSeenBy(clusterId, node)).as("voters seen by node %s", node)
                            .contains(fresh).doesNotContain(old).hasSize(3);
                }
            });
            long rejoinMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
            System.out.printf("voter %d: killed, wiped, a topic created without it, restarted; a voter of the quorum"
                    + " again as %s %d ms after the kill%n", victim, voterKey(victim), rejoinMs);

            cluster.awaitReady(victim, 3);
            // what a Kafka user sees: DescribeQuorum (kafka-metadata-quorum.sh) on every broker lists the new voter key
            VoterKey fresh = voterKey(victim);
            for (int node = 0; node < cluster.size(); node++) {
                try (Admin admin = cluster.admin(List.of(node), Duration.ofSeconds(30))) {
                    await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() -> {
                        QuorumInfo q = admin.describeMetadataQuorum().quorumInfo().get(10, TimeUnit.SECONDS);
                        assertThat(q.voters()).extracting(v -> new VoterKey(v.replicaId(), v.replicaDirectoryId()))
                                .contains(fresh).doesNotContain(old).hasSize(3);
                        assertThat(q.leaderId()).isBetween(0, 2);
                    });
                }
            }
            String created = "after-wipe-of-" + victim;
            topics.add(created);
            try (Admin admin = cluster.admin(List.of(victim), Duration.ofSeconds(30))) {
                admin.createTopics(List.of(new NewTopic(created, 3, (short) 3))).all().get(30, TimeUnit.SECONDS);
            }
            for (int node = 0; node < cluster.size(); node++) {
                int n = node;
                try (Admin admin = cluster.admin(List.of(node), Duration.ofSeconds(30))) {
                    await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() -> {
                        assertThat(admin.listTopics().names().get(10, TimeUnit.SECONDS)).as("topics on broker %s", n)
                                .containsAll(topics);
                        Map<String, TopicDescription> d = admin.describeTopics(topics).allTopicNames().get(10, TimeUnit.SECONDS);
                        assertThat(d.values()).allSatisfy(t -> assertThat(t.partitions()).hasSize(3)
                                .allSatisfy(p -> assertThat(p.replicas()).hasSizeBetween(2, 3)));
                    });
                }
            }
        }
    }

    private int survivor(int victim) {
        return victim == 0 ? 1 : 0;
    }

    /** The voters of the Raft configuration as one node sees it, read over its controller port. */
    private Set<VoterKey> votersSeenBy(String clusterId, int node) throws IOException {
        try (QuorumProbe probe = QuorumProbe.forGroupOf(clusterId, cluster.controllerVoters(), 2000)) {
            QuorumJoin.PeerView view = probe.probe(node);
            assertThat(view).isInstanceOf(QuorumJoin.PeerView.Member.class);
            QuorumJoin.PeerView.Member member = (QuorumJoin.PeerView.Member) view;
            assertThat(member.stable()).isTrue();
            return Set.copyOf(member.peers().stream().map(p -> VoterKey.of(p.getId())).toList());
        }
    }

    /** The voter key a node's metadata log dir records. */
    private VoterKey voterKey(int node) throws IOException {
        Properties p = metaProperties(cluster.logDir(node).resolve("skein-raft").resolve("meta.properties"));
        return new VoterKey(Integer.parseInt(p.getProperty("node.id")), Uuid.fromString(p.getProperty("directory.id")));
    }

    private static Properties metaProperties(Path file) throws IOException {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file)) {
            p.load(r);
        }
        return p;
    }
}
