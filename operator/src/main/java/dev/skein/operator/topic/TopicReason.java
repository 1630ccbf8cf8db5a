package dev.skein.operator.topic;

/** The {@code reason} of a SkeinTopic's Ready condition. */
public enum TopicReason {
    /** The topic matches the spec (created, changed or adopted by this reconcile, or already so). */
    InSync,
    /** The topic was just created and not every broker knows it yet. */
    Creating,
    /** A replica reassignment (replication factor change) is running. */
    ReassignmentInProgress,
    /** The spec asks for something Kafka cannot do (partition decrease). Nothing was applied. */
    NotSupported,
    /** The topic exists but was not created from this resource, and differs from the spec. Nothing was applied. */
    ExistingTopicMismatch,
    /** The spec cannot be satisfied by this cluster (replication factor above the broker count, ...). */
    InvalidSpec,
    /** spec.cluster names no SkeinCluster in the namespace, or the cluster cannot be reached. */
    ClusterNotFound,
    /** Another SkeinTopic manages the same topic. */
    ResourceConflict,
    /** The cluster refused or failed a request; the message has Kafka's error. */
    KafkaError
}
