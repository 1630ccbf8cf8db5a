package dev.skein.broker.controller.raft;

import dev.skein.broker.controller.Controllers;
import dev.skein.broker.it.InJvmCluster;
import dev.skein.broker.metadata.TopicMetadata;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A controller request whose log entry committed, but whose answer never left the active controller
 * (it lost its leadership, or died, in between), is sent again to the next active controller, which
 * answers with the outcome of that entry instead of deciding the request anew: the client sees its
 * topic created once, not TOPIC_ALREADY_EXISTS. Three full brokers in this JVM, each a voter, over
 * loopback; the active controller's answer is held back by a hook that runs after the commit.
 */
class ControllerRetryIT {
    @TempDir
    Path dir;
    private InJvmCluster cluster;
    private final Map<Integer, RaftController> controllers = new ConcurrentHashMap<>();
    private final CountDownLatch release = new CountDownLatch(1);
    private volatile List<QuorumVoter> voters;
    private volatile String clusterId;

    @BeforeEach
    void startCluster() throws Exception {
        cluster = InJvmCluster.start(dir, 3, 0, (i, p) -> {
            p.put("offsets.topic.replication.factor", "3");
            p.put("broker.heartbeat.interval.ms", "200");
            p.put("broker.session.timeout.ms", "3000");
            p.put("auto.leader.rebalance.enable", "false");
            // a forwarded request keeps being sent until then: long enough for a failover on a loaded machine
            p.put("controller.quorum.request.timeout.ms", "20000");
        }, (cfg, cluster, self) -> {
            clusterId = cluster;
            voters = QuorumVoter.parseAll(cfg.controllerQuorumVoters());
            RaftController c = (RaftController) Controllers.start(cfg, cluster, self, Time.SYSTEM);
            controllers.put(cfg.nodeId(), c);
            return c;
        });
        try (Admin admin = admin(0)) {
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() ->
                    assertThat(admin.describeCluster().nodes().get().stream().map(Node::id).collect(Collectors.toSet()))
                            .containsExactlyInAnyOrder(0, 1, 2));
        }
    }

    @AfterEach
    void stopCluster() {
        // let a held answer go (to a controller that is closed by then, or about to be)
        release.countDown();
        if (cluster != null) {
            cluster.close();
        }
    }

    private Admin admin(int broker) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.broker(broker).bootstrapServers(),
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "60000"));
    }

    private int activeController() {
        return await().atMost(Duration.ofSeconds(30)).until(() -> controllers.entrySet().stream()
                .filter(e -> e.getValue().isActive()).map(Map.Entry::getKey).findFirst().orElse(-1), id -> id >= 0);
    }

    /** The active controller whose answer to one topic's creation is held back, and when that topic's entry committed. */
    private record HeldAnswer(int nodeId, RaftController controller, CountDownLatch committed) {
    }

    /**
     * Holds back, on the active controller, the answer to the creation of {@code topic} once its
     * entry is applied there; {@code committed} counts down at that point. The answer stays held
     * (the controller's event loop with it) until the test ends.
     */
    private HeldAnswer holdAnswerAfterCommit(String topic) {
        int active = activeController();
        RaftController controller = controllers.get(active);
        CountDownLatch committed = new CountDownLatch(1);
        controller.afterCommitHook(call -> {
            if (call.request() instanceof ControllerRequest.CreateTopic c && c.name().equals(topic)) {
                committed.countDown();
                boolean released = false;
                while (!released) {
                    try {
                        released = release.await(1, TimeUnit.MINUTES);
                    } catch (InterruptedException closing) {
                        // the controller is closing: keep holding, the answer must not leave before it is closed
                    }
                }
            }
        });
        return new HeldAnswer(active, controller, committed);
    }

    @Test
    void aCreateTopicsWhoseActiveControllerLostLeadershipAfterTheCommitSucceedsOnce() throws Exception {
        HeldAnswer held = holdAnswerAfterCommit("moved");
        int next = (held.nodeId() + 1) % 3;

        try (Admin admin = admin(next)) {
            // the Admin client sends CreateTopics to the active controller's broker
            CreateTopicsResult result = admin.createTopics(List.of(new NewTopic("moved", 3, (short) 3)));
            assertThat(held.committed().await(30, TimeUnit.SECONDS)).as("the topic's entry committed").isTrue();
            Uuid created = held.controller().state().topic("moved").id();

            // the active controller hands its leadership over before it answers
            transferLeadership(held.nodeId(), next);

            result.all().get(60, TimeUnit.SECONDS);
            assertThat(result.topicId("moved").get()).isEqualTo(created);
            TopicDescription d = admin.describeTopics(List.of("moved")).allTopicNames().get().get("moved");
            assertThat(d.topicId()).isEqualTo(created);
            assertThat(d.partitions()).hasSize(3);
        }
    }

    @Test
    void aForwardedRequestWhoseActiveControllerDiedAfterTheCommitIsAnsweredByTheNextOne() throws Exception {
        HeldAnswer held = holdAnswerAfterCommit("survivor");
        int forwarder = (held.nodeId() + 1) % 3;

        Thread killer = new Thread(() -> {
            try {
                if (held.committed().await(30, TimeUnit.SECONDS)) {
                    // the active controller dies between its commit and its answer
                    held.controller().close();
                }
            } catch (InterruptedException ignored) {
                Thread.currentThread().interrupt();
            }
        }, "controller-killer");
        killer.start();
        TopicMetadata topic;
        try {
            // a broker that is not the active controller forwards the request; its retries reach the next one
            topic = controllers.get(forwarder).createTopic("survivor", 2, (short) 2, Map.of(), false);
        } finally {
            killer.join(60_000);
        }
        assertThat(held.committed().getCount()).isZero();
        assertThat(topic.partitionCount()).isEqualTo(2);
        try (Admin admin = admin(forwarder)) {
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() -> {
                TopicDescription d = admin.describeTopics(List.of("survivor")).allTopicNames().get().get("survivor");
                assertThat(d.topicId()).isEqualTo(topic.id());
                assertThat(d.partitions()).hasSize(2);
            });
        }
        assertThat(controllers.get(forwarder).state().topics()).containsKey("survivor");
    }

    private void transferLeadership(int from, int to) throws Exception {
        List<RaftPeer> peers = new ArrayList<>();
        RaftPeer target = null;
        RaftPeer current = null;
        for (QuorumVoter v : voters) {
            RaftPeer p = RaftPeer.newBuilder().setId(controllers.get(v.id()).voterKey().peerId()).setAddress(v.address())
                    .build();
            peers.add(p);
            if (v.id() == to) {
                target = p;
            }
            if (v.id() == from) {
                current = p;
            }
        }
        try (RaftClient client = RaftClient.newBuilder().setRaftGroup(RaftGroup.valueOf(RaftController.groupId(clusterId),
                peers)).setLeaderId(current.getId()).setProperties(new RaftProperties()).build()) {
            RaftClientReply reply = client.admin().transferLeadership(target.getId(), 10_000);
            assertThat(reply.isSuccess()).as("leadership transfer: %s", reply).isTrue();
        }
    }
}
