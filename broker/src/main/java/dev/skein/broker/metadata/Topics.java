package dev.skein.broker.metadata;

/** Names of the topics the broker itself owns. */
public final class Topics {
    /** The compacted topic that stores committed offsets and group metadata. */
    public static final String GROUP_METADATA_TOPIC = "__consumer_offsets";

    private Topics() {
    }

    public static boolean isInternal(String topic) {
        return GROUP_METADATA_TOPIC.equals(topic);
    }
}
