package dev.skein.operator.cluster;

import dev.skein.operator.model.ListenerSpec;
import dev.skein.operator.model.PodTemplateSpec;
import dev.skein.operator.model.SkeinCluster;
import dev.skein.operator.model.SkeinClusterSpec;
import dev.skein.operator.model.StorageSpec;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraint;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraintBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The StatefulSet of a cluster's brokers. Pods start in parallel (the controller quorum needs a
 * majority up before any broker turns ready, which OrderedReady would never allow) and are never
 * replaced by the StatefulSet controller on a spec change ({@code OnDelete}): the operator rolls
 * them one at a time through {@link RollingUpdateGate}. A broker's node id is its pod ordinal, read
 * from the {@code apps.kubernetes.io/pod-index} label.
 *
 * <p>The pod template carries the hash of the configuration all brokers share
 * ({@link BrokerConfigMap#sharedConfigHash}): a config change makes a new StatefulSet revision, and
 * every pod whose {@code controller-revision-hash} is not the update revision is outdated until the
 * operator restarts it. Adding a broker changes no existing broker's config and restarts nobody.
 */
public final class BrokerStatefulSet {
    static final String DATA_VOLUME = "data";
    static final String CONFIG_VOLUME = "config";
    static final int TERMINATION_GRACE_SECONDS = 120;
    /** The broker's rack, from its pod's copy of the node's topology label (with {@code spec.rack}). */
    static final String RACK_ENV = "SKEIN_RACK";

    private BrokerStatefulSet() {
    }

    public static StatefulSet desired(SkeinCluster cluster) {
        ClusterNames names = new ClusterNames(cluster);
        SkeinClusterSpec spec = cluster.getSpec();
        PodTemplateSpec template = spec.getTemplate() == null ? new PodTemplateSpec() : spec.getTemplate();
        StorageSpec storage = spec.getStorage();
        List<Volume> volumes = new ArrayList<>(List.of(new VolumeBuilder().withName(CONFIG_VOLUME)
                .withNewConfigMap().withName(names.configMap()).endConfigMap().build()));
        List<PersistentVolumeClaim> claims = new ArrayList<>();
        if (storage == null) {
            // no storage in the spec: data lives as long as the pod (development clusters only)
            volumes.add(new VolumeBuilder().withName(DATA_VOLUME).withNewEmptyDir().endEmptyDir().build());
        } else {
            claims.add(new PersistentVolumeClaimBuilder()
                    .withNewMetadata().withName(DATA_VOLUME).withLabels(names.labels()).endMetadata()
                    .withNewSpec()
                    .withAccessModes("ReadWriteOnce")
                    .withStorageClassName(storage.getStorageClassName())
                    .withNewResources().withRequests(Map.of("storage", new Quantity(storage.getSize()))).endResources()
                    .endSpec().build());
        }
        return new StatefulSetBuilder()
                .withMetadata(names.metadata(names.statefulSet(), cluster))
                .withNewSpec()
                .withReplicas(spec.getBrokers())
                .withServiceName(names.headlessService())
                .withPodManagementPolicy("Parallel")
                .withNewUpdateStrategy().withType("OnDelete").endUpdateStrategy()
                .withNewSelector().withMatchLabels(names.selector()).endSelector()
                .withNewPersistentVolumeClaimRetentionPolicy()
                .withWhenDeleted(storage != null && storage.isDeleteClaim() ? "Delete" : "Retain")
                .withWhenScaled("Retain")
                .endPersistentVolumeClaimRetentionPolicy()
                .withNewTemplate()
                .withNewMetadata().withLabels(names.labels())
                .withAnnotations(Map.of(ClusterNames.CONFIG_HASH_ANNOTATION, BrokerConfigMap.sharedConfigHash(cluster)))
                .endMetadata()
                .withNewSpec()
                .withServiceAccountName(names.serviceAccount())
                .withTerminationGracePeriodSeconds((long) TERMINATION_GRACE_SECONDS)
                .withAffinity(template.getAffinity())
                .withTolerations(template.getTolerations())
                .withNodeSelector(template.getNodeSelector())
                .withTopologySpreadConstraints(spread(spec, names))
                .withPriorityClassName(template.getPriorityClassName())
                .withContainers(container(spec))
                .withVolumes(volumes)
                .endSpec()
                .endTemplate()
                .withVolumeClaimTemplates(claims)
                .endSpec().build();
    }

    /** A listener's container port name: lower case, '-' for '_', at most 15 characters as Kubernetes requires. */
    static String portName(ListenerSpec listener) {
        String name = listener.getName().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
        return name.length() > 15 ? name.substring(0, 15) : name;
    }

    /**
     * With rack awareness, brokers spread evenly over the rack label's values where the scheduler can
     * (never at the cost of not scheduling a broker): replicas can only be rack-aware over racks that
     * hold brokers.
     */
    private static List<TopologySpreadConstraint> spread(SkeinClusterSpec spec, ClusterNames names) {
        if (spec.getRack() == null) {
            return null;
        }
        return List.of(new TopologySpreadConstraintBuilder().withMaxSkew(1)
                .withTopologyKey(spec.getRack().getTopologyKey()).withWhenUnsatisfiable("ScheduleAnyway")
                .withNewLabelSelector().withMatchLabels(names.selector()).endLabelSelector().build());
    }

    private static Container container(SkeinClusterSpec spec) {
        List<EnvVar> env = new ArrayList<>();
        if (spec.getRack() != null) {
            env.add(new EnvVarBuilder().withName(RACK_ENV).withNewValueFrom().withNewFieldRef()
                    .withFieldPath("metadata.labels['" + spec.getRack().getTopologyKey() + "']").endFieldRef()
                    .endValueFrom().build());
        }
        env.add(new EnvVarBuilder().withName("SKEIN_NODE_ID").withNewValueFrom().withNewFieldRef()
                .withFieldPath("metadata.labels['apps.kubernetes.io/pod-index']").endFieldRef().endValueFrom().build());
        env.add(new EnvVarBuilder().withName("POD_NAME").withNewValueFrom().withNewFieldRef()
                .withFieldPath("metadata.name").endFieldRef().endValueFrom().build());
        if (spec.getJvmOptions() != null && !spec.getJvmOptions().isEmpty()) {
            env.add(new EnvVarBuilder().withName("JAVA_TOOL_OPTIONS").withValue(String.join(" ", spec.getJvmOptions()))
                    .build());
        }
        ContainerBuilder c = new ContainerBuilder()
                .withName("broker")
                .withImage(spec.getImage() == null ? ClusterNames.DEFAULT_IMAGE : spec.getImage())
                .withArgs(ClusterNames.CONFIG_DIR + "/node-$(SKEIN_NODE_ID).properties")
                .withEnv(env)
                .addNewPort().withName("kafka").withContainerPort(ClusterNames.CLIENT_PORT).endPort()
                .addNewPort().withName("controller").withContainerPort(ClusterNames.CONTROLLER_PORT).endPort()
                .addNewPort().withName("http").withContainerPort(ClusterNames.HTTP_PORT).endPort()
                .withNewReadinessProbe().withNewHttpGet().withPath("/readyz").withNewPort("http").endHttpGet()
                .withPeriodSeconds(5).withFailureThreshold(3).endReadinessProbe()
                .withNewLivenessProbe().withNewHttpGet().withPath("/healthz").withNewPort("http").endHttpGet()
                .withInitialDelaySeconds(60).withPeriodSeconds(10).withFailureThreshold(6).endLivenessProbe()
                .addNewVolumeMount().withName(DATA_VOLUME).withMountPath(ClusterNames.DATA_DIR).endVolumeMount()
                .addNewVolumeMount().withName(CONFIG_VOLUME).withMountPath(ClusterNames.CONFIG_DIR).withReadOnly(true)
                .endVolumeMount();
        if (spec.getResources() != null) {
            c.withResources(spec.getResources());
        }
        List<ListenerSpec> listeners = spec.getListeners() == null ? List.of() : spec.getListeners();
        listeners.forEach(l -> c.addNewPort().withName(portName(l)).withContainerPort(l.getPort()).endPort());
        return c.build();
    }
}
