package dev.skein.broker.api;

import dev.skein.broker.config.BrokerConfig;
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
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * DescribeConfigs, AlterConfigs and IncrementalAlterConfigs for topics (dynamic, validated like
 * Kafka's) and brokers (static: described, not altered at run time yet).
 */
final class ConfigsApi {
    private static final byte SOURCE_TOPIC = 1;
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
                    case BROKER -> describeBroker(r.resourceName(), request.includeDocumentation());
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

    private List<DescribeConfigsResponseData.DescribeConfigsResourceResult> describeBroker(String name, boolean docs) {
        if (!name.isEmpty() && !name.equals(String.valueOf(config.nodeId()))) {
            throw new InvalidRequestException("Unexpected broker id, expected " + config.nodeId() + " or empty string, but received " + name);
        }
        Map<String, Object> parsed = BrokerConfig.DEF.parse(config.originals().entrySet().stream()
                .filter(e -> BrokerConfig.DEF.names().contains(e.getKey()))
                .collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)));
        List<DescribeConfigsResponseData.DescribeConfigsResourceResult> out = new ArrayList<>();
        for (ConfigDef.ConfigKey key : BrokerConfig.DEF.configKeys().values()) {
            out.add(new DescribeConfigsResponseData.DescribeConfigsResourceResult()
                    .setName(key.name).setValue(TopicConfigs.render(parsed.get(key.name)))
                    .setReadOnly(true).setIsSensitive(false)
                    .setConfigSource(config.originals().containsKey(key.name) ? SOURCE_STATIC_BROKER : SOURCE_DEFAULT)
                    .setConfigType(configType(key.type))
                    .setDocumentation(docs ? key.documentation : null));
        }
        return out;
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
                requireTopic(r.resourceType());
                Map<String, String> configs = new HashMap<>();
                for (AlterConfigsRequestData.AlterableConfig c : r.configs()) {
                    configs.put(c.name(), c.value());
                }
                controller.alterTopicConfigs(r.resourceName(), configs, request.validateOnly());
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
                requireTopic(r.resourceType());
                TopicMetadata t = controller.image().topic(r.resourceName());
                if (t == null) {
                    throw new UnknownTopicOrPartitionException("The topic '" + r.resourceName() + "' does not exist.");
                }
                Map<String, String> configs = new LinkedHashMap<>(t.configs());
                for (IncrementalAlterConfigsRequestData.AlterableConfig c : r.configs()) {
                    apply(configs, c, t);
                }
                controller.alterTopicConfigs(t.name(), configs, request.validateOnly());
            } catch (ApiException e) {
                ApiError error = ApiError.fromThrowable(e);
                result.setErrorCode(error.error().code()).setErrorMessage(error.messageWithFallback());
            }
            response.responses().add(result);
        }
        return response;
    }

    private void apply(Map<String, String> configs, IncrementalAlterConfigsRequestData.AlterableConfig c, TopicMetadata t) {
        if (!TopicConfigs.isKnown(c.name())) {
            throw new InvalidConfigurationException("Unknown topic config name: " + c.name());
        }
        switch (c.configOperation()) {
            case 0 -> configs.put(c.name(), c.value()); // SET
            case 1 -> configs.remove(c.name()); // DELETE
            case 2, 3 -> { // APPEND, SUBTRACT: list-typed configs only
                if (TopicConfigs.DEF.configKeys().get(c.name()).type != ConfigDef.Type.LIST) {
                    throw new InvalidConfigurationException("Config value append is not allowed for config key: " + c.name());
                }
                Object current = TopicConfigs.effective(config.topicConfigDefaults(), t.configs()).get(c.name());
                List<String> values = new ArrayList<>();
                String existing = configs.getOrDefault(c.name(), TopicConfigs.render(current));
                if (existing != null && !existing.isBlank()) {
                    values.addAll(Arrays.asList(existing.split(",")));
                }
                List<String> delta = c.value() == null ? List.of() : Arrays.asList(c.value().split(","));
                if (c.configOperation() == 2) {
                    delta.stream().filter(v -> !values.contains(v)).forEach(values::add);
                } else {
                    values.removeAll(delta);
                }
                configs.put(c.name(), String.join(",", values));
            }
            default -> throw new InvalidRequestException("Unknown config operation " + c.configOperation());
        }
    }

    private static void requireTopic(byte resourceType) {
        ConfigResource.Type type = ConfigResource.Type.forId(resourceType);
        if (type == ConfigResource.Type.BROKER) {
            throw new InvalidRequestException("Broker configs are static in Skein for now: set them in server.properties");
        }
        if (type != ConfigResource.Type.TOPIC) {
            throw new InvalidRequestException("Unsupported resource type " + type + ": Skein alters TOPIC configs");
        }
    }

}
