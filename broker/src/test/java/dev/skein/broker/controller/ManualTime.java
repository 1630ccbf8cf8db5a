package dev.skein.broker.controller;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.utils.Time;

/** A clock that only moves when a test says so. */
final class ManualTime implements Time {
    private final AtomicLong nowMs;

    ManualTime(long startMs) {
        this.nowMs = new AtomicLong(startMs);
    }

    ManualTime() {
        this(1_700_000_000_000L);
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

    @Override
    public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) {
        if (!condition.get()) {
            throw new TimeoutException("ManualTime does not wait");
        }
    }

    void advance(long ms) {
        nowMs.addAndGet(ms);
    }
}
