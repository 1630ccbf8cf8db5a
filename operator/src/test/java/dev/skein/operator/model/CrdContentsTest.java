package dev.skein.operator.model;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.api.model.apiextensions.v1.ValidationRule;
import io.fabric8.kubernetes.client.utils.Serialization;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** What users see of the generated CRDs: names, columns, status subresource, descriptions, CEL rules. */
class CrdContentsTest {

    private static CustomResourceDefinitionVersion crd(String plural) throws IOException {
        Path file = Path.of(System.getProperty("skein.crds.generated"), plural + ".skein.dev-v1.yml");
        try (InputStream in = Files.newInputStream(file)) {
            CustomResourceDefinition crd = Serialization.unmarshal(in, CustomResourceDefinition.class);
            assertThat(crd.getSpec().getGroup()).isEqualTo("skein.dev");
            assertThat(crd.getSpec().getNames().getCategories()).containsExactly("skein");
            assertThat(crd.getSpec().getScope()).isEqualTo("Namespaced");
            assertThat(crd.getSpec().getVersions()).hasSize(1);
            return crd.getSpec().getVersions().get(0);
        }
    }

    private static JSONSchemaProps spec(CustomResourceDefinitionVersion v) {
        return v.getSchema().getOpenAPIV3Schema().getProperties().get("spec");
    }

    @Test
    void everyKindIsV1alpha1WithAStatusSubresourceAndShortName() throws IOException {
        for (String plural : new String[]{"skeinclusters", "skeintopics", "skeinconsumergroups"}) {
            CustomResourceDefinitionVersion v = crd(plural);
            assertThat(v.getName()).isEqualTo("v1alpha1");
            assertThat(v.getSubresources().getStatus()).as(plural + " status subresource").isNotNull();
            assertThat(v.getSchema().getOpenAPIV3Schema().getDescription()).as(plural + " description").isNotBlank();
            assertThat(v.getAdditionalPrinterColumns()).extracting(c -> c.getName()).contains("Age");
        }
    }

    @Test
    void everySpecFieldHasADescriptionForKubectlExplain() throws IOException {
        for (String plural : new String[]{"skeinclusters", "skeintopics", "skeinconsumergroups"}) {
            spec(crd(plural)).getProperties().forEach((name, field) ->
                    assertThat(field.getDescription()).as(plural + " spec." + name).isNotBlank());
        }
    }

    @Test
    void topicSchemaBoundsCountsAndCarriesTheCelRules() throws IOException {
        JSONSchemaProps spec = spec(crd("skeintopics"));

        assertThat(spec.getRequired()).containsExactlyInAnyOrder("cluster", "partitions", "replicationFactor");
        assertThat(spec.getProperties().get("partitions").getMinimum()).isEqualTo(1.0);
        assertThat(spec.getProperties().get("deletionPolicy").getEnum()).hasSize(2);
        assertThat(spec.getXKubernetesValidations()).extracting(ValidationRule::getRule).contains(
                "!has(self.minInSyncReplicas) || self.minInSyncReplicas <= self.replicationFactor");
        assertThat(spec.getProperties().get("cluster").getXKubernetesValidations()).extracting(ValidationRule::getRule)
                .containsExactly("self == oldSelf");
    }

    @Test
    void clusterSchemaRequiresAtLeastOneBroker() throws IOException {
        JSONSchemaProps spec = spec(crd("skeinclusters"));

        assertThat(spec.getRequired()).contains("brokers");
        assertThat(spec.getProperties().get("brokers").getMinimum()).isEqualTo(1.0);
        assertThat(spec.getXKubernetesValidations()).extracting(ValidationRule::getMessage)
                .contains("spec.controllerVoters must not exceed spec.brokers");
    }
}
