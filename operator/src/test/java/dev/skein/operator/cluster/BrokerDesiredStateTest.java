package dev.skein.operator.cluster;

import dev.skein.operator.kafka.SkeinClusterBootstrapResolver;
import dev.skein.operator.model.SkeinCluster;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.utils.Serialization;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.StringReader;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

/** The desired Kubernetes objects of a SkeinCluster, built as pure functions of its spec. */
class BrokerDesiredStateTest {

    private static SkeinCluster cluster(String spec) {
        SkeinCluster c = Serialization.unmarshal("""
                apiVersion: skein.dev/v1alpha1
                kind: SkeinCluster
                metadata: {name: main, namespace: shop, uid: 0b5e0000-0000-4000-8000-000000000001}
                spec:
                """ + spec.indent(2), SkeinCluster.class);
        assertThat(c.getSpec()).isNotNull();
        return c;
    }

    private static Properties node(ConfigMap configMap, int node) throws IOException {
        Properties p = new Properties();
        p.load(new StringReader(configMap.getData().get("node-" + node + ".properties")));
        return p;
    }

    @Test
    void configMapHasOneFilePerBrokerWithTheKeysTheOperatorOwnsAndTheSpecDefaults() throws IOException {
        ConfigMap cm = BrokerConfigMap.desired(cluster("""
                brokers: 3
                config: {num.partitions: "6", min.insync.replicas: "2"}
                """));

        assertThat(cm.getMetadata().getName()).isEqualTo("main-config");
        assertThat(cm.getData()).containsOnlyKeys("node-0.properties", "node-1.properties", "node-2.properties");
        Properties p = node(cm, 1);
        assertThat(p).containsEntry("node.id", "1")
                .containsEntry("process.roles", "broker,controller")
                .containsEntry("controller.quorum.voters", "0@main-broker-0.main-brokers.shop.svc:9093,"
                        + "1@main-broker-1.main-brokers.shop.svc:9093,2@main-broker-2.main-brokers.shop.svc:9093")
                .containsEntry("listeners", "PLAINTEXT://:9092,CONTROLLER://:9093")
                .containsEntry("advertised.listeners", "PLAINTEXT://main-broker-1.main-brokers.shop.svc:9092")
                .containsEntry("log.dirs", "/var/lib/skein/data")
                .containsEntry("skein.http.port", "8080")
                .containsEntry("num.partitions", "6")
                .containsEntry("min.insync.replicas", "2")
                .containsEntry("offsets.topic.replication.factor", "3");
    }

    @Test
    void withRackAwarenessEachBrokerReadsItsRackFromItsPodsCopyOfTheNodeLabelAndBrokersSpreadOverRacks()
            throws IOException {
        SkeinCluster c = cluster("""
                brokers: 3
                rack: {topologyKey: topology.kubernetes.io/zone}
                config: {config.providers: file, config.providers.file.class: org.apache.kafka.common.config.provider.FileConfigProvider}
                """);
        Properties p = node(BrokerConfigMap.desired(c), 2);
        assertThat(p).containsEntry("broker.rack", "${env:SKEIN_RACK}")
                .containsEntry("config.providers", "file,env")
                .containsEntry("config.providers.env.class", "org.apache.kafka.common.config.provider.EnvVarConfigProvider")
                .containsEntry("config.providers.file.class", "org.apache.kafka.common.config.provider.FileConfigProvider");

        StatefulSet sts = BrokerStatefulSet.desired(c);
        assertThat(sts.getSpec().getTemplate().getSpec().getContainers().getFirst().getEnv())
                .anySatisfy(e -> {
                    assertThat(e.getName()).isEqualTo("SKEIN_RACK");
                    assertThat(e.getValueFrom().getFieldRef().getFieldPath())
                            .isEqualTo("metadata.labels['topology.kubernetes.io/zone']");
                });
        assertThat(sts.getSpec().getTemplate().getSpec().getTopologySpreadConstraints()).singleElement().satisfies(t -> {
            assertThat(t.getTopologyKey()).isEqualTo("topology.kubernetes.io/zone");
            assertThat(t.getMaxSkew()).isEqualTo(1);
            assertThat(t.getWhenUnsatisfiable()).isEqualTo("ScheduleAnyway");
            assertThat(t.getLabelSelector().getMatchLabels()).isEqualTo(new ClusterNames(c).selector());
        });
        // a rack makes every broker's config differ: turning it on rolls the brokers
        assertThat(BrokerConfigMap.sharedConfigHash(c)).isNotEqualTo(BrokerConfigMap.sharedConfigHash(cluster("brokers: 3\n")));
    }

    @Test
    void withoutRackAwarenessNoRackIsSetAndNoSpreadIsAsked() throws IOException {
        SkeinCluster c = cluster("brokers: 3\n");
        assertThat(node(BrokerConfigMap.desired(c), 0)).doesNotContainKeys("broker.rack", "config.providers");
        assertThat(BrokerStatefulSet.desired(c).getSpec().getTemplate().getSpec().getTopologySpreadConstraints()).isNullOrEmpty();
        assertThat(BrokerStatefulSet.desired(c).getSpec().getTemplate().getSpec().getContainers().getFirst().getEnv())
                .noneSatisfy(e -> assertThat(e.getName()).isEqualTo("SKEIN_RACK"));
    }

    @Test
    void brokersBeyondTheControllerVotersRunTheBrokerRoleOnly() throws IOException {
        ConfigMap cm = BrokerConfigMap.desired(cluster("brokers: 5\ncontrollerVoters: 3\n"));

        assertThat(node(cm, 2)).containsEntry("process.roles", "broker,controller");
        assertThat(node(cm, 3)).containsEntry("process.roles", "broker")
                .containsEntry("listeners", "PLAINTEXT://:9092");
        assertThat(node(cm, 4).getProperty("controller.quorum.voters")).isEqualTo(node(cm, 0).getProperty("controller.quorum.voters"));
    }

    @Test
    void oneOrTwoBrokersHaveOneVoterAndThreeOrMoreHaveThree() {
        assertThat(BrokerConfigMap.controllerVoters(cluster("brokers: 2\n").getSpec())).isEqualTo(1);
        assertThat(BrokerConfigMap.controllerVoters(cluster("brokers: 7\n").getSpec())).isEqualTo(3);
        assertThat(BrokerConfigMap.controllerVoters(cluster("brokers: 7\ncontrollerVoters: 5\n").getSpec())).isEqualTo(5);
    }

    @Test
    void sameSpecGivesIdenticalObjects() {
        String spec = "brokers: 3\nconfig: {log.retention.ms: \"1000\", num.partitions: \"3\"}\nstorage: {size: 1Gi}\n";

        assertThat(BrokerConfigMap.desired(cluster(spec))).isEqualTo(BrokerConfigMap.desired(cluster(spec)));
        assertThat(BrokerStatefulSet.desired(cluster(spec))).isEqualTo(BrokerStatefulSet.desired(cluster(spec)));
    }

    @Test
    void scalingUpLeavesTheConfigOfExistingBrokersUnchangedButAConfigChangeTouchesEveryBroker() {
        Map<Integer, String> three = BrokerConfigMap.hashes(BrokerConfigMap.desired(cluster("brokers: 3\n")));
        Map<Integer, String> four = BrokerConfigMap.hashes(BrokerConfigMap.desired(cluster("brokers: 4\n")));
        Map<Integer, String> changed = BrokerConfigMap.hashes(BrokerConfigMap.desired(
                cluster("brokers: 3\nconfig: {log.retention.ms: \"1000\"}\n")));

        assertThat(four).containsAllEntriesOf(three).containsKey(3);
        for (int node = 0; node < 3; node++) {
            assertThat(changed.get(node)).as("node %d", node).isNotEqualTo(three.get(node));
        }
    }

    @Test
    void podTemplateCarriesTheSharedConfigHashSoOnlyAConfigChangeRollsTheBrokers() {
        String three = annotation(BrokerStatefulSet.desired(cluster("brokers: 3\n")));
        String four = annotation(BrokerStatefulSet.desired(cluster("brokers: 4\n")));
        String changed = annotation(BrokerStatefulSet.desired(cluster("brokers: 3\nconfig: {log.retention.ms: \"1\"}\n")));

        assertThat(three).hasSize(16).isEqualTo(four).isNotEqualTo(changed);
    }

    private static String annotation(StatefulSet sts) {
        return sts.getSpec().getTemplate().getMetadata().getAnnotations().get(ClusterNames.CONFIG_HASH_ANNOTATION);
    }

    @Test
    void valuesWithSeparatorsAndSpacesSurviveTheRoundTripThroughJavaProperties() throws IOException {
        Map<String, String> tricky = Map.of("a.b", "x=y:z w", "c", " leading space", "d", "#not a comment", "e", "");

        Properties p = new Properties();
        p.load(new StringReader(BrokerConfigMap.render(new java.util.TreeMap<>(tricky))));

        assertThat(p).containsExactlyInAnyOrderEntriesOf(tricky);
    }

    @Test
    void statefulSetStartsBrokersInParallelAndLeavesRollingToTheOperator() {
        StatefulSet sts = BrokerStatefulSet.desired(cluster("""
                brokers: 3
                image: skein/broker:1.2.3
                jvmOptions: [-Xmx1g, -XX:+UseZGC]
                storage: {size: 20Gi, storageClassName: fast, deleteClaim: true}
                template:
                  nodeSelector: {disk: ssd}
                  tolerations: [{key: dedicated, operator: Equal, value: skein, effect: NoSchedule}]
                  priorityClassName: high
                """));

        assertThat(sts.getMetadata().getName()).isEqualTo("main-broker");
        assertThat(sts.getSpec().getReplicas()).isEqualTo(3);
        assertThat(sts.getSpec().getServiceName()).isEqualTo("main-brokers");
        assertThat(sts.getSpec().getPodManagementPolicy()).isEqualTo("Parallel");
        assertThat(sts.getSpec().getUpdateStrategy().getType()).isEqualTo("OnDelete");
        assertThat(sts.getSpec().getPersistentVolumeClaimRetentionPolicy().getWhenDeleted()).isEqualTo("Delete");
        assertThat(sts.getSpec().getVolumeClaimTemplates()).singleElement().satisfies(pvc -> {
            assertThat(pvc.getSpec().getStorageClassName()).isEqualTo("fast");
            assertThat(pvc.getSpec().getResources().getRequests().get("storage").toString()).isEqualTo("20Gi");
        });
        var pod = sts.getSpec().getTemplate();
        assertThat(pod.getMetadata().getLabels()).containsAllEntriesOf(sts.getSpec().getSelector().getMatchLabels());
        assertThat(pod.getSpec().getNodeSelector()).containsEntry("disk", "ssd");
        assertThat(pod.getSpec().getTolerations()).singleElement().satisfies(t -> assertThat(t.getKey()).isEqualTo("dedicated"));
        assertThat(pod.getSpec().getPriorityClassName()).isEqualTo("high");
        Container broker = pod.getSpec().getContainers().get(0);
        assertThat(broker.getImage()).isEqualTo("skein/broker:1.2.3");
        assertThat(broker.getArgs()).containsExactly("/etc/skein/node-$(SKEIN_NODE_ID).properties");
        assertThat(broker.getEnv()).anySatisfy(e -> {
            assertThat(e.getName()).isEqualTo("SKEIN_NODE_ID");
            assertThat(e.getValueFrom().getFieldRef().getFieldPath())
                    .isEqualTo("metadata.labels['apps.kubernetes.io/pod-index']");
        });
        assertThat(broker.getEnv()).anySatisfy(e -> assertThat(e.getName() + "=" + e.getValue())
                .isEqualTo("JAVA_TOOL_OPTIONS=-Xmx1g -XX:+UseZGC"));
        assertThat(broker.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/readyz");
        assertThat(sts.getMetadata().getOwnerReferences()).singleElement().satisfies(o -> {
            assertThat(o.getKind()).isEqualTo("SkeinCluster");
            assertThat(o.getUid()).isEqualTo("0b5e0000-0000-4000-8000-000000000001");
            assertThat(o.getController()).isTrue();
        });
    }

    @Test
    void clusterWithoutStorageKeepsDataInAnEmptyDirAndRetainsNothing() {
        StatefulSet sts = BrokerStatefulSet.desired(cluster("brokers: 1\n"));

        assertThat(sts.getSpec().getVolumeClaimTemplates()).isEmpty();
        assertThat(sts.getSpec().getTemplate().getSpec().getVolumes())
                .anySatisfy(v -> assertThat(v.getEmptyDir()).isNotNull());
        assertThat(sts.getSpec().getTemplate().getSpec().getContainers().get(0).getImage()).isEqualTo("skein/broker");
    }

    @Test
    void servicesSelectTheBrokerPodsAndTheHeadlessOnePublishesNotReadyBrokers() {
        SkeinCluster c = cluster("brokers: 3\n");
        Service headless = BrokerServices.headless(c);
        Service bootstrap = BrokerServices.bootstrap(c);
        var podLabels = BrokerStatefulSet.desired(c).getSpec().getTemplate().getMetadata().getLabels();

        assertThat(headless.getSpec().getClusterIP()).isEqualTo("None");
        assertThat(headless.getSpec().getPublishNotReadyAddresses()).isTrue();
        assertThat(podLabels).containsAllEntriesOf(headless.getSpec().getSelector())
                .containsAllEntriesOf(bootstrap.getSpec().getSelector());
        assertThat(bootstrap.getSpec().getPorts()).singleElement().satisfies(p -> assertThat(p.getPort()).isEqualTo(9092));
        assertThat(new ClusterNames(c).bootstrapServers())
                .isEqualTo(SkeinClusterBootstrapResolver.serviceBootstrap("shop", "main"))
                .isEqualTo(bootstrap.getMetadata().getName() + ".shop.svc:9092");
    }

    @Test
    void disruptionBudgetAllowsOneBrokerDownByDefault() {
        PodDisruptionBudget pdb = BrokerPodDisruptionBudget.desired(cluster("brokers: 3\n"));
        PodDisruptionBudget two = BrokerPodDisruptionBudget.desired(cluster("brokers: 5\npodDisruptionBudget: {maxUnavailable: 2}\n"));

        assertThat(pdb.getSpec().getMaxUnavailable().getIntVal()).isEqualTo(1);
        assertThat(two.getSpec().getMaxUnavailable().getIntVal()).isEqualTo(2);
        assertThat(pdb.getSpec().getSelector().getMatchLabels()).containsEntry("skein.dev/cluster", "main");
    }
}
