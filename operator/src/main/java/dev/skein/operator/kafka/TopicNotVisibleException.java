package dev.skein.operator.kafka;

/**
 * A topic that exists on some brokers but not yet on all (its creation is still spreading through
 * the cluster's metadata): a reason to look again shortly, not an error.
 */
public final class TopicNotVisibleException extends RuntimeException {
    public TopicNotVisibleException(String topic, Throwable cause) {
        super("topic " + topic + " is being created: not every broker knows it yet", cause);
    }
}
