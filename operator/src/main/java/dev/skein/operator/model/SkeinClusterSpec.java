package dev.skein.operator.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.ResourceRequirements;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The desired state of a {@link SkeinCluster}. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "!has(self.controllerVoters) || self.controllerVoters <= self.brokers",
        message = "spec.controllerVoters must not exceed spec.brokers", fieldPath = ".controllerVoters",
        reason = "FieldValueInvalid")
@ValidationRule(value = "!has(self.config) || !('default.replication.factor' in self.config) "
        + "|| int(self.config['default.replication.factor']) <= self.brokers",
        message = "spec.config default.replication.factor must not exceed spec.brokers", fieldPath = ".config",
        reason = "FieldValueInvalid")
@ValidationRule(value = "!has(self.config) || !('min.insync.replicas' in self.config) "
        + "|| int(self.config['min.insync.replicas']) <= self.brokers",
        message = "spec.config min.insync.replicas must not exceed spec.brokers", fieldPath = ".config",
        reason = "FieldValueInvalid")
public class SkeinClusterSpec {
    @Required
    @Min(1)
    @Max(200)
    @JsonPropertyDescription("Number of brokers (node ids 0..brokers-1, the StatefulSet ordinals). Scaling down "
            + "first moves partitions off the departing brokers.")
    private Integer brokers;

    @Size(min = 1)
    @JsonPropertyDescription("Broker container image; defaults to skein/broker.")
    private String image;

    @JsonPropertyDescription("Each broker's persistent volume.")
    private StorageSpec storage;

    @JsonPropertyDescription("CPU and memory requests and limits of each broker container.")
    private ResourceRequirements resources;

    @JsonPropertyDescription("Extra JVM options of the broker (for example -Xmx2g).")
    @Size(max = 64)
    private List<String> jvmOptions = new ArrayList<>();

    @JsonPropertyDescription("Broker configuration defaults by their Kafka names (num.partitions, "
            + "default.replication.factor, min.insync.replicas, log.retention.ms, ...). Node id, listeners, "
            + "log dirs and controller voters are set by the operator.")
    @ValidationRule(value = "self.all(k, !(k in ['node.id', 'broker.id', 'listeners', 'advertised.listeners', "
            + "'log.dirs', 'controller.quorum.voters', 'process.roles']))",
            message = "spec.config must not set node.id, broker.id, listeners, advertised.listeners, log.dirs, "
                    + "controller.quorum.voters or process.roles: the operator sets them")
    @ValidationRule(value = "!('broker.rack' in self)",
            message = "spec.config must not set broker.rack: set spec.rack.topologyKey, and each broker gets its node's value")
    @Size(max = 256)
    private Map<String, String> config = new LinkedHashMap<>();

    @Min(1)
    @Max(9)
    @ValidationRule(value = "self % 2 == 1", message = "spec.controllerVoters must be odd (1, 3, 5, ...)")
    @JsonPropertyDescription("How many brokers (the lowest ordinals) are also controller quorum voters; odd, at "
            + "most brokers. Defaults to 3, or 1 for a cluster of fewer than three brokers.")
    private Integer controllerVoters;

    @JsonPropertyDescription("Client listeners besides the internal one the brokers replicate on.")
    @ValidationRule(value = "self.all(l, self.exists_one(m, m.name == l.name))",
            message = "spec.listeners names must be unique")
    @ValidationRule(value = "self.all(l, self.exists_one(m, m.port == l.port))",
            message = "spec.listeners ports must be unique")
    @Size(max = 8)
    private List<ListenerSpec> listeners = new ArrayList<>();

    @JsonPropertyDescription("Rack awareness: replicas of a partition spread over the values of this node label.")
    private RackSpec rack;

    @Min(0)
    @JsonPropertyDescription("Replication throttle (bytes/s, leader and follower) the operator sets while a "
            + "replaced or added broker catches up, and removes when every ISR is full. 0: unthrottled.")
    private Long replicationThrottleBytesPerSecond;

    @JsonPropertyDescription("Automatic replacement of a broker whose node is lost.")
    private NodeLossSpec nodeLoss;

    @JsonPropertyDescription("Scheduling of the broker pods: affinity, tolerations, node selector, priority class.")
    private PodTemplateSpec template;

    @JsonPropertyDescription("The PodDisruptionBudget of the brokers.")
    private PodDisruptionBudgetSpec podDisruptionBudget;

    public Integer getBrokers() {
        return brokers;
    }

    public void setBrokers(Integer brokers) {
        this.brokers = brokers;
    }

    public String getImage() {
        return image;
    }

    public void setImage(String image) {
        this.image = image;
    }

    public StorageSpec getStorage() {
        return storage;
    }

    public void setStorage(StorageSpec storage) {
        this.storage = storage;
    }

    public ResourceRequirements getResources() {
        return resources;
    }

    public void setResources(ResourceRequirements resources) {
        this.resources = resources;
    }

    public List<String> getJvmOptions() {
        return jvmOptions;
    }

    public void setJvmOptions(List<String> jvmOptions) {
        this.jvmOptions = jvmOptions;
    }

    public Map<String, String> getConfig() {
        return config;
    }

    public void setConfig(Map<String, String> config) {
        this.config = config;
    }

    public Integer getControllerVoters() {
        return controllerVoters;
    }

    public void setControllerVoters(Integer controllerVoters) {
        this.controllerVoters = controllerVoters;
    }

    public List<ListenerSpec> getListeners() {
        return listeners;
    }

    public void setListeners(List<ListenerSpec> listeners) {
        this.listeners = listeners;
    }

    public RackSpec getRack() {
        return rack;
    }

    public void setRack(RackSpec rack) {
        this.rack = rack;
    }

    public Long getReplicationThrottleBytesPerSecond() {
        return replicationThrottleBytesPerSecond;
    }

    public void setReplicationThrottleBytesPerSecond(Long replicationThrottleBytesPerSecond) {
        this.replicationThrottleBytesPerSecond = replicationThrottleBytesPerSecond;
    }

    public NodeLossSpec getNodeLoss() {
        return nodeLoss;
    }

    public void setNodeLoss(NodeLossSpec nodeLoss) {
        this.nodeLoss = nodeLoss;
    }

    public PodTemplateSpec getTemplate() {
        return template;
    }

    public void setTemplate(PodTemplateSpec template) {
        this.template = template;
    }

    public PodDisruptionBudgetSpec getPodDisruptionBudget() {
        return podDisruptionBudget;
    }

    public void setPodDisruptionBudget(PodDisruptionBudgetSpec podDisruptionBudget) {
        this.podDisruptionBudget = podDisruptionBudget;
    }
}
