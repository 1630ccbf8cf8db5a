package dev.skein.broker.network;

import dev.skein.broker.testing.Command;

import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the kernel holds for one TCP socket on loopback, read with {@code ss -tmn} (iproute2, which the
 * network-namespace tests need as well): the fields of its {@code skmem}, such as {@code rb} (SO_RCVBUF)
 * and {@code tb} (SO_SNDBUF) as the kernel applied them.
 */
public final class KernelSockets {
    private static final Pattern SKMEM = Pattern.compile("skmem:\\(([^)]*)\\)");
    private static final Pattern FIELD = Pattern.compile("([a-z]+)(\\d+)");

    private KernelSockets() {
    }

    /** The {@code skmem} fields of the established socket bound to {@code localPort} whose peer is {@code peerPort}. */
    public static Map<String, Long> memory(int localPort, int peerPort) throws IOException, InterruptedException {
        Command.Result ss = Command.of("ss", "-tmnH", "state", "established",
                "( sport = :" + localPort + " and dport = :" + peerPort + " )").timeout(Duration.ofSeconds(10)).run();
        if (!ss.ok()) {
            throw new IOException(ss.describe());
        }
        String out = ss.stdout();
        Matcher m = SKMEM.matcher(out);
        if (!m.find()) {
            throw new IOException("no established socket " + localPort + " -> " + peerPort + " in: " + out);
        }
        Map<String, Long> fields = new LinkedHashMap<>();
        Matcher f = FIELD.matcher(m.group(1));
        while (f.find()) {
            fields.put(f.group(1), Long.parseLong(f.group(2)));
        }
        if (m.find()) {
            throw new IOException("more than one socket " + localPort + " -> " + peerPort + " in: " + out);
        }
        return fields;
    }
}
