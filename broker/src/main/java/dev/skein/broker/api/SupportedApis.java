package dev.skein.broker.api;

import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersion;
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersionCollection;
import org.apache.kafka.common.protocol.ApiKeys;

import java.util.EnumMap;
import java.util.Map;

/**
 * The APIs this broker implements and the version range of each: what ApiVersions advertises and
 * nothing more. Ranges start at the codec's oldest version (Kafka 4's post-KIP-896 minimums) and end
 * at its newest.
 */
public final class SupportedApis {
    private static final Map<ApiKeys, Short> MAX = new EnumMap<>(ApiKeys.class);

    static {
        for (ApiKeys api : new ApiKeys[]{
                ApiKeys.API_VERSIONS, ApiKeys.METADATA, ApiKeys.PRODUCE, ApiKeys.FETCH, ApiKeys.LIST_OFFSETS,
                ApiKeys.OFFSET_FOR_LEADER_EPOCH, ApiKeys.CREATE_TOPICS, ApiKeys.DELETE_TOPICS,
                ApiKeys.CREATE_PARTITIONS, ApiKeys.DESCRIBE_TOPIC_PARTITIONS, ApiKeys.DESCRIBE_CONFIGS,
                ApiKeys.ALTER_CONFIGS, ApiKeys.INCREMENTAL_ALTER_CONFIGS, ApiKeys.DESCRIBE_CLUSTER,
                ApiKeys.DELETE_RECORDS, ApiKeys.INIT_PRODUCER_ID, ApiKeys.FIND_COORDINATOR, ApiKeys.JOIN_GROUP,
                ApiKeys.SYNC_GROUP, ApiKeys.HEARTBEAT, ApiKeys.LEAVE_GROUP, ApiKeys.OFFSET_COMMIT,
                ApiKeys.OFFSET_FETCH, ApiKeys.LIST_GROUPS, ApiKeys.DESCRIBE_GROUPS, ApiKeys.DELETE_GROUPS,
                ApiKeys.OFFSET_DELETE, ApiKeys.ALTER_PARTITION_REASSIGNMENTS, ApiKeys.LIST_PARTITION_REASSIGNMENTS,
                ApiKeys.ELECT_LEADERS, ApiKeys.DESCRIBE_QUORUM}) {
            MAX.put(api, api.latestVersion());
        }
    }

    private SupportedApis() {
    }

    public static Iterable<ApiKeys> apis() {
        return MAX.keySet();
    }

    public static boolean isSupported(ApiKeys api, short version) {
        Short max = MAX.get(api);
        return max != null && version >= api.oldestVersion() && version <= max;
    }

    public static ApiVersionsResponseData response() {
        ApiVersionCollection keys = new ApiVersionCollection();
        for (Map.Entry<ApiKeys, Short> e : MAX.entrySet()) {
            keys.add(new ApiVersion()
                    .setApiKey(e.getKey().id)
                    .setMinVersion(e.getKey().oldestVersion())
                    .setMaxVersion(e.getValue()));
        }
        return new ApiVersionsResponseData()
                .setErrorCode((short) 0)
                .setApiKeys(keys)
                .setFinalizedFeaturesEpoch(-1)
                .setZkMigrationReady(false);
    }
}
