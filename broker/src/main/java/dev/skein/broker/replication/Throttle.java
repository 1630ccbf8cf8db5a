package dev.skein.broker.replication;

import org.apache.kafka.common.utils.Time;

import java.util.concurrent.atomic.LongAdder;

/**
 * A token bucket that bounds the bytes of throttled re-replication in one direction (leader or
 * follower) on one broker, as KIP-73's {@code *.replication.throttled.rate}. Tokens (bytes) refill
 * at {@link #rate} per second up to a burst of {@code burstMs} worth of the rate; a caller asks
 * {@link #available} before it moves throttled bytes and {@link #record}s what it moved. A record
 * larger than the tokens left drives the bucket into debt, which the refill pays off before
 * {@link #available} is positive again, so the average holds even when a single read overshoots.
 *
 * <p>At {@link #UNLIMITED} (the default) nothing is throttled. Thread-safe; time comes from the
 * injected {@link Time}.
 */
public final class Throttle {
    public static final long UNLIMITED = Long.MAX_VALUE;

    private final Time time;
    private final long burstMs;
    private final LongAdder throttledBytes = new LongAdder();
    private long rate = UNLIMITED;
    private double tokens;
    private long lastRefillMs;

    /** A bucket that holds at most {@code burstMs} worth of its rate. */
    public Throttle(Time time, long burstMs) {
        if (burstMs <= 0) {
            throw new IllegalArgumentException("burstMs must be positive: " + burstMs);
        }
        this.time = time;
        this.burstMs = burstMs;
        this.lastRefillMs = time.milliseconds();
    }

    /** Sets the rate in bytes per second ({@link #UNLIMITED} turns throttling off); a newly enabled bucket starts full. */
    public synchronized void setRate(long bytesPerSecond) {
        if (bytesPerSecond <= 0) {
            throw new IllegalArgumentException("rate must be positive: " + bytesPerSecond);
        }
        if (bytesPerSecond == rate) {
            return;
        }
        boolean wasUnlimited = rate == UNLIMITED;
        if (!wasUnlimited) {
            refill();
        }
        rate = bytesPerSecond;
        lastRefillMs = time.milliseconds();
        tokens = wasUnlimited ? capacity() : Math.min(tokens, capacity());
    }

    public synchronized long rate() {
        return rate;
    }

    public synchronized boolean enabled() {
        return rate != UNLIMITED;
    }

    /** Bytes that may move now without exceeding the rate: 0 while the bucket is empty or in debt. */
    public synchronized long available() {
        if (rate == UNLIMITED) {
            return Long.MAX_VALUE;
        }
        refill();
        return tokens <= 0 ? 0 : (long) tokens;
    }

    /** Milliseconds until {@link #available} is positive again: 0 if it is now. */
    public synchronized long msUntilAvailable() {
        if (rate == UNLIMITED) {
            return 0;
        }
        refill();
        return tokens >= 1 ? 0 : (long) Math.ceil((1 - tokens) * 1000.0 / rate);
    }

    /** Counts {@code bytes} of throttled replication that moved. */
    public synchronized void record(long bytes) {
        if (bytes <= 0) {
            return;
        }
        throttledBytes.add(bytes);
        if (rate == UNLIMITED) {
            return;
        }
        refill();
        tokens -= bytes;
    }

    /** Bytes recorded since start, throttled or not; the metric {@code kafka.server.replication.throttled.bytes}. */
    public long totalBytes() {
        return throttledBytes.sum();
    }

    private double capacity() {
        return Math.max(1.0, (double) rate * burstMs / 1000.0);
    }

    private void refill() {
        long now = time.milliseconds();
        long elapsed = now - lastRefillMs;
        if (elapsed > 0) {
            tokens = Math.min(capacity(), tokens + (double) rate * elapsed / 1000.0);
            lastRefillMs = now;
        }
    }
}
