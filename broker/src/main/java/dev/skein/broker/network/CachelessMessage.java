package dev.skein.broker.network;

import org.apache.kafka.common.protocol.ApiMessage;

/**
 * A response body that tells at which versions it sizes and writes itself without an
 * {@code ObjectSerializationCache}. {@link ResponseWriter} then passes no cache (null) to it and to the
 * response header (whose fields are numbers), instead of a new one per response: the cache's
 * {@code IdentityHashMap} was the largest single allocation of a leader's network threads once fetch
 * responses were written by {@code FetchResponseMessage}.
 */
public interface CachelessMessage extends ApiMessage {
    /** Whether {@code addSize} and {@code write} at {@code version} use the cache they are given. */
    boolean usesCache(short version);
}
