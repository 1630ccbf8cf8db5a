package dev.skein.operator.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;

/** A broker's persistent volume claim. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class StorageSpec {
    @Required
    @Pattern("^[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P)?$")
    @JsonPropertyDescription("Size of each broker's volume, a Kubernetes quantity such as 100Gi.")
    private String size;

    @JsonPropertyDescription("StorageClass of the claims; unset: the cluster's default class.")
    private String storageClassName;

    @Default("false")
    @JsonPropertyDescription("Delete the brokers' claims (and so their data) when the SkeinCluster is deleted. "
            + "Default false: the claims stay.")
    private boolean deleteClaim;

    public String getSize() {
        return size;
    }

    public void setSize(String size) {
        this.size = size;
    }

    public String getStorageClassName() {
        return storageClassName;
    }

    public void setStorageClassName(String storageClassName) {
        this.storageClassName = storageClassName;
    }

    public boolean isDeleteClaim() {
        return deleteClaim;
    }

    public void setDeleteClaim(boolean deleteClaim) {
        this.deleteClaim = deleteClaim;
    }
}
