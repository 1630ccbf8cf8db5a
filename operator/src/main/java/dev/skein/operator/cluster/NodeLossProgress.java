package dev.skein.operator.cluster;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The replacement under way, kept in the SkeinCluster's annotation {@value #ANNOTATION} so that a
 * restarted operator (or the next leader) resumes it: which broker, the node it was lost on, the
 * UIDs of the pod and claim to delete (never a newer pod or claim of the same name), the last step
 * done, whether the recovery throttle is set, and when the replacement started.
 *
 * <p>The value is {@code key=value} pairs joined by {@code ;} (stable, readable with kubectl).
 *
 * @param pvcUid    the claim to delete, or null when the volume is kept (not node-local)
 */
public record NodeLossProgress(int broker, String node, String podUid, String pvcUid, NodeLossReason step,
                               boolean throttled, Instant started) {
    public static final String ANNOTATION = "skein.dev/node-loss-replacement";

    public NodeLossProgress with(NodeLossReason newStep, boolean newThrottled) {
        return new NodeLossProgress(broker, node, podUid, pvcUid, newStep, newThrottled, started);
    }

    public String format() {
        Map<String, String> out = new LinkedHashMap<>();
        out.put("broker", Integer.toString(broker));
        out.put("node", node);
        out.put("pod", podUid);
        if (pvcUid != null) {
            out.put("pvc", pvcUid);
        }
        out.put("step", step.name());
        out.put("throttled", Boolean.toString(throttled));
        out.put("started", started.toString());
        StringBuilder s = new StringBuilder();
        out.forEach((k, v) -> s.append(s.isEmpty() ? "" : ";").append(k).append('=').append(v));
        return s.toString();
    }

    /** Parses {@link #format()}; a value that does not parse is an {@link IllegalArgumentException} naming it. */
    public static NodeLossProgress parse(String value) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String pair : value.split(";")) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                m.put(pair.substring(0, eq).trim(), pair.substring(eq + 1).trim());
            }
        }
        try {
            return new NodeLossProgress(Integer.parseInt(m.get("broker")), required(m, "node"), required(m, "pod"),
                    m.get("pvc"), NodeLossReason.valueOf(required(m, "step")),
                    Boolean.parseBoolean(m.get("throttled")), Instant.parse(required(m, "started")));
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("annotation " + ANNOTATION + " '" + value + "' does not parse: "
                    + e.getMessage(), e);
        }
    }

    private static String required(Map<String, String> m, String key) {
        String v = m.get(key);
        if (v == null || v.isEmpty()) {
            throw new IllegalArgumentException("no " + key);
        }
        return v;
    }
}
