package dev.skein.operator.model;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Categories;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/** A consumer group of a Skein cluster: its lag as status, and declarative offset resets. */
@Group(SkeinTopic.GROUP)
@Version(SkeinTopic.VERSION)
@ShortNames("skcg")
@Categories("skein")
@JsonClassDescription("A consumer group of a SkeinCluster in the same namespace: shows its state, members and "
        + "lag, and applies a declarative offset reset once per change while the group has no active members.")
@AdditionalPrinterColumn(name = "Cluster", jsonPath = ".spec.cluster", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Group", jsonPath = ".status.groupId", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "State", jsonPath = ".status.state", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Members", jsonPath = ".status.members", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "Lag", jsonPath = ".status.totalLag", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = AdditionalPrinterColumn.Type.DATE)
public class SkeinConsumerGroup extends CustomResource<SkeinConsumerGroupSpec, SkeinConsumerGroupStatus>
        implements Namespaced {

    /** The Kafka group id: {@code spec.groupId}, or the resource's name when unset. */
    public String groupId() {
        String id = getSpec() == null ? null : getSpec().getGroupId();
        return id == null || id.isEmpty() ? getMetadata().getName() : id;
    }
}
