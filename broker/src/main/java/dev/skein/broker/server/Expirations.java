package dev.skein.broker.server;

import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The deadlines of waiting produces and fetches, in buckets of {@code tickMs}: one timer task per
 * bucket, not one per request, and a deadline cancelled when its request completes early leaves no
 * task behind. (A task per request woke the timer thread for every follower fetch 500 ms after it
 * had been answered, and each acks=all produce left a cancelled task, holding its request's state,
 * in the timer's queue for the 30 s of its timeout.) A deadline runs up to {@code tickMs} late,
 * never early. Thread-safe.
 */
final class Expirations {
    private static final Logger log = LoggerFactory.getLogger(Expirations.class);

    /** A scheduled expiry; {@link #cancel} once its request completed some other way. */
    interface Handle {
        void cancel();
    }

    private final ScheduledExecutorService timer;
    private final Time time;
    private final long tickMs;
    private final Map<Long, Bucket> buckets = new ConcurrentHashMap<>();

    Expirations(ScheduledExecutorService timer, Time time, long tickMs) {
        if (tickMs < 1) {
            throw new IllegalArgumentException("tickMs must be at least 1, not " + tickMs);
        }
        this.timer = timer;
        this.time = time;
        this.tickMs = tickMs;
    }

    /** Runs {@code expire} on the timer at least {@code delayMs} from now, unless cancelled first. */
    Handle schedule(Runnable expire, long delayMs) {
        long now = time.milliseconds();
        long due = now + Math.max(0, delayMs);
        long key = Math.ceilDiv(due, tickMs);
        while (true) {
            Bucket bucket = buckets.computeIfAbsent(key, k -> new Bucket(k, Math.max(0, k * tickMs - now)));
            if (bucket.add(expire)) {
                return () -> bucket.ops.remove(expire);
            }
            // the bucket fired between the lookup and the add: a new one for the same key fires at once
            buckets.remove(key, bucket);
        }
    }

    /** Deadlines filed and not yet run or cancelled (for tests and metrics). */
    int pending() {
        int n = 0;
        for (Bucket b : buckets.values()) {
            n += b.ops.size();
        }
        return n;
    }

    private final class Bucket {
        private final long key;
        private final Set<Runnable> ops = ConcurrentHashMap.newKeySet();
        private boolean fired;

        Bucket(long key, long delayMs) {
            this.key = key;
            try {
                timer.schedule(this::fire, delayMs, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException e) {
                // the broker is shutting down: nothing will wait for these deadlines
                fired = true;
            }
        }

        synchronized boolean add(Runnable op) {
            if (fired) {
                return false;
            }
            ops.add(op);
            return true;
        }

        private void fire() {
            buckets.remove(key, this);
            synchronized (this) {
                fired = true;
            }
            for (Runnable op : ops) {
                try {
                    op.run();
                } catch (RuntimeException e) {
                    log.warn("An expiry failed: {}", e.toString());
                }
            }
            ops.clear();
        }
    }
}
