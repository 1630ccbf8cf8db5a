package dev.skein.broker.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Loopback ports for servers a test must name before they start (controller voters, broker JVMs).
 * Picked below the kernel's ephemeral range (32768+), so an outgoing client connection elsewhere on
 * the machine cannot take the port between the pick and the bind; checked free when picked, and never
 * handed out twice by one JVM (a port is free again as soon as its check closes, so a cluster's six
 * picks could otherwise name one port twice, and one of its brokers would fail to bind).
 */
public final class FreePorts {
    private static final int LOW = 20_000;
    private static final int HIGH = 32_000;
    private static final Set<Integer> PICKED = ConcurrentHashMap.newKeySet();

    private FreePorts() {
    }

    public static int pick() throws IOException {
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(LOW, HIGH);
            if (!PICKED.add(port)) {
                continue;
            }
            try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                s.setReuseAddress(true);
                return port;
            } catch (IOException inUse) {
                // in use elsewhere (it stays in PICKED: no point in trying it again); try another
            }
        }
        throw new IOException("no free loopback port between " + LOW + " and " + HIGH);
    }
}
