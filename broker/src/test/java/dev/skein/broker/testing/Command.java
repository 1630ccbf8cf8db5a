package dev.skein.broker.testing;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A command the tests run to its end: its output, its exit code, a deadline, and the process always
 * gone afterwards (killed if it outlived the deadline or the caller failed). Output goes to temporary
 * files, not pipes, so a command that writes much to both streams cannot block on a full pipe while
 * the test waits for it. For processes that run beside a test (brokers, kcat held mid-request) the
 * tests keep their own {@link ProcessBuilder}.
 */
public final class Command {
    private final List<String> argv;
    private String stdin;
    private Duration timeout = Duration.ofSeconds(30);
    private boolean mergeStderr;

    private Command(List<String> argv) {
        if (argv.isEmpty()) {
            throw new IllegalArgumentException("no command");
        }
        this.argv = List.copyOf(argv);
    }

    public static Command of(String... argv) {
        return new Command(List.of(argv));
    }

    public static Command of(List<String> argv) {
        return new Command(argv);
    }

    /** Writes {@code text} (UTF-8) to the command's standard input, then closes it; without it (or with null), stdin is /dev/null. */
    public Command stdin(String text) {
        this.stdin = text;
        return this;
    }

    /** How long {@link #run} waits before it kills the command (default 30 s). */
    public Command timeout(Duration timeout) {
        this.timeout = timeout;
        return this;
    }

    /** Standard error goes into {@link Result#stdout()}, interleaved as written ({@link Result#stderr()} is empty). */
    public Command mergeStderr() {
        this.mergeStderr = true;
        return this;
    }

    /**
     * Runs the command and waits for it at most the timeout. A command that cannot start (not
     * installed) throws {@link IOException}; one that outlives the timeout is killed and its result
     * says {@link Result#timedOut()}, with what it wrote until then.
     */
    public Result run() throws IOException, InterruptedException {
        Path out = Files.createTempFile("skein-cmd-", ".out");
        Path err = mergeStderr ? null : Files.createTempFile("skein-cmd-", ".err");
        Process process = null;
        try {
            ProcessBuilder builder = new ProcessBuilder(argv).redirectOutput(out.toFile())
                    .redirectInput(stdin == null ? ProcessBuilder.Redirect.from(new File("/dev/null")) : ProcessBuilder.Redirect.PIPE);
            if (mergeStderr) {
                builder.redirectErrorStream(true);
            } else {
                builder.redirectError(err.toFile());
            }
            process = builder.start();
            if (stdin != null) {
                try (OutputStream in = process.getOutputStream()) {
                    in.write(stdin.getBytes(StandardCharsets.UTF_8));
                }
            }
            boolean exited = process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (!exited) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            return new Result(argv, !exited, exited ? process.exitValue() : -1, Files.readString(out),
                    err == null ? "" : Files.readString(err));
        } finally {
            if (process != null) {
                process.destroyForcibly();
            }
            Files.deleteIfExists(out);
            if (err != null) {
                Files.deleteIfExists(err);
            }
        }
    }

    /** What a command did: {@code exit} is -1 when it was killed at the timeout. */
    public record Result(List<String> command, boolean timedOut, int exit, String stdout, String stderr) {
        public boolean ok() {
            return !timedOut && exit == 0;
        }

        /** Both streams, standard output first: for messages and for assertions on what a tool printed. */
        public String output() {
            return stderr.isEmpty() ? stdout : stdout + stderr;
        }

        /** The command, how it ended, and its output: for assertion and exception messages. */
        public String describe() {
            return String.join(" ", command) + (timedOut ? " timed out" : " exited " + exit) + ": " + output().strip();
        }
    }
}
