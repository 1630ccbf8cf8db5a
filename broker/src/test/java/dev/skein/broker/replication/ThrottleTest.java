package dev.skein.broker.replication;

import dev.skein.broker.testing.ManualTime;
import org.junit.jupiter.api.Test;

import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class ThrottleTest {
    private static final long MB = 1024 * 1024;

    private final ManualTime clock = new ManualTime(1_000_000);

    @Test
    void unlimitedByDefault() {
        Throttle t = new Throttle(clock, 250);
        assertThat(t.enabled()).isFalse();
        assertThat(t.available()).isEqualTo(Long.MAX_VALUE);
        t.record(10 * MB);
        assertThat(t.available()).isEqualTo(Long.MAX_VALUE);
        assertThat(t.totalBytes()).isEqualTo(10 * MB);
    }

    @Test
    void rateHoldsWithinTwentyPercentOverTenSecondsWhenReadsAreCappedByTokens() {
        Throttle t = new Throttle(clock, 250);
        t.setRate(MB);
        long moved = runFor(t, 10_000, 10, avail -> Math.min(avail, 64 * 1024));
        assertThat((double) moved).isBetween(0.8 * 10 * MB, 1.2 * 10 * MB);
    }

    @Test
    void rateHoldsWithinTwentyPercentWhenSingleReadsOvershootTheTokens() {
        // the leader side answers a whole fetch (up to 1 MB) whenever any token is left: the debt pays it back
        Throttle t = new Throttle(clock, 250);
        t.setRate(MB);
        Random random = new Random(42);
        long moved = runFor(t, 10_000, 7, avail -> (long) (MB * (0.5 + random.nextDouble() / 2)));
        assertThat((double) moved).isBetween(0.8 * 10 * MB, 1.2 * 10 * MB);
    }

    @Test
    void slowRateHoldsToo() {
        Throttle t = new Throttle(clock, 250);
        t.setRate(100 * 1024);
        long moved = runFor(t, 10_000, 50, avail -> 16 * 1024);
        assertThat((double) moved).isBetween(0.8 * 10 * 100 * 1024, 1.2 * 10 * 100 * 1024);
    }

    @Test
    void burstAfterALongIdleIsBoundedByTheBucket() {
        Throttle t = new Throttle(clock, 250);
        t.setRate(MB);
        clock.sleep(TimeUnit.HOURS.toMillis(1));
        assertThat(t.available()).isLessThanOrEqualTo(MB / 4);
        t.record(t.available());
        assertThat(t.available()).isZero();
        clock.sleep(100);
        assertThat(t.available()).isBetween(MB / 10 - 1, MB / 10 + 1);
    }

    @Test
    void debtBlocksUntilRepaid() {
        Throttle t = new Throttle(clock, 250);
        t.setRate(MB);
        t.record(2 * MB);
        clock.sleep(1_500);
        assertThat(t.available()).isZero();
        assertThat(t.msUntilAvailable()).isBetween(249L, 251L); // the full bucket (256 KiB) paid part of it
        clock.sleep(800);
        assertThat(t.available()).isPositive();
        assertThat(t.msUntilAvailable()).isZero();
    }

    @Test
    void loweringTheRateShrinksTheBucket() {
        Throttle t = new Throttle(clock, 1_000);
        t.setRate(10 * MB);
        t.setRate(MB);
        assertThat(t.available()).isLessThanOrEqualTo(MB);
        t.setRate(Throttle.UNLIMITED);
        assertThat(t.enabled()).isFalse();
    }

    /** Simulates a replication loop that polls every {@code stepMs}; returns the bytes moved in {@code durationMs}. */
    private long runFor(Throttle t, long durationMs, long stepMs, java.util.function.LongUnaryOperator readSize) {
        long end = clock.milliseconds() + durationMs;
        long moved = 0;
        while (clock.milliseconds() < end) {
            long avail = t.available();
            if (avail > 0) {
                long n = readSize.applyAsLong(avail);
                t.record(n);
                moved += n;
            }
            clock.sleep(stepMs);
        }
        return moved;
    }
}
