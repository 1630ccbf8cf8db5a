package dev.skein.operator.cluster;

import dev.skein.operator.model.BrokerStatus;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The cluster's replication health for its status, from the partitions' replicas and ISRs: how
 * many partitions are under-replicated, how many are offline (no in-sync replica, so no leader with
 * unclean election off), and per broker whether it is in the ISR of every partition it hosts.
 */
public record ClusterHealth(int underReplicatedPartitions, int offlinePartitions, List<BrokerStatus> brokers) {

    /**
     * @param pods node id → (pod name, Kubernetes node) of the brokers that have a pod
     */
    public static ClusterHealth of(int brokerCount, List<PartitionReplicas> partitions,
                                   Map<Integer, Map.Entry<String, String>> pods) {
        return of(brokerCount, partitions, pods, Map.of());
    }

    /**
     * @param pods         node id → (pod name, Kubernetes node) of the brokers that have a pod
     * @param incarnations node id → directory id (incarnation) of the brokers the cluster reports one for
     */
    public static ClusterHealth of(int brokerCount, List<PartitionReplicas> partitions,
                                   Map<Integer, Map.Entry<String, String>> pods, Map<Integer, String> incarnations) {
        int under = 0;
        int offline = 0;
        for (PartitionReplicas p : partitions) {
            if (p.isr().size() < p.replicas().size()) {
                under++;
            }
            if (p.isr().isEmpty()) {
                offline++;
            }
        }
        List<BrokerStatus> brokers = new ArrayList<>();
        for (int id = 0; id < brokerCount; id++) {
            int node = id;
            BrokerStatus b = new BrokerStatus();
            b.setNodeId(id);
            Map.Entry<String, String> pod = pods.get(id);
            if (pod != null) {
                b.setPod(pod.getKey());
                b.setNode(pod.getValue());
            }
            b.setIncarnation(incarnations.get(id));
            b.setInAllIsrs(partitions.stream().filter(p -> p.replicas().contains(node))
                    .allMatch(p -> p.isr().contains(node)));
            brokers.add(b);
        }
        return new ClusterHealth(under, offline, brokers);
    }
}
