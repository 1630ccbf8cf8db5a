package dev.skein.operator.model;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Categories;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/** A Skein cluster: its brokers as one StatefulSet, their Services, config and disruption budget. */
@Group(SkeinTopic.GROUP)
@Version(SkeinTopic.VERSION)
@ShortNames("skc")
@Categories("skein")
@JsonClassDescription("A Skein cluster: N brokers (a StatefulSet, one pod per broker), their per-broker and "
        + "bootstrap Services, broker configuration, storage, rolling updates and automatic broker replacement.")
@AdditionalPrinterColumn(name = "Brokers", jsonPath = ".spec.brokers", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "Ready Brokers", jsonPath = ".status.readyBrokers", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "Ready", jsonPath = ".status.conditions[?(@.type==\"Ready\")].status",
        type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Under-replicated", jsonPath = ".status.underReplicatedPartitions",
        type = AdditionalPrinterColumn.Type.INTEGER, priority = 1)
@AdditionalPrinterColumn(name = "Bootstrap", jsonPath = ".status.bootstrapServers",
        type = AdditionalPrinterColumn.Type.STRING, priority = 1)
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = AdditionalPrinterColumn.Type.DATE)
public class SkeinCluster extends CustomResource<SkeinClusterSpec, SkeinClusterStatus> implements Namespaced {
}
