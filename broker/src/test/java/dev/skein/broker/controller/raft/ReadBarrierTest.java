package dev.skein.broker.controller.raft;

import dev.skein.broker.testing.ManualTime;
import org.apache.kafka.common.errors.NotControllerException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The rounds of ReadIndex a node sends to the active controller, counted and answered by hand. */
class ReadBarrierTest {
    private final List<CompletableFuture<Long>> sent = new ArrayList<>();
    private final ReadBarrier barrier = new ReadBarrier(() -> {
        CompletableFuture<Long> round = new CompletableFuture<>();
        sent.add(round);
        return round;
    });

    @Test
    void callersThatArriveWhileARoundIsOnItsWayShareTheNextRoundNotThatOne() throws Exception {
        CompletableFuture<Long> first = barrier.leaderIndex();
        CompletableFuture<Long> second = barrier.leaderIndex();
        CompletableFuture<Long> third = barrier.leaderIndex();
        assertThat(sent).as("one round in flight, however many ask").hasSize(1);

        // the first round's answer may predate what the later callers must see: they wait for a round of their own
        sent.get(0).complete(40L);
        assertThat(first.get()).isEqualTo(40L);
        assertThat(second).isNotDone();
        assertThat(third).isSameAs(second);
        assertThat(sent).as("the waiting callers' round goes out when the first is answered").hasSize(2);

        sent.get(1).complete(41L);
        assertThat(second.get()).isEqualTo(41L);
        assertThat(third.get()).isEqualTo(41L);

        // nothing in flight: the next caller sends at once
        CompletableFuture<Long> fourth = barrier.leaderIndex();
        assertThat(sent).hasSize(3);
        sent.get(2).complete(45L);
        assertThat(fourth.get()).isEqualTo(45L);
    }

    @Test
    void aFailedRoundFailsItsCallersAndTheNextRoundStillGoesOut() throws Exception {
        CompletableFuture<Long> first = barrier.leaderIndex();
        CompletableFuture<Long> second = barrier.leaderIndex();
        sent.get(0).completeExceptionally(new NotControllerException("no active controller"));
        assertThatThrownBy(first::get).isInstanceOf(ExecutionException.class).hasCauseInstanceOf(NotControllerException.class);
        assertThat(sent).hasSize(2);
        sent.get(1).complete(7L);
        assertThat(second.get()).isEqualTo(7L);
    }

    @Test
    void aCatchUpWaitsForTheNodeToApplyTheIndexTheControllerAnswered() throws Exception {
        ManualTime time = new ManualTime();
        List<Long> awaited = new ArrayList<>();
        ReadBarrier answered = new ReadBarrier(() -> CompletableFuture.completedFuture(12L));
        assertThat(answered.catchUp(1_000, time, (index, leftMs) -> awaited.add(index))).isTrue();
        assertThat(awaited).containsExactly(12L);
        assertThat(answered.catchUp(1_000, time, (index, leftMs) -> false)).as("not applied in time").isFalse();

        assertThat(answered.catchUps()).isEqualTo(2);
    }

    @Test
    void afterTheControllerDidNotAnswerCatchUpsGiveUpAtOnceForAWhile() throws Exception {
        ManualTime time = new ManualTime();
        List<CompletableFuture<Long>> answers = new ArrayList<>(List.of(
                CompletableFuture.failedFuture(new NotControllerException("no active controller")),
                CompletableFuture.completedFuture(30L)));
        List<Long> awaited = new ArrayList<>();
        ReadBarrier flaky = new ReadBarrier(() -> answers.removeFirst());
        assertThat(flaky.catchUp(1_000, time, (index, leftMs) -> awaited.add(index))).isFalse();

        time.sleep(ReadBarrier.QUIET_AFTER_FAILURE_MS - 1);
        assertThat(flaky.catchUp(1_000, time, (index, leftMs) -> awaited.add(index))).as("quiet: no round sent").isFalse();
        assertThat(answers).hasSize(1);

        time.sleep(1);
        assertThat(flaky.catchUp(1_000, time, (index, leftMs) -> awaited.add(index))).isTrue();
        assertThat(awaited).containsExactly(30L);
    }
}
