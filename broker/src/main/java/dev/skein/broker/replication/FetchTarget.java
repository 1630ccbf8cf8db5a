package dev.skein.broker.replication;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

/** A partition this broker follows: where its leader is and in which leader epoch. */
public record FetchTarget(TopicPartition partition, Uuid topicId, int leaderId, String host, int port, int leaderEpoch) {
}
