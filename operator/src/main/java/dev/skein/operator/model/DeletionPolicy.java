package dev.skein.operator.model;

/** What happens to the Kafka-side object (topic, group offsets) when its resource is deleted. */
public enum DeletionPolicy {
    /** Delete the topic (or the group's committed offsets) with the resource. */
    Delete,
    /** Leave the topic (or the offsets) in the cluster; only the resource goes. The default. */
    Retain
}
