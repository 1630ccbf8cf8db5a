package dev.skein.broker.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Loopback ports for servers a test must name before they start (controller voters, broker JVMs).
 * Picked below the kernel's ephemeral range (32768+), so an outgoing client connection elsewhere on
 * the machine cannot take the port between the pick and the bind; checked free when picked.
 */
public final class FreePorts {
    private static final int LOW = 20_000;
    private static final int HIGH = 32_000;

    private FreePorts() {
    }

    public static int pick() throws IOException {
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(LOW, HIGH);
            try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                s.setReuseAddress(true);
                return port;
            } catch (IOException inUse) {
                // try another
            }
        }
        throw new IOException("no free loopback port between " + LOW + " and " + HIGH);
    }
}
