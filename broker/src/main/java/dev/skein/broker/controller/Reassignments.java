package dev.skein.broker.controller;

import dev.skein.broker.metadata.PartitionRegistration;

import java.util.ArrayList;
import java.util.List;

/**
 * The replica arithmetic of a partition reassignment, as Kafka's controller does it: while a
 * reassignment is in progress the replicas are the target (in the requested order) followed by the
 * replicas being removed; {@code adding} = target − original, {@code removing} = original − target.
 * Pure functions of a {@link PartitionRegistration}; the partition epoch is left to the command.
 */
final class Reassignments {
    private Reassignments() {
    }

    static boolean inProgress(PartitionRegistration p) {
        return !p.addingReplicas().isEmpty() || !p.removingReplicas().isEmpty();
    }

    /** The replicas before the reassignment: the current ones without those being added. */
    static List<Integer> original(PartitionRegistration p) {
        List<Integer> out = new ArrayList<>(p.replicas());
        out.removeAll(p.addingReplicas());
        return out;
    }

    /** The replicas after the reassignment: the current ones without those being removed, in target order. */
    static List<Integer> target(PartitionRegistration p) {
        List<Integer> out = new ArrayList<>(p.replicas());
        out.removeAll(p.removingReplicas());
        return out;
    }

    /** {@code p} (with no reassignment in progress) set to move to {@code target}; ISR and leader unchanged. */
    static PartitionRegistration start(PartitionRegistration p, List<Integer> target) {
        List<Integer> adding = target.stream().filter(r -> !p.replicas().contains(r)).toList();
        List<Integer> removing = p.replicas().stream().filter(r -> !target.contains(r)).toList();
        List<Integer> replicas = new ArrayList<>(target);
        replicas.addAll(removing);
        return new PartitionRegistration(replicas, p.isr(), p.leader(), p.leaderEpoch(), p.partitionEpoch(), adding,
                removing);
    }

    /** Whether two registrations agree on everything a reassignment changes (all but the partition epoch). */
    static boolean sameAssignment(PartitionRegistration a, PartitionRegistration b) {
        return a.replicas().equals(b.replicas()) && a.isr().equals(b.isr()) && a.leader() == b.leader()
                && a.leaderEpoch() == b.leaderEpoch() && a.addingReplicas().equals(b.addingReplicas())
                && a.removingReplicas().equals(b.removingReplicas());
    }
}
