package dev.skein.broker.controller;

import dev.skein.broker.testing.ManualTime;
import dev.skein.broker.metadata.ClusterImage;
import dev.skein.broker.metadata.PartitionRegistration;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ElectionNotNeededException;
import org.apache.kafka.common.errors.EligibleLeadersNotAvailableException;
import org.apache.kafka.common.errors.InvalidReplicaAssignmentException;
import org.apache.kafka.common.errors.NoReassignmentInProgressException;
import org.apache.kafka.common.errors.PreferredLeaderNotAvailableException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The active controller's decisions on partition reassignment (AlterPartitionReassignments) and on
 * requested leader elections (ElectLeaders), on the in-memory state with a manual clock.
 */
class PartitionReassignmentTest {
    private static final long SESSION_MS = 9000;
    private static final TopicPartition TP = new TopicPartition("t", 0);

    private final ManualTime time = new ManualTime();
    private final ActiveController logic = new ActiveController(time, new Random(7), SESSION_MS,
            Map.of("unclean.leader.election.enable", "false", "min.insync.replicas", "1"));
    private MetadataState state = MetadataState.EMPTY;
    private long index;
    private final Map<Integer, Long> epochs = new HashMap<>();

    private List<MetadataCommand> apply(List<MetadataCommand> commands) {
        state = state.apply(commands, ++index).state();
        return commands;
    }

    /** Brokers 0..n-1, live, and topic "t" with one partition on {@code replicas} (leader first, all in sync). */
    private void cluster(int n, Integer... replicas) {
        for (int i = 0; i < n; i++) {
            apply(logic.registerBroker(state, new ClusterImage.BrokerInfo(i, "host" + i, 9092, null, Uuid.randomUuid(), true)));
            epochs.put(i, state.broker(i).epoch());
            apply(logic.heartbeat(state, i, epochs.get(i), false));
        }
        apply(List.of(new MetadataCommand.CreateTopic("t", Uuid.randomUuid(), List.of(List.of(replicas)), Map.of())));
    }

    private PartitionRegistration partition() {
        return state.topic("t").partition(0);
    }

    private void reassign(Integer... target) {
        apply(logic.alterPartitionReassignment(state, TP, target == null ? null : List.of(target)));
    }

    /** The leader reports {@code isr} as its new ISR, as ReplicaManager does when a follower caught up. */
    private List<MetadataCommand> leaderReportsIsr(Integer... isr) {
        PartitionRegistration p = partition();
        return apply(logic.alterPartition(state, TP, p.leader(), p.leaderEpoch(), p.partitionEpoch(), List.of(isr)));
    }

    private void fence(int broker) {
        time.advance(SESSION_MS + 1);
        for (int id : state.brokers().keySet()) {
            if (id != broker && !state.broker(id).fenced()) {
                apply(logic.heartbeat(state, id, epochs.get(id), false));
            }
        }
        apply(logic.fenceExpiredBrokers(state));
    }

    private void unfence(int broker) {
        apply(logic.heartbeat(state, broker, epochs.get(broker), false));
    }

    @Test
    void reassignmentRecordsAddingAndRemovingReplicasAndKeepsLeaderAndIsr() {
        cluster(3, 0, 1);
        PartitionRegistration before = partition();

        reassign(0, 2);

        PartitionRegistration p = partition();
        assertThat(p.replicas()).containsExactly(0, 2, 1);
        assertThat(p.addingReplicas()).containsExactly(2);
        assertThat(p.removingReplicas()).containsExactly(1);
        assertThat(p.isr()).containsExactly(0, 1);
        assertThat(p.leader()).isEqualTo(0);
        assertThat(p.leaderEpoch()).isEqualTo(before.leaderEpoch());
        assertThat(p.partitionEpoch()).isEqualTo(before.partitionEpoch() + 1);
    }

    @Test
    void reassignmentCompletesWhenTheAddingReplicaJoinsTheIsr() {
        cluster(3, 0, 1);
        reassign(0, 2);
        int leaderEpoch = partition().leaderEpoch();

        List<MetadataCommand> batch = leaderReportsIsr(0, 1, 2);

        assertThat(batch).hasSize(2).last().isInstanceOf(MetadataCommand.ReassignPartition.class);
        PartitionRegistration p = partition();
        assertThat(p.replicas()).containsExactly(0, 2);
        assertThat(p.isr()).containsExactly(0, 2);
        assertThat(p.addingReplicas()).isEmpty();
        assertThat(p.removingReplicas()).isEmpty();
        assertThat(p.leader()).isEqualTo(0);
        assertThat(p.leaderEpoch()).isEqualTo(leaderEpoch);
    }

    @Test
    void reassignmentWaitsWhileAnAddingReplicaIsOutOfSync() {
        cluster(4, 0, 1);
        reassign(2, 3);

        leaderReportsIsr(0, 1, 2);

        PartitionRegistration p = partition();
        assertThat(p.addingReplicas()).containsExactly(2, 3);
        assertThat(p.replicas()).containsExactly(2, 3, 0, 1);
        assertThat(logic.completeReassignments(state)).isEmpty();
    }

    @Test
    void removedLeaderHandsOverToTheFirstInSyncTargetReplicaWithANewEpoch() {
        cluster(3, 0, 1);
        reassign(2, 1);
        assertThat(partition().replicas()).containsExactly(2, 1, 0);
        int leaderEpoch = partition().leaderEpoch();

        leaderReportsIsr(0, 1, 2);

        PartitionRegistration p = partition();
        assertThat(p.replicas()).as("ordered as requested").containsExactly(2, 1);
        assertThat(p.isr()).containsExactlyInAnyOrder(1, 2);
        assertThat(p.leader()).isEqualTo(2);
        assertThat(p.leaderEpoch()).isEqualTo(leaderEpoch + 1);
    }

    @Test
    void timerCompletesAReassignmentWhoseIsrAlreadyHoldsTheAddingReplicas() {
        cluster(3, 0, 1);
        reassign(0, 2);
        // an ISR change applied without its completion (e.g. the entry raced with another change)
        PartitionRegistration p = partition();
        apply(List.of(new MetadataCommand.ChangePartition(state.topic("t").id(), 0, p.partitionEpoch(), 0,
                p.leaderEpoch(), List.of(0, 1, 2))));

        apply(logic.completeReassignments(state));

        assertThat(partition().replicas()).containsExactly(0, 2);
        assertThat(partition().addingReplicas()).isEmpty();
    }

    @Test
    void replicationFactorDecreaseCompletesAtOnceAndIncreaseAfterCatchUp() {
        cluster(3, 0, 1, 2);

        reassign(0, 1);
        assertThat(partition().replicas()).containsExactly(0, 1);
        assertThat(partition().isr()).containsExactly(0, 1);
        assertThat(partition().removingReplicas()).isEmpty();

        reassign(0, 1, 2);
        assertThat(partition().replicas()).containsExactly(0, 1, 2);
        assertThat(partition().addingReplicas()).containsExactly(2);
        leaderReportsIsr(0, 1, 2);
        assertThat(partition().replicas()).containsExactly(0, 1, 2);
        assertThat(partition().addingReplicas()).isEmpty();
    }

    @Test
    void cancelRevertsToTheOriginalReplicas() {
        cluster(3, 0, 1);
        PartitionRegistration before = partition();
        reassign(0, 2);

        reassign((Integer[]) null);

        PartitionRegistration p = partition();
        assertThat(p.replicas()).containsExactly(0, 1);
        assertThat(p.isr()).containsExactly(0, 1);
        assertThat(p.addingReplicas()).isEmpty();
        assertThat(p.removingReplicas()).isEmpty();
        assertThat(p.leader()).isEqualTo(before.leader());
        assertThat(p.leaderEpoch()).isEqualTo(before.leaderEpoch());
    }

    @Test
    void newTargetReplacesTheReassignmentInProgress() {
        cluster(4, 0, 1);
        reassign(0, 2);

        reassign(0, 3);

        assertThat(partition().replicas()).containsExactly(0, 3, 1);
        assertThat(partition().addingReplicas()).containsExactly(3);
        assertThat(partition().removingReplicas()).containsExactly(1);
    }

    @Test
    void sameReplicasAsNowChangeNothing() {
        cluster(3, 0, 1);
        assertThat(logic.alterPartitionReassignment(state, TP, List.of(0, 1))).isEmpty();
    }

    @Test
    void badReassignmentsAreRejectedWithKafkasErrors() {
        cluster(3, 0, 1);
        assertThatThrownBy(() -> logic.alterPartitionReassignment(state, new TopicPartition("nope", 0), List.of(0)))
                .isInstanceOf(UnknownTopicOrPartitionException.class);
        assertThatThrownBy(() -> logic.alterPartitionReassignment(state, new TopicPartition("t", 5), List.of(0)))
                .isInstanceOf(UnknownTopicOrPartitionException.class);
        assertThatThrownBy(() -> logic.alterPartitionReassignment(state, TP, List.of(0, 7)))
                .isInstanceOf(InvalidReplicaAssignmentException.class).hasMessageContaining("Broker 7");
        assertThatThrownBy(() -> logic.alterPartitionReassignment(state, TP, List.of(2, 2)))
                .isInstanceOf(InvalidReplicaAssignmentException.class).hasMessageContaining("Broker 2");
        assertThatThrownBy(() -> logic.alterPartitionReassignment(state, TP, List.of()))
                .isInstanceOf(InvalidReplicaAssignmentException.class).hasMessageContaining("empty");
        assertThatThrownBy(() -> logic.alterPartitionReassignment(state, TP, null))
                .isInstanceOf(NoReassignmentInProgressException.class);
        assertThat(partition().partitionEpoch()).isZero();
    }

    @Test
    void preferredElectionMovesLeadershipBackToTheFirstReplica() {
        cluster(3, 0, 1, 2);
        fence(0);
        assertThat(partition().leader()).isEqualTo(1);
        unfence(0);
        leaderReportsIsr(1, 2, 0);
        int epoch = partition().leaderEpoch();

        apply(logic.electLeader(state, ElectionType.PREFERRED, TP));

        assertThat(partition().leader()).isEqualTo(0);
        assertThat(partition().leaderEpoch()).isEqualTo(epoch + 1);
        assertThatThrownBy(() -> logic.electLeader(state, ElectionType.PREFERRED, TP))
                .isInstanceOf(ElectionNotNeededException.class);
    }

    @Test
    void preferredElectionNeedsTheFirstReplicaLiveAndInSync() {
        cluster(3, 0, 1, 2);
        fence(0);
        assertThatThrownBy(() -> logic.electLeader(state, ElectionType.PREFERRED, TP))
                .isInstanceOf(PreferredLeaderNotAvailableException.class).hasMessageContaining("0");
        unfence(0);
        assertThat(partition().isr()).doesNotContain(0);
        assertThatThrownBy(() -> logic.electLeader(state, ElectionType.PREFERRED, TP))
                .isInstanceOf(PreferredLeaderNotAvailableException.class);
        assertThatThrownBy(() -> logic.electLeader(state, ElectionType.PREFERRED, new TopicPartition("t", 3)))
                .isInstanceOf(UnknownTopicOrPartitionException.class);
    }

    @Test
    void uncleanElectionPicksALiveOutOfSyncReplicaOnlyWithoutALiveIsrMember() {
        cluster(3, 0, 1);
        leaderReportsIsr(0);
        fence(0);
        assertThat(partition().hasLeader()).isFalse();

        apply(logic.electLeader(state, ElectionType.UNCLEAN, TP));

        assertThat(partition().leader()).isEqualTo(1);
        assertThat(partition().isr()).containsExactly(1);
        assertThatThrownBy(() -> logic.electLeader(state, ElectionType.UNCLEAN, TP))
                .isInstanceOf(ElectionNotNeededException.class);
    }

    @Test
    void uncleanElectionPrefersALiveIsrMember() {
        cluster(3, 0, 1, 2);
        PartitionRegistration p = partition();
        apply(List.of(new MetadataCommand.ChangePartition(state.topic("t").id(), 0, p.partitionEpoch(),
                PartitionRegistration.NO_LEADER, p.leaderEpoch() + 1, List.of(2))));

        apply(logic.electLeader(state, ElectionType.UNCLEAN, TP));

        assertThat(partition().leader()).isEqualTo(2);
        assertThat(partition().isr()).containsExactly(2);
    }

    @Test
    void uncleanElectionWithoutALiveReplicaFails() {
        cluster(2, 0);
        fence(0);
        assertThatThrownBy(() -> logic.electLeader(state, ElectionType.UNCLEAN, TP))
                .isInstanceOf(EligibleLeadersNotAvailableException.class);
    }

    @Test
    void reassignmentCommandSurvivesItsBinaryFormAndIsACompareAndSet() {
        cluster(3, 0, 1);
        MetadataCommand c = new MetadataCommand.ReassignPartition(state.topic("t").id(), 0, 0, List.of(0, 2, 1),
                List.of(0, 1), 0, 0, List.of(2), List.of(1));
        assertThat(MetadataCodec.decodeBatch(MetadataCodec.encodeBatch(List.of(c)))).containsExactly(c);

        apply(List.of(c));
        assertThat(MetadataCodec.decodeState(MetadataCodec.encodeState(state))).usingRecursiveComparison().isEqualTo(state);
        assertThatThrownBy(() -> state.apply(List.of(c), 99))
                .isInstanceOf(org.apache.kafka.common.errors.InvalidUpdateVersionException.class);
        assertThatThrownBy(() -> state.apply(List.of(new MetadataCommand.ReassignPartition(state.topic("t").id(), 0, 1,
                List.of(0, 9), List.of(0), 0, 0, List.of(9), List.of())), 99))
                .hasMessageContaining("9");
    }
}
