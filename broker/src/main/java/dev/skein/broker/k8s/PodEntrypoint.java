package dev.skein.broker.k8s;

import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The broker image's start-up on Kubernetes ({@code java -jar skein-broker.jar --pod}): works out
 * which broker this pod is and what its configuration is, from what the pod has.
 *
 * <ul>
 *   <li>{@code node.id} is the StatefulSet ordinal, the number after the last '-' of the pod's
 *       hostname ({@code <statefulset>-<ordinal>}); {@code SKEIN_NODE_ID} (the operator sets it from
 *       the pod's {@code apps.kubernetes.io/pod-index} label), when present, must agree.</li>
 *   <li>The properties are the operator's ConfigMap file for that broker,
 *       {@code <config dir>/node-<id>.properties} (config dir: {@code SKEIN_CONFIG_DIR}, default
 *       {@value #DEFAULT_CONFIG_DIR}); its {@code node.id}, if set, must be the derived one.</li>
 *   <li>Then the environment: {@code SKEIN_CFG_<KEY>} sets a key, named as Kafka's images name them
 *       ({@code _} is {@code .}, {@code __} is {@code _}, {@code ___} is {@code -}:
 *       {@code SKEIN_CFG_LOG_RETENTION_MS} is {@code log.retention.ms}); {@code node.id} cannot be
 *       set so. A value may name environment variables as {@code ${POD_IP}}.</li>
 * </ul>
 *
 * Every problem is an {@link IllegalArgumentException} whose message says what is wrong and where
 * to look; nothing here starts the broker (the caller does, with {@link #serverProperties}).
 */
public final class PodEntrypoint {
    /** Where the operator mounts the cluster's ConfigMap. */
    public static final String DEFAULT_CONFIG_DIR = "/etc/skein";
    static final String CONFIG_DIR_ENV = "SKEIN_CONFIG_DIR";
    static final String NODE_ID_ENV = "SKEIN_NODE_ID";
    static final String OVERRIDE_PREFIX = "SKEIN_CFG_";
    private static final Pattern HOSTNAME = Pattern.compile("([a-z0-9]([-a-z0-9]*[a-z0-9])?)-(0|[1-9][0-9]{0,8})");
    private static final Pattern VARIABLE = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)}");

    private PodEntrypoint() {
    }

    /**
     * The StatefulSet ordinal in a pod's hostname.
     *
     * @throws IllegalArgumentException if the hostname is not {@code <statefulset>-<ordinal>}
     */
    public static int ordinal(String hostname) {
        if (hostname == null || hostname.isBlank()) {
            throw new IllegalArgumentException("HOSTNAME is not set: node.id is the pod's StatefulSet ordinal, "
                    + "read from its hostname <statefulset>-<ordinal>");
        }
        String host = hostname.strip();
        int dot = host.indexOf('.');
        if (dot > 0) {
            host = host.substring(0, dot); // a fully qualified name: the pod's name is its first label
        }
        Matcher m = HOSTNAME.matcher(host);
        if (!m.matches()) {
            throw new IllegalArgumentException("HOSTNAME '" + hostname + "' is not <statefulset>-<ordinal> "
                    + "(e.g. my-cluster-broker-0): run the broker image in a StatefulSet pod, or pass a "
                    + "server.properties file instead of --pod");
        }
        return Integer.parseInt(m.group(3));
    }

    /** The node id of this pod: the hostname's ordinal, checked against {@code SKEIN_NODE_ID} when set. */
    static int nodeId(Map<String, String> env) {
        int ordinal = ordinal(env.get("HOSTNAME"));
        String fromLabel = env.get(NODE_ID_ENV);
        if (fromLabel != null && !fromLabel.isBlank() && !fromLabel.strip().equals(Integer.toString(ordinal))) {
            throw new IllegalArgumentException(NODE_ID_ENV + "=" + fromLabel + " but HOSTNAME " + env.get("HOSTNAME")
                    + " has ordinal " + ordinal + ": the pod's identity is inconsistent");
        }
        return ordinal;
    }

    /** The broker's properties for this pod: its ConfigMap file, then the environment's overrides. */
    public static Map<String, String> serverProperties(Map<String, String> env) throws IOException {
        int nodeId = nodeId(env);
        Path dir = Path.of(env.getOrDefault(CONFIG_DIR_ENV, DEFAULT_CONFIG_DIR));
        Path file = dir.resolve("node-" + nodeId + ".properties");
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException("no " + file + " for node.id " + nodeId + " (from HOSTNAME "
                    + env.get("HOSTNAME") + "); " + present(dir) + ": is the SkeinCluster's ConfigMap mounted at "
                    + dir + ", and does the cluster have more than " + nodeId + " brokers?");
        }
        Map<String, String> props = new TreeMap<>(load(Files.readString(file, StandardCharsets.UTF_8)));
        String declared = props.get("node.id");
        if (declared != null && !declared.equals(Integer.toString(nodeId))) {
            throw new IllegalArgumentException(file + " says node.id=" + declared + " but this pod (HOSTNAME "
                    + env.get("HOSTNAME") + ") is node " + nodeId);
        }
        props.put("node.id", Integer.toString(nodeId));
        new TreeMap<>(env).forEach((name, value) -> {
            if (name.startsWith(OVERRIDE_PREFIX) && name.length() > OVERRIDE_PREFIX.length()) {
                String key = propertyName(name.substring(OVERRIDE_PREFIX.length()));
                if (key.equals("node.id")) {
                    throw new IllegalArgumentException(name + ": node.id is the pod's ordinal and cannot be set");
                }
                props.put(key, value);
            }
        });
        props.replaceAll((key, value) -> expand(key, value, env));
        return props;
    }

    /** {@code LOG_RETENTION_MS} → {@code log.retention.ms}; {@code __} → {@code _}, {@code ___} → {@code -}. */
    static String propertyName(String envSuffix) {
        return envSuffix.toLowerCase(java.util.Locale.ROOT).replace("___", "\u0001").replace("__", "\u0002")
                .replace('_', '.').replace('\u0001', '-').replace('\u0002', '_');
    }

    private static String expand(String key, String value, Map<String, String> env) {
        Matcher m = VARIABLE.matcher(value);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String replacement = env.get(m.group(1));
            if (replacement == null) {
                throw new IllegalArgumentException(key + "=" + value + " names ${" + m.group(1)
                        + "}, which is not set in the pod's environment");
            }
            m.appendReplacement(out, Matcher.quoteReplacement(replacement));
        }
        return m.appendTail(out).toString();
    }

    private static Map<String, String> load(String text) throws IOException {
        Properties p = new Properties();
        try (Reader r = new StringReader(text)) {
            p.load(r);
        }
        Map<String, String> out = new TreeMap<>();
        p.stringPropertyNames().forEach(k -> out.put(k, p.getProperty(k).strip()));
        return out;
    }

    private static String present(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return dir + " does not exist";
        }
        try (Stream<Path> files = Files.list(dir)) {
            List<String> names = files.map(f -> f.getFileName().toString()).filter(n -> !n.startsWith(".")).sorted()
                    .toList();
            return names.isEmpty() ? dir + " is empty" : dir + " has " + String.join(", ", names);
        }
    }

    /** The properties as a {@code server.properties} file (key order, escaped as Properties reads them). */
    public static String render(Map<String, String> props) {
        StringBuilder out = new StringBuilder("# written by skein-broker --pod from the pod's ConfigMap and environment\n");
        new TreeMap<>(props).forEach((k, v) -> {
            Properties one = new Properties();
            one.setProperty(k, v);
            java.io.StringWriter w = new java.io.StringWriter();
            try {
                one.store(w, null);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            w.toString().lines().filter(l -> !l.startsWith("#")).forEach(l -> out.append(l).append('\n'));
        });
        return out.toString();
    }
}
