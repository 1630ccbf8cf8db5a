package dev.skein.broker.replication;

import org.apache.kafka.common.utils.Time;

/**
 * The two re-replication throttles of one broker (KIP-73): {@link #leader} bounds the bytes this
 * broker sends as leader to throttled followers outside the ISR, {@link #follower} the bytes it
 * fetches as a follower outside the ISR for throttled partitions. Both start unlimited; their rates
 * follow the dynamic broker configs {@code leader.replication.throttled.rate} and
 * {@code follower.replication.throttled.rate}.
 */
public record ReplicationThrottles(Throttle leader, Throttle follower) {
    /** A bucket holds a quarter second of its rate: the burst after an idle spell. */
    public static final long BURST_MS = 250;

    public static ReplicationThrottles create(Time time) {
        return new ReplicationThrottles(new Throttle(time, BURST_MS), new Throttle(time, BURST_MS));
    }
}
