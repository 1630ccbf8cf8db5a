package dev.skein.operator.cluster;

import java.time.Duration;

/**
 * What {@link NodeLossDecision} tells the reconciler to do now: one step of a broker replacement,
 * or nothing (with the reason to report).
 */
public sealed interface NodeLossAction {
    /** The reason reported in the Degraded condition and the Event of this action. */
    NodeLossReason reason();

    String message();

    /** Whether the cluster is degraded while this is the answer (a node lost or a replacement under way). */
    default boolean degraded() {
        return true;
    }

    /** Nothing is lost, nothing under way. */
    record Healthy() implements NodeLossAction {
        @Override
        public NodeLossReason reason() {
            return NodeLossReason.NoNodeLost;
        }

        @Override
        public String message() {
            return "no broker's node is lost";
        }

        @Override
        public boolean degraded() {
            return false;
        }
    }

    /** Nothing to do yet; look again after {@code retryAfter} (or on the next event). */
    record Wait(NodeLossReason reason, String message, Duration retryAfter) implements NodeLossAction {
    }

    /** A safeguard forbids the replacement; nothing is done until the situation changes. */
    record Refuse(NodeLossReason reason, String message) implements NodeLossAction {
    }

    /** Set the recovery throttle: the broker rates and the throttled replicas of the partitions {@code broker} hosts. */
    record SetThrottle(int broker, long bytesPerSecond, String message) implements NodeLossAction {
        @Override
        public NodeLossReason reason() {
            return NodeLossReason.ThrottleSet;
        }
    }

    /** Delete the claim {@code name}, only if its UID is still {@code uid}. */
    record DeletePvc(int broker, String name, String uid, String message) implements NodeLossAction {
        @Override
        public NodeLossReason reason() {
            return NodeLossReason.VolumeDeleted;
        }
    }

    /** Delete the pod {@code name} with grace period 0, only if its UID is still {@code uid}. */
    record ForceDeletePod(int broker, String name, String uid, String message) implements NodeLossAction {
        @Override
        public NodeLossReason reason() {
            return NodeLossReason.PodForceDeleted;
        }
    }

    /** Remove the recovery throttle (every ISR is full again, or the replacement was called off). */
    record ClearThrottle(int broker, NodeLossReason reason, String message) implements NodeLossAction {
        @Override
        public boolean degraded() {
            return false;
        }
    }

    /** The replacement of {@code broker} is over (no throttle was set); the progress annotation goes. */
    record Done(int broker, NodeLossReason reason, String message) implements NodeLossAction {
        @Override
        public boolean degraded() {
            return false;
        }
    }
}
