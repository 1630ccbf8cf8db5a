package dev.skein.broker.testing;

import dev.skein.broker.testing.Command.Result;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CommandTest {

    @Test
    void keepsTheStreamsApartAndTheExitCode() throws Exception {
        Result r = Command.of("sh", "-c", "echo out; echo err >&2; exit 3").run();

        assertThat(r.ok()).isFalse();
        assertThat(r.timedOut()).isFalse();
        assertThat(r.exit()).isEqualTo(3);
        assertThat(r.stdout()).isEqualTo("out\n");
        assertThat(r.stderr()).isEqualTo("err\n");
        assertThat(r.output()).isEqualTo("out\nerr\n");
        assertThat(r.describe()).isEqualTo("sh -c echo out; echo err >&2; exit 3 exited 3: out\nerr");
    }

    @Test
    void mergesStderrInTheOrderWritten() throws Exception {
        Result r = Command.of("sh", "-c", "echo one >&2; echo two; echo three >&2").mergeStderr().run();

        assertThat(r.ok()).isTrue();
        assertThat(r.stdout()).isEqualTo("one\ntwo\nthree\n");
        assertThat(r.stderr()).isEmpty();
    }

    @Test
    void givesTheCommandItsStdinOrNone() throws Exception {
        assertThat(Command.of("cat").stdin("k1:v1\nk2:v2\n").run().stdout()).isEqualTo("k1:v1\nk2:v2\n");
        // without stdin the command reads /dev/null: it sees the end at once instead of waiting for input
        assertThat(Command.of("cat").timeout(Duration.ofSeconds(20)).run()).satisfies(r -> {
            assertThat(r.ok()).isTrue();
            assertThat(r.stdout()).isEmpty();
        });
    }

    @Test
    void doesNotBlockOnACommandThatWritesMuchToBothStreams() throws Exception {
        // 2 MiB to each stream: far more than a pipe holds, so a reader of one pipe at a time would hang
        Result r = Command.of("sh", "-c", "head -c 2097152 /dev/zero | tr '\\0' o; head -c 2097152 /dev/zero | tr '\\0' e >&2")
                .timeout(Duration.ofSeconds(60)).run();

        assertThat(r.ok()).as(r.describe().substring(0, 80)).isTrue();
        assertThat(r.stdout()).hasSize(2 * 1024 * 1024).doesNotContain("e");
        assertThat(r.stderr()).hasSize(2 * 1024 * 1024).doesNotContain("o");
    }

    @Test
    void killsACommandThatOutlivesItsTimeoutAndKeepsWhatItWrote() throws Exception {
        Result r = Command.of("sh", "-c", "echo started; exec sleep 600").timeout(Duration.ofSeconds(3)).run();

        assertThat(r.timedOut()).isTrue();
        assertThat(r.ok()).isFalse();
        assertThat(r.exit()).isEqualTo(-1);
        assertThat(r.stdout()).isEqualTo("started\n");
        assertThat(r.describe()).startsWith("sh -c echo started; exec sleep 600 timed out: started");
        assertThat(ProcessHandle.current().children().filter(p -> p.info().command().orElse("").endsWith("sleep")))
                .as("the killed command is gone").isEmpty();
    }

    @Test
    void aCommandThatCannotStartThrows() {
        assertThatThrownBy(() -> Command.of("skein-no-such-command-here").run())
                .isInstanceOf(IOException.class).hasMessageContaining("skein-no-such-command-here");
    }

    @Test
    void refusesAnEmptyCommand() {
        assertThatThrownBy(Command::of).isInstanceOf(IllegalArgumentException.class).hasMessage("no command");
    }
}
