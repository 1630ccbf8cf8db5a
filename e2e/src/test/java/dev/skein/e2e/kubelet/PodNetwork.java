package dev.skein.e2e.kubelet;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Gives each pod its own network identity: a network namespace whose {@code eth0} is one end of a
 * veth pair, the other end on a bridge in the host namespace, with a pod IP from a private range
 * that exists only on this bridge. The test JVM reaches pods through the bridge address.
 *
 * <p>Everything it creates is named with {@link #PREFIX}, and {@link #reapAll()} removes all of it,
 * also what a killed earlier run left behind. Not thread-safe: owned by the kubelet loop.
 */
final class PodNetwork {

    /**
     * Which of up to ten pod networks this kubelet owns, from {@code SKEIN_E2E_NET} (0 to 9, default
     * 0), so end-to-end runs in separate checkouts on one machine neither share addresses nor reap
     * each other's namespaces.
     */
    static final int NET = netId(System.getenv("SKEIN_E2E_NET"));
    static final String PREFIX = NET == 0 ? "skein-e2e" : "skein-e2e" + NET;
    static final String BRIDGE = "skein-e2e" + NET;
    /** 10.(213+NET).0.0/16: private, used only on the bridge; .0.1 is the bridge (host side). */
    static final String SUBNET = "10." + (213 + NET) + ".";
    static final String GATEWAY = SUBNET + "0.1";
    private static final String VETH = NET == 0 ? "ske" : "sk" + NET + "e";
    private static final int PREFIX_LENGTH = 16;

    private int nextHost = 2;

    /** A pod's network: namespace name and IP. */
    record Attachment(String netns, String hostVeth, String ip) { }

    void ensureBridge() {
        if (run(false, "ip", "link", "show", BRIDGE) != 0) {
            run(true, "ip", "link", "add", BRIDGE, "type", "bridge");
            run(true, "ip", "addr", "add", GATEWAY + "/" + PREFIX_LENGTH, "dev", BRIDGE);
        }
        run(true, "ip", "link", "set", BRIDGE, "up");
    }

    Attachment attach() {
        int host = nextHost++;
        String ip = SUBNET + (host / 256) + "." + (host % 256);
        String netns = PREFIX + "-" + host;
        String hostVeth = VETH + host;
        run(true, "ip", "netns", "add", netns);
        run(true, "ip", "link", "add", hostVeth, "type", "veth", "peer", "name", "eth0", "netns", netns);
        run(true, "ip", "link", "set", hostVeth, "master", BRIDGE, "up");
        run(true, "ip", "-n", netns, "addr", "add", ip + "/" + PREFIX_LENGTH, "dev", "eth0");
        run(true, "ip", "-n", netns, "link", "set", "lo", "up");
        run(true, "ip", "-n", netns, "link", "set", "eth0", "up");
        // No default route: a pod reaches the bridge's subnet (other pods, the host at GATEWAY) and
        // nothing else; anything else fails at once instead of leaving the machine.
        return new Attachment(netns, hostVeth, ip);
    }

    /** Cuts (or restores) a pod's link to the bridge, for network partitions. */
    void setLinkUp(Attachment attachment, boolean up) {
        run(false, "ip", "link", "set", attachment.hostVeth(), up ? "up" : "down");
    }

    void detach(Attachment attachment) {
        run(false, "ip", "netns", "delete", attachment.netns());
        run(false, "ip", "link", "delete", attachment.hostVeth());
    }

    /** Removes every namespace, veth and the bridge this class ever created (by name). */
    static void reapAll() {
        for (String netns : output("ip", "netns", "list")) {
            String name = netns.split(" ")[0];
            if (name.startsWith(PREFIX + "-")) {
                run(false, "ip", "netns", "delete", name);
            }
        }
        run(false, "ip", "link", "delete", BRIDGE);
    }

    static int netId(String value) {
        if (value == null || value.isBlank()) {
            return 0;
        }
        try {
            int id = Integer.parseInt(value.strip());
            if (id >= 0 && id <= 9) {
                return id;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("SKEIN_E2E_NET must be a number from 0 to 9, not '" + value + "'");
    }

    /** The command prefix that runs a program inside the pod's network namespace. */
    static List<String> inNetns(Attachment attachment) {
        return List.of("ip", "netns", "exec", attachment.netns());
    }

    private static int run(boolean mustSucceed, String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " timed out");
            }
            if (mustSucceed && p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed: " + out.strip());
            }
            return p.exitValue();
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + String.join(" ", command), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private static List<String> output(String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            List<String> lines = new ArrayList<>(p.inputReader(StandardCharsets.UTF_8).lines().toList());
            p.waitFor(10, TimeUnit.SECONDS);
            return lines;
        } catch (IOException e) {
            return List.of();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return List.of();
        }
    }
}
