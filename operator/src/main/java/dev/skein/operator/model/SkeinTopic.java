package dev.skein.operator.model;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Categories;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/** A Kafka topic of a Skein cluster, kept one way from this resource's spec to the cluster. */
@Group(SkeinTopic.GROUP)
@Version(SkeinTopic.VERSION)
@ShortNames("skt")
@Categories("skein")
@JsonClassDescription("A topic of a SkeinCluster in the same namespace: partitions, replication factor, "
        + "min.insync.replicas and topic configs, applied one way from the spec to the cluster.")
@AdditionalPrinterColumn(name = "Cluster", jsonPath = ".spec.cluster", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Topic", jsonPath = ".status.topicName", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Partitions", jsonPath = ".spec.partitions", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "RF", jsonPath = ".spec.replicationFactor", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "Ready", jsonPath = ".status.conditions[?(@.type==\"Ready\")].status",
        type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Reason", jsonPath = ".status.conditions[?(@.type==\"Ready\")].reason",
        type = AdditionalPrinterColumn.Type.STRING, priority = 1)
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = AdditionalPrinterColumn.Type.DATE)
public class SkeinTopic extends CustomResource<SkeinTopicSpec, SkeinTopicStatus> implements Namespaced {
    public static final String GROUP = "skein.dev";
    public static final String VERSION = "v1alpha1";

    /** The Kafka topic name: {@code spec.topicName}, or the resource's name when unset. */
    public String topicName() {
        String name = getSpec() == null ? null : getSpec().getTopicName();
        return name == null || name.isEmpty() ? getMetadata().getName() : name;
    }
}
