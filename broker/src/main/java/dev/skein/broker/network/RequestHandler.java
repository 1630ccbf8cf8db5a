package dev.skein.broker.network;

import org.apache.kafka.common.requests.AbstractRequest;

import java.util.concurrent.CompletableFuture;

/** Handles one decoded request; the future completes with the response (on any thread). */
@FunctionalInterface
public interface RequestHandler {
    CompletableFuture<Response> handle(RequestContext context, AbstractRequest request);
}
