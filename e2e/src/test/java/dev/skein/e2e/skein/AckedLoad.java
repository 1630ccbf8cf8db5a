package dev.skein.e2e.skein;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * An idempotent acks=all producer at a steady pace (about 500 records/s: 10 every 20 ms, skipped
 * while 1,000 are unacknowledged) that remembers the partition and offset of every acknowledged
 * record, and the check that reads each of them back. Paced rather than as fast as the cluster
 * allows, so that a broker catching up under a replication throttle can join the ISR again.
 */
final class AckedLoad {
    private final Map<String, Long> acked = new ConcurrentHashMap<>();
    private final Map<String, Integer> partitionOf = new ConcurrentHashMap<>();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicReference<String> firstFailure = new AtomicReference<>();
    private final AtomicLong next = new AtomicLong();
    private final AtomicLong inFlight = new AtomicLong();
    private final ScheduledExecutorService ticker =
            Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "acks-all-load"));
    private final String bootstrap;
    private final String topic;
    private final int partitions;
    private KafkaProducer<String, String> producer;

    AckedLoad(String bootstrap, String topic, int partitions) {
        this.bootstrap = bootstrap;
        this.topic = topic;
        this.partitions = partitions;
    }

    void start() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 180_000);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        producer = new KafkaProducer<>(p);
        ticker.scheduleAtFixedRate(() -> {
            if (inFlight.get() > 1_000) {
                return;
            }
            for (int j = 0; j < 10; j++) {
                String value = "v" + next.getAndIncrement();
                inFlight.incrementAndGet();
                producer.send(new ProducerRecord<>(topic, "k" + value, value), (md, e) -> {
                    inFlight.decrementAndGet();
                    if (e == null) {
                        acked.put(value, md.offset());
                        partitionOf.put(value, md.partition());
                    } else {
                        failed.incrementAndGet();
                        firstFailure.compareAndSet(null, e.toString());
                    }
                });
            }
        }, 0, 20, TimeUnit.MILLISECONDS);
    }

    int ackedCount() {
        return acked.size();
    }

    /** Sends that failed (the client gave up on them); with acks=all, retries and idempotence: none. */
    long failed() {
        return failed.get();
    }

    String firstFailure() {
        return firstFailure.get();
    }

    /** The values of the acknowledged records so far. */
    java.util.Set<String> ackedValues() {
        return java.util.Set.copyOf(acked.keySet());
    }

    void stop() throws InterruptedException {
        ticker.shutdown();
        ticker.awaitTermination(30, TimeUnit.SECONDS);
        if (producer != null) {
            producer.close(Duration.ofSeconds(200));
            producer = null;
        }
    }

    record Result(int acked, int found, List<String> missing) {
    }

    /**
     * Stops the load and reads every partition from the start up to its end: each acknowledged
     * record must be there, at the offset it was acknowledged at.
     */
    Result checkEveryAckedRecord() throws Exception {
        stop();
        Map<String, Long> expected = new HashMap<>(acked);
        Map<String, Long> found = KafkaReads.readAll(bootstrap, topic, partitions);
        List<String> missing = expected.entrySet().stream()
                .filter(e -> !e.getValue().equals(found.get(e.getKey())))
                .map(e -> e.getKey() + "@" + partitionOf.get(e.getKey()) + ":" + e.getValue())
                .sorted().limit(20).toList();
        return new Result(expected.size(), (int) expected.keySet().stream().filter(found::containsKey).count(),
                missing);
    }
}
