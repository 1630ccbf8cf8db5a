package dev.skein.broker.replication;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

/**
 * A partition this broker follows: where its leader is and in which leader epoch, and whether its
 * fetches count against the follower re-replication throttle (the topic lists this replica in
 * {@code follower.replication.throttled.replicas} and it is outside the ISR).
 */
public record FetchTarget(TopicPartition partition, Uuid topicId, int leaderId, String host, int port, int leaderEpoch,
                          boolean throttled) {
    public FetchTarget(TopicPartition partition, Uuid topicId, int leaderId, String host, int port, int leaderEpoch) {
        this(partition, topicId, leaderId, host, port, leaderEpoch, false);
    }
}
