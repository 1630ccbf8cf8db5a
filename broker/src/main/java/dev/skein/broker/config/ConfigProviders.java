package dev.skein.broker.config;

import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigTransformer;
import org.apache.kafka.common.config.provider.ConfigProvider;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Kafka's externalized configuration (KIP-297, KIP-421) for the broker's own properties:
 * {@code config.providers=env} with {@code config.providers.env.class=<a ConfigProvider>} and its
 * {@code config.providers.env.param.*}, after which a value such as {@code ${env:SKEIN_RACK}} or
 * {@code ${file:/etc/secret.properties:password}} is replaced by what the provider returns. The
 * providers are Kafka's own ({@code EnvVarConfigProvider}, {@code FileConfigProvider},
 * {@code DirectoryConfigProvider}) or any other on the class path.
 *
 * <p>The operator uses it to hand each broker pod its rack: Kubernetes copies the node's
 * {@code topology.kubernetes.io/zone} label onto the pod, the pod's environment carries it, and the
 * shared properties say {@code broker.rack=${env:SKEIN_RACK}}.
 */
public final class ConfigProviders {
    public static final String CONFIG_PROVIDERS = "config.providers";
    private static final String PREFIX = CONFIG_PROVIDERS + ".";

    private ConfigProviders() {
    }

    /** Whether {@code key} configures the providers themselves (not a broker setting). */
    static boolean isProviderKey(String key) {
        return key.equals(CONFIG_PROVIDERS) || key.startsWith(PREFIX);
    }

    /** {@code props} with every {@code ${provider:[path:]key}} resolved; unchanged without {@code config.providers}. */
    public static Map<String, String> resolve(Map<String, String> props) {
        String names = props.get(CONFIG_PROVIDERS);
        if (names == null || names.isBlank()) {
            return props;
        }
        Map<String, ConfigProvider> providers = new LinkedHashMap<>();
        try {
            for (String raw : names.split(",")) {
                String name = raw.strip();
                if (name.isEmpty()) {
                    continue;
                }
                providers.put(name, instantiate(name, props));
            }
            Map<String, String> toResolve = new HashMap<>(props);
            toResolve.keySet().removeIf(ConfigProviders::isProviderKey);
            Map<String, String> resolved = new HashMap<>(props);
            resolved.putAll(new ConfigTransformer(providers).transform(toResolve).data());
            return resolved;
        } finally {
            for (ConfigProvider provider : providers.values()) {
                try {
                    provider.close();
                } catch (Exception ignored) {
                    // a provider that cannot close has already given its values
                }
            }
        }
    }

    private static ConfigProvider instantiate(String name, Map<String, String> props) {
        String classKey = PREFIX + name + ".class";
        String className = props.get(classKey);
        if (className == null || className.isBlank()) {
            throw new ConfigException(classKey, null, "config provider '" + name + "' is listed in "
                    + CONFIG_PROVIDERS + " but has no class");
        }
        ConfigProvider provider;
        try {
            Class<?> type = Class.forName(className.strip());
            if (!ConfigProvider.class.isAssignableFrom(type)) {
                throw new ConfigException(classKey, className, "is not a " + ConfigProvider.class.getName());
            }
            provider = (ConfigProvider) type.getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException | LinkageError e) {
            throw new ConfigException(classKey, className, "cannot be instantiated: " + e);
        }
        String paramPrefix = PREFIX + name + ".param.";
        Map<String, Object> params = new HashMap<>();
        props.forEach((k, v) -> {
            if (k.startsWith(paramPrefix)) {
                params.put(k.substring(paramPrefix.length()), v);
            }
        });
        provider.configure(params);
        return provider;
    }
}
