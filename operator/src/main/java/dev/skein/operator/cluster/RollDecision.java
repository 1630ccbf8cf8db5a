package dev.skein.operator.cluster;

/** The output of {@link RollingUpdateGate}: restart one broker, wait with a reason, or nothing to roll. */
public sealed interface RollDecision {
    record Restart(int brokerId, String why) implements RollDecision {
    }

    record Wait(RollReason reason, String message) implements RollDecision {
    }

    record Done() implements RollDecision {
    }
}
