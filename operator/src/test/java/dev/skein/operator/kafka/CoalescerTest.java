package dev.skein.operator.kafka;

import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.internals.KafkaFutureImpl;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CoalescerTest {
    /** A window no test waits for: batches go when the test flushes them, or when full. */
    private static final long NEVER_MS = TimeUnit.HOURS.toMillis(1);

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private final List<Set<String>> calls = new ArrayList<>();

    @AfterEach
    void stopTimer() {
        timer.shutdownNow();
    }

    /** A fake Admin call: the value of key k is k upper-cased, "missing-*" is unknown. */
    private synchronized Map<String, KafkaFuture<String>> upperCase(Map<String, String> batch) {
        calls.add(Set.copyOf(batch.keySet()));
        Map<String, KafkaFuture<String>> out = new LinkedHashMap<>();
        batch.forEach((k, payload) -> {
            KafkaFutureImpl<String> f = new KafkaFutureImpl<>();
            if (k.startsWith("missing-")) {
                f.completeExceptionally(new UnknownTopicOrPartitionException("no topic " + k));
            } else {
                f.complete(payload.toUpperCase());
            }
            out.put(k, f);
        });
        return out;
    }

    @Test
    void callsWithinOneWindowGoAsOneAdminCallAndEachCallerGetsItsOwnResult() throws Exception {
        Coalescer<String, String, String> c = new Coalescer<>("Fake", this::upperCase, timer, NEVER_MS, 100);

        CompletableFuture<String> a = c.submit("a", "a");
        CompletableFuture<String> b = c.submit("b", "b");
        CompletableFuture<String> aAgain = c.submit("a", "a");
        assertThat(calls).isEmpty();
        c.flush();

        assertThat(calls).containsExactly(Set.of("a", "b"));
        assertThat(a.get(1, TimeUnit.SECONDS)).isEqualTo("A");
        assertThat(aAgain.get(1, TimeUnit.SECONDS)).isEqualTo("A");
        assertThat(b.get(1, TimeUnit.SECONDS)).isEqualTo("B");
    }

    @Test
    void aFullBatchGoesAtOnceWithoutWaitingForTheWindow() throws Exception {
        Coalescer<String, String, String> c = new Coalescer<>("Fake", this::upperCase, timer, NEVER_MS, 3);

        List<CompletableFuture<String>> results = new ArrayList<>();
        for (String k : List.of("x", "y", "z")) {
            results.add(c.submit(k, k));
        }

        assertThat(results.get(2).get(5, TimeUnit.SECONDS)).isEqualTo("Z");
        assertThat(calls).containsExactly(Set.of("x", "y", "z"));
        CompletableFuture<String> next = c.submit("w", "w");
        assertThat(next).isNotDone();
        c.flush();
        assertThat(next.get(1, TimeUnit.SECONDS)).isEqualTo("W");
        assertThat(calls).hasSize(2);
    }

    @Test
    void theWindowSendsWhatIsPendingWithoutAFlushByTheCaller() throws Exception {
        Coalescer<String, String, String> c = new Coalescer<>("Fake", this::upperCase, timer, 5, 100);
        assertThat(c.submit("late", "late").get(5, TimeUnit.SECONDS)).isEqualTo("LATE");
    }

    @Test
    void anErrorOfOneKeyFailsOnlyThatKeyAndAFailedCallFailsTheWholeBatch() throws Exception {
        Coalescer<String, String, String> c = new Coalescer<>("Fake", this::upperCase, timer, NEVER_MS, 100);
        CompletableFuture<String> missing = c.submit("missing-t", "missing-t");
        CompletableFuture<String> present = c.submit("t", "t");
        c.flush();
        assertThat(present.get(1, TimeUnit.SECONDS)).isEqualTo("T");
        assertThatThrownBy(() -> missing.get(1, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(UnknownTopicOrPartitionException.class);

        Coalescer<String, String, String> broken = new Coalescer<>("Broken", batch -> {
            throw new IllegalStateException("admin closed");
        }, timer, NEVER_MS, 100);
        CompletableFuture<String> one = broken.submit("1", "1");
        CompletableFuture<String> two = broken.submit("2", "2");
        broken.flush();
        assertThatThrownBy(() -> one.get(1, TimeUnit.SECONDS)).cause().hasMessage("admin closed");
        assertThatThrownBy(() -> two.get(1, TimeUnit.SECONDS)).cause().hasMessage("admin closed");
    }
}
