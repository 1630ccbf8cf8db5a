package dev.skein.operator.kafka;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The topic calls of one cluster's Admin client that concurrent SkeinTopic reconciles share in
 * batches ({@link Coalescer}): describe topics, describe topic configs, create topics.
 */
public final class TopicBatches {
    /** How long the first call of a batch waits for others: short next to a reconcile, long next to a thread hop. */
    static final long LINGER_MS = 5;
    /** Kafka's own tools send up to thousands of topics per request; 500 keeps one response small. */
    static final int MAX_BATCH = 500;

    private final Coalescer<String, String, TopicDescription> describe;
    private final Coalescer<ConfigResource, ConfigResource, Config> configs;
    private final Coalescer<String, NewTopic, Void> create;

    public TopicBatches(Admin admin, ScheduledExecutorService timer) {
        this.describe = new Coalescer<>("DescribeTopics",
                batch -> admin.describeTopics(batch.keySet()).topicNameValues(), timer, LINGER_MS, MAX_BATCH);
        this.configs = new Coalescer<>("DescribeConfigs",
                batch -> admin.describeConfigs(batch.keySet()).values(), timer, LINGER_MS, MAX_BATCH);
        this.create = new Coalescer<>("CreateTopics",
                batch -> admin.createTopics(batch.values()).values(), timer, LINGER_MS, MAX_BATCH);
    }

    public CompletableFuture<TopicDescription> describe(String topic) {
        return describe.submit(topic, topic);
    }

    public CompletableFuture<Config> configs(String topic) {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        return configs.submit(resource, resource);
    }

    public CompletableFuture<Void> create(NewTopic topic) {
        return create.submit(topic.name(), topic);
    }
}
