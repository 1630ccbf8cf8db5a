package dev.skein.broker.controller.raft;

import java.util.concurrent.CountDownLatch;

/**
 * Holds a voter's apply lock on a thread of its own until closed: the voter appends the entries the
 * quorum commits but applies none, so its metadata falls behind the active controller's.
 */
final class HeldApply implements AutoCloseable {
    private final CountDownLatch release = new CountDownLatch(1);
    private final Thread holder;

    private HeldApply(RaftController voter) throws InterruptedException {
        CountDownLatch held = new CountDownLatch(1);
        holder = new Thread(() -> {
            synchronized (voter.applyLock()) {
                held.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }, "hold-apply");
        holder.start();
        held.await();
    }

    /** Returns once the lock is held. */
    static HeldApply hold(RaftController voter) throws InterruptedException {
        return new HeldApply(voter);
    }

    /** Lets the voter apply again; idempotent. */
    void release() {
        release.countDown();
    }

    @Override
    public void close() throws InterruptedException {
        release();
        holder.join();
    }
}
