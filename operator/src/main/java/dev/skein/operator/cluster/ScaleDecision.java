package dev.skein.operator.cluster;

import java.util.List;
import java.util.Map;

/**
 * The output of {@link ScaleDownPlan}: nothing to do, move replicas off the departing brokers,
 * wait for moves under way, lower the StatefulSet's replicas, or refuse with a typed reason.
 */
public sealed interface ScaleDecision {
    /** The spec asks for at least as many brokers as run: no scale down (scale up is the StatefulSet's). */
    record None() implements ScaleDecision {
    }

    /**
     * Start these reassignments (new replica list per partition, departing brokers replaced in
     * place); {@code remaining} partitions still have a replica on a departing broker, these included.
     */
    record Reassign(Map<PartitionReplicas, List<Integer>> moves, int remaining) implements ScaleDecision {
        public Reassign {
            moves = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(moves));
        }
    }

    /** Reassignments are under way ({@code inFlight}); {@code remaining} partitions still use a departing broker. */
    record Wait(int inFlight, int remaining) implements ScaleDecision {
    }

    /** The departing brokers hold no replica and nothing is being moved: lower the replicas to {@code brokers}. */
    record Shrink(int brokers) implements ScaleDecision {
    }

    /** The scale down cannot be done safely; nothing is changed. */
    record Refuse(ScaleReason reason, String message) implements ScaleDecision {
    }
}
