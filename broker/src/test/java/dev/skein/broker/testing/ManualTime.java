package dev.skein.broker.testing;

import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.utils.Time;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/** A clock for tests that moves only when the test says so ({@link #advance} or {@link #sleep}). Thread-safe. */
public final class ManualTime implements Time {
    private final AtomicLong nowMs;

    public ManualTime(long startMs) {
        this.nowMs = new AtomicLong(startMs);
    }

    public ManualTime() {
        this(1_700_000_000_000L);
    }

    public void advance(long ms) {
        nowMs.addAndGet(ms);
    }

    @Override
    public long milliseconds() {
        return nowMs.get();
    }

    @Override
    public long nanoseconds() {
        return TimeUnit.MILLISECONDS.toNanos(nowMs.get());
    }

    @Override
    public void sleep(long ms) {
        nowMs.addAndGet(ms);
    }

    /** Never waits: a condition that does not hold now fails at once. */
    @Override
    public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) {
        if (!condition.get()) {
            throw new TimeoutException("ManualTime does not wait");
        }
    }
}
