import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The workloads of bench/run that Kafka's perf tools do not cover, driven with the real Kafka Java
 * client (run with the source launcher, kafka-clients on the class path:
 * {@code java -cp 'bench/target/kafka-lib/*' bench/tools/Probe.java MODE ...}).
 *
 * <ul>
 *   <li>{@code latency BOOTSTRAP TOPIC RATE SECONDS WARMUP_SECONDS RECORD_BYTES ACKS}: end-to-end
 *       latency at a fixed rate, without coordinated omission. Record {@code i} is due at
 *       {@code start + i / RATE}; its latency runs from that intended send time, not from the moment
 *       {@code send()} was called, to the moment a consumer (in this process, so one clock) polls it.
 *       A broker that stalls the producer is therefore charged for every record that should have been
 *       sent during the stall. Records due in the warm-up are not counted. Prints
 *       {@code count<TAB>p50_us<TAB>p99_us<TAB>p999_us<TAB>max_us<TAB>missing}. For diagnosis:
 *       {@code PROBE_SLOW_US=N} names every record slower than N us on stderr (partition, offset, due
 *       time), {@code PROBE_FETCH_MAX_WAIT_MS} sets the consumer's {@code fetch.max.wait.ms}.</li>
 *   <li>{@code touch BOOTSTRAP TOPIC}: one 100-byte record to every partition of the topic, so every
 *       partition has a segment with data (acks=1); prints the number of partitions written.</li>
 *   <li>{@code idle BOOTSTRAP_HOST:PORT COUNT}: opens COUNT TCP connections, each completing an
 *       ApiVersions exchange (what every Kafka client does first), prints {@code open COUNT} and then
 *       holds them idle until its standard input closes or it is killed.</li>
 * </ul>
 */
public final class Probe {
    public static void main(String[] args) throws Exception {
        switch (args.length == 0 ? "" : args[0]) {
            case "latency" -> latency(args[1], args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]),
                    Integer.parseInt(args[5]), Integer.parseInt(args[6]), args[7]);
            case "touch" -> touch(args[1], args[2]);
            case "idle" -> idle(args[1], Integer.parseInt(args[2]));
            default -> {
                System.err.println("usage: Probe latency|touch|idle ... (see the class comment)");
                System.exit(2);
            }
        }
    }

    private static Map<String, Object> producerProps(String bootstrap, String acks) {
        return Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.ACKS_CONFIG, acks,
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, acks.equals("all") || acks.equals("-1"),
                ProducerConfig.LINGER_MS_CONFIG, 0,
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    }

    static void latency(String bootstrap, String topic, int rate, int seconds, int warmupSeconds, int recordBytes,
                        String acks) throws Exception {
        int total = rate * (seconds + warmupSeconds);
        int counted = rate * seconds;
        int first = rate * warmupSeconds;
        long[] latencyNs = new long[total];
        Arrays.fill(latencyNs, -1);
        AtomicLong received = new AtomicLong();
        long intervalNs = 1_000_000_000L / rate;
        // PROBE_SLOW_US=N: each record slower than N us is named on stderr (partition, offset, when)
        long slowUs = Long.parseLong(System.getenv().getOrDefault("PROBE_SLOW_US", "0"));

        Map<String, Object> consumerProps = new java.util.HashMap<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class));
        // PROBE_FETCH_MAX_WAIT_MS: the consumer's fetch.max.wait.ms, to tell a consumer long poll from other waits
        String maxWait = System.getenv("PROBE_FETCH_MAX_WAIT_MS");
        if (maxWait != null) {
            consumerProps.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, Integer.parseInt(maxWait));
        }
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps);
             KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps(bootstrap, acks))) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (PartitionInfo p : producer.partitionsFor(topic)) {
                partitions.add(new TopicPartition(topic, p.partition()));
            }
            // no group: the consumer reads from the current end of every partition, without a rebalance
            consumer.assign(partitions);
            consumer.seekToEnd(partitions);
            partitions.forEach(consumer::position);

            long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200);
            Thread producing = Thread.ofPlatform().name("probe-producer").start(() -> {
                byte[] value = new byte[Math.max(recordBytes, 12)];
                for (int i = 0; i < total; i++) {
                    long due = start + i * intervalNs;
                    long wait;
                    while ((wait = due - System.nanoTime()) > 0) {
                        LockSupport.parkNanos(wait);
                    }
                    byte[] v = value.clone();
                    ByteBuffer.wrap(v).putInt(i).putLong(due);
                    producer.send(new ProducerRecord<>(topic, partitions.get(i % partitions.size()).partition(), null, v));
                }
                producer.flush();
            });

            long giveUpAt = start + TimeUnit.SECONDS.toNanos(seconds + warmupSeconds + 30L);
            while (received.get() < total && System.nanoTime() < giveUpAt) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                    long now = System.nanoTime();
                    ByteBuffer b = ByteBuffer.wrap(r.value());
                    int i = b.getInt();
                    long due = b.getLong();
                    if (i >= 0 && i < total && latencyNs[i] < 0) {
                        latencyNs[i] = now - due;
                        received.incrementAndGet();
                        if (slowUs > 0 && latencyNs[i] / 1000 >= slowUs) {
                            System.err.printf("slow record %d partition %d offset %d: %d us (due at +%d ms) received %s%n", i,
                                    r.partition(), r.offset(), latencyNs[i] / 1000, (due - start) / 1_000_000, java.time.Instant.now());
                        }
                    }
                }
            }
            producing.join(TimeUnit.SECONDS.toMillis(30));
        }

        long[] measured = Arrays.stream(latencyNs, first, total).filter(l -> l >= 0).sorted().toArray();
        int missing = counted - measured.length;
        if (measured.length == 0) {
            System.out.printf("0\t\t\t\t\t%d%n", missing);
            return;
        }
        System.out.printf("%d\t%d\t%d\t%d\t%d\t%d%n", measured.length, quantileUs(measured, 0.50),
                quantileUs(measured, 0.99), quantileUs(measured, 0.999), measured[measured.length - 1] / 1000, missing);
    }

    /** Nearest-rank quantile of sorted nanoseconds, in microseconds. */
    private static long quantileUs(long[] sorted, double q) {
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))] / 1000;
    }

    static void touch(String bootstrap, String topic) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps(bootstrap, "1"))) {
            List<PartitionInfo> partitions = producer.partitionsFor(topic);
            for (PartitionInfo p : partitions) {
                producer.send(new ProducerRecord<>(topic, p.partition(), null, new byte[100]));
            }
            producer.flush();
            System.out.println(partitions.size());
        }
    }

    static void idle(String hostPort, int count) throws Exception {
        int colon = hostPort.lastIndexOf(':');
        InetSocketAddress address = new InetSocketAddress(hostPort.substring(0, colon),
                Integer.parseInt(hostPort.substring(colon + 1)));
        short version = 3;
        List<Socket> sockets = new ArrayList<>(count);
        try {
            for (int i = 0; i < count; i++) {
                Socket s = new Socket();
                s.connect(address, 10_000);
                s.setSoTimeout(30_000);
                sockets.add(s);
                ApiVersionsRequest request = new ApiVersionsRequest(new ApiVersionsRequestData()
                        .setClientSoftwareName("skein-bench-probe").setClientSoftwareVersion("1"), version);
                ByteBuffer body = request.serializeWithHeader(new RequestHeader(ApiKeys.API_VERSIONS, version,
                        "idle-" + i, i));
                OutputStream out = s.getOutputStream();
                byte[] frame = new byte[4 + body.remaining()];
                ByteBuffer.wrap(frame).putInt(body.remaining()).put(body);
                out.write(frame);
                out.flush();
                DataInputStream in = new DataInputStream(s.getInputStream());
                int size = in.readInt();
                in.readNBytes(size);
            }
            System.out.println("open " + sockets.size());
            System.out.flush();
            InputStream stdin = System.in;
            while (stdin.read() >= 0) {
                // held idle until stdin closes
            }
        } finally {
            for (Socket s : sockets) {
                try {
                    s.close();
                } catch (IOException ignored) {
                    // closing anyway
                }
            }
        }
    }
}
