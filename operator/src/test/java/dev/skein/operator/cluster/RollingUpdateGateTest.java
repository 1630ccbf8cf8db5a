package dev.skein.operator.cluster;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.OptionalInt;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The rolling-update gate's decision table: which broker restarts next, or why none may. */
class RollingUpdateGateTest {
    private static final Set<Integer> BROKERS = Set.of(0, 1, 2);

    /** Three partitions of RF 3, min ISR 2, all replicas in sync. */
    private static List<PartitionReplicas> healthyRf3() {
        return List.of(
                new PartitionReplicas("orders", 0, List.of(0, 1, 2), List.of(0, 1, 2), 2),
                new PartitionReplicas("orders", 1, List.of(1, 2, 0), List.of(1, 2, 0), 2),
                new PartitionReplicas("orders", 2, List.of(2, 0, 1), List.of(2, 0, 1), 2));
    }

    @Test
    void nothingOutdatedMeansDone() {
        RollDecision d = RollingUpdateGate.next(BROKERS, BROKERS, Set.of(), healthyRf3(), OptionalInt.of(0));

        assertThat(d).isEqualTo(new RollDecision.Done());
    }

    @Test
    void lowestNodeIdRestartsFirstWhenEveryPartitionKeepsMinIsr() {
        RollDecision d = RollingUpdateGate.next(BROKERS, BROKERS, BROKERS, healthyRf3(), OptionalInt.of(2));

        assertThat(d).isInstanceOfSatisfying(RollDecision.Restart.class, r -> assertThat(r.brokerId()).isZero());
    }

    @Test
    void activeControllerRestartsLast() {
        RollDecision first = RollingUpdateGate.next(BROKERS, BROKERS, BROKERS, healthyRf3(), OptionalInt.of(0));
        RollDecision last = RollingUpdateGate.next(BROKERS, BROKERS, Set.of(0), healthyRf3(), OptionalInt.of(0));

        assertThat(first).isInstanceOfSatisfying(RollDecision.Restart.class, r -> assertThat(r.brokerId()).isEqualTo(1));
        assertThat(last).isInstanceOfSatisfying(RollDecision.Restart.class, r -> assertThat(r.brokerId()).isZero());
    }

    @Test
    void anotherBrokerNotReadyBlocksTheRoll() {
        RollDecision d = RollingUpdateGate.next(BROKERS, Set.of(0, 1), Set.of(0, 1), healthyRf3(), OptionalInt.of(0));

        assertThat(d).isInstanceOfSatisfying(RollDecision.Wait.class, w -> {
            assertThat(w.reason()).isEqualTo(RollReason.BrokerNotReady);
            assertThat(w.message()).contains("broker 2 is not ready");
        });
    }

    @Test
    void outdatedBrokerThatIsDownRestartsFirst() {
        // broker 1 is down (out of every ISR): restarting it costs nothing, ISRs without it still hold 2
        List<PartitionReplicas> withoutBroker1 = List.of(
                new PartitionReplicas("orders", 0, List.of(0, 1, 2), List.of(0, 2), 2),
                new PartitionReplicas("orders", 1, List.of(1, 2, 0), List.of(2, 0), 2));

        RollDecision d = RollingUpdateGate.next(BROKERS, Set.of(0, 2), BROKERS, withoutBroker1, OptionalInt.of(2));

        assertThat(d).isInstanceOfSatisfying(RollDecision.Restart.class, r -> {
            assertThat(r.brokerId()).isEqualTo(1);
            assertThat(r.why()).contains("not ready");
        });
    }

    @Test
    void twoBrokersNotReadyBlocksTheRoll() {
        RollDecision d = RollingUpdateGate.next(BROKERS, Set.of(0), BROKERS, healthyRf3(), OptionalInt.of(0));

        assertThat(d).isInstanceOfSatisfying(RollDecision.Wait.class, w -> {
            assertThat(w.reason()).isEqualTo(RollReason.BrokerNotReady);
            assertThat(w.message()).contains("[1, 2]");
        });
    }

    @Test
    void readyBrokerOutsideAnIsrMustCatchUpBeforeTheNextRestart() {
        List<PartitionReplicas> catchingUp = List.of(
                new PartitionReplicas("orders", 0, List.of(0, 1, 2), List.of(1, 2), 2));

        RollDecision d = RollingUpdateGate.next(BROKERS, BROKERS, Set.of(1, 2), catchingUp, OptionalInt.of(2));

        assertThat(d).isInstanceOfSatisfying(RollDecision.Wait.class, w -> {
            assertThat(w.reason()).isEqualTo(RollReason.BrokerCatchingUp);
            assertThat(w.message()).contains("broker 0", "orders-0");
        });
    }

    @Test
    void restartThatWouldDropAPartitionBelowMinIsrWaitsAndNamesThePartition() {
        // orders-0 has min ISR 3 with RF 3: no broker of it may go; broker 0's other partition is fine
        List<PartitionReplicas> strict = List.of(
                new PartitionReplicas("orders", 0, List.of(0, 1, 2), List.of(0, 1, 2), 3));

        RollDecision d = RollingUpdateGate.next(BROKERS, BROKERS, Set.of(0, 1), strict, OptionalInt.of(2));

        assertThat(d).isInstanceOfSatisfying(RollDecision.Wait.class, w -> {
            assertThat(w.reason()).isEqualTo(RollReason.MinInSyncReplicasAtRisk);
            assertThat(w.message()).contains(
                    "restarting broker 0 would leave orders-0 with ISR [1, 2], below min.insync.replicas 3",
                    "restarting broker 1 would leave orders-0 with ISR [0, 2], below min.insync.replicas 3");
        });
    }

    @Test
    void blockedCandidateIsSkippedForOneThatIsSafe() {
        // broker 0 leads a partition with an ISR of just {0, 1} and min ISR 2; broker 2 hosts nothing at risk
        List<PartitionReplicas> partitions = List.of(
                new PartitionReplicas("a", 0, List.of(0, 1), List.of(0, 1), 2),
                new PartitionReplicas("b", 0, List.of(2, 1, 0), List.of(2, 1, 0), 1));

        RollDecision d = RollingUpdateGate.next(BROKERS, BROKERS, Set.of(0, 2), partitions, OptionalInt.of(1));

        assertThat(d).isInstanceOfSatisfying(RollDecision.Restart.class, r -> assertThat(r.brokerId()).isEqualTo(2));
    }

    @Test
    void activeControllerWaitsWhileOtherOutdatedBrokersAreBlocked() {
        List<PartitionReplicas> partitions = List.of(
                new PartitionReplicas("a", 0, List.of(1, 2), List.of(1, 2), 2));

        RollDecision d = RollingUpdateGate.next(BROKERS, BROKERS, Set.of(0, 1), partitions, OptionalInt.of(0));

        assertThat(d).isInstanceOfSatisfying(RollDecision.Wait.class, w -> {
            assertThat(w.reason()).isEqualTo(RollReason.MinInSyncReplicasAtRisk);
            assertThat(w.message()).contains("broker 0 is the active controller and restarts last",
                    "restarting broker 1 would leave a-0 with ISR [2]");
        });
    }

    @Test
    void singleReplicaPartitionBlocksRestartingItsBroker() {
        List<PartitionReplicas> rf1 = List.of(new PartitionReplicas("logs", 0, List.of(1), List.of(1), 1));

        RollDecision d = RollingUpdateGate.next(BROKERS, BROKERS, Set.of(1), rf1, OptionalInt.of(0));

        assertThat(d).isInstanceOfSatisfying(RollDecision.Wait.class,
                w -> assertThat(w.message()).contains("logs-0 with ISR []"));
    }
}
