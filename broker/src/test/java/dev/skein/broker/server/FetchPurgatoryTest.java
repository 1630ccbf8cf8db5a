package dev.skein.broker.server;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Waiting fetches: filed under each partition they read, re-read once per wake-up however many of their
 * partitions moved, gone from every partition's list and their deadline cancelled once answered.
 */
class FetchPurgatoryTest {
    private static final Uuid TOPIC_ID = Uuid.randomUuid();
    private static final TopicPartition TP0 = new TopicPartition("t", 0);
    private static final TopicPartition TP1 = new TopicPartition("t", 1);

    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final Expirations expirations = new Expirations(timer, Time.SYSTEM, 5);
    private final FetchPurgatory purgatory = new FetchPurgatory(expirations, Runnable::run, new SimpleMeterRegistry());

    @AfterEach
    void tearDown() {
        timer.shutdownNow();
    }

    private static FetchRequestPartition req(TopicPartition tp) {
        return new FetchRequestPartition(new TopicIdPartition(TOPIC_ID, tp), 0, 1024, Optional.empty());
    }

    private static List<FetchResult> result(int bytes) {
        FetchResult r = new FetchResult(Errors.NONE, 0, 0,
                bytes == 0 ? MemoryRecords.EMPTY : MemoryRecords.readableRecords(java.nio.ByteBuffer.allocate(bytes)));
        return List.of(r);
    }

    @Test
    void aFetchOfTwoMovedPartitionsIsReadOnceAndLeavesBothListsWhenAnswered() {
        AtomicBoolean readable = new AtomicBoolean();
        AtomicInteger reads = new AtomicInteger();
        CompletableFuture<List<FetchResult>> f = purgatory.await(List.of(req(TP0), req(TP1)), 1, 60_000,
                readable::get, () -> {
                    reads.incrementAndGet();
                    return result(10);
                });
        assertThat(f).isNotDone();
        assertThat(purgatory.filed()).isEqualTo(2);
        assertThat(expirations.pending()).isOne();

        purgatory.completeNow(List.of(TP0, TP1));
        assertThat(reads).as("nothing readable: no read").hasValue(0);
        readable.set(true);
        purgatory.completeNow(List.of(TP0, TP1));

        assertThat(reads).as("read once for both partitions").hasValue(1);
        assertThat(f).isCompleted();
        assertThat(f.join().get(0).bytes()).isEqualTo(10);
        assertThat(purgatory.filed()).isZero();
        assertThat(expirations.pending()).as("deadline cancelled").isZero();
    }

    @Test
    void aReadBelowMinBytesKeepsWaitingAndTheDeadlineAnswersWithWhatThereIs() {
        AtomicInteger reads = new AtomicInteger();
        CompletableFuture<List<FetchResult>> f = purgatory.await(List.of(req(TP0)), 100, 50, () -> true, () -> {
            reads.incrementAndGet();
            return result(10);
        });
        assertThat(f).as("10 of 100 bytes on filing").isNotDone();
        purgatory.wake(TP0);
        assertThat(f).isNotDone();
        await().atMost(Duration.ofSeconds(5)).until(f::isDone);
        assertThat(f.join().get(0).bytes()).isEqualTo(10);
        assertThat(reads.get()).as("filing, the wake-up, the deadline").isEqualTo(3);
        assertThat(purgatory.filed()).isZero();
    }

    @Test
    void aPartitionNamedTwiceIsFiledTwiceAndLeavesBothEntries() {
        AtomicBoolean readable = new AtomicBoolean();
        CompletableFuture<List<FetchResult>> f = purgatory.await(List.of(req(TP0), req(TP0)), 1, 60_000,
                readable::get, () -> result(1));
        CompletableFuture<List<FetchResult>> other = purgatory.await(List.of(req(TP0)), 1, 60_000, () -> false,
                () -> result(0));
        assertThat(purgatory.filed()).isEqualTo(3);
        readable.set(true);
        purgatory.wake(TP0);
        assertThat(f).isCompleted();
        assertThat(other).isNotDone();
        assertThat(purgatory.filed()).isOne();
        purgatory.expireAll();
        assertThat(other).isCompleted();
        assertThat(purgatory.filed()).isZero();
    }

    @Test
    void aForgottenPartitionsFetchesWereWokenAndANewListStartsEmpty() {
        AtomicBoolean gone = new AtomicBoolean();
        CompletableFuture<List<FetchResult>> f = purgatory.await(List.of(req(TP0)), 1, 60_000, gone::get,
                () -> List.of(FetchResult.error(Errors.UNKNOWN_TOPIC_OR_PARTITION)));
        gone.set(true);
        purgatory.wake(TP0);
        purgatory.forget(TP0);
        assertThat(f).isCompleted();
        assertThat(f.join().get(0).error()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(purgatory.filed()).isZero();
    }

    @Test
    void waitListsRemoveEveryEntryOfOneItemAndKeepTheOthers() {
        WaitList<String> list = new WaitList<>();
        String a = new String("a");
        String b = new String("b");
        for (int i = 0; i < 5; i++) {
            list.add(a);
            list.add(b);
        }
        list.add(a);
        list.remove(a);
        assertThat(list.snapshot()).hasSize(5).containsOnly(b);
        list.remove(new String("b"));
        assertThat(list.size()).as("by identity").isEqualTo(5);
        list.remove(b);
        assertThat(list.snapshot()).isEmpty();
    }
}
