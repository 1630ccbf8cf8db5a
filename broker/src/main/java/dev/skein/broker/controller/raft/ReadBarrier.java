package dev.skein.broker.controller.raft;

import org.apache.kafka.common.errors.NotControllerException;
import org.apache.kafka.common.utils.Time;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Asks the active controller how far it has applied the metadata log, for a node that must not
 * answer from metadata older than what was acknowledged before it was asked (a topic created
 * through another broker, said to be unknown here, makes librdkafka drop the records it holds for
 * it). A round is one {@link ControllerRequest.ReadIndex} round trip; an index counts for a caller
 * only if its round was sent after the caller asked, so callers that arrive while a round is on its
 * way share the next one. However many ask at once, at most one round is in flight and one waits.
 */
final class ReadBarrier {
    private static final Logger log = LoggerFactory.getLogger(ReadBarrier.class);
    static final long QUIET_AFTER_FAILURE_MS = 10_000;
    private final Supplier<CompletableFuture<Long>> round;
    private final AtomicLong catchUps = new AtomicLong();
    /** After a round that failed, catch-ups give up at once until this time. */
    private volatile long quietUntilMs = Long.MIN_VALUE;
    private boolean sending;
    private CompletableFuture<Long> next;

    /** Rounds sent with the current client of {@code clients}, each bounded by {@code roundTimeoutMs}. */
    ReadBarrier(Supplier<RaftClient> clients, LongSupplier roundTimeoutMs) {
        this(() -> readIndex(clients.get(), roundTimeoutMs.getAsLong()));
    }

    /** @param round sends one ReadIndex to the active controller; completes with the index it answers */
    ReadBarrier(Supplier<CompletableFuture<Long>> round) {
        this.round = round;
    }

    private static CompletableFuture<Long> readIndex(RaftClient client, long timeoutMs) {
        Message message = Message.valueOf(ByteString.copyFrom(ControllerRequest.encode(new ControllerRequest.ReadIndex())));
        return client.async().sendReadOnlyUnordered(message)
                .thenApply(r -> {
                    if (!r.isSuccess()) {
                        throw new NotControllerException("The controller quorum refused the request: " + r.getException());
                    }
                    return ControllerReply.decode(r.getMessage().getContent().toByteArray()).throwIfError().index();
                })
                .orTimeout(timeoutMs, TimeUnit.MILLISECONDS);
    }

    /** How a node waits until it has applied the metadata log up to an index; whether it has in time. */
    @FunctionalInterface
    interface Applied {
        boolean await(long index, long timeoutMs) throws InterruptedException;
    }

    /**
     * Waits (at most {@code timeoutMs} in all) for the active controller's applied index, then until
     * {@code applied} is as far; false if either does not happen in time. Once the controller did not
     * answer, callers do not wait for it again for {@link #QUIET_AFTER_FAILURE_MS}: without a
     * controller, the request threads of a broker must not each stall on every lookup of an unknown
     * topic.
     */
    boolean catchUp(long timeoutMs, Time time, Applied applied) throws InterruptedException {
        catchUps.incrementAndGet();
        long now = time.milliseconds();
        if (now < quietUntilMs) {
            return false;
        }
        long deadline = now + timeoutMs;
        long index;
        try {
            index = leaderIndex().get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            quietUntilMs = time.milliseconds() + QUIET_AFTER_FAILURE_MS;
            log.info("Could not learn the active controller's metadata index within {} ms ({}): answering from this "
                    + "node's metadata for the next {} ms", timeoutMs, e.toString(), QUIET_AFTER_FAILURE_MS);
            return false;
        }
        return applied.await(index, Math.max(0, deadline - time.milliseconds()));
    }

    /** How many times {@link #catchUp} was called. */
    long catchUps() {
        return catchUps.get();
    }

    /** The active controller's applied index, from a round sent after this call. */
    synchronized CompletableFuture<Long> leaderIndex() {
        if (next != null) {
            return next;
        }
        CompletableFuture<Long> mine = new CompletableFuture<>();
        if (sending) {
            next = mine;
        } else {
            sending = true;
            send(mine);
        }
        return mine;
    }

    private void send(CompletableFuture<Long> to) {
        CompletableFuture<Long> sent;
        try {
            sent = round.get();
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        }
        sent.whenComplete((index, failure) -> {
            if (failure != null) {
                to.completeExceptionally(failure);
            } else {
                to.complete(index);
            }
            CompletableFuture<Long> waiting;
            synchronized (this) {
                waiting = next;
                next = null;
                sending = waiting != null;
            }
            if (waiting != null) {
                send(waiting);
            }
        });
    }
}
