package dev.skein.broker.server;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An {@code acks=all} append to one partition waiting until the high watermark covers it: answered
 * with the append's base offset once the watermark reaches {@code requiredOffset}, with
 * NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR falls below {@code min.insync.replicas} first, with
 * NOT_LEADER_OR_FOLLOWER if this broker loses the leadership, or with REQUEST_TIMED_OUT at its
 * deadline. Completed exactly once.
 */
final class DelayedProduce {
    private final TopicPartition partition;
    private final long requiredOffset;
    private final ProduceResult appended;
    private final CompletableFuture<ProduceResult> future = new CompletableFuture<>();
    private final AtomicBoolean done = new AtomicBoolean();

    /** @param requiredOffset the append's last offset + 1 */
    DelayedProduce(TopicPartition partition, long requiredOffset, ProduceResult appended) {
        this.partition = partition;
        this.requiredOffset = requiredOffset;
        this.appended = appended;
    }

    TopicPartition partition() {
        return partition;
    }

    CompletableFuture<ProduceResult> future() {
        return future;
    }

    boolean isDone() {
        return done.get();
    }

    /** Completes if the partition's state decides this append; returns true once completed. */
    boolean tryComplete(Partition p, int minIsr) {
        if (done.get()) {
            return true;
        }
        if (p == null || !p.isLeader()) {
            return complete(ProduceResult.error(Errors.NOT_LEADER_OR_FOLLOWER,
                    "The leadership of " + partition + " moved while waiting for replication"));
        }
        if (p.highWatermark() >= requiredOffset) {
            return complete(appended);
        }
        int isr = p.inSyncReplicaCount();
        if (isr < minIsr) {
            return complete(ProduceResult.error(Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND, "The size of the current ISR "
                    + isr + " is insufficient to satisfy the min.isr requirement of " + minIsr + " for partition "
                    + partition + " after the append"));
        }
        return false;
    }

    void expire() {
        complete(ProduceResult.error(Errors.REQUEST_TIMED_OUT, "Replication of " + partition + " up to offset "
                + requiredOffset + " did not finish within the request timeout"));
    }

    private boolean complete(ProduceResult result) {
        if (done.compareAndSet(false, true)) {
            future.complete(result);
        }
        return true;
    }
}
