package dev.skein.broker.controller;

import dev.skein.broker.config.ConfigOp;
import dev.skein.broker.testing.ManualTime;
import dev.skein.broker.metadata.ClusterImage;
import dev.skein.broker.metadata.PartitionRegistration;
import dev.skein.broker.metadata.TopicMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.FencedLeaderEpochException;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.InvalidUpdateVersionException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The active controller's decisions on the in-memory state, with a manual clock: no Ratis, no threads. */
class ActiveControllerTest {
    private static final long SESSION_MS = 9000;

    private final ManualTime time = new ManualTime();
    private final ActiveController logic = new ActiveController(time, new Random(7), SESSION_MS,
            Map.of("unclean.leader.election.enable", "false", "min.insync.replicas", "1"));
    private MetadataState state = MetadataState.EMPTY;
    private long index;
    private final Map<Integer, Long> epochs = new HashMap<>();
    private final Map<Integer, Uuid> incarnations = new HashMap<>();

    private MetadataState.Applied apply(List<MetadataCommand> commands) {
        MetadataState.Applied applied = state.apply(commands, ++index);
        state = applied.state();
        return applied;
    }

    private void startBroker(int id, String rack) {
        incarnations.putIfAbsent(id, Uuid.randomUuid());
        register(id, rack, incarnations.get(id));
    }

    private void register(int id, String rack, Uuid incarnation) {
        apply(logic.registerBroker(state, new ClusterImage.BrokerInfo(id, "host" + id, 9092, rack, incarnation, true)));
        epochs.put(id, state.broker(id).epoch());
        apply(logic.heartbeat(state, id, epochs.get(id), false));
    }

    private void heartbeatAllBut(int... silent) {
        for (int id : state.brokers().keySet()) {
            if (IntStream.of(silent).noneMatch(s -> s == id) && !state.broker(id).fenced()) {
                apply(logic.heartbeat(state, id, epochs.get(id), false));
            }
        }
    }

    private TopicMetadata createTopic(String name, int partitions, int rf, Map<String, String> configs) {
        apply(logic.createTopic(state, name, partitions, (short) rf, configs));
        return state.topic(name);
    }

    private void brokers(int n) {
        for (int i = 0; i < n; i++) {
            startBroker(i, null);
        }
    }

    @Test
    void newBrokerIsFencedUntilItsFirstHeartbeat() {
        apply(logic.registerBroker(state, new ClusterImage.BrokerInfo(1, "h", 1, null, Uuid.randomUuid(), false)));
        assertThat(state.broker(1).fenced()).isTrue();
        assertThat(state.broker(1).epoch()).isEqualTo(index);

        apply(logic.heartbeat(state, 1, state.broker(1).epoch(), false));

        assertThat(state.broker(1).fenced()).isFalse();
        assertThat(logic.heartbeatReply(state, 1, false).fenced()).isFalse();
    }

    @Test
    void placementSpreadsLeadersAndReplicasEvenlyAcrossBrokers() {
        brokers(6);
        TopicMetadata t = createTopic("even", 12, 3, Map.of());

        Map<Integer, Integer> leaders = new HashMap<>();
        Map<Integer, Integer> replicas = new HashMap<>();
        for (PartitionRegistration p : t.partitions()) {
            leaders.merge(p.leader(), 1, Integer::sum);
            p.replicas().forEach(r -> replicas.merge(r, 1, Integer::sum));
            assertThat(p.replicas()).doesNotHaveDuplicates().hasSize(3);
            assertThat(p.isr()).isEqualTo(p.replicas());
        }
        assertThat(leaders).hasSize(6).allSatisfy((b, n) -> assertThat(n).isEqualTo(2));
        assertThat(replicas).hasSize(6).allSatisfy((b, n) -> assertThat(n).isEqualTo(6));
    }

    @Test
    void placementPutsTheReplicasOfAPartitionOnDifferentRacks() {
        for (int i = 0; i < 6; i++) {
            startBroker(i, "rack-" + (i % 3));
        }
        TopicMetadata t = createTopic("racks", 9, 3, Map.of());

        for (PartitionRegistration p : t.partitions()) {
            assertThat(p.replicas().stream().map(r -> state.broker(r).rack()).distinct()).hasSize(3);
        }
    }

    @Test
    void placementUsesOnlyLiveBrokers() {
        brokers(4);
        time.advance(SESSION_MS + 1);
        heartbeatAllBut(3);
        apply(logic.fenceExpiredBrokers(state));

        TopicMetadata t = createTopic("live-only", 8, 3, Map.of());

        assertThat(t.partitions()).allSatisfy(p -> assertThat(p.replicas()).doesNotContain(3));
    }

    @Test
    void replicationFactorAboveLiveBrokersIsRejectedNamingBothNumbers() {
        brokers(3);
        time.advance(SESSION_MS + 1);
        heartbeatAllBut(2);
        apply(logic.fenceExpiredBrokers(state));

        assertThatThrownBy(() -> logic.createTopic(state, "wide", 1, (short) 3, Map.of()))
                .isInstanceOf(InvalidReplicationFactorException.class)
                .hasMessageContaining("replication factor of 3").hasMessageContaining("only 2 broker(s)");
        assertThat(state.topics()).isEmpty();
    }

    @Test
    void minInsyncReplicasAboveReplicationFactorIsRejectedNamingBoth() {
        brokers(3);
        assertThatThrownBy(() -> logic.createTopic(state, "strict", 1, (short) 2, Map.of("min.insync.replicas", "3")))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("min.insync.replicas 3").hasMessageContaining("replication factor 2");
        createTopic("ok", 1, 2, Map.of());
        assertThatThrownBy(() -> logic.alterTopicConfigs(state, "ok", Map.of("min.insync.replicas", "3")))
                .isInstanceOf(InvalidConfigurationException.class);
    }

    /** The operations are applied to the overrides in the controller's state, whatever the requesting broker had. */
    @Test
    void incrementalAlterAppliesItsOperationsToTheOverridesInTheState() {
        brokers(3);
        createTopic("inc", 1, 3, Map.of("retention.ms", "1000", "cleanup.policy", "delete"));
        apply(logic.incrementalAlterTopicConfigs(state, "inc", List.of(
                new ConfigOp("segment.ms", ConfigOp.Kind.SET, "60000", null),
                new ConfigOp("cleanup.policy", ConfigOp.Kind.APPEND, "compact", "delete"))));
        assertThat(state.topic("inc").configs())
                .isEqualTo(Map.of("retention.ms", "1000", "segment.ms", "60000", "cleanup.policy", "delete,compact"));

        assertThatThrownBy(() -> logic.incrementalAlterTopicConfigs(state, "inc", List.of(
                new ConfigOp("min.insync.replicas", ConfigOp.Kind.SET, "4", null))))
                .isInstanceOf(InvalidConfigurationException.class);
        assertThatThrownBy(() -> logic.incrementalAlterTopicConfigs(state, "missing", List.of(
                new ConfigOp("segment.ms", ConfigOp.Kind.SET, "1", null))))
                .isInstanceOf(UnknownTopicOrPartitionException.class).hasMessageContaining("'missing'");

        apply(logic.incrementalAlterBrokerConfigs(state, "", List.of(
                new ConfigOp("follower.replication.throttled.rate", ConfigOp.Kind.SET, "2000", null))));
        apply(logic.incrementalAlterBrokerConfigs(state, "", List.of(
                new ConfigOp("leader.replication.throttled.rate", ConfigOp.Kind.SET, "3000", null))));
        assertThat(state.brokerConfigs().get("")).isEqualTo(Map.of(
                "follower.replication.throttled.rate", "2000", "leader.replication.throttled.rate", "3000"));
    }

    @Test
    void concurrentCreationOfTheSameTopicIsRejectedWhenApplied() {
        brokers(3);
        List<MetadataCommand> first = logic.createTopic(state, "twice", 1, (short) 1, Map.of());
        List<MetadataCommand> second = logic.createTopic(state, "twice", 2, (short) 1, Map.of());
        apply(first);
        MetadataState before = state;

        assertThatThrownBy(() -> apply(second)).isInstanceOf(TopicExistsException.class);
        assertThat(state).isSameAs(before);
        assertThat(state.topic("twice").partitionCount()).isEqualTo(1);
    }

    @Test
    void leaderElectedFromIsrOnBrokerFence() {
        brokers(3);
        PartitionRegistration before = createTopic("t", 1, 3, Map.of()).partition(0);
        int victim = before.leader();

        time.advance(SESSION_MS + 1);
        heartbeatAllBut(victim);
        apply(logic.fenceExpiredBrokers(state));

        PartitionRegistration after = state.topic("t").partition(0);
        assertThat(state.broker(victim).fenced()).isTrue();
        assertThat(after.leader()).isNotEqualTo(victim).isIn(before.replicas());
        assertThat(after.isr()).doesNotContain(victim).hasSize(2);
        assertThat(after.leaderEpoch()).isEqualTo(before.leaderEpoch() + 1);
        assertThat(after.partitionEpoch()).isGreaterThan(before.partitionEpoch());
    }

    @Test
    void brokerWithinItsSessionIsNotFenced() {
        brokers(3);
        time.advance(SESSION_MS - 1);
        assertThat(logic.fenceExpiredBrokers(state)).isEmpty();
    }

    /** Creates a topic whose only partition has its leader alone in the ISR, then fences that leader. */
    private PartitionRegistration fenceTheOnlyIsrMember(String topic, Map<String, String> configs) {
        brokers(3);
        PartitionRegistration p = createTopic(topic, 1, 3, configs).partition(0);
        apply(logic.alterPartition(state, new TopicPartition(topic, 0), p.leader(), p.leaderEpoch(), p.partitionEpoch(),
                List.of(p.leader())));
        time.advance(SESSION_MS + 1);
        heartbeatAllBut(p.leader());
        apply(logic.fenceExpiredBrokers(state));
        return p;
    }

    @Test
    void partitionWithoutLiveIsrMemberHasNoLeader() {
        PartitionRegistration before = fenceTheOnlyIsrMember("clean", Map.of());

        PartitionRegistration offline = state.topic("clean").partition(0);
        assertThat(offline.leader()).isEqualTo(PartitionRegistration.NO_LEADER);
        assertThat(offline.isr()).as("the fenced broker still holds the data").containsExactly(before.leader());
    }

    @Test
    void uncleanElectionPicksALiveOutOfSyncReplicaWhenTheTopicAllowsIt() {
        PartitionRegistration before = fenceTheOnlyIsrMember("unclean", Map.of("unclean.leader.election.enable", "true"));

        PartitionRegistration elected = state.topic("unclean").partition(0);
        assertThat(elected.leader()).isNotEqualTo(before.leader()).isNotEqualTo(PartitionRegistration.NO_LEADER);
        assertThat(elected.isr()).containsExactly(elected.leader());
        assertThat(elected.leaderEpoch()).isEqualTo(before.leaderEpoch() + 1);
    }

    @Test
    void offlinePartitionGetsItsLeaderBackWhenTheLastIsrMemberReturns() {
        brokers(2);
        PartitionRegistration p = createTopic("t", 1, 2, Map.of()).partition(0);
        apply(logic.alterPartition(state, new TopicPartition("t", 0), p.leader(), p.leaderEpoch(), p.partitionEpoch(),
                List.of(p.leader())));
        time.advance(SESSION_MS + 1);
        heartbeatAllBut(p.leader());
        apply(logic.fenceExpiredBrokers(state));
        assertThat(state.topic("t").partition(0).leader()).isEqualTo(PartitionRegistration.NO_LEADER);

        apply(logic.heartbeat(state, p.leader(), epochs.get(p.leader()), false));

        assertThat(state.topic("t").partition(0).leader()).isEqualTo(p.leader());
    }

    @Test
    void controlledShutdownMovesLeadershipAwayThenAllowsShutdown() {
        brokers(3);
        createTopic("t", 6, 3, Map.of());
        int leaving = 0;
        assertThat(state.topic("t").partitions()).anySatisfy(p -> assertThat(p.leader()).isEqualTo(leaving));

        apply(logic.heartbeat(state, leaving, epochs.get(leaving), true));

        assertThat(state.topic("t").partitions()).allSatisfy(p -> {
            assertThat(p.leader()).isNotEqualTo(leaving).isNotEqualTo(PartitionRegistration.NO_LEADER);
            assertThat(p.isr()).doesNotContain(leaving);
        });
        assertThat(logic.heartbeatReply(state, leaving, true).shutdownAllowed()).isTrue();
        assertThat(state.broker(leaving).fenced()).isTrue();
    }

    @Test
    void newIncarnationIsRemovedFromEveryIsr() {
        brokers(3);
        createTopic("t", 3, 3, Map.of());

        register(1, null, Uuid.randomUuid());

        assertThat(state.topic("t").partitions()).allSatisfy(p -> {
            assertThat(p.isr()).doesNotContain(1);
            assertThat(p.leader()).isNotEqualTo(1);
        });
        assertThat(state.broker(1).fenced()).isFalse();
    }

    @Test
    void alterPartitionIsACompareAndSetOnLeaderEpochAndPartitionEpoch() {
        brokers(3);
        PartitionRegistration p = createTopic("t", 1, 3, Map.of()).partition(0);
        TopicPartition tp = new TopicPartition("t", 0);
        List<Integer> shrunk = List.of(p.leader());

        apply(logic.alterPartition(state, tp, p.leader(), p.leaderEpoch(), p.partitionEpoch(), shrunk));
        PartitionRegistration after = state.topic("t").partition(0);

        assertThat(after.isr()).isEqualTo(shrunk);
        assertThat(after.partitionEpoch()).isEqualTo(p.partitionEpoch() + 1);
        assertThat(after.leaderEpoch()).isEqualTo(p.leaderEpoch());
        assertThatThrownBy(() -> logic.alterPartition(state, tp, p.leader(), p.leaderEpoch(), p.partitionEpoch(), p.replicas()))
                .isInstanceOf(InvalidUpdateVersionException.class);
        int other = p.replicas().stream().filter(r -> r != p.leader()).findFirst().orElseThrow();
        assertThatThrownBy(() -> logic.alterPartition(state, tp, other, p.leaderEpoch(), after.partitionEpoch(), p.replicas()))
                .isInstanceOf(FencedLeaderEpochException.class);
        assertThatThrownBy(() -> logic.alterPartition(state, tp, p.leader(), p.leaderEpoch() + 1, after.partitionEpoch(), p.replicas()))
                .isInstanceOf(FencedLeaderEpochException.class);
        assertThatThrownBy(() -> logic.alterPartition(state, tp, p.leader(), p.leaderEpoch(), after.partitionEpoch(), List.of(p.leader(), 99)))
                .isInstanceOf(InvalidRequestException.class);
    }

    @Test
    void alterPartitionRejectsAnIsrWithAFencedBroker() {
        brokers(3);
        PartitionRegistration p = createTopic("t", 1, 3, Map.of()).partition(0);
        int follower = p.replicas().stream().filter(r -> r != p.leader()).findFirst().orElseThrow();
        time.advance(SESSION_MS + 1);
        heartbeatAllBut(follower);
        apply(logic.fenceExpiredBrokers(state));
        PartitionRegistration now = state.topic("t").partition(0);

        assertThatThrownBy(() -> logic.alterPartition(state, new TopicPartition("t", 0), now.leader(), now.leaderEpoch(),
                now.partitionEpoch(), p.replicas())).isInstanceOf(InvalidRequestException.class).hasMessageContaining("fenced");
    }

    @Test
    void preferredLeaderIsRestoredOnceBackInSync() {
        brokers(3);
        PartitionRegistration p = createTopic("t", 1, 3, Map.of()).partition(0);
        int preferred = p.replicas().getFirst();
        time.advance(SESSION_MS + 1);
        heartbeatAllBut(preferred);
        apply(logic.fenceExpiredBrokers(state));
        apply(logic.heartbeat(state, preferred, epochs.get(preferred), false));
        assertThat(logic.preferredLeaderElections(state)).as("not in the ISR yet").isEmpty();

        PartitionRegistration moved = state.topic("t").partition(0);
        apply(logic.alterPartition(state, new TopicPartition("t", 0), moved.leader(), moved.leaderEpoch(),
                moved.partitionEpoch(), p.replicas()));
        apply(logic.preferredLeaderElections(state));

        PartitionRegistration back = state.topic("t").partition(0);
        assertThat(back.leader()).isEqualTo(preferred);
        assertThat(back.leaderEpoch()).isEqualTo(moved.leaderEpoch() + 1);
    }

    @Test
    void producerIdBlocksFollowEachOther() {
        long first = apply(List.of(new MetadataCommand.ProducerIdBlock(1000))).value();
        long second = apply(List.of(new MetadataCommand.ProducerIdBlock(1000))).value();
        assertThat(second).isEqualTo(first + 1000);
    }

    @Test
    void stateAndCommandsSurviveTheirBinaryForm() {
        brokers(3);
        createTopic("t", 4, 2, Map.of("retention.ms", "1000"));
        apply(List.of(new MetadataCommand.ProducerIdBlock(1000)));

        assertThat(MetadataCodec.decodeState(MetadataCodec.encodeState(state))).usingRecursiveComparison().isEqualTo(state);
        List<MetadataCommand> all = List.of(
                new MetadataCommand.RegisterBroker(1, "h", 2, "r", Uuid.randomUuid()),
                new MetadataCommand.RegisterBroker(1, "h", 2, null, Uuid.randomUuid()),
                new MetadataCommand.UnfenceBroker(1, 5), new MetadataCommand.FenceBroker(1, 5),
                new MetadataCommand.CreateTopic("x", Uuid.randomUuid(), List.of(List.of(1, 2)), Map.of("a", "b")),
                new MetadataCommand.DeleteTopic(Uuid.randomUuid()),
                new MetadataCommand.CreatePartitions(Uuid.randomUuid(), 3, List.of(List.of(2, 1))),
                new MetadataCommand.AlterTopicConfigs(Uuid.randomUuid(), Map.of("k", "v")),
                new MetadataCommand.ChangePartition(Uuid.randomUuid(), 2, 7, -1, 3, List.of(1)),
                new MetadataCommand.ProducerIdBlock(1000));
        assertThat(MetadataCodec.decodeBatch(MetadataCodec.encodeBatch(all))).isEqualTo(all);
    }
}
