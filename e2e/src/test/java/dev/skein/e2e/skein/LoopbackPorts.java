package dev.skein.e2e.skein;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Loopback ports for servers that must be named before they start (broker listeners, controller
 * voters): picked below the kernel's ephemeral range, as the broker tests do, and checked free.
 */
final class LoopbackPorts {
    private static final int LOW = 20_000;
    private static final int HIGH = 32_000;

    private LoopbackPorts() {
    }

    static int pick() throws IOException {
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
