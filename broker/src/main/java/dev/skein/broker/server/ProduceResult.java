package dev.skein.broker.server;

import org.apache.kafka.common.protocol.Errors;

/** The outcome of a produce for one partition, as the Produce response carries it. */
public record ProduceResult(Errors error, String errorMessage, long baseOffset, long logAppendTime, long logStartOffset) {
    public static ProduceResult error(Errors error, String message) {
        return new ProduceResult(error, message, -1, -1, -1);
    }
}
