package dev.skein.broker.checker;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Checks a {@link LogHistory} for the anomalies Jepsen names for Kafka-like logs:
 * <ul>
 *   <li><b>lost-write</b>: an acknowledged value is not at its acknowledged offset for a reader
 *       that read past that offset (and is not anywhere in the log at all);</li>
 *   <li><b>duplicate</b>: one sent value stands at two offsets;</li>
 *   <li><b>inconsistent-offsets</b>: two readers (consumers or replicas) saw different values at
 *       the same offset of a partition;</li>
 *   <li><b>nonmonotonic-poll</b>: a reader's offsets in a partition went back without a reset;</li>
 *   <li><b>phantom</b>: a reader saw a value that was never sent, or whose send failed for sure.</li>
 * </ul>
 */
public final class LogChecker {

    /** One anomaly with enough context to find it in the logs. */
    public record Anomaly(String kind, String detail) {
        @Override
        public String toString() {
            return kind + ": " + detail;
        }
    }

    private LogChecker() {
    }

    public static List<Anomaly> check(LogHistory history) {
        List<Anomaly> anomalies = new ArrayList<>();
        Map<String, LogHistory.Send> byValue = new HashMap<>();
        for (LogHistory.Send s : history.sends()) {
            byValue.put(s.value(), s);
        }

        // offset -> value per partition, as the first reader saw it
        Map<Integer, Map<Long, String>> agreed = new HashMap<>();
        // value -> (partition, offset) where it was seen
        Map<String, Long> offsetOfValue = new HashMap<>();
        Map<String, Integer> partitionOfValue = new HashMap<>();
        // reader/partition -> last offset seen
        Map<String, Long> lastOffset = new HashMap<>();
        // per partition, the highest offset any reader has read
        Map<Integer, Long> readUpTo = new HashMap<>();

        for (Object event : history.events()) {
            if (event instanceof LogHistory.Reset r) {
                lastOffset.remove(r.reader() + "/" + r.partition());
                continue;
            }
            LogHistory.Read read = (LogHistory.Read) event;
            String key = read.reader() + "/" + read.partition();
            Long last = lastOffset.get(key);
            if (last != null && read.offset() <= last) {
                anomalies.add(new Anomaly("nonmonotonic-poll", read.reader() + " read offset " + read.offset()
                        + " of partition " + read.partition() + " after offset " + last));
            }
            lastOffset.put(key, read.offset());
            readUpTo.merge(read.partition(), read.offset(), Math::max);

            String seen = agreed.computeIfAbsent(read.partition(), p -> new HashMap<>())
                    .putIfAbsent(read.offset(), read.value());
            if (seen != null && !seen.equals(read.value())) {
                anomalies.add(new Anomaly("inconsistent-offsets", "partition " + read.partition() + " offset "
                        + read.offset() + " holds " + seen + " for one reader and " + read.value() + " for " + read.reader()));
            }
            Long at = offsetOfValue.get(read.value());
            Integer inPartition = partitionOfValue.get(read.value());
            if (at == null) {
                offsetOfValue.put(read.value(), read.offset());
                partitionOfValue.put(read.value(), read.partition());
            } else if (at != read.offset() || inPartition != read.partition()) {
                anomalies.add(new Anomaly("duplicate", read.value() + " stands at partition " + inPartition + " offset "
                        + at + " and at partition " + read.partition() + " offset " + read.offset()));
            }
            LogHistory.Send send = byValue.get(read.value());
            if (send == null || send.outcome() == LogHistory.Outcome.FAILED) {
                anomalies.add(new Anomaly("phantom", read.reader() + " read " + read.value() + " at partition "
                        + read.partition() + " offset " + read.offset() + (send == null ? ", never sent" : ", whose send failed")));
            }
        }

        Set<String> reported = new HashSet<>();
        for (LogHistory.Send s : history.sends()) {
            if (s.outcome() != LogHistory.Outcome.ACKED) {
                continue;
            }
            Map<Long, String> log = agreed.getOrDefault(s.partition(), Map.of());
            String atOffset = log.get(s.offset());
            boolean readPast = readUpTo.getOrDefault(s.partition(), -1L) >= s.offset();
            if (readPast && !s.value().equals(atOffset) && reported.add(s.value())) {
                anomalies.add(new Anomaly("lost-write", s.value() + " was acknowledged at partition " + s.partition()
                        + " offset " + s.offset() + " but readers found " + atOffset
                        + (offsetOfValue.containsKey(s.value()) ? " (it stands at offset " + offsetOfValue.get(s.value()) + ")" : "")));
            }
        }
        return anomalies;
    }
}
