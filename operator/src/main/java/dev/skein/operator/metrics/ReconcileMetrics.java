package dev.skein.operator.metrics;

import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * java-operator-sdk's metrics hook, recorded in Micrometer: per controller, how many reconciles
 * (and cleanups) ran, how long they took ({@code skein_operator_reconcile_seconds}) and how many
 * failed ({@code skein_operator_reconcile_errors_total}).
 */
public final class ReconcileMetrics implements Metrics {
    private final MeterRegistry registry;

    public ReconcileMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public <T> T timeControllerExecution(ControllerExecution<T> execution) throws Exception {
        Timer.Sample sample = Timer.start(registry);
        String result = "success";
        try {
            return execution.execute();
        } catch (Exception | Error e) {
            result = "failure";
            Counter.builder("skein.operator.reconcile.errors").description("Reconciles that threw")
                    .tag("controller", execution.controllerName()).tag("step", execution.name())
                    .register(registry).increment();
            throw e;
        } finally {
            sample.stop(Timer.builder("skein.operator.reconcile").description("Reconcile and cleanup executions")
                    .tag("controller", execution.controllerName()).tag("step", execution.name()).tag("result", result)
                    .register(registry));
        }
    }
}
