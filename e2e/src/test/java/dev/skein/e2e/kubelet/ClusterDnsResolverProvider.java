package dev.skein.e2e.kubelet;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.net.spi.InetAddressResolver;
import java.net.spi.InetAddressResolverProvider;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Lets the test JVM resolve cluster DNS names ({@code *.svc}, {@code *.svc.cluster.local}) the way
 * pods do, from the process kubelet's hosts file ({@code <skein.e2e.kubeletDir>/hosts}), so a Kafka
 * client in a test can follow brokers' advertised pod DNS names. Every other name goes to the JDK's
 * built-in resolver. Registered through {@code META-INF/services}; the file is read on each lookup
 * of a cluster name, so it follows the cluster as it changes.
 */
public final class ClusterDnsResolverProvider extends InetAddressResolverProvider {

    @Override
    public InetAddressResolver get(Configuration configuration) {
        InetAddressResolver builtin = configuration.builtinResolver();
        return new InetAddressResolver() {
            @Override
            public Stream<InetAddress> lookupByName(String host, LookupPolicy policy) throws UnknownHostException {
                if (!isClusterName(host)) {
                    return builtin.lookupByName(host, policy);
                }
                List<InetAddress> found = new ArrayList<>();
                for (String line : hostsLines()) {
                    String[] fields = line.split("\\s+");
                    for (int i = 1; i < fields.length; i++) {
                        byte[] address = ipv4(fields[0]);
                        if (address != null && fields[i].equalsIgnoreCase(stripDot(host))) {
                            found.add(InetAddress.getByAddress(host, address));
                        }
                    }
                }
                if (found.isEmpty()) {
                    throw new UnknownHostException(host + " (not in the process kubelet's hosts file)");
                }
                return found.stream();
            }

            @Override
            public String lookupByAddress(byte[] addr) throws UnknownHostException {
                return builtin.lookupByAddress(addr);
            }
        };
    }

    static boolean isClusterName(String host) {
        String h = stripDot(host).toLowerCase();
        return h.endsWith(".svc") || h.endsWith(".svc." + HostsFile.CLUSTER_DOMAIN);
    }

    /** The four bytes of a dotted IPv4 literal, or null (cluster names map to IPv4 pod addresses). */
    static byte[] ipv4(String literal) {
        String[] parts = literal.split("\\.");
        if (parts.length != 4) {
            return null;
        }
        byte[] bytes = new byte[4];
        for (int i = 0; i < 4; i++) {
            try {
                int value = Integer.parseInt(parts[i]);
                if (value < 0 || value > 255) {
                    return null;
                }
                bytes[i] = (byte) value;
            } catch (NumberFormatException e) {
                return null;
            }
        }
        return bytes;
    }

    private static String stripDot(String host) {
        return host.endsWith(".") ? host.substring(0, host.length() - 1) : host;
    }

    private static List<String> hostsLines() {
        Path file = Path.of(System.getProperty("skein.e2e.kubeletDir", "target/e2e-kubelet"), "hosts");
        try {
            return Files.exists(file) ? Files.readAllLines(file, StandardCharsets.UTF_8).stream()
                    .filter(l -> !l.isBlank() && !l.startsWith("#")).toList() : List.of();
        } catch (IOException e) {
            return List.of();
        }
    }

    @Override
    public String name() {
        return "skein-e2e-cluster-dns";
    }
}
