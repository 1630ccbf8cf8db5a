package dev.skein.operator.cluster;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class ScaleDownPlanTest {

    private static PartitionReplicas p(String topic, int partition, Integer... replicas) {
        return new PartitionReplicas(topic, partition, List.of(replicas), List.of(replicas), 1);
    }

    private static ScaleDecision decide(int running, int target, int voters, List<PartitionReplicas> partitions,
                                        List<ScaleDownPlan.InFlight> inFlight, Map<Integer, String> racks) {
        return ScaleDownPlan.decide(new ScaleDownPlan.Input(running, target, voters, partitions, inFlight, racks, 100));
    }

    private static ScaleDecision decide(int running, int target, List<PartitionReplicas> partitions) {
        return decide(running, target, 3, partitions, List.of(), Map.of());
    }

    @Test
    void noPlanWhenTheSpecKeepsOrAddsBrokers() {
        assertThat(decide(3, 3, List.of(p("a", 0, 0, 1, 2)))).isEqualTo(new ScaleDecision.None());
        assertThat(decide(3, 5, List.of(p("a", 0, 0, 1, 2)))).isEqualTo(new ScaleDecision.None());
    }

    @Test
    void refusesToRemoveAControllerVoter() {
        ScaleDecision d = decide(3, 2, 3, List.of(), List.of(), Map.of());
        assertThat(d).isInstanceOfSatisfying(ScaleDecision.Refuse.class, r -> {
            assertThat(r.reason()).isEqualTo(ScaleReason.ControllerVoterRemoval);
            assertThat(r.message()).contains("spec.brokers 2", "3 controller voters");
        });
    }

    @Test
    void refusesWhenATopicOrTheOffsetsTopicHasMoreReplicasThanRemainingBrokers() {
        ScaleDecision d = decide(5, 3, List.of(p("a", 0, 0, 1, 2), p("wide", 0, 0, 1, 2, 3),
                p("__consumer_offsets", 0, 4, 3, 2, 1, 0)));
        assertThat(d).isInstanceOfSatisfying(ScaleDecision.Refuse.class, r -> {
            assertThat(r.reason()).isEqualTo(ScaleReason.ReplicationFactorAboveBrokers);
            assertThat(r.message()).contains("only 3 brokers", "wide (4 replicas)", "__consumer_offsets (5 replicas)")
                    .doesNotContain("a (");
        });
    }

    @Test
    void aReplicaBeingRemovedByAnInFlightReassignmentDoesNotCountTowardsTheReplicationFactor() {
        // a 4-replica listing while 3 is being removed: the partition ends with RF 3, which fits
        ScaleDecision d = decide(4, 3, 3, List.of(p("a", 0, 0, 1, 2, 3)),
                List.of(new ScaleDownPlan.InFlight("a", 0, List.of(3))), Map.of());
        assertThat(d).isEqualTo(new ScaleDecision.Wait(1, 1));
    }

    @Test
    void movesEveryReplicaOffTheDepartingBrokersKeepingThePositionsOfTheOthers() {
        List<PartitionReplicas> partitions = List.of(
                p("t", 0, 3, 4, 0), p("t", 1, 4, 0, 1), p("t", 2, 0, 1, 2), p("t", 3, 1, 3, 2));
        ScaleDecision d = decide(5, 3, partitions);
        assertThat(d).isInstanceOfSatisfying(ScaleDecision.Reassign.class, r -> {
            assertThat(r.remaining()).isEqualTo(3);
            assertThat(r.moves()).doesNotContainKey(partitions.get(2));
            Map<String, List<Integer>> byName = new HashMap<>();
            r.moves().forEach((p, rs) -> byName.put(p.toString(), rs));
            // t-0: 3 and 4 both go; 0 stays third; the new preferred leader is the broker leading least
            assertThat(byName.get("t-0")).containsExactly(2, 1, 0);
            assertThat(byName.get("t-1")).containsExactly(2, 0, 1);
            assertThat(byName.get("t-3")).containsExactly(1, 0, 2);
            assertThat(byName.values()).allSatisfy(rs -> assertThat(rs).doesNotHaveDuplicates()
                    .allMatch(b -> b < 3));
        });
    }

    @Test
    void spreadsMovedReplicasOverTheLeastLoadedBrokers() {
        // broker 0 is already loaded; the six replicas on broker 3 go to 1 and 2 evenly
        List<PartitionReplicas> partitions = List.of(
                p("x", 0, 0, 3), p("x", 1, 0, 3), p("x", 2, 0, 3), p("x", 3, 0, 3), p("x", 4, 0, 3), p("x", 5, 0, 3));
        ScaleDecision d = decide(4, 3, partitions);
        assertThat(d).isInstanceOfSatisfying(ScaleDecision.Reassign.class, r -> {
            Map<Integer, Integer> count = new HashMap<>();
            r.moves().values().forEach(rs -> count.merge(rs.get(1), 1, Integer::sum));
            assertThat(count).containsExactlyInAnyOrderEntriesOf(Map.of(1, 3, 2, 3));
        });
    }

    @Test
    void prefersABrokerInARackThePartitionDoesNotUseYet() {
        // 0 and 1 in rack a, 2 in rack b: the replica on 3 joins 0 in the partition, so it goes to rack b
        ScaleDecision d = decide(4, 3, 1, List.of(p("t", 0, 0, 3)), List.of(),
                Map.of(0, "a", 1, "a", 2, "b", 3, "b"));
        assertThat(d).isInstanceOfSatisfying(ScaleDecision.Reassign.class,
                r -> assertThat(r.moves().values()).containsExactly(List.of(0, 2)));
    }

    @Test
    void movesAtMostTheStepLimitAndCountsTheRest() {
        List<PartitionReplicas> partitions = List.of(p("t", 0, 0, 3), p("t", 1, 1, 3), p("t", 2, 2, 3));
        ScaleDecision d = ScaleDownPlan.decide(new ScaleDownPlan.Input(4, 3, 3, partitions, List.of(), Map.of(), 2));
        assertThat(d).isInstanceOfSatisfying(ScaleDecision.Reassign.class, r -> {
            assertThat(r.moves()).hasSize(2);
            assertThat(r.remaining()).isEqualTo(3);
        });
    }

    @Test
    void waitsWhileAnyReassignmentIsInFlight() {
        ScaleDecision d = decide(5, 3, 3, List.of(p("t", 0, 0, 1, 2, 4), p("u", 0, 4, 1, 2)),
                List.of(new ScaleDownPlan.InFlight("t", 0, List.of(4))), Map.of());
        assertThat(d).isEqualTo(new ScaleDecision.Wait(1, 2));
    }

    @Test
    void shrinksOnceTheDepartingBrokersHoldNothingAndNothingMoves() {
        assertThat(decide(5, 3, List.of(p("t", 0, 0, 1, 2), p("t", 1, 2, 0, 1)))).isEqualTo(new ScaleDecision.Shrink(3));
        assertThat(decide(5, 3, List.of())).isEqualTo(new ScaleDecision.Shrink(3));
    }

    @Test
    void departingBrokersAreTheHighestOrdinals() {
        assertThat(ScaleDownPlan.departing(5, 3)).containsExactly(3, 4);
        assertThat(ScaleDownPlan.departing(3, 3)).isEmpty();
    }
}
