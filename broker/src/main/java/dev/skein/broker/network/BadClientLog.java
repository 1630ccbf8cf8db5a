package dev.skein.broker.network;

import io.netty.channel.Channel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One log line per misbehaving connection, never a stack trace: what the client sent and that the
 * broker closes the connection (or answered with an error).
 */
public final class BadClientLog {
    private static final Logger log = LoggerFactory.getLogger(BadClientLog.class);

    public void closing(Channel channel, String reason) {
        log.warn("Closing connection from {}: {}", channel.remoteAddress(), reason);
    }

    public void rejected(Channel channel, String reason) {
        log.warn("Rejected request from {}: {}", channel.remoteAddress(), reason);
    }
}
