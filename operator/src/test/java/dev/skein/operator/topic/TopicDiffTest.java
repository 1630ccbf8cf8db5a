package dev.skein.operator.topic;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/** The topic decision table of {@link TopicDiff}, row by row. */
class TopicDiffTest {
    private static final List<Integer> THREE_BROKERS = List.of(0, 1, 2);

    private static DesiredTopic desired(int partitions, int rf, Map<String, String> configs) {
        return new DesiredTopic("orders", partitions, rf, configs);
    }

    /** A topic whose partition p has replicas rotating over the brokers, all in sync. */
    private static ActualTopic actual(int partitions, int rf, Map<String, String> configs) {
        SortedMap<Integer, List<Integer>> replicas = new TreeMap<>();
        for (int p = 0; p < partitions; p++) {
            Integer[] rs = new Integer[rf];
            for (int i = 0; i < rf; i++) {
                rs[i] = (p + i) % 3;
            }
            replicas.put(p, List.of(rs));
        }
        return new ActualTopic("orders", "id-1", replicas, replicas, configs);
    }

    @Test
    void absentTopicIsCreated() {
        DesiredTopic want = desired(6, 3, Map.of("min.insync.replicas", "2"));

        TopicPlan plan = TopicDiff.plan(want, Optional.empty(), false, THREE_BROKERS);

        assertThat(plan).isEqualTo(new TopicPlan.Create(want));
    }

    @Test
    void replicationFactorAboveBrokerCountIsRefusedAsInvalidSpec() {
        TopicPlan plan = TopicDiff.plan(desired(1, 3, Map.of()), Optional.empty(), false, List.of(0));

        assertThat(plan).isInstanceOfSatisfying(TopicPlan.Refuse.class, r -> {
            assertThat(r.reason()).isEqualTo(TopicReason.InvalidSpec);
            assertThat(r.message()).contains("spec.replicationFactor 3").contains("1 broker");
        });
    }

    @Test
    void minInSyncReplicasAboveReplicationFactorIsRefusedAsInvalidSpec() {
        TopicPlan plan = TopicDiff.plan(desired(1, 2, Map.of("min.insync.replicas", "3")), Optional.empty(), false,
                THREE_BROKERS);

        assertThat(plan).isInstanceOfSatisfying(TopicPlan.Refuse.class, r -> {
            assertThat(r.reason()).isEqualTo(TopicReason.InvalidSpec);
            assertThat(r.message()).contains("spec.minInSyncReplicas 3");
        });
    }

    @Test
    void matchingManagedTopicNeedsNothing() {
        Map<String, String> configs = Map.of("min.insync.replicas", "2", "retention.ms", "60000");

        TopicPlan plan = TopicDiff.plan(desired(3, 3, configs), Optional.of(actual(3, 3, configs)), true, THREE_BROKERS);

        assertThat(plan).isInstanceOfSatisfying(TopicPlan.Update.class, u -> assertThat(u.isEmpty()).isTrue());
    }

    @Test
    void existingTopicThatMatchesIsAdoptedWithoutChanges() {
        Map<String, String> configs = Map.of("cleanup.policy", "compact");

        TopicPlan plan = TopicDiff.plan(desired(3, 2, configs), Optional.of(actual(3, 2, configs)), false, THREE_BROKERS);

        assertThat(plan).isInstanceOfSatisfying(TopicPlan.Update.class, u -> assertThat(u.isEmpty()).isTrue());
    }

    @Test
    void existingTopicThatDiffersIsNotAdoptedAndEveryDifferenceIsNamed() {
        TopicPlan plan = TopicDiff.plan(desired(6, 3, Map.of("retention.ms", "1000")),
                Optional.of(actual(3, 2, Map.of("cleanup.policy", "compact"))), false, THREE_BROKERS);

        assertThat(plan).isInstanceOfSatisfying(TopicPlan.Refuse.class, r -> {
            assertThat(r.reason()).isEqualTo(TopicReason.ExistingTopicMismatch);
            assertThat(r.message()).contains("partitions 3 (spec 6)", "replication factor 2 (spec 3)",
                    "retention.ms=<default> (spec 1000)", "cleanup.policy=compact (not in spec)");
        });
    }

    @Test
    void partitionIncreaseIsApplied() {
        TopicPlan plan = TopicDiff.plan(desired(8, 3, Map.of()), Optional.of(actual(3, 3, Map.of())), true, THREE_BROKERS);

        assertThat(plan).isEqualTo(new TopicPlan.Update(8, new TreeMap<>(), List.of()));
    }

    @Test
    void partitionDecreaseIsRefusedAsNotSupportedAndNothingElseIsApplied() {
        TopicPlan plan = TopicDiff.plan(desired(2, 3, Map.of("retention.ms", "1000")),
                Optional.of(actual(3, 3, Map.of())), true, THREE_BROKERS);

        assertThat(plan).isInstanceOfSatisfying(TopicPlan.Refuse.class, r -> {
            assertThat(r.reason()).isEqualTo(TopicReason.NotSupported);
            assertThat(r.message()).contains("spec.partitions 2 is below the topic's 3 partitions");
        });
    }

    @Test
    void changedAndRemovedConfigsAreSetAndDeleted() {
        TopicPlan plan = TopicDiff.plan(
                desired(3, 3, Map.of("min.insync.replicas", "2", "retention.ms", "5000", "segment.bytes", "1048576")),
                Optional.of(actual(3, 3, Map.of("min.insync.replicas", "2", "retention.ms", "1000", "cleanup.policy", "compact"))),
                true, THREE_BROKERS);

        assertThat(plan).isInstanceOfSatisfying(TopicPlan.Update.class, u -> {
            assertThat(u.newPartitionCount()).isZero();
            assertThat(u.reassignment()).isEmpty();
            assertThat(u.configChanges()).containsExactly(
                    ConfigChange.set("retention.ms", "5000"),
                    ConfigChange.set("segment.bytes", "1048576"),
                    ConfigChange.delete("cleanup.policy"));
        });
    }

    @Test
    void recoveryThrottleOfAReplacedBrokerIsLeftAlone() {
        TopicPlan plan = TopicDiff.plan(desired(3, 3, Map.of()), Optional.of(actual(3, 3, Map.of(
                "leader.replication.throttled.replicas", "0:0,0:2", "follower.replication.throttled.replicas", "0:1"))),
                true, THREE_BROKERS);

        assertThat(plan).isInstanceOfSatisfying(TopicPlan.Update.class,
                u -> assertThat(u.configChanges()).isEmpty());
    }

    @Test
    void replicationFactorIncreaseAddsTheLeastLoadedBrokersAfterTheCurrentReplicas() {
        // partitions 0..2 on brokers 0, 1, 2 (rf 1): each gains the least-loaded broker not already a replica
        TopicPlan plan = TopicDiff.plan(desired(3, 2, Map.of()), Optional.of(actual(3, 1, Map.of())), true, THREE_BROKERS);

        assertThat(plan).isInstanceOfSatisfying(TopicPlan.Update.class, u -> {
            assertThat(u.reassignment()).containsExactly(
                    Map.entry(0, List.of(0, 1)), Map.entry(1, List.of(1, 2)), Map.entry(2, List.of(2, 0)));
            assertThat(u.reassignment().values()).allSatisfy(rs -> assertThat(rs).doesNotHaveDuplicates());
        });
    }

    @Test
    void replicationFactorDecreaseKeepsThePreferredLeaderFirst() {
        TopicPlan plan = TopicDiff.plan(desired(2, 1, Map.of()), Optional.of(actual(2, 3, Map.of())), true, THREE_BROKERS);

        assertThat(plan).isInstanceOfSatisfying(TopicPlan.Update.class, u -> assertThat(u.reassignment())
                .containsExactly(Map.entry(0, List.of(0)), Map.entry(1, List.of(1))));
    }

    @Test
    void reassignmentSpreadsNewReplicasEvenlyOverBrokers() {
        SortedMap<Integer, List<Integer>> allOnBroker0 = new TreeMap<>();
        for (int p = 0; p < 6; p++) {
            allOnBroker0.put(p, List.of(0));
        }

        SortedMap<Integer, List<Integer>> target = TopicDiff.reassignment(allOnBroker0, 2, List.of(0, 1, 2, 3));

        Map<Integer, Long> perBroker = target.values().stream().flatMap(List::stream)
                .collect(java.util.stream.Collectors.groupingBy(b -> b, TreeMap::new, java.util.stream.Collectors.counting()));
        assertThat(perBroker).containsExactly(Map.entry(0, 6L), Map.entry(1, 2L), Map.entry(2, 2L), Map.entry(3, 2L));
    }
}
