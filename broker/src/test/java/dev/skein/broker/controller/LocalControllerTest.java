package dev.skein.broker.controller;

import dev.skein.broker.metadata.ClusterImage;
import dev.skein.broker.metadata.TopicMetadata;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ElectionNotNeededException;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.InvalidReplicaAssignmentException;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.NoReassignmentInProgressException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LocalControllerTest {
    private static final ClusterImage.BrokerInfo SELF = new ClusterImage.BrokerInfo(1, "127.0.0.1", 9092, null);

    @TempDir
    Path dir;

    @Test
    void topicsConfigsAndIdsSurviveARestart() throws Exception {
        TopicMetadata created;
        try (LocalController c = new LocalController(dir, "cluster-a", SELF)) {
            created = c.createTopic("orders", 3, (short) 1, Map.of("retention.ms", "1000"), false);
            c.createPartitions("orders", 5, false);
            c.alterTopicConfigs("orders", Map.of("retention.ms", "2000", "cleanup.policy", "compact"), false);
            c.createTopic("gone", 1, (short) 1, Map.of(), false);
            c.deleteTopic(c.image().topic("gone").id());
        }
        try (LocalController c = new LocalController(dir, "cluster-a", SELF)) {
            TopicMetadata t = c.image().topic("orders");
            assertThat(t.id()).isEqualTo(created.id());
            assertThat(t.partitionCount()).isEqualTo(5);
            assertThat(t.configs()).isEqualTo(Map.of("retention.ms", "2000", "cleanup.policy", "compact"));
            assertThat(c.image().topic("gone")).isNull();
        }
    }

    @Test
    void dynamicBrokerConfigsSurviveARestartAndReachListeners() throws Exception {
        try (LocalController c = new LocalController(dir, "cluster-a", SELF)) {
            List<String> seen = new ArrayList<>();
            c.addListener(image -> seen.add(image.dynamicBrokerConfig(1, "follower.replication.throttled.rate")));
            c.alterBrokerConfigs("", Map.of("follower.replication.throttled.rate", "2000"), false);
            c.alterBrokerConfigs("1", Map.of("follower.replication.throttled.rate", "1000"), false);
            c.alterBrokerConfigs("1", Map.of("leader.replication.throttled.rate", "5"), true);
            assertThatThrownBy(() -> c.alterBrokerConfigs("1", Map.of("log.retention.ms", "5"), false))
                    .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("log.retention.ms");
            assertThat(seen).containsExactly("2000", "1000");
        }
        try (LocalController c = new LocalController(dir, "cluster-a", SELF)) {
            assertThat(c.image().brokerConfigs()).isEqualTo(Map.of(
                    "", Map.of("follower.replication.throttled.rate", "2000"),
                    "1", Map.of("follower.replication.throttled.rate", "1000")));
        }
    }

    @Test
    void listenersSeeEveryChangeInOrder() throws Exception {
        try (LocalController c = new LocalController(dir, "cluster-a", SELF)) {
            List<Integer> counts = new ArrayList<>();
            c.addListener(image -> counts.add(image.topics().size()));
            c.createTopic("a", 1, (short) 1, Map.of(), false);
            c.createTopic("b", 1, (short) 1, Map.of(), false);
            c.deleteTopic(c.image().topic("a").id());
            assertThat(counts).containsExactly(1, 2, 1);
        }
    }

    @Test
    void invalidRequestsAreRejectedAndChangeNothing() throws Exception {
        try (LocalController c = new LocalController(dir, "cluster-a", SELF)) {
            c.createTopic("a.b", 1, (short) 1, Map.of(), false);
            assertThatThrownBy(() -> c.createTopic("a.b", 1, (short) 1, Map.of(), false)).isInstanceOf(TopicExistsException.class);
            assertThatThrownBy(() -> c.createTopic("a_b", 1, (short) 1, Map.of(), false))
                    .isInstanceOf(InvalidTopicException.class).hasMessageContaining("collides");
            assertThatThrownBy(() -> c.createTopic("bad/name", 1, (short) 1, Map.of(), false)).isInstanceOf(InvalidTopicException.class);
            assertThatThrownBy(() -> c.createTopic("x", 0, (short) 1, Map.of(), false)).isInstanceOf(InvalidPartitionsException.class);
            assertThatThrownBy(() -> c.createTopic("x", 1, (short) 3, Map.of(), false))
                    .isInstanceOf(InvalidReplicationFactorException.class).hasMessageContaining("only 1 broker");
            assertThatThrownBy(() -> c.createTopic("x", 1, (short) 1, Map.of("retention.ms", "soon"), false))
                    .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("retention.ms");
            assertThatThrownBy(() -> c.createPartitions("a.b", 1, false)).isInstanceOf(InvalidPartitionsException.class);
            c.createTopic("v", 2, (short) 1, Map.of(), true);
            assertThat(c.image().topics()).extracting(TopicMetadata::name).containsExactly("a.b");
        }
    }

    @Test
    void producerIdsAreNeverHandedOutTwiceAcrossRestarts() throws Exception {
        Set<Long> ids = new HashSet<>();
        for (int run = 0; run < 3; run++) {
            try (LocalController c = new LocalController(dir, "cluster-a", SELF)) {
                for (int i = 0; i < 1500; i++) {
                    assertThat(ids.add(c.allocateProducerId())).isTrue();
                }
            }
        }
        assertThat(ids).hasSize(4500);
    }

    @Test
    void singleNodeReassignmentAndElectionAnswerAsKafkaWould() throws Exception {
        try (LocalController c = new LocalController(dir, "cluster-a", SELF)) {
            c.createTopic("solo", 1, (short) 1, Map.of(), false);
            TopicPartition tp = new TopicPartition("solo", 0);

            c.alterPartitionReassignment(tp, List.of(1));
            assertThatThrownBy(() -> c.alterPartitionReassignment(tp, List.of(2)))
                    .isInstanceOf(InvalidReplicaAssignmentException.class)
                    .hasMessageContaining("Broker 2");
            assertThatThrownBy(() -> c.alterPartitionReassignment(tp, List.of()))
                    .isInstanceOf(InvalidReplicaAssignmentException.class);
            assertThatThrownBy(() -> c.alterPartitionReassignment(tp, null))
                    .isInstanceOf(NoReassignmentInProgressException.class);
            assertThatThrownBy(() -> c.alterPartitionReassignment(new TopicPartition("solo", 1), List.of(1)))
                    .isInstanceOf(UnknownTopicOrPartitionException.class);
            assertThatThrownBy(() -> c.electLeader(ElectionType.PREFERRED, tp))
                    .isInstanceOf(ElectionNotNeededException.class);
        }
    }
}
