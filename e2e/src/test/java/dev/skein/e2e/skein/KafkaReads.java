package dev.skein.e2e.skein;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;

/** What the operator E2Es read back from a running cluster through kafka-clients. */
final class KafkaReads {
    private KafkaReads() {
    }

    /**
     * Every record value of the topic with its offset, read from the beginning of each partition up
     * to the end offset it had when the read started.
     */
    static Map<String, Long> readAll(String bootstrap, String topic, int partitions) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5_000);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        Map<String, Long> found = new HashMap<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int i = 0; i < partitions; i++) {
                tps.add(new TopicPartition(topic, i));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> end = consumer.endOffsets(tps, Duration.ofSeconds(30));
            await().atMost(Duration.ofSeconds(180)).until(() -> {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    found.put(r.value(), r.offset());
                }
                return tps.stream().allMatch(tp -> consumer.position(tp) >= end.get(tp));
            });
        }
        return found;
    }

    /** Whether the cluster-wide leader or follower replication throttle rate is set to {@code rate}. */
    static boolean replicationThrottleSet(Admin admin, long rate) {
        try {
            ConfigResource defaults = new ConfigResource(ConfigResource.Type.BROKER, "");
            Config config = admin.describeConfigs(Set.of(defaults)).all().get(10, TimeUnit.SECONDS).get(defaults);
            ConfigEntry leader = config.get("leader.replication.throttled.rate");
            ConfigEntry follower = config.get("follower.replication.throttled.rate");
            return leader != null && Long.toString(rate).equals(leader.value())
                    || follower != null && Long.toString(rate).equals(follower.value());
        } catch (Exception e) {
            throw new AssertionError("describe the broker defaults: " + e, e);
        }
    }

    /** Whether every partition of the topic has all its replicas in its ISR (false if it cannot tell). */
    static boolean allIsrsFull(Admin admin, String topic) {
        try {
            TopicDescription d = admin.describeTopics(Set.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic);
            for (TopicPartitionInfo p : d.partitions()) {
                if (p.isr().size() < p.replicas().size()) {
                    return false;
                }
            }
            return true;
        } catch (Exception e) {
            return false;
        }
    }
}
