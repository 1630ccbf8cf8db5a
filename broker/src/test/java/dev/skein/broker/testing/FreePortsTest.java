package dev.skein.broker.testing;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class FreePortsTest {

    /**
     * A thousand random picks from 12,000 ports would repeat one about 40 times if a port freed by
     * its check could be picked again (a cluster's six picks: once in about 800 clusters).
     */
    @Test
    void neverHandsOutOnePortTwice() throws Exception {
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 1000; i++) {
            int port = FreePorts.pick();
            assertThat(seen.add(port)).as("port %d handed out twice", port).isTrue();
            assertThat(port).isBetween(20_000, 31_999);
        }
    }
}
