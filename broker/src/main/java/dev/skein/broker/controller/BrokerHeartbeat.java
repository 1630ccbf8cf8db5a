package dev.skein.broker.controller;

/**
 * The controller's answer to a broker heartbeat.
 *
 * @param fenced           the broker may not lead or be in any ISR (it missed heartbeats, or is new)
 * @param shutdownAllowed  a broker that asked to shut down may stop: it leads no partition any more
 */
public record BrokerHeartbeat(boolean fenced, boolean shutdownAllowed) {
}
