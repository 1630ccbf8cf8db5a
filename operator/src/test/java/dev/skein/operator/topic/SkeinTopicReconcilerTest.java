package dev.skein.operator.topic;

import dev.skein.operator.model.SkeinTopic;
import dev.skein.operator.model.SkeinTopicSpec;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/** The reconciler's pure helpers: which of two resources owns a topic, and the log line of an update. */
class SkeinTopicReconcilerTest {

    private static SkeinTopic topic(String name, String cluster, String topicName, String created) {
        SkeinTopic t = new SkeinTopic();
        t.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace("ns").withCreationTimestamp(created).build());
        SkeinTopicSpec spec = new SkeinTopicSpec();
        spec.setCluster(cluster);
        spec.setTopicName(topicName);
        spec.setPartitions(1);
        spec.setReplicationFactor(1);
        t.setSpec(spec);
        return t;
    }

    @Test
    void olderResourceNamingTheSameTopicWins() {
        SkeinTopic older = topic("a", "main", "orders", "2026-01-01T00:00:00Z");
        SkeinTopic newer = topic("b", "main", "orders", "2026-01-02T00:00:00Z");

        assertThat(SkeinTopicReconciler.olderClaim(newer, List.of(older, newer))).contains(older);
        assertThat(SkeinTopicReconciler.olderClaim(older, List.of(older, newer))).isEmpty();
    }

    @Test
    void sameCreationSecondIsDecidedByName() {
        SkeinTopic a = topic("a", "main", "orders", "2026-01-01T00:00:00Z");
        SkeinTopic b = topic("b", "main", "orders", "2026-01-01T00:00:00Z");

        assertThat(SkeinTopicReconciler.olderClaim(b, List.of(a, b))).contains(a);
        assertThat(SkeinTopicReconciler.olderClaim(a, List.of(a, b))).isEmpty();
    }

    @Test
    void defaultTopicNameCountsAndOtherClustersOrDeletedResourcesDoNot() {
        SkeinTopic byName = topic("orders", "main", null, "2026-01-01T00:00:00Z");
        SkeinTopic otherCluster = topic("x", "other", "orders", "2026-01-01T00:00:00Z");
        SkeinTopic deleting = topic("y", "main", "orders", "2026-01-01T00:00:00Z");
        deleting.getMetadata().setDeletionTimestamp("2026-01-03T00:00:00Z");
        SkeinTopic explicit = topic("z", "main", "orders", "2026-01-02T00:00:00Z");

        assertThat(SkeinTopicReconciler.olderClaim(explicit, List.of(byName, otherCluster, deleting, explicit)))
                .contains(byName);
        assertThat(SkeinTopicReconciler.olderClaim(byName, List.of(byName, otherCluster, deleting, explicit))).isEmpty();
    }

    @Test
    void updateLogLineListsOnlyWhatChanges() {
        TopicPlan.Update update = new TopicPlan.Update(8, new TreeMap<>(Map.of(0, List.of(1, 2))),
                List.of(ConfigChange.set("retention.ms", "1000"), ConfigChange.delete("cleanup.policy")));

        assertThat(SkeinTopicReconciler.describe(update))
                .isEqualTo("partitions to 8, replicas to {0=[1, 2]}, set retention.ms=1000, remove cleanup.policy");
        assertThat(SkeinTopicReconciler.describe(new TopicPlan.Update(0, new TreeMap<>(), List.of(ConfigChange.delete("x")))))
                .isEqualTo("remove x");
    }
}
