package dev.skein.broker.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/** Small files replaced atomically: write a temporary file, fsync it, rename over the target, fsync the directory. */
final class Checkpoints {
    private Checkpoints() {
    }

    static void writeAtomically(Path target, ByteBuffer content) throws IOException {
        Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            while (content.hasRemaining()) {
                ch.write(content);
            }
            ch.force(true);
        }
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        fsyncDirectory(target.getParent());
    }

    static void writeAtomically(Path target, String content) throws IOException {
        writeAtomically(target, ByteBuffer.wrap(content.getBytes(StandardCharsets.UTF_8)));
    }

    static void fsyncDirectory(Path dir) {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException e) {
            // Not every file system lets a directory be opened for fsync; the rename is still atomic.
        }
    }
}
