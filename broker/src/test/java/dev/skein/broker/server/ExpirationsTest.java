package dev.skein.broker.server;

import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Deadlines in buckets: never early, cancelled ones never run and leave nothing behind, one timer task per bucket. */
class ExpirationsTest {
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);

    @AfterEach
    void tearDown() {
        timer.shutdownNow();
    }

    @Test
    void aDeadlineRunsNoEarlierThanItsDelay() {
        Expirations expirations = new Expirations(timer, Time.SYSTEM, 10);
        long start = System.nanoTime();
        AtomicLong ranAfterNs = new AtomicLong(-1);
        expirations.schedule(() -> ranAfterNs.set(System.nanoTime() - start), 50);
        await().atMost(Duration.ofSeconds(5)).until(() -> ranAfterNs.get() >= 0);
        assertThat(ranAfterNs.get()).isGreaterThanOrEqualTo(Duration.ofMillis(49).toNanos());
        assertThat(expirations.pending()).isZero();
    }

    @Test
    void cancelledDeadlinesNeverRunAndDeadlinesOfOneTickShareOneTimerTask() {
        Expirations expirations = new Expirations(timer, Time.SYSTEM, 1_000);
        AtomicInteger ran = new AtomicInteger();
        List<Expirations.Handle> handles = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            handles.add(expirations.schedule(ran::incrementAndGet, 200));
        }
        assertThat(timer.getQueue()).as("one task per bucket, not per deadline").hasSizeLessThanOrEqualTo(2);
        assertThat(expirations.pending()).isEqualTo(1_000);
        for (int i = 0; i < 999; i++) {
            handles.get(i).cancel();
        }
        assertThat(expirations.pending()).as("a cancelled deadline holds nothing").isEqualTo(1);
        await().atMost(Duration.ofSeconds(5)).until(() -> ran.get() == 1 && expirations.pending() == 0);
        assertThat(timer.getQueue()).isEmpty();
        assertThat(ran).hasValue(1);
    }

    @Test
    void deadlinesFiledWhileTheirBucketFiresStillRun() {
        Expirations expirations = new Expirations(timer, Time.SYSTEM, 1);
        AtomicInteger ran = new AtomicInteger();
        for (int i = 0; i < 20_000; i++) {
            expirations.schedule(ran::incrementAndGet, i % 3);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> ran.get() == 20_000);
        assertThat(expirations.pending()).isZero();
    }
}
