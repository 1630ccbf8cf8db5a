package dev.skein.operator.kafka;

import org.apache.kafka.common.errors.ApiException;

/** An Admin call that failed or timed out; the message says what was attempted and Kafka's answer. */
public final class KafkaCallException extends RuntimeException {
    public KafkaCallException(String what, Throwable cause) {
        super("could not " + what + ": " + describe(cause), cause);
    }

    /** The result of an Admin call within {@code timeoutMs}, or a KafkaCallException saying what failed. */
    static <T> T await(java.util.concurrent.Future<T> future, long timeoutMs, String what) {
        try {
            return future.get(timeoutMs, java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new KafkaCallException(what, e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            throw new KafkaCallException(what, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KafkaCallException(what, e);
        }
    }

    private static String describe(Throwable cause) {
        if (cause instanceof java.util.concurrent.TimeoutException
                || cause instanceof org.apache.kafka.common.errors.TimeoutException) {
            return "timed out (" + cause.getMessage() + ")";
        }
        String name = cause instanceof ApiException ? cause.getClass().getSimpleName() : cause.getClass().getName();
        return name + ": " + cause.getMessage();
    }
}
