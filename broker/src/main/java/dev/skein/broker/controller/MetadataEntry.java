package dev.skein.broker.controller;

import org.apache.kafka.common.Uuid;

import java.util.List;

/**
 * One entry of the metadata log: the commands of one decision of the active controller, applied
 * atomically, and the id of the request they answer ({@code null} for the controller's own
 * decisions, such as fencing a broker whose session expired). Every attempt to deliver one request
 * carries the same id, so {@link AppliedRequests} applies at most one entry per request.
 */
public record MetadataEntry(Uuid requestId, List<MetadataCommand> commands) {
    public MetadataEntry {
        commands = List.copyOf(commands);
    }
}
