package dev.skein.broker;

import dev.skein.broker.config.BrokerConfig;
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
 * from a Kafka-style properties file and runs until SIGTERM/SIGINT.
 */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> props;
        try {
            props = parseArgs(args);
        } catch (IllegalArgumentException | IOException e) {
            System.err.println("skein-broker: " + e.getMessage());
            System.err.println("usage: java -jar skein-broker.jar server.properties [--override key=value ...]");
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

    static Map<String, String> parseArgs(String[] args) throws IOException {
        if (args.length == 0) {
            throw new IllegalArgumentException("missing the path of server.properties");
        }
        Path file = Path.of(args[0]);
        if (!Files.isReadable(file)) {
            throw new IllegalArgumentException("cannot read " + file);
        }
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(r);
        }
        Map<String, String> props = new HashMap<>();
        for (String k : p.stringPropertyNames()) {
            props.put(k, p.getProperty(k).trim());
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
