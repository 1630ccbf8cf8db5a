package dev.skein.broker.controller;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;

/**
 * Kafka-like replica placement. Live brokers are ordered rack by rack alternately (the first
 * broker of each rack, then the second of each, ...), so neighbours in the order sit on different
 * racks. Partition {@code p}'s preferred leader is the broker at {@code start + p} in that order,
 * which spreads leaders round-robin; its followers are the next brokers in the order, skipping a
 * broker whose rack already holds a replica of the partition while an unused rack remains. The
 * per-topic {@code start} comes from the seeded {@link Random}, so topics do not all start on
 * the same broker and a test with a fixed seed sees a fixed placement.
 */
public final class ReplicaPlacer {
    private ReplicaPlacer() {
    }

    /** Replicas of partitions {@code firstPartition .. firstPartition + count - 1}, preferred leader first. */
    public static List<List<Integer>> place(Collection<BrokerRegistration> liveBrokers, int firstPartition, int count,
                                            int replicationFactor, Random random) {
        List<BrokerRegistration> order = rackAlternating(liveBrokers);
        int n = order.size();
        if (replicationFactor > n) {
            throw new IllegalArgumentException("replication factor " + replicationFactor + " > " + n + " brokers");
        }
        long racks = order.stream().map(b -> Objects.toString(b.rack(), "")).distinct().count();
        int start = random.nextInt(n);
        List<List<Integer>> out = new ArrayList<>(count);
        for (int p = firstPartition; p < firstPartition + count; p++) {
            int leaderIndex = (start + p) % n;
            List<Integer> replicas = new ArrayList<>(replicationFactor);
            Set<String> usedRacks = new HashSet<>();
            replicas.add(order.get(leaderIndex).id());
            usedRacks.add(Objects.toString(order.get(leaderIndex).rack(), ""));
            while (replicas.size() < replicationFactor) {
                boolean preferNewRack = usedRacks.size() < racks;
                BrokerRegistration chosen = null;
                for (int step = 1; step < n && chosen == null; step++) {
                    BrokerRegistration b = order.get((leaderIndex + step) % n);
                    if (!replicas.contains(b.id())
                            && (!preferNewRack || !usedRacks.contains(Objects.toString(b.rack(), "")))) {
                        chosen = b;
                    }
                }
                if (chosen == null) {
                    // every rack holds a replica already: start a new round of racks
                    usedRacks.clear();
                    continue;
                }
                replicas.add(chosen.id());
                usedRacks.add(Objects.toString(chosen.rack(), ""));
            }
            out.add(List.copyOf(replicas));
        }
        return out;
    }

    static List<BrokerRegistration> rackAlternating(Collection<BrokerRegistration> brokers) {
        Map<String, List<BrokerRegistration>> byRack = new TreeMap<>();
        brokers.stream().sorted((a, b) -> Integer.compare(a.id(), b.id()))
                .forEach(b -> byRack.computeIfAbsent(Objects.toString(b.rack(), ""), r -> new ArrayList<>()).add(b));
        List<BrokerRegistration> order = new ArrayList<>(brokers.size());
        for (int round = 0; order.size() < brokers.size(); round++) {
            for (List<BrokerRegistration> rack : byRack.values()) {
                if (round < rack.size()) {
                    order.add(rack.get(round));
                }
            }
        }
        return order;
    }
}
