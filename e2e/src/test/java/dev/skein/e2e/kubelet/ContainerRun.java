package dev.skein.e2e.kubelet;

import io.fabric8.kubernetes.api.model.Container;

/**
 * The kubelet's state of one container of a pod: its current process (if any), restarts, last exit,
 * readiness and liveness counters, and why it is waiting. Owned by the kubelet loop thread.
 */
final class ContainerRun {

    final Container spec;
    /** An init container: runs to completion, in order, before the pod's containers start. */
    final boolean init;
    Process process;
    String startedAt;
    int restartCount;
    Integer lastExitCode;
    String lastStartedAt;
    String lastFinishedAt;
    boolean ready;
    int livenessFailures;
    int readinessFailures;
    int startupFailures;
    /** The startup probe succeeded (or there is none): readiness and liveness probes run. */
    boolean startupDone;
    /** Waiting reason while no process runs (ErrImagePull, CreateContainerConfigError, CrashLoopBackOff). */
    String waitingReason;
    String waitingMessage;
    /** Set once the container finished for good (restartPolicy Never/OnFailure). */
    boolean finished;
    /** Bumped on every start; probes of an earlier start are ignored. */
    int generation;

    ContainerRun(Container spec, boolean init) {
        this.spec = spec;
        this.init = init;
    }

    String name() {
        return spec.getName();
    }

    boolean running() {
        return process != null && process.isAlive();
    }
}
