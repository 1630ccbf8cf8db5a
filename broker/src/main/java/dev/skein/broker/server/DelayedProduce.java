package dev.skein.broker.server;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An {@code acks=all} append to one partition waiting until the high watermark covers it: answered
 * with the append's base offset once the watermark reaches {@code requiredOffset}, with
 * NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR falls below {@code min.insync.replicas} first, with
 * NOT_LEADER_OR_FOLLOWER if this broker loses the leadership, or with REQUEST_TIMED_OUT at its
 * deadline. Completed exactly once: it then leaves its partition's {@link WaitList}, cancels its
 * deadline and puts its result into its request's {@link Request}.
 */
final class DelayedProduce implements Runnable {
    private final TopicPartition partition;
    private final long requiredOffset;
    private final ProduceResult appended;
    private final Request request;
    private final int slot;
    private final WaitList<DelayedProduce> list;
    private final AtomicBoolean done = new AtomicBoolean();
    private volatile Expirations.Handle expiry;

    /**
     * @param requiredOffset the append's last offset + 1
     * @param slot           its partition's place in {@code request}
     * @param list           the produces waiting on its partition, which it joins here
     */
    DelayedProduce(TopicPartition partition, long requiredOffset, ProduceResult appended, Request request, int slot,
                   WaitList<DelayedProduce> list) {
        this.partition = partition;
        this.requiredOffset = requiredOffset;
        this.appended = appended;
        this.request = request;
        this.slot = slot;
        this.list = list;
        list.add(this);
    }

    TopicPartition partition() {
        return partition;
    }

    boolean isDone() {
        return done.get();
    }

    /** Its deadline; cancelled on completion (at once, if it already completed). */
    void expiry(Expirations.Handle handle) {
        this.expiry = handle;
        if (done.get()) {
            handle.cancel();
        }
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

    /** The deadline's task. */
    @Override
    public void run() {
        expire();
    }

    private boolean complete(ProduceResult result) {
        if (done.compareAndSet(false, true)) {
            Expirations.Handle handle = expiry;
            if (handle != null) {
                handle.cancel();
            }
            list.remove(this);
            request.set(slot, result);
        }
        return true;
    }

    /**
     * The answer to one produce request: its partitions' results in request order, complete once the
     * last one is in. One counter for the request instead of a future per partition joined by
     * {@code allOf}.
     */
    static final class Request {
        private final TopicPartition[] partitions;
        private final ProduceResult[] results;
        /** Results still missing, plus one that {@link #sealed} releases once every partition was appended. */
        private final AtomicInteger missing;
        private final CompletableFuture<Map<TopicPartition, ProduceResult>> future = new CompletableFuture<>();

        Request(int partitionCount) {
            this.partitions = new TopicPartition[partitionCount];
            this.results = new ProduceResult[partitionCount];
            this.missing = new AtomicInteger(partitionCount + 1);
        }

        /** Names the partition of {@code slot} (before its result can arrive). */
        void partition(int slot, TopicPartition tp) {
            partitions[slot] = tp;
        }

        void set(int slot, ProduceResult result) {
            results[slot] = result;
            if (missing.decrementAndGet() == 0) {
                finish();
            }
        }

        /** Every partition was appended and filed: the answer may complete. */
        CompletableFuture<Map<TopicPartition, ProduceResult>> sealed() {
            if (missing.decrementAndGet() == 0) {
                finish();
            }
            return future;
        }

        private void finish() {
            if (partitions.length == 1) {
                future.complete(Map.of(partitions[0], results[0]));
                return;
            }
            Map<TopicPartition, ProduceResult> out = new LinkedHashMap<>(partitions.length * 2);
            for (int i = 0; i < partitions.length; i++) {
                out.put(partitions[i], results[i]);
            }
            future.complete(out);
        }
    }
}
