package dev.skein.broker.controller.raft;

import org.apache.kafka.common.config.ConfigException;

import java.util.ArrayList;
import java.util.List;

/** One entry of {@code controller.quorum.voters}: Kafka's {@code id@host:port}. */
public record QuorumVoter(int id, String host, int port) {

    public static List<QuorumVoter> parseAll(List<String> specs) {
        List<QuorumVoter> out = new ArrayList<>();
        for (String spec : specs) {
            out.add(parse(spec.trim()));
        }
        return out;
    }

    public static QuorumVoter parse(String spec) {
        int at = spec.indexOf('@');
        int colon = spec.lastIndexOf(':');
        if (at <= 0 || colon <= at) {
            throw new ConfigException("controller.quorum.voters", spec, "expected id@host:port");
        }
        try {
            String host = spec.substring(at + 1, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            return new QuorumVoter(Integer.parseInt(spec.substring(0, at)), host, Integer.parseInt(spec.substring(colon + 1)));
        } catch (NumberFormatException e) {
            throw new ConfigException("controller.quorum.voters", spec, "expected id@host:port with numeric id and port");
        }
    }

    /** The address Ratis peers use, host:port. */
    public String address() {
        return host.contains(":") ? "[" + host + "]:" + port : host + ":" + port;
    }
}
