package dev.skein.broker.network;

import org.apache.kafka.common.protocol.ApiMessage;

/** What the broker does after handling a request: answer it, stay silent (acks=0), or close. */
public sealed interface Response {
    record Reply(ApiMessage body) implements Response {
    }

    /** No response is sent (a produce with acks=0). */
    record NoReply() implements Response {
    }

    /** The connection is closed (a produce with acks=0 that failed, as Kafka does). */
    record Close(String reason) implements Response {
    }

    static Response reply(ApiMessage body) {
        return new Reply(body);
    }

    Response NONE = new NoReply();
}
