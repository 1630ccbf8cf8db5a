package dev.skein.e2e.kubelet;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.DownwardAPIVolumeFile;
import io.fabric8.kubernetes.api.model.KeyToPath;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeProjection;
import io.fabric8.kubernetes.api.model.authentication.TokenRequest;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Materializes a pod's volumes as host directories that the container's private mount namespace
 * bind-mounts: emptyDir (a fresh directory per pod), configMap, secret, downwardAPI and projected
 * (service-account token through the TokenRequest API, configMap, secret, downward API) as files
 * written once at start, and persistentVolumeClaim as the local path of the bound PersistentVolume.
 * hostPath is passed through.
 *
 * <p>Throws {@link NotReady} while something a volume needs is missing (an unbound claim, a
 * ConfigMap not yet created), so the kubelet retries, as a real kubelet keeps the pod in
 * ContainerCreating.
 */
final class PodVolumes {

    /** A volume cannot be set up yet; the message says why. */
    static final class NotReady extends RuntimeException {
        NotReady(String message) {
            super(message);
        }
    }

    private final KubernetesClient client;

    PodVolumes(KubernetesClient client) {
        this.client = client;
    }

    /** Host directory of each volume of the pod, by volume name. */
    Map<String, Path> materialize(Pod pod, Path podDir, String podIp) {
        Map<String, Path> paths = new LinkedHashMap<>();
        if (pod.getSpec().getVolumes() == null) {
            return paths;
        }
        String ns = pod.getMetadata().getNamespace();
        for (Volume volume : pod.getSpec().getVolumes()) {
            Path dir = podDir.resolve("volumes").resolve(volume.getName());
            if (volume.getPersistentVolumeClaim() != null) {
                paths.put(volume.getName(), claimPath(ns, volume.getPersistentVolumeClaim().getClaimName()));
                continue;
            }
            if (volume.getHostPath() != null) {
                paths.put(volume.getName(), Path.of(volume.getHostPath().getPath()));
                continue;
            }
            Map<String, byte[]> files = new LinkedHashMap<>();
            if (volume.getConfigMap() != null) {
                files.putAll(select(configMapData(ns, volume.getConfigMap().getName(),
                        volume.getConfigMap().getOptional()), volume.getConfigMap().getItems()));
            } else if (volume.getSecret() != null) {
                files.putAll(select(secretData(ns, volume.getSecret().getSecretName(),
                        volume.getSecret().getOptional()), volume.getSecret().getItems()));
            } else if (volume.getDownwardAPI() != null) {
                files.putAll(downward(pod, volume.getDownwardAPI().getItems(), podIp));
            } else if (volume.getProjected() != null) {
                for (VolumeProjection source : volume.getProjected().getSources()) {
                    files.putAll(projection(pod, source, podIp));
                }
            } else if (volume.getEmptyDir() == null) {
                throw new IllegalStateException("volume " + volume.getName() + " has a type the process kubelet does not support");
            }
            write(dir, files);
            paths.put(volume.getName(), dir);
        }
        return paths;
    }

    private Path claimPath(String ns, String claim) {
        PersistentVolumeClaim pvc = client.persistentVolumeClaims().inNamespace(ns).withName(claim).get();
        if (pvc == null) {
            throw new NotReady("persistentvolumeclaim \"" + claim + "\" not found");
        }
        String pvName = pvc.getSpec().getVolumeName();
        if (pvName == null || pvc.getStatus() == null || !"Bound".equals(pvc.getStatus().getPhase())) {
            throw new NotReady("persistentvolumeclaim \"" + claim + "\" is not bound");
        }
        PersistentVolume pv = client.persistentVolumes().withName(pvName).get();
        if (pv == null) {
            throw new NotReady("persistentvolume \"" + pvName + "\" not found");
        }
        if (pv.getSpec().getLocal() != null) {
            return Path.of(pv.getSpec().getLocal().getPath());
        }
        if (pv.getSpec().getHostPath() != null) {
            return Path.of(pv.getSpec().getHostPath().getPath());
        }
        throw new IllegalStateException("persistentvolume " + pvName + " is neither local nor hostPath");
    }

    private Map<String, byte[]> projection(Pod pod, VolumeProjection source, String podIp) {
        String ns = pod.getMetadata().getNamespace();
        if (source.getServiceAccountToken() != null) {
            var token = source.getServiceAccountToken();
            String account = pod.getSpec().getServiceAccountName() == null ? "default" : pod.getSpec().getServiceAccountName();
            TokenRequestBuilder request = new TokenRequestBuilder().withNewSpec()
                    .withExpirationSeconds(token.getExpirationSeconds() == null ? 3600L : token.getExpirationSeconds())
                    .withNewBoundObjectRef().withApiVersion("v1").withKind("Pod").withName(pod.getMetadata().getName())
                    .withUid(pod.getMetadata().getUid()).endBoundObjectRef()
                    .endSpec();
            if (token.getAudience() != null) {
                request.editSpec().withAudiences(token.getAudience()).endSpec();
            }
            TokenRequest issued = client.serviceAccounts().inNamespace(ns).withName(account).tokenRequest(request.build());
            return Map.of(token.getPath(), issued.getStatus().getToken().getBytes(StandardCharsets.UTF_8));
        }
        if (source.getConfigMap() != null) {
            return select(configMapData(ns, source.getConfigMap().getName(), source.getConfigMap().getOptional()),
                    source.getConfigMap().getItems());
        }
        if (source.getSecret() != null) {
            return select(secretData(ns, source.getSecret().getName(), source.getSecret().getOptional()),
                    source.getSecret().getItems());
        }
        if (source.getDownwardAPI() != null) {
            return downward(pod, source.getDownwardAPI().getItems(), podIp);
        }
        return Map.of();
    }

    private Map<String, byte[]> downward(Pod pod, List<DownwardAPIVolumeFile> items, String podIp) {
        Map<String, byte[]> files = new LinkedHashMap<>();
        if (items == null) {
            return files;
        }
        for (DownwardAPIVolumeFile item : items) {
            if (item.getFieldRef() == null) {
                continue;
            }
            String value = switch (item.getFieldRef().getFieldPath()) {
                case "metadata.name" -> pod.getMetadata().getName();
                case "metadata.namespace" -> pod.getMetadata().getNamespace();
                case "metadata.uid" -> pod.getMetadata().getUid();
                case "status.podIP" -> podIp;
                case "spec.nodeName" -> pod.getSpec().getNodeName();
                default -> "";
            };
            files.put(item.getPath(), value.getBytes(StandardCharsets.UTF_8));
        }
        return files;
    }

    private Map<String, byte[]> configMapData(String ns, String name, Boolean optional) {
        ConfigMap cm = client.configMaps().inNamespace(ns).withName(name).get();
        if (cm == null) {
            if (Boolean.TRUE.equals(optional)) {
                return Map.of();
            }
            throw new NotReady("configmap \"" + name + "\" not found");
        }
        Map<String, byte[]> data = new LinkedHashMap<>();
        if (cm.getData() != null) {
            cm.getData().forEach((k, v) -> data.put(k, v.getBytes(StandardCharsets.UTF_8)));
        }
        if (cm.getBinaryData() != null) {
            cm.getBinaryData().forEach((k, v) -> data.put(k, Base64.getDecoder().decode(v)));
        }
        return data;
    }

    private Map<String, byte[]> secretData(String ns, String name, Boolean optional) {
        Secret secret = client.secrets().inNamespace(ns).withName(name).get();
        if (secret == null) {
            if (Boolean.TRUE.equals(optional)) {
                return Map.of();
            }
            throw new NotReady("secret \"" + name + "\" not found");
        }
        Map<String, byte[]> data = new LinkedHashMap<>();
        if (secret.getData() != null) {
            secret.getData().forEach((k, v) -> data.put(k, Base64.getDecoder().decode(v)));
        }
        if (secret.getStringData() != null) {
            secret.getStringData().forEach((k, v) -> data.put(k, v.getBytes(StandardCharsets.UTF_8)));
        }
        return data;
    }

    /** All keys as files, or only the listed items under their paths. */
    private static Map<String, byte[]> select(Map<String, byte[]> data, List<KeyToPath> items) {
        if (items == null || items.isEmpty()) {
            return data;
        }
        Map<String, byte[]> selected = new HashMap<>();
        for (KeyToPath item : items) {
            if (data.containsKey(item.getKey())) {
                selected.put(item.getPath(), data.get(item.getKey()));
            }
        }
        return selected;
    }

    private static void write(Path dir, Map<String, byte[]> files) {
        try {
            Files.createDirectories(dir);
            for (Map.Entry<String, byte[]> file : files.entrySet()) {
                Path target = dir.resolve(file.getKey()).normalize();
                if (!target.startsWith(dir)) {
                    throw new IllegalStateException("volume file path " + file.getKey() + " leaves the volume");
                }
                Files.createDirectories(target.getParent());
                Files.write(target, file.getValue());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
