package dev.skein.e2e;

import io.fabric8.kubernetes.client.KubernetesClient;

import java.nio.file.Path;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * JUnit 5 extension that gives end-to-end tests a real Kubernetes control plane.
 *
 * <p>The control plane is started once per test run (the first test class that uses the extension
 * starts it; it lives in the root context's store) and stopped when the run ends, or on JVM exit,
 * also after a failure. Set {@code SKEIN_E2E_KUBECONFIG} to run against a control plane that is
 * already up ({@code e2e/cluster up}); it is then left running.
 *
 * <p>Test constructors, lifecycle and test methods may declare a {@link KubernetesClient}
 * (cluster-admin) or the {@link ControlPlane} itself as parameters. When a test fails, the tail of
 * every component log and of every pod log of the process kubelet is printed, and the directories
 * named.
 */
public final class ControlPlaneExtension implements BeforeAllCallback, ParameterResolver, TestWatcher {

    private static final ExtensionContext.Namespace NAMESPACE =
            ExtensionContext.Namespace.create(ControlPlaneExtension.class);
    private static final int LOG_TAIL_LINES = 40;
    private static final int POD_LOG_TAIL_LINES = 15;

    /** The control plane of this test run, started on first use. */
    public static ControlPlane controlPlane(ExtensionContext context) {
        return context.getRoot().getStore(NAMESPACE)
                .computeIfAbsent(ControlPlane.class, key -> ControlPlane.startOrReuse(), ControlPlane.class);
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        controlPlane(context);
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        return type == KubernetesClient.class || type == ControlPlane.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        ControlPlane controlPlane = controlPlane(context);
        return parameter.getParameter().getType() == ControlPlane.class ? controlPlane : controlPlane.client();
    }

    @Override
    public void testFailed(ExtensionContext context, Throwable cause) {
        ControlPlane controlPlane = context.getRoot().getStore(NAMESPACE).get(ControlPlane.class, ControlPlane.class);
        if (controlPlane != null) {
            System.err.printf("%n==== %s failed; control plane logs in %s%n%s", context.getDisplayName(),
                    controlPlane.logsDir(), ControlPlane.tailLogs(controlPlane.logsDir(), LOG_TAIL_LINES));
        }
        Path podLogs = Path.of(System.getProperty("skein.e2e.podLogs", "target/e2e-pod-logs"));
        System.err.printf("%n==== pod logs in %s%n%s", podLogs.toAbsolutePath(),
                ControlPlane.tailLogs(podLogs, POD_LOG_TAIL_LINES));
    }
}
