package dev.skein.operator.model;

import io.fabric8.kubernetes.api.model.Condition;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ConditionsTest {
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    private static final Instant T1 = Instant.parse("2026-01-01T00:05:00Z");

    @Test
    void transitionTimeStaysWhileTheStatusIsUnchanged() {
        List<Condition> first = Conditions.set(List.of(), "Ready", true, "InSync", "ok", 1, T0);
        List<Condition> again = Conditions.set(first, "Ready", true, "InSync", "still ok", 2, T1);

        assertThat(again).singleElement().satisfies(c -> {
            assertThat(c.getLastTransitionTime()).isEqualTo("2026-01-01T00:00:00Z");
            assertThat(c.getMessage()).isEqualTo("still ok");
            assertThat(c.getObservedGeneration()).isEqualTo(2L);
        });
    }

    @Test
    void reconcileThatFindsNothingNewProducesAnEqualCondition() {
        List<Condition> first = Conditions.set(List.of(), "Ready", true, "InSync", "ok", 1, T0);

        assertThat(Conditions.set(first, "Ready", true, "InSync", "ok", 1, T1)).isEqualTo(first);
    }

    @Test
    void statusChangeMovesTheTransitionTimeAndLeavesOtherConditions() {
        List<Condition> both = Conditions.set(Conditions.set(List.of(), "Ready", true, "InSync", "ok", 1, T0),
                "Degraded", false, "None", "", 1, T0);

        List<Condition> after = Conditions.set(both, "Ready", false, "NotSupported", "decrease", 2, T1);

        assertThat(Conditions.find(after, "Ready")).hasValueSatisfying(c -> {
            assertThat(c.getStatus()).isEqualTo("False");
            assertThat(c.getReason()).isEqualTo("NotSupported");
            assertThat(c.getLastTransitionTime()).isEqualTo("2026-01-01T00:05:00Z");
        });
        assertThat(Conditions.find(after, "Degraded")).isEqualTo(Conditions.find(both, "Degraded"));
    }
}
