package dev.skein.operator.cluster;

import dev.skein.operator.model.SkeinCluster;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Names, labels, ports and paths of the Kubernetes objects of one SkeinCluster, in one place so
 * every object, the broker configs and the operator's own clients agree on them.
 */
public final class ClusterNames {
    public static final String DEFAULT_IMAGE = "skein/broker";
    public static final int CLIENT_PORT = 9092;
    public static final int CONTROLLER_PORT = 9093;
    public static final int HTTP_PORT = 8080;
    public static final String DATA_DIR = "/var/lib/skein";
    public static final String CONFIG_DIR = "/etc/skein";
    /** Pod template annotation: hash of the broker config all brokers share (a change rolls them). */
    public static final String CONFIG_HASH_ANNOTATION = "skein.dev/config-hash";
    public static final String CLUSTER_LABEL = "skein.dev/cluster";

    private final String cluster;
    private final String namespace;

    public ClusterNames(SkeinCluster cluster) {
        this(cluster.getMetadata().getName(), cluster.getMetadata().getNamespace());
    }

    public ClusterNames(String cluster, String namespace) {
        this.cluster = cluster;
        this.namespace = namespace;
    }

    public String cluster() {
        return cluster;
    }

    public String namespace() {
        return namespace;
    }

    public String statefulSet() {
        return cluster + "-broker";
    }

    public String pod(int nodeId) {
        return statefulSet() + "-" + nodeId;
    }

    public String headlessService() {
        return cluster + "-brokers";
    }

    public String bootstrapService() {
        return cluster + "-bootstrap";
    }

    public String configMap() {
        return cluster + "-config";
    }

    public String podDisruptionBudget() {
        return cluster + "-brokers";
    }

    public String serviceAccount() {
        return cluster + "-broker";
    }

    /** The stable DNS name of a broker pod through the headless Service. */
    public String podHost(int nodeId) {
        return pod(nodeId) + "." + headlessService() + "." + namespace + ".svc";
    }

    /** Bootstrap servers for clients inside the Kubernetes cluster. */
    public String bootstrapServers() {
        return bootstrapService() + "." + namespace + ".svc:" + CLIENT_PORT;
    }

    /** The labels every object of the cluster carries; the first two also select its broker pods. */
    public Map<String, String> labels() {
        Map<String, String> labels = new LinkedHashMap<>(selector());
        labels.put("app.kubernetes.io/managed-by", "skein-operator");
        labels.put("app.kubernetes.io/part-of", "skein");
        return labels;
    }

    /** The labels that select the cluster's broker pods. */
    public Map<String, String> selector() {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put("app.kubernetes.io/name", "skein-broker");
        labels.put("app.kubernetes.io/instance", cluster);
        labels.put(CLUSTER_LABEL, cluster);
        return labels;
    }

    /** Metadata of an owned object: name, namespace, labels, and the SkeinCluster as controlling owner. */
    public ObjectMeta metadata(String name, SkeinCluster owner) {
        return new ObjectMetaBuilder().withName(name).withNamespace(namespace).withLabels(labels())
                .withOwnerReferences(owner(owner)).build();
    }

    static OwnerReference owner(SkeinCluster owner) {
        return new OwnerReferenceBuilder().withApiVersion(owner.getApiVersion()).withKind(owner.getKind())
                .withName(owner.getMetadata().getName()).withUid(owner.getMetadata().getUid())
                .withController(true).withBlockOwnerDeletion(true).build();
    }
}
