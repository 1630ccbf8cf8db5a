package dev.skein.broker.it;

import dev.skein.broker.checker.LogHistory;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.awaitility.Awaitility.await;

/**
 * Reads a topic from its start into a {@link LogHistory} (as "consumer") on its own thread, with a
 * {@link ClusterProcesses#checkedConsumer()}, while a failover test kills and cuts off brokers.
 */
final class HistoryReader {
    private final LogHistory history;
    private final AtomicBoolean reading = new AtomicBoolean(true);
    private final Thread thread;

    private HistoryReader(ClusterProcesses cluster, LogHistory history, String topic, int partitions, String threadName) {
        this.history = history;
        this.thread = new Thread(() -> read(cluster, topic, partitions), threadName);
    }

    /** Starts reading partitions 0 to {@code partitions - 1} of {@code topic}. */
    static HistoryReader start(ClusterProcesses cluster, LogHistory history, String topic, int partitions, String threadName) {
        HistoryReader reader = new HistoryReader(cluster, history, topic, partitions, threadName);
        reader.thread.start();
        return reader;
    }

    private void read(ClusterProcesses cluster, String topic, int partitions) {
        try (KafkaConsumer<String, String> consumer = cluster.checkedConsumer()) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int i = 0; i < partitions; i++) {
                tps.add(new TopicPartition(topic, i));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            while (reading.get()) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    history.read("consumer", r.partition(), r.offset(), r.value());
                }
            }
        }
    }

    /** Waits (up to a minute) until every record acknowledged so far has been read, then stops reading. */
    void drainAndStop() throws InterruptedException {
        long acked = history.ackedCount();
        await().atMost(Duration.ofSeconds(60)).until(() -> history.readCount("consumer") >= acked);
        stop();
    }

    /** Stops reading and waits (bounded) for the thread to end. */
    void stop() throws InterruptedException {
        reading.set(false);
        thread.join(30_000);
    }
}
