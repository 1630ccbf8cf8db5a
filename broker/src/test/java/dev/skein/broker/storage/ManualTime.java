package dev.skein.broker.storage;

import org.apache.kafka.common.utils.Time;

import java.util.function.Supplier;

/** A {@link Time} that only moves when a test advances it. */
public final class ManualTime implements Time {
    private long nowMs;

    public ManualTime(long startMs) {
        this.nowMs = startMs;
    }

    public synchronized void advance(long ms) {
        nowMs += ms;
    }

    @Override
    public synchronized long milliseconds() {
        return nowMs;
    }

    @Override
    public synchronized long nanoseconds() {
        return nowMs * 1_000_000L;
    }

    @Override
    public void sleep(long ms) {
        advance(ms);
    }

    @Override
    public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) {
        synchronized (this) {
            if (!condition.get() && nowMs < deadlineMs) {
                nowMs = deadlineMs;
            }
        }
    }
}
