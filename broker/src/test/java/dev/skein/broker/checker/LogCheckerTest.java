package dev.skein.broker.checker;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class LogCheckerTest {

    private static LogHistory healthy() {
        LogHistory h = new LogHistory();
        h.acked("a", 0, 0);
        h.acked("b", 0, 1);
        h.unknown("c", 0);
        h.read("consumer-1", 0, 0, "a");
        h.read("consumer-1", 0, 1, "b");
        h.read("consumer-1", 0, 2, "c");
        h.read("replica-2", 0, 0, "a");
        h.read("replica-2", 0, 1, "b");
        return h;
    }

    @Test
    void aHealthyHistoryHasNoAnomalies() {
        assertThat(LogChecker.check(healthy())).isEmpty();
    }

    @Test
    void anAcknowledgedValueMissingAtItsOffsetIsALostWrite() {
        LogHistory h = new LogHistory();
        h.acked("a", 0, 0);
        h.acked("b", 0, 1);
        h.read("consumer-1", 0, 0, "a");
        h.unknown("x", 0);
        h.read("consumer-1", 0, 1, "x");
        assertThat(LogChecker.check(h)).extracting(LogChecker.Anomaly::kind).containsExactly("lost-write");
    }

    @Test
    void acknowledgedValuesBeyondWhatWasReadAreNotJudged() {
        LogHistory h = new LogHistory();
        h.acked("a", 0, 0);
        h.acked("b", 0, 5);
        h.read("consumer-1", 0, 0, "a");
        assertThat(LogChecker.check(h)).isEmpty();
    }

    @Test
    void oneValueAtTwoOffsetsIsADuplicate() {
        LogHistory h = healthy();
        h.read("consumer-1", 0, 3, "a");
        assertThat(LogChecker.check(h)).extracting(LogChecker.Anomaly::kind).containsExactly("duplicate");
    }

    @Test
    void readersDisagreeingOnAnOffsetAreInconsistentOffsets() {
        LogHistory h = healthy();
        h.read("replica-3", 0, 1, "c");
        assertThat(LogChecker.check(h)).extracting(LogChecker.Anomaly::kind)
                .contains("inconsistent-offsets", "duplicate");
    }

    @Test
    void goingBackWithoutAResetIsANonmonotonicPollButAResetAllowsIt() {
        LogHistory h = healthy();
        h.read("consumer-1", 0, 1, "b");
        assertThat(LogChecker.check(h)).extracting(LogChecker.Anomaly::kind).containsExactly("nonmonotonic-poll");

        LogHistory reset = healthy();
        reset.reset("consumer-1", 0);
        reset.read("consumer-1", 0, 1, "b");
        assertThat(LogChecker.check(reset)).isEmpty();
    }

    @Test
    void aValueWhoseSendFailedMustNeverBeRead() {
        LogHistory h = healthy();
        h.failed("z", 0);
        h.read("consumer-1", 0, 3, "z");
        assertThat(LogChecker.check(h)).extracting(LogChecker.Anomaly::kind).containsExactly("phantom");
    }
}
