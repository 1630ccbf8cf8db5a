package dev.skein.broker.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartitionInfo;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** A topic's partitions as the Admin client describes them, for tests that kill and cut off brokers. */
final class TopicPartitions {
    private TopicPartitions() {
    }

    /** The partitions of {@code topic} by index. */
    static Map<Integer, TopicPartitionInfo> describe(Admin admin, String topic) throws Exception {
        TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
        Map<Integer, TopicPartitionInfo> out = new HashMap<>();
        d.partitions().forEach(p -> out.put(p.partition(), p));
        return out;
    }

    /** Waits (up to a minute) until every partition of {@code topic} has a leader and {@code replicas} replicas in sync. */
    static void awaitFullIsr(Admin admin, String topic, int replicas) {
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).ignoreExceptions().untilAsserted(() -> {
            for (TopicPartitionInfo p : describe(admin, topic).values()) {
                assertThat(p.isr()).as("ISR of partition %d", p.partition()).hasSize(replicas);
                assertThat(p.leader()).isNotNull();
            }
        });
    }
}
