package dev.skein.broker.network;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
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
        Process ss = new ProcessBuilder("ss", "-tmnH", "state", "established",
                "( sport = :" + localPort + " and dport = :" + peerPort + " )")
                .redirectErrorStream(true).start();
        String out = new String(ss.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!ss.waitFor(10, TimeUnit.SECONDS) || ss.exitValue() != 0) {
            ss.destroyForcibly();
            throw new IOException("ss failed: " + out);
        }
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
