package dev.skein.operator.model;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Condition types and helpers shared by the status of every Skein resource. A condition's
 * {@code lastTransitionTime} changes only when its status changes, so a reconcile that finds
 * nothing new writes an identical status (no churn).
 */
public final class Conditions {
    /** The resource's desired state is in the cluster. */
    public static final String READY = "Ready";
    /** A change is being rolled out (SkeinCluster: a rolling restart), or waits, with the reason. */
    public static final String PROGRESSING = "Progressing";
    /** Something is lost or being repaired (SkeinCluster: a broker's node is lost, or its replacement runs). */
    public static final String DEGRADED = "Degraded";

    private Conditions() {
    }

    /** The condition of this type, if present. */
    public static Optional<Condition> find(List<Condition> conditions, String type) {
        return conditions == null ? Optional.empty()
                : conditions.stream().filter(c -> type.equals(c.getType())).findFirst();
    }

    /**
     * The conditions with {@code type} set to the given status, reason and message; the transition
     * time is kept when the status is unchanged, else set to {@code now}.
     */
    public static List<Condition> set(List<Condition> conditions, String type, boolean status, String reason,
                                      String message, long observedGeneration, Instant now) {
        List<Condition> out = new ArrayList<>(conditions == null ? List.of() : conditions);
        String statusText = status ? "True" : "False";
        Optional<Condition> old = find(out, type);
        String transition = old.filter(c -> Objects.equals(c.getStatus(), statusText))
                .map(Condition::getLastTransitionTime)
                .orElse(now.truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString());
        Condition updated = new ConditionBuilder().withType(type).withStatus(statusText).withReason(reason)
                .withMessage(message).withObservedGeneration(observedGeneration).withLastTransitionTime(transition)
                .build();
        old.ifPresentOrElse(c -> out.set(out.indexOf(c), updated), () -> out.add(updated));
        return out;
    }
}
