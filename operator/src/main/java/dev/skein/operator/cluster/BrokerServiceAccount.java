package dev.skein.operator.cluster;

import dev.skein.operator.model.SkeinCluster;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;

/** The brokers' own ServiceAccount: no API rights, and no token mounted (brokers never call the API server). */
public final class BrokerServiceAccount {
    private BrokerServiceAccount() {
    }

    public static ServiceAccount desired(SkeinCluster cluster) {
        ClusterNames names = new ClusterNames(cluster);
        return new ServiceAccountBuilder().withMetadata(names.metadata(names.serviceAccount(), cluster))
                .withAutomountServiceAccountToken(false).build();
    }
}
