package dev.skein.broker.config;

import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidRequestException;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One operation of an IncrementalAlterConfigs request on one config of a resource. The operations
 * are applied where the current overrides are known for certain (the active controller), so two
 * brokers that alter different keys of one topic at once both take effect.
 *
 * <p>APPEND and SUBTRACT work on the current list: the override, else {@code fallback}, the
 * effective value the broker that took the request would use (its default for the key).
 *
 * @param name     the config key
 * @param kind     the operation
 * @param value    the value to set, or the list elements to append or subtract; null for DELETE (a null
 *                 SET is refused by the validation of the result, as Kafka refuses it)
 * @param fallback the value an APPEND or SUBTRACT starts from when the resource has no override; else null
 */
public record ConfigOp(String name, Kind kind, String value, String fallback) {

    /** Kafka's {@code AlterConfigOp.OpType}, with its ids on the wire. */
    public enum Kind {
        SET(0), DELETE(1), APPEND(2), SUBTRACT(3);

        public final byte id;

        Kind(int id) {
            this.id = (byte) id;
        }

        /** The kind with wire id {@code id}; an unknown id is a bad request. */
        public static Kind of(byte id) {
            for (Kind k : values()) {
                if (k.id == id) {
                    return k;
                }
            }
            throw new InvalidRequestException("Unknown config operation " + id);
        }
    }

    public ConfigOp {
        if (name == null || kind == null) {
            throw new InvalidRequestException("A config operation needs a config name and an operation");
        }
    }

    /** The overrides after {@code ops}, applied in order to a copy of {@code current}. */
    public static Map<String, String> applyAll(Map<String, String> current, List<ConfigOp> ops) {
        Map<String, String> out = new LinkedHashMap<>(current);
        for (ConfigOp op : ops) {
            switch (op.kind) {
                case SET -> out.put(op.name, op.value);
                case DELETE -> out.remove(op.name);
                case APPEND, SUBTRACT -> {
                    List<String> values = new ArrayList<>();
                    String existing = out.containsKey(op.name) ? out.get(op.name) : op.fallback;
                    if (existing != null && !existing.isBlank()) {
                        values.addAll(split(existing));
                    }
                    List<String> delta = op.value == null ? List.of() : split(op.value);
                    if (op.kind == Kind.APPEND) {
                        delta.stream().filter(v -> !values.contains(v)).forEach(values::add);
                    } else {
                        values.removeAll(delta);
                    }
                    out.put(op.name, String.join(",", values));
                }
            }
        }
        return out;
    }

    private static List<String> split(String list) {
        return list.isBlank() ? List.of() : Arrays.stream(list.split(",")).map(String::trim).toList();
    }

    /** Refuses an operation no resource of a kind that has only scalar configs accepts. */
    public void requireScalar() {
        if (kind == Kind.APPEND || kind == Kind.SUBTRACT) {
            throw new InvalidConfigurationException("Config value append is not allowed for config key: " + name);
        }
    }
}
