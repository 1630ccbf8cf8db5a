package dev.skein.broker.network;

import org.apache.kafka.common.requests.RequestHeader;

import java.net.InetAddress;

/** Who sent a request and how: the parsed header and the client's address. */
public record RequestContext(RequestHeader header, InetAddress clientAddress) {
    public short apiVersion() {
        return header.apiVersion();
    }

    public String clientId() {
        return header.clientId();
    }
}
