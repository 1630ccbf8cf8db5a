package dev.skein.operator.kafka;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * One Kafka Admin client per bootstrap address, created on first use and shared by every
 * reconciler thread (Admin is thread safe). {@link #close()} closes them all.
 */
public final class KafkaAdmins implements AutoCloseable {
    private final Duration timeout;
    private final Map<String, Admin> admins = new ConcurrentHashMap<>();
    private final Map<String, TopicBatches> topicBatches = new ConcurrentHashMap<>();
    private final ScheduledExecutorService batchTimer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "skein-admin-batches");
        t.setDaemon(true);
        return t;
    });

    /** @param timeout the per-call API timeout: a reconcile never hangs longer on an unreachable cluster */
    public KafkaAdmins(Duration timeout) {
        this.timeout = timeout;
    }

    /** The Admin of this bootstrap; a bootstrap that cannot be used (no resolvable address) is a {@link KafkaCallException}. */
    public Admin forBootstrap(String bootstrapServers) {
        try {
            return admins.computeIfAbsent(bootstrapServers, this::create);
        } catch (org.apache.kafka.common.KafkaException e) {
            throw new KafkaCallException("connect to " + bootstrapServers, e.getCause() == null ? e : e.getCause());
        }
    }

    /** The batched topic calls of this bootstrap's Admin (see {@link TopicBatches}). */
    public TopicBatches topicBatches(String bootstrapServers) {
        Admin admin = forBootstrap(bootstrapServers);
        return topicBatches.computeIfAbsent(bootstrapServers, b -> new TopicBatches(admin, batchTimer));
    }

    private Admin create(String bootstrapServers) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(AdminClientConfig.CLIENT_ID_CONFIG, "skein-operator");
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) timeout.toMillis());
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) Math.min(timeout.toMillis(), Integer.MAX_VALUE));
        return Admin.create(p);
    }

    public Duration timeout() {
        return timeout;
    }

    @Override
    public void close() {
        batchTimer.shutdownNow();
        admins.values().forEach(a -> a.close(Duration.ofSeconds(5)));
        admins.clear();
        topicBatches.clear();
    }
}
