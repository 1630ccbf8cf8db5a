package dev.skein.broker.api;

import dev.skein.broker.config.BrokerConfig;
import dev.skein.broker.config.ConfigOp;
import dev.skein.broker.config.DynamicBrokerConfigs;
import dev.skein.broker.config.TopicConfigs;
import dev.skein.broker.controller.Controller;
import dev.skein.broker.metadata.TopicMetadata;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.message.AlterConfigsRequestData;
import org.apache.kafka.common.message.AlterConfigsResponseData;
import org.apache.kafka.common.message.CreateTopicsResponseData;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsResponseData;
import org.apache.kafka.common.requests.ApiError;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * DescribeConfigs, AlterConfigs and IncrementalAlterConfigs for topics (dynamic, validated like
 * Kafka's) and brokers: the keys of {@link DynamicBrokerConfigs#DYNAMIC} may be set per broker id or
 * as the cluster-wide default (resource name ""), kept in the replicated metadata; every other
 * broker config is static and described as read-only.
 */
final class ConfigsApi {
    private static final byte SOURCE_TOPIC = 1;
    private static final byte SOURCE_DYNAMIC_BROKER = 2;
    private static final byte SOURCE_DYNAMIC_DEFAULT_BROKER = 3;
    private static final byte SOURCE_STATIC_BROKER = 4;
    private static final byte SOURCE_DEFAULT = 5;

    /** Topic config → the broker config that supplies its default. */
    private static final Map<String, String> BROKER_SYNONYM = Map.ofEntries(
            Map.entry("segment.bytes", BrokerConfig.LOG_SEGMENT_BYTES),
            Map.entry("segment.ms", BrokerConfig.LOG_ROLL_MS),
            Map.entry("retention.ms", BrokerConfig.LOG_RETENTION_MS),
            Map.entry("retention.bytes", BrokerConfig.LOG_RETENTION_BYTES),
            Map.entry("cleanup.policy", BrokerConfig.LOG_CLEANUP_POLICY),
            Map.entry("delete.retention.ms", BrokerConfig.LOG_CLEANER_DELETE_RETENTION_MS),
            Map.entry("min.compaction.lag.ms", BrokerConfig.LOG_CLEANER_MIN_COMPACTION_LAG_MS),
            Map.entry("min.cleanable.dirty.ratio", BrokerConfig.LOG_CLEANER_MIN_CLEANABLE_RATIO),
            Map.entry("flush.messages", BrokerConfig.LOG_FLUSH_INTERVAL_MESSAGES),
            Map.entry("flush.ms", BrokerConfig.LOG_FLUSH_INTERVAL_MS),
            Map.entry("segment.index.bytes", BrokerConfig.LOG_INDEX_SIZE_MAX_BYTES),
            Map.entry("index.interval.bytes", BrokerConfig.LOG_INDEX_INTERVAL_BYTES),
            Map.entry("message.timestamp.type", BrokerConfig.LOG_MESSAGE_TIMESTAMP_TYPE),
            Map.entry("file.delete.delay.ms", BrokerConfig.LOG_SEGMENT_DELETE_DELAY_MS),
            Map.entry("max.message.bytes", BrokerConfig.MESSAGE_MAX_BYTES),
            Map.entry("min.insync.replicas", BrokerConfig.MIN_INSYNC_REPLICAS),
            Map.entry("unclean.leader.election.enable", BrokerConfig.UNCLEAN_LEADER_ELECTION_ENABLE));

    private final Controller controller;
    private final BrokerConfig config;

    ConfigsApi(Controller controller, BrokerConfig config) {
        this.controller = controller;
        this.config = config;
    }

    DescribeConfigsResponseData describe(DescribeConfigsRequestData request, short version) {
        DescribeConfigsResponseData response = new DescribeConfigsResponseData();
        for (DescribeConfigsRequestData.DescribeConfigsResource r : request.resources()) {
            DescribeConfigsResponseData.DescribeConfigsResult result = new DescribeConfigsResponseData.DescribeConfigsResult()
                    .setResourceType(r.resourceType()).setResourceName(r.resourceName());
            try {
                ConfigResource.Type type = ConfigResource.Type.forId(r.resourceType());
                List<DescribeConfigsResponseData.DescribeConfigsResourceResult> entries = switch (type) {
                    case TOPIC -> describeTopic(r.resourceName(), request.includeSynonyms(), request.includeDocumentation());
                    case BROKER -> describeBroker(r.resourceName(), request.includeSynonyms(), request.includeDocumentation());
                    default -> throw new InvalidRequestException("Unsupported resource type " + type
                            + " for DescribeConfigs: Skein describes TOPIC and BROKER configs");
                };
                for (DescribeConfigsResponseData.DescribeConfigsResourceResult e : entries) {
                    if (r.configurationKeys() == null || r.configurationKeys().contains(e.name())) {
                        result.configs().add(e);
                    }
                }
            } catch (ApiException e) {
                ApiError error = ApiError.fromThrowable(e);
                result.setErrorCode(error.error().code()).setErrorMessage(error.messageWithFallback());
            }
            response.results().add(result);
        }
        return response;
    }

    private List<DescribeConfigsResponseData.DescribeConfigsResourceResult> describeTopic(String name, boolean synonyms,
                                                                                          boolean docs) {
        TopicMetadata t = controller.image().topic(name);
        if (t == null) {
            t = MetadataApi.caughtUp(controller).topic(name);
        }
        if (t == null) {
            throw new UnknownTopicOrPartitionException("The topic '" + name + "' does not exist.");
        }
        Map<String, String> brokerDefaults = config.topicConfigDefaults();
        Map<String, Object> effective = TopicConfigs.effective(brokerDefaults, t.configs());
        List<DescribeConfigsResponseData.DescribeConfigsResourceResult> out = new ArrayList<>();
        for (ConfigDef.ConfigKey key : TopicConfigs.DEF.configKeys().values()) {
            String value = TopicConfigs.render(effective.get(key.name));
            String brokerKey = BROKER_SYNONYM.get(key.name);
            byte source = t.configs().containsKey(key.name) ? SOURCE_TOPIC
                    : brokerKey != null && config.originals().containsKey(brokerKey) ? SOURCE_STATIC_BROKER : SOURCE_DEFAULT;
            DescribeConfigsResponseData.DescribeConfigsResourceResult e = new DescribeConfigsResponseData.DescribeConfigsResourceResult()
                    .setName(key.name).setValue(value).setReadOnly(false).setIsSensitive(false)
                    .setConfigSource(source).setConfigType(configType(key.type))
                    .setDocumentation(docs ? key.documentation : null);
            if (synonyms) {
                if (t.configs().containsKey(key.name)) {
                    e.synonyms().add(new DescribeConfigsResponseData.DescribeConfigsSynonym()
                            .setName(key.name).setValue(t.configs().get(key.name)).setSource(SOURCE_TOPIC));
                }
                if (brokerKey != null && config.originals().containsKey(brokerKey)) {
                    e.synonyms().add(new DescribeConfigsResponseData.DescribeConfigsSynonym()
                            .setName(brokerKey).setValue(config.originals().get(brokerKey)).setSource(SOURCE_STATIC_BROKER));
                }
                if (brokerKey != null) {
                    e.synonyms().add(new DescribeConfigsResponseData.DescribeConfigsSynonym()
                            .setName(brokerKey).setValue(TopicConfigs.render(key.defaultValue)).setSource(SOURCE_DEFAULT));
                }
            }
            out.add(e);
        }
        return out;
    }

    private List<DescribeConfigsResponseData.DescribeConfigsResourceResult> describeBroker(String name, boolean synonyms,
                                                                                           boolean docs) {
        Map<String, Map<String, String>> dynamic = controller.image().brokerConfigs();
        Map<String, String> clusterDefault = dynamic.getOrDefault("", Map.of());
        List<DescribeConfigsResponseData.DescribeConfigsResourceResult> out = new ArrayList<>();
        if (name.isEmpty()) {
            // as Kafka: the default resource shows only the dynamic cluster-wide defaults
            for (Map.Entry<String, String> e : clusterDefault.entrySet()) {
                ConfigDef.ConfigKey key = BrokerConfig.DEF.configKeys().get(e.getKey());
                out.add(new DescribeConfigsResponseData.DescribeConfigsResourceResult()
                        .setName(e.getKey()).setValue(e.getValue()).setReadOnly(false).setIsSensitive(false)
                        .setConfigSource(SOURCE_DYNAMIC_DEFAULT_BROKER)
                        .setConfigType(key == null ? 0 : configType(key.type))
                        .setDocumentation(docs && key != null ? key.documentation : null));
            }
            return out;
        }
        if (!name.equals(String.valueOf(config.nodeId()))) {
            throw new InvalidRequestException("Unexpected broker id, expected " + config.nodeId() + " or empty string, but received " + name);
        }
        Map<String, String> own = dynamic.getOrDefault(name, Map.of());
        Map<String, Object> parsed = BrokerConfig.DEF.parse(config.originals().entrySet().stream()
                .filter(e -> BrokerConfig.DEF.names().contains(e.getKey()))
                .collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)));
        for (ConfigDef.ConfigKey key : BrokerConfig.DEF.configKeys().values()) {
            boolean isDynamic = DynamicBrokerConfigs.isDynamic(key.name);
            String staticValue = TopicConfigs.render(parsed.get(key.name));
            byte staticSource = config.originals().containsKey(key.name) ? SOURCE_STATIC_BROKER : SOURCE_DEFAULT;
            String value = staticValue;
            byte source = staticSource;
            if (own.containsKey(key.name)) {
                value = own.get(key.name);
                source = SOURCE_DYNAMIC_BROKER;
            } else if (clusterDefault.containsKey(key.name)) {
                value = clusterDefault.get(key.name);
                source = SOURCE_DYNAMIC_DEFAULT_BROKER;
            }
            DescribeConfigsResponseData.DescribeConfigsResourceResult e = new DescribeConfigsResponseData.DescribeConfigsResourceResult()
                    .setName(key.name).setValue(value)
                    .setReadOnly(!isDynamic).setIsSensitive(false)
                    .setConfigSource(source)
                    .setConfigType(configType(key.type))
                    .setDocumentation(docs ? key.documentation : null);
            if (synonyms) {
                if (own.containsKey(key.name)) {
                    e.synonyms().add(synonym(key.name, own.get(key.name), SOURCE_DYNAMIC_BROKER));
                }
                if (clusterDefault.containsKey(key.name)) {
                    e.synonyms().add(synonym(key.name, clusterDefault.get(key.name), SOURCE_DYNAMIC_DEFAULT_BROKER));
                }
                e.synonyms().add(synonym(key.name, staticValue, staticSource));
            }
            out.add(e);
        }
        return out;
    }

    private static DescribeConfigsResponseData.DescribeConfigsSynonym synonym(String name, String value, byte source) {
        return new DescribeConfigsResponseData.DescribeConfigsSynonym().setName(name).setValue(value).setSource(source);
    }

    private static byte configType(ConfigDef.Type type) {
        return switch (type) {
            case BOOLEAN -> 1;
            case STRING -> 2;
            case INT -> 3;
            case SHORT -> 4;
            case LONG -> 5;
            case DOUBLE -> 6;
            case LIST -> 7;
            case CLASS -> 8;
            case PASSWORD -> 9;
        };
    }

    /** The configs returned by CreateTopics v5+ for a new topic. */
    List<CreateTopicsResponseData.CreatableTopicConfigs> createTopicConfigs(TopicMetadata t) {
        List<CreateTopicsResponseData.CreatableTopicConfigs> out = new ArrayList<>();
        Map<String, Object> effective = TopicConfigs.effective(config.topicConfigDefaults(), t.configs());
        for (ConfigDef.ConfigKey key : TopicConfigs.DEF.configKeys().values()) {
            String brokerKey = BROKER_SYNONYM.get(key.name);
            byte source = t.configs().containsKey(key.name) ? SOURCE_TOPIC
                    : brokerKey != null && config.originals().containsKey(brokerKey) ? SOURCE_STATIC_BROKER : SOURCE_DEFAULT;
            out.add(new CreateTopicsResponseData.CreatableTopicConfigs()
                    .setName(key.name).setValue(TopicConfigs.render(effective.get(key.name)))
                    .setReadOnly(false).setIsSensitive(false).setConfigSource(source));
        }
        return out;
    }

    AlterConfigsResponseData alter(AlterConfigsRequestData request) {
        AlterConfigsResponseData response = new AlterConfigsResponseData();
        for (AlterConfigsRequestData.AlterConfigsResource r : request.resources()) {
            AlterConfigsResponseData.AlterConfigsResourceResponse result = new AlterConfigsResponseData.AlterConfigsResourceResponse()
                    .setResourceType(r.resourceType()).setResourceName(r.resourceName());
            try {
                boolean broker = requireTopicOrBroker(r.resourceType());
                Map<String, String> configs = new HashMap<>();
                for (AlterConfigsRequestData.AlterableConfig c : r.configs()) {
                    configs.put(c.name(), c.value());
                }
                if (broker) {
                    controller.alterBrokerConfigs(r.resourceName(), configs, request.validateOnly());
                } else {
                    controller.alterTopicConfigs(r.resourceName(), configs, request.validateOnly());
                }
            } catch (ApiException e) {
                ApiError error = ApiError.fromThrowable(e);
                result.setErrorCode(error.error().code()).setErrorMessage(error.messageWithFallback());
            }
            response.responses().add(result);
        }
        return response;
    }

    IncrementalAlterConfigsResponseData incrementalAlter(IncrementalAlterConfigsRequestData request) {
        IncrementalAlterConfigsResponseData response = new IncrementalAlterConfigsResponseData();
        for (IncrementalAlterConfigsRequestData.AlterConfigsResource r : request.resources()) {
            IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse result =
                    new IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse()
                            .setResourceType(r.resourceType()).setResourceName(r.resourceName());
            try {
                if (requireTopicOrBroker(r.resourceType())) {
                    incrementalAlterBroker(r, request.validateOnly());
                    response.responses().add(result);
                    continue;
                }
                List<ConfigOp> ops = new ArrayList<>();
                for (IncrementalAlterConfigsRequestData.AlterableConfig c : r.configs()) {
                    ops.add(topicOp(c));
                }
                // the active controller applies them to the overrides it holds: a change another
                // broker made a moment ago, which this one may not have applied yet, stays
                controller.incrementalAlterTopicConfigs(r.resourceName(), ops, request.validateOnly());
            } catch (ApiException e) {
                ApiError error = ApiError.fromThrowable(e);
                result.setErrorCode(error.error().code()).setErrorMessage(error.messageWithFallback());
            }
            response.responses().add(result);
        }
        return response;
    }

    /**
     * One operation on a topic config, checked here: a known key, and a list-typed one for APPEND
     * and SUBTRACT, which start from this broker's default when the topic has no override.
     */
    private ConfigOp topicOp(IncrementalAlterConfigsRequestData.AlterableConfig c) {
        if (!TopicConfigs.isKnown(c.name())) {
            throw new InvalidConfigurationException("Unknown topic config name: " + c.name());
        }
        ConfigOp.Kind kind = ConfigOp.Kind.of(c.configOperation());
        String fallback = null;
        if (kind == ConfigOp.Kind.APPEND || kind == ConfigOp.Kind.SUBTRACT) {
            if (TopicConfigs.DEF.configKeys().get(c.name()).type != ConfigDef.Type.LIST) {
                throw new InvalidConfigurationException("Config value append is not allowed for config key: " + c.name());
            }
            fallback = TopicConfigs.render(TopicConfigs.effective(config.topicConfigDefaults(), Map.of()).get(c.name()));
        }
        return new ConfigOp(c.name(), kind, c.value(), fallback);
    }

    /** Applies SET and DELETE to a broker resource's dynamic overrides; list operations do not apply to them. */
    private void incrementalAlterBroker(IncrementalAlterConfigsRequestData.AlterConfigsResource r, boolean validateOnly) {
        DynamicBrokerConfigs.validateResource(r.resourceName());
        List<ConfigOp> ops = new ArrayList<>();
        for (IncrementalAlterConfigsRequestData.AlterableConfig c : r.configs()) {
            ConfigOp op = new ConfigOp(c.name(), ConfigOp.Kind.of(c.configOperation()), c.value(), null);
            op.requireScalar();
            ops.add(op);
        }
        java.util.Set<String> touched = new java.util.TreeSet<>();
        r.configs().forEach(c -> touched.add(c.name()));
        touched.removeIf(DynamicBrokerConfigs::isDynamic);
        if (!touched.isEmpty()) {
            throw new InvalidConfigurationException("Cannot update these configs dynamically: " + touched
                    + " (Skein changes only " + new java.util.TreeSet<>(DynamicBrokerConfigs.DYNAMIC)
                    + " at run time; set the others in server.properties)");
        }
        controller.incrementalAlterBrokerConfigs(r.resourceName(), ops, validateOnly);
    }

    /** True for a BROKER resource, false for a TOPIC one; other types are refused. */
    private static boolean requireTopicOrBroker(byte resourceType) {
        ConfigResource.Type type = ConfigResource.Type.forId(resourceType);
        if (type == ConfigResource.Type.BROKER) {
            return true;
        }
        if (type != ConfigResource.Type.TOPIC) {
            throw new InvalidRequestException("Unsupported resource type " + type + ": Skein alters TOPIC and BROKER configs");
        }
        return false;
    }
}
