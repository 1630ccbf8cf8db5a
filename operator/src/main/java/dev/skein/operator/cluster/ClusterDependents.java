package dev.skein.operator.cluster;

import dev.skein.operator.model.SkeinCluster;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;

/**
 * The Kubernetes objects a SkeinCluster owns, one JOSDK dependent resource per object. Each only
 * says what the object should be (the pure builders of this package); java-operator-sdk applies
 * it server-side, watches it, and leaves it alone when it already matches. The ConfigMap and the
 * StatefulSet are built for {@link EffectiveBrokers}: a scale down lowers them only when the
 * reconciler's scale-down step has emptied the departing brokers.
 */
public final class ClusterDependents {
    private ClusterDependents() {
    }

    public static final class ConfigMapDependent extends CRUDKubernetesDependentResource<ConfigMap, SkeinCluster> {
        public ConfigMapDependent() {
            super(ConfigMap.class);
        }

        @Override
        protected ConfigMap desired(SkeinCluster cluster, Context<SkeinCluster> context) {
            return BrokerConfigMap.desired(EffectiveBrokers.of(cluster, context));
        }
    }

    public static final class HeadlessServiceDependent extends CRUDKubernetesDependentResource<Service, SkeinCluster> {
        public HeadlessServiceDependent() {
            super(Service.class);
        }

        @Override
        protected Service desired(SkeinCluster cluster, Context<SkeinCluster> context) {
            return BrokerServices.headless(cluster);
        }
    }

    public static final class BootstrapServiceDependent extends CRUDKubernetesDependentResource<Service, SkeinCluster> {
        public BootstrapServiceDependent() {
            super(Service.class);
        }

        @Override
        protected Service desired(SkeinCluster cluster, Context<SkeinCluster> context) {
            return BrokerServices.bootstrap(cluster);
        }
    }

    public static final class ServiceAccountDependent
            extends CRUDKubernetesDependentResource<ServiceAccount, SkeinCluster> {
        public ServiceAccountDependent() {
            super(ServiceAccount.class);
        }

        @Override
        protected ServiceAccount desired(SkeinCluster cluster, Context<SkeinCluster> context) {
            return BrokerServiceAccount.desired(cluster);
        }
    }

    public static final class StatefulSetDependent extends CRUDKubernetesDependentResource<StatefulSet, SkeinCluster> {
        public StatefulSetDependent() {
            super(StatefulSet.class);
        }

        @Override
        protected StatefulSet desired(SkeinCluster cluster, Context<SkeinCluster> context) {
            return BrokerStatefulSet.desired(EffectiveBrokers.of(cluster, context));
        }
    }

    public static final class PodDisruptionBudgetDependent
            extends CRUDKubernetesDependentResource<PodDisruptionBudget, SkeinCluster> {
        public PodDisruptionBudgetDependent() {
            super(PodDisruptionBudget.class);
        }

        @Override
        protected PodDisruptionBudget desired(SkeinCluster cluster, Context<SkeinCluster> context) {
            return BrokerPodDisruptionBudget.desired(cluster);
        }
    }
}
