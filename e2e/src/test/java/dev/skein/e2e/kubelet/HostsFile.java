package dev.skein.e2e.kubelet;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.informers.cache.Store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Cluster DNS without a DNS server: the names a hosts file gives every pod as /etc/hosts (with the
 * pod's own name added, see {@link #forPod}), re-rendered whenever Pods, Services or EndpointSlices
 * change; a shared copy is kept at {@link #path()} for tools and tests. It holds what CoreDNS would answer:
 * {@code <svc>.<ns>.svc[.cluster.local]} for each ready endpoint address of a Service (there is no
 * kube-proxy, so a ClusterIP Service resolves to its endpoints, as a headless one does), and
 * {@code <hostname>.<subdomain>.<ns>.svc[.cluster.local]} for each pod with a hostname and
 * subdomain (StatefulSet pods).
 *
 * <p>Files are rewritten in place (same inode), since a bind mount pins the inode a rename would
 * replace. Owned by the kubelet loop thread.
 */
final class HostsFile {

    static final String CLUSTER_DOMAIN = "cluster.local";

    private final Path file;
    private String written = "";

    HostsFile(Path file) {
        this.file = file;
    }

    Path path() {
        return file;
    }

    /**
     * Renders the cluster's names from the informer caches; if they changed, rewrites the shared
     * file and returns the new content, else returns null.
     */
    String update(Store<Pod> pods, Store<Service> services, Store<EndpointSlice> slices) {
        String content = render(pods.list(), services.list(), slices.list());
        if (content.equals(written)) {
            return null;
        }
        write(content);
        return content;
    }

    /** Writes a file with only the localhost entries, before any informer has synced; returns it. */
    String writeInitial() {
        String content = render(List.of(), List.of(), List.of());
        write(content);
        return content;
    }

    /** A pod's own /etc/hosts: the cluster's names plus its own, as the kubelet writes it. */
    static String forPod(String clusterHosts, Pod pod, String podIp) {
        String hostname = pod.getSpec().getHostname() != null ? pod.getSpec().getHostname() : pod.getMetadata().getName();
        String subdomain = pod.getSpec().getSubdomain();
        String own = subdomain == null ? hostname
                : hostname + "." + subdomain + "." + pod.getMetadata().getNamespace() + ".svc." + CLUSTER_DOMAIN + " " + hostname;
        return clusterHosts + "# this pod\n" + podIp + "\t" + own + "\n";
    }

    static String render(List<Pod> pods, List<Service> services, List<EndpointSlice> slices) {
        Map<String, List<String>> names = new TreeMap<>();
        for (Pod pod : pods) {
            String ip = pod.getStatus() == null ? null : pod.getStatus().getPodIP();
            String hostname = pod.getSpec().getHostname();
            String subdomain = pod.getSpec().getSubdomain();
            if (ip != null && hostname != null && subdomain != null && pod.getMetadata().getDeletionTimestamp() == null) {
                add(names, ip, fqdns(hostname + "." + subdomain + "." + pod.getMetadata().getNamespace()));
            }
        }
        Map<String, Service> byKey = new TreeMap<>();
        services.forEach(s -> byKey.put(s.getMetadata().getNamespace() + "/" + s.getMetadata().getName(), s));
        for (EndpointSlice slice : slices) {
            String serviceName = slice.getMetadata().getLabels() == null ? null
                    : slice.getMetadata().getLabels().get("kubernetes.io/service-name");
            Service service = byKey.get(slice.getMetadata().getNamespace() + "/" + serviceName);
            if (service == null || slice.getEndpoints() == null) {
                continue;
            }
            boolean publishNotReady = Boolean.TRUE.equals(service.getSpec().getPublishNotReadyAddresses());
            String base = serviceName + "." + slice.getMetadata().getNamespace();
            for (Endpoint endpoint : slice.getEndpoints()) {
                boolean ready = endpoint.getConditions() == null || !Boolean.FALSE.equals(endpoint.getConditions().getReady());
                if (!ready && !publishNotReady) {
                    continue;
                }
                for (String address : endpoint.getAddresses()) {
                    add(names, address, fqdns(base));
                    if (endpoint.getHostname() != null) {
                        add(names, address, fqdns(endpoint.getHostname() + "." + base));
                    }
                }
            }
        }
        StringBuilder out = new StringBuilder("# Written by the skein e2e process kubelet: cluster DNS names.\n")
                .append("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
                .append(PodNetwork.GATEWAY).append("\tkubernetes.default.svc.").append(CLUSTER_DOMAIN)
                .append(" kubernetes.default.svc kubernetes.default kubernetes\n");
        names.entrySet().stream().sorted(Map.Entry.comparingByKey(Comparator.naturalOrder()))
                .forEach(e -> out.append(e.getKey()).append('\t').append(String.join(" ", e.getValue())).append('\n'));
        return out.toString();
    }

    private static List<String> fqdns(String nameDotNamespace) {
        return List.of(nameDotNamespace + ".svc." + CLUSTER_DOMAIN, nameDotNamespace + ".svc");
    }

    private static void add(Map<String, List<String>> names, String ip, List<String> hostnames) {
        List<String> list = names.computeIfAbsent(ip, k -> new ArrayList<>());
        hostnames.stream().filter(h -> !list.contains(h)).forEach(list::add);
    }

    private void write(String content) {
        writeInPlace(file, content);
        written = content;
    }

    /** Writes a file keeping its inode, so bind mounts of it see the new content. */
    static void writeInPlace(Path target, String content) {
        try {
            Files.createDirectories(target.getParent());
            Files.writeString(target, content, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
