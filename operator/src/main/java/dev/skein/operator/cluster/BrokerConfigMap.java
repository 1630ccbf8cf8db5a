package dev.skein.operator.cluster;

import dev.skein.operator.model.ListenerSpec;
import dev.skein.operator.model.SkeinCluster;
import dev.skein.operator.model.SkeinClusterSpec;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The ConfigMap with one {@code node-<id>.properties} per broker: the spec's broker defaults plus
 * the keys the operator owns (node id, roles, listeners, voters, log dir). A broker starts with
 * {@code java -jar skein-broker.jar /etc/skein/node-$(SKEIN_NODE_ID).properties}, so the image
 * needs no logic of its own. Output is deterministic: the same spec gives byte-identical data.
 *
 * <p>The first {@code controllerVoters} node ids are controller voters ({@code broker,controller});
 * the others are brokers only.
 */
public final class BrokerConfigMap {
    private BrokerConfigMap() {
    }

    public static ConfigMap desired(SkeinCluster cluster) {
        ClusterNames names = new ClusterNames(cluster);
        Map<String, String> data = new TreeMap<>();
        for (int node = 0; node < cluster.getSpec().getBrokers(); node++) {
            data.put(fileName(node), render(nodeProperties(cluster.getSpec(), names, node)));
        }
        return new ConfigMapBuilder().withMetadata(names.metadata(names.configMap(), cluster)).withData(data).build();
    }

    public static String fileName(int nodeId) {
        return "node-" + nodeId + ".properties";
    }

    /** How many of the brokers are controller voters: the spec's count, else 3 (1 below three brokers). */
    public static int controllerVoters(SkeinClusterSpec spec) {
        if (spec.getControllerVoters() != null) {
            return spec.getControllerVoters();
        }
        return spec.getBrokers() >= 3 ? 3 : 1;
    }

    /** The properties of one broker, keys sorted. */
    static Map<String, String> nodeProperties(SkeinClusterSpec spec, ClusterNames names, int node) {
        Map<String, String> p = new TreeMap<>();
        p.put("offsets.topic.replication.factor", Integer.toString(Math.min(3, spec.getBrokers())));
        p.put("transaction.state.log.replication.factor", Integer.toString(Math.min(3, spec.getBrokers())));
        if (spec.getConfig() != null) {
            p.putAll(spec.getConfig());
        }
        int voters = controllerVoters(spec);
        boolean voter = node < voters;
        List<String> voterList = new ArrayList<>();
        for (int v = 0; v < voters; v++) {
            voterList.add(v + "@" + names.podHost(v) + ":" + ClusterNames.CONTROLLER_PORT);
        }
        List<String> listeners = new ArrayList<>(List.of("PLAINTEXT://:" + ClusterNames.CLIENT_PORT));
        List<String> advertised = new ArrayList<>(List.of(
                "PLAINTEXT://" + names.podHost(node) + ":" + ClusterNames.CLIENT_PORT));
        List<String> protocols = new ArrayList<>(List.of("PLAINTEXT:PLAINTEXT", "CONTROLLER:PLAINTEXT"));
        if (voter) {
            listeners.add("CONTROLLER://:" + ClusterNames.CONTROLLER_PORT);
        }
        for (ListenerSpec l : spec.getListeners() == null ? List.<ListenerSpec>of() : spec.getListeners()) {
            listeners.add(l.getName() + "://:" + l.getPort());
            advertised.add(l.getName() + "://" + names.podHost(node) + ":" + l.getPort());
            protocols.add(l.getName() + ":PLAINTEXT");
        }
        p.put("node.id", Integer.toString(node));
        p.put("process.roles", voter ? "broker,controller" : "broker");
        p.put("controller.quorum.voters", String.join(",", voterList));
        p.put("controller.listener.names", "CONTROLLER");
        p.put("inter.broker.listener.name", "PLAINTEXT");
        p.put("listeners", String.join(",", listeners));
        p.put("advertised.listeners", String.join(",", advertised));
        p.put("listener.security.protocol.map", String.join(",", protocols));
        if (spec.getRack() != null) {
            // the pod's environment carries its node's label (BrokerStatefulSet), read through Kafka's
            // env config provider; a provider list of the spec's own is kept
            String providers = p.getOrDefault("config.providers", "");
            if (Arrays.stream(providers.split(",")).map(String::strip).noneMatch("env"::equals)) {
                p.put("config.providers", providers.isBlank() ? "env" : providers + ",env");
            }
            p.putIfAbsent("config.providers.env.class", "org.apache.kafka.common.config.provider.EnvVarConfigProvider");
            p.put("broker.rack", "${env:" + BrokerStatefulSet.RACK_ENV + "}");
        }
        p.put("log.dirs", ClusterNames.DATA_DIR + "/data");
        p.put("skein.http.port", Integer.toString(ClusterNames.HTTP_PORT));
        return p;
    }

    /** key=value lines in key order, escaped as java.util.Properties reads them. */
    static String render(Map<String, String> properties) {
        StringBuilder out = new StringBuilder("# Generated by the Skein operator from the SkeinCluster spec.\n");
        properties.forEach((k, v) -> out.append(escape(k, true)).append('=').append(escape(v, false)).append('\n'));
        return out.toString();
    }

    private static String escape(String s, boolean key) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '=', ':', '#', '!' -> out.append(key || i == 0 ? "\\" + c : String.valueOf(c));
                case ' ' -> out.append(key || i == 0 ? "\\ " : " ");
                default -> out.append(c);
            }
        }
        return out.toString();
    }

    /**
     * A short hash of a broker's config file: stored on its pod, so the operator sees which brokers
     * run an outdated config and need a (gated) restart.
     */
    public static String hash(String configFile) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(configFile.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    /**
     * The hash of the configuration every existing broker shares: the properties of node 0 without
     * the keys that only name the node itself. It goes into the pod template, so a change of it
     * makes every pod outdated (a rolling restart), while adding a broker changes nothing for the
     * others.
     */
    public static String sharedConfigHash(SkeinCluster cluster) {
        Map<String, String> p = nodeProperties(cluster.getSpec(), new ClusterNames(cluster), 0);
        p.remove("node.id");
        p.remove("advertised.listeners");
        return hash(render(p));
    }

    /** The config hash of every broker of a desired ConfigMap, by node id. */
    public static Map<Integer, String> hashes(ConfigMap configMap) {
        Map<Integer, String> out = new LinkedHashMap<>();
        configMap.getData().forEach((file, text) -> out.put(
                Integer.parseInt(file.substring("node-".length(), file.length() - ".properties".length())), hash(text)));
        return out;
    }
}
