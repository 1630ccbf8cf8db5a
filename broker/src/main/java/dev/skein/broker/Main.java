package dev.skein.broker;

import dev.skein.broker.config.BrokerConfig;
import dev.skein.broker.k8s.PodEntrypoint;
import dev.skein.broker.server.SkeinBroker;
import org.apache.kafka.common.config.ConfigException;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

/**
 * {@code java -jar skein-broker.jar server.properties [--override key=value ...]}: starts one broker
 * from a Kafka-style properties file and runs until SIGTERM/SIGINT. In a StatefulSet pod,
 * {@code java -jar skein-broker.jar --pod [--override key=value ...]} (the broker image's default)
 * takes the properties from the pod instead: see {@link PodEntrypoint}.
 */
public final class Main {
    private Main() {
    }

    /**
     * A broker pod that restarts comes back under its old name at a new IP. For 30 s the other
     * brokers kept dialling the old one: the JVM caches an answer that long, and so does the gRPC
     * resolver of the controller quorum (it reads the same property as a system property), so a
     * restarted voter heard nothing from the quorum for about 30 s of a rolling update. Set before
     * the first lookup; a {@code -Dsun.net.inetaddr.ttl} or {@code -Dnetworkaddress.cache.ttl} of
     * the operator's wins.
     */
    static void cacheDnsBriefly() {
        if (java.security.Security.getProperty(DNS_CACHE_TTL) == null && System.getProperty("sun.net.inetaddr.ttl") == null) {
            java.security.Security.setProperty(DNS_CACHE_TTL, DNS_CACHE_TTL_SECONDS);
        }
        if (System.getProperty(DNS_CACHE_TTL) == null) {
            System.setProperty(DNS_CACHE_TTL, DNS_CACHE_TTL_SECONDS);
        }
    }

    /** Seconds a broker trusts a DNS answer, the JVM's and gRPC's default of 30 unless the operator set one. */
    static final String DNS_CACHE_TTL_SECONDS = "5";
    static final String DNS_CACHE_TTL = "networkaddress.cache.ttl";

    public static void main(String[] args) throws Exception {
        cacheDnsBriefly();
        Map<String, String> props;
        try {
            props = parseArgs(args, System.getenv());
        } catch (IllegalArgumentException | IOException e) {
            System.err.println("skein-broker: " + e.getMessage());
            System.err.println("usage: java -jar skein-broker.jar server.properties [--override key=value ...]");
            System.err.println("       java -jar skein-broker.jar --pod [--override key=value ...]   (in a StatefulSet pod)");
            System.exit(2);
            return;
        }
        BrokerConfig config;
        try {
            config = new BrokerConfig(props);
        } catch (ConfigException e) {
            System.err.println("skein-broker: invalid configuration: " + e.getMessage());
            System.exit(1);
            return;
        }
        SkeinBroker broker;
        try {
            broker = SkeinBroker.start(config);
        } catch (Exception e) {
            System.err.println("skein-broker: could not start: " + e);
            System.exit(1);
            return;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            broker.close();
            stopped.countDown();
        }, "skein-shutdown"));
        stopped.await();
    }

    static Map<String, String> parseArgs(String[] args, Map<String, String> env) throws IOException {
        if (args.length == 0) {
            throw new IllegalArgumentException("missing the path of server.properties (or --pod)");
        }
        Map<String, String> props = new HashMap<>();
        if (args[0].equals("--pod")) {
            props.putAll(PodEntrypoint.serverProperties(env));
            System.out.print("skein-broker --pod: node.id " + props.get("node.id") + " from HOSTNAME "
                    + env.get("HOSTNAME") + "; server.properties:\n" + PodEntrypoint.render(props));
        } else {
            Path file = Path.of(args[0]);
            if (!Files.isReadable(file)) {
                throw new IllegalArgumentException("cannot read " + file);
            }
            Properties p = new Properties();
            try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                p.load(r);
            }
            for (String k : p.stringPropertyNames()) {
                props.put(k, p.getProperty(k).trim());
            }
        }
        for (int i = 1; i < args.length; i++) {
            if (!args[i].equals("--override") || i + 1 >= args.length) {
                throw new IllegalArgumentException("unexpected argument " + args[i]);
            }
            String kv = args[++i];
            int eq = kv.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("--override needs key=value, got " + kv);
            }
            props.put(kv.substring(0, eq).trim(), kv.substring(eq + 1).trim());
        }
        return props;
    }
}
