package dev.skein.broker.it;

import dev.skein.broker.testing.Command;
import dev.skein.broker.testing.Command.Result;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A private network of hosts for multi-JVM tests: one Linux network namespace per host, each with
 * an {@code eth0} that is one end of a veth pair whose other end sits on a bridge in the test's own
 * namespace. Hosts get {@code 10.214.S.(10+i)/24}, the bridge (the test JVM's side) {@code .1}; no
 * namespace has a default route and the host does not forward, so nothing leaves the bridge.
 *
 * <p>{@link #cut}/{@link #heal} partition two hosts with blackhole routes inside both namespaces:
 * neither reaches the other (new connections fail, established ones stall), while both still
 * reach the bridge, so the test's clients see every host throughout.
 *
 * <p>Needs CAP_NET_ADMIN (root). Every name carries this JVM's pid ({@code np-<pid>-<i>},
 * {@code npbr<pid>}, {@code np<pid>v<i>}); {@link #close} (and a shutdown hook) removes them all,
 * and {@link #create} first removes what a killed earlier run left behind.
 */
final class NamespaceNetwork implements AutoCloseable {
    private static final Pattern OWNED_NETNS = Pattern.compile("np-(\\d+)-\\d+");
    private static final Pattern OWNED_LINK = Pattern.compile("\\d+: (np(?:br)?(\\d+)(?:v\\d+)?)[@:]");

    private final long pid = ProcessHandle.current().pid();
    private final int subnet;
    private final int size;
    private final Set<String> cuts = new HashSet<>();
    private final Thread removeOnExit = new Thread(this::removeAll, "np-netns-cleanup");
    private boolean closed;

    private NamespaceNetwork(int size, int subnet) {
        this.size = size;
        this.subnet = subnet;
    }

    /** Why namespaces cannot be made here, or empty if they can (tries one and removes it). */
    static Optional<String> unavailableReason() {
        Result nsenter = run("nsenter", "--version");
        if (!nsenter.ok()) {
            return Optional.of("`nsenter` (util-linux) is not available: " + nsenter.output().strip());
        }
        String probe = "np-" + ProcessHandle.current().pid() + "-probe";
        Result add = run("ip", "netns", "add", probe);
        if (!add.ok()) {
            return Optional.of("`ip netns add` failed (needs root / CAP_NET_ADMIN and iproute2): " + add.output().strip());
        }
        Result veth = run("ip", "-n", probe, "link", "add", "a0", "type", "veth", "peer", "name", "b0");
        run("ip", "netns", "delete", probe);
        if (!veth.ok()) {
            return Optional.of("cannot create a veth pair in a network namespace: " + veth.output().strip());
        }
        return Optional.empty();
    }

    /** Creates the bridge and {@code size} namespaces, each with its veth, address and loopback up. */
    static NamespaceNetwork create(int size) {
        reapLeftovers();
        NamespaceNetwork net = new NamespaceNetwork(size, freeSubnet());
        Runtime.getRuntime().addShutdownHook(net.removeOnExit);
        try {
            net.build();
        } catch (RuntimeException e) {
            net.close();
            throw e;
        }
        return net;
    }

    private void build() {
        must("ip", "link", "add", bridge(), "type", "bridge");
        must("ip", "addr", "add", "10.214." + subnet + ".1/24", "dev", bridge());
        must("ip", "link", "set", bridge(), "up");
        for (int i = 0; i < size; i++) {
            must("ip", "netns", "add", netns(i));
            must("ip", "link", "add", hostVeth(i), "type", "veth", "peer", "name", "eth0", "netns", netns(i));
            must("ip", "link", "set", hostVeth(i), "master", bridge(), "up");
            must("ip", "-n", netns(i), "addr", "add", ip(i) + "/24", "dev", "eth0");
            must("ip", "-n", netns(i), "link", "set", "lo", "up");
            must("ip", "-n", netns(i), "link", "set", "eth0", "up");
        }
    }

    int size() {
        return size;
    }

    /** The address of host {@code i}, reachable from the test JVM through the bridge. */
    String ip(int i) {
        return "10.214." + subnet + "." + (10 + i);
    }

    /** The command prefix that runs a program with host {@code i}'s network (and nothing else of it). */
    List<String> launcher(int i) {
        return List.of("nsenter", "--net=/var/run/netns/" + netns(i), "--");
    }

    /** Hosts {@code a} and {@code b} can no longer reach each other, in either direction. */
    synchronized void cut(int a, int b) {
        if (cuts.add(key(a, b))) {
            must("ip", "-n", netns(a), "route", "add", "blackhole", ip(b) + "/32");
            must("ip", "-n", netns(b), "route", "add", "blackhole", ip(a) + "/32");
        }
    }

    /** Undoes {@link #cut}. */
    synchronized void heal(int a, int b) {
        if (cuts.remove(key(a, b))) {
            must("ip", "-n", netns(a), "route", "del", "blackhole", ip(b) + "/32");
            must("ip", "-n", netns(b), "route", "del", "blackhole", ip(a) + "/32");
        }
    }

    /** Cuts {@code node} from every other host (the test JVM still reaches it). */
    void isolate(int node) {
        for (int i = 0; i < size; i++) {
            if (i != node) {
                cut(node, i);
            }
        }
    }

    /** Heals every cut. */
    synchronized void healAll() {
        for (String k : List.copyOf(cuts)) {
            String[] ab = k.split("-");
            heal(Integer.parseInt(ab[0]), Integer.parseInt(ab[1]));
        }
    }

    private static String key(int a, int b) {
        return Math.min(a, b) + "-" + Math.max(a, b);
    }

    private String netns(int i) {
        return "np-" + pid + "-" + i;
    }

    private String bridge() {
        return "npbr" + pid;
    }

    private String hostVeth(int i) {
        return "np" + pid + "v" + i;
    }

    /** Call after every process inside has been stopped (a namespace lives on while a process is in it). */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        removeAll();
        try {
            Runtime.getRuntime().removeShutdownHook(removeOnExit);
        } catch (IllegalStateException alreadyShuttingDown) {
            // the hook runs anyway
        }
    }

    private void removeAll() {
        for (int i = 0; i < size; i++) {
            run("ip", "netns", "delete", netns(i));
            run("ip", "link", "delete", hostVeth(i));
        }
        run("ip", "link", "delete", bridge());
    }

    /** Removes namespaces (and the processes left in them) and links of earlier runs whose JVM is gone (named with its pid). */
    private static void reapLeftovers() {
        for (String line : run("ip", "netns", "list").output().split("\n")) {
            Matcher m = OWNED_NETNS.matcher(line.split(" ")[0]);
            if (m.matches() && ProcessHandle.of(Long.parseLong(m.group(1))).isEmpty()) {
                // brokers a killed test JVM left running in its namespace
                for (String pid : run("ip", "netns", "pids", m.group()).output().split("\\s+")) {
                    if (pid.matches("\\d+")) {
                        ProcessHandle.of(Long.parseLong(pid)).ifPresent(ProcessHandle::destroyForcibly);
                    }
                }
                run("ip", "netns", "delete", m.group());
            }
        }
        for (String line : run("ip", "-o", "link", "show").output().split("\n")) {
            Matcher m = OWNED_LINK.matcher(line);
            if (m.find() && m.start() == 0 && ProcessHandle.of(Long.parseLong(m.group(2))).isEmpty()) {
                run("ip", "link", "delete", m.group(1));
            }
        }
    }

    /** A /24 of 10.214.0.0/16 that no route on this host uses yet. */
    private static int freeSubnet() {
        String routes = run("ip", "-4", "route", "show").output();
        int start = ThreadLocalRandom.current().nextInt(256);
        for (int k = 0; k < 256; k++) {
            int s = (start + k) % 256;
            if (!routes.contains("10.214." + s + ".")) {
                return s;
            }
        }
        throw new IllegalStateException("every /24 of 10.214.0.0/16 is in use: " + routes);
    }

    private static void must(String... command) {
        Result r = run(command);
        if (!r.ok()) {
            throw new IllegalStateException(r.describe());
        }
    }

    /**
     * Runs an {@code ip}/{@code nsenter} command, its stderr in its output. A command that cannot start
     * or is interrupted comes back as a failed result, so the cleanup paths go on past it.
     */
    private static Result run(String... command) {
        try {
            return Command.of(command).mergeStderr().timeout(Duration.ofSeconds(20)).run();
        } catch (IOException e) {
            return new Result(List.of(command), false, -1, e.toString(), "");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Result(List.of(command), false, -1, "interrupted", "");
        }
    }

    /** For diagnostics: each namespace's routes. */
    String describe() {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            out.add(netns(i) + " " + ip(i) + ": " + run("ip", "-n", netns(i), "route", "show").output().strip().replace('\n', ';'));
        }
        return String.join("\n", out);
    }
}
