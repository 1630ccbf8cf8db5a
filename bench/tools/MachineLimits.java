import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/**
 * Measures the machine limits a broker's figures are judged against, in the same run as the
 * benchmark: memory copy, loopback TCP, appends to a new file in the page cache (their rate, and
 * the CPU they cost per GB at a broker's write size), and fsync rate.
 * Run with the source launcher: {@code java bench/tools/MachineLimits.java DIR [quick]}; prints
 * one {@code name<TAB>value<TAB>unit} line per limit. Each measurement takes a second or two, the
 * 6 GiB of 16 KiB appends up to 20 (quick: 1 GiB, no slowest-GiB line).
 */
public final class MachineLimits {
    private static final int MIB = 1 << 20;

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args.length > 0 ? args[0] : ".");
        boolean quick = args.length > 1 && args[1].equals("quick");
        print("memory copy (1 thread)", memoryCopyGBps(quick ? 4L << 30 : 16L << 30), "GB/s");
        print("loopback TCP (1 connection)", loopbackGBps(quick ? 2L << 30 : 8L << 30), "GB/s");
        print("append to a new file, page cache (1 MiB writes, no fsync)",
                pageCacheAppendGBps(dir, quick ? 512L * MIB : 2048L * MIB), "GB/s");
        double[] perGiB = pageCacheAppendCpuPerGB(dir, quick ? 1 : 6, 16 * 1024);
        print("append to a new file, page cache (16 KiB writes, a producer batch each), first GiB",
                perGiB[0], "CPU s/GB");
        if (perGiB.length > 1) {
            print("the same, slowest GiB of " + perGiB.length + " (the page cache grown into fresh memory)",
                    Arrays.stream(perGiB).max().orElseThrow(), "CPU s/GB");
        }
        print("fsync of 4 KiB appends", fsyncPerSecond(dir, quick ? 200 : 1000), "fsync/s");
    }

    private static void print(String name, double value, String unit) {
        System.out.printf("%s\t%.2f\t%s%n", name, value, unit);
    }

    /** System.arraycopy between two 64 MiB arrays, after a warm-up. */
    private static double memoryCopyGBps(long bytes) {
        byte[] a = new byte[64 * MIB];
        byte[] b = new byte[64 * MIB];
        for (int i = 0; i < 8; i++) System.arraycopy(a, 0, b, 0, a.length);
        long rounds = bytes / a.length;
        long t0 = System.nanoTime();
        for (long i = 0; i < rounds; i++) System.arraycopy(i % 2 == 0 ? a : b, 0, i % 2 == 0 ? b : a, 0, a.length);
        return rounds * (double) a.length / (System.nanoTime() - t0);
    }

    /** One client writes 1 MiB direct buffers to a server thread that reads and discards them. */
    private static double loopbackGBps(long bytes) throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            Thread reader = new Thread(() -> {
                try (SocketChannel in = server.accept()) {
                    ByteBuffer buf = ByteBuffer.allocateDirect(MIB);
                    while (in.read(buf) >= 0) buf.clear();
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
            reader.start();
            ByteBuffer out = ByteBuffer.allocateDirect(MIB);
            long t0;
            try (SocketChannel client = SocketChannel.open(server.getLocalAddress())) {
                t0 = System.nanoTime();
                for (long sent = 0; sent < bytes; sent += MIB) {
                    out.clear();
                    while (out.hasRemaining()) client.write(out);
                }
            }
            reader.join();
            return bytes / (double) (System.nanoTime() - t0);
        }
    }

    /**
     * Appends 1 MiB direct buffers to a new file without forcing it: what a broker's log append
     * costs the kernel (page cache pages allocated and filled). On a virtual machine whose host
     * backs guest memory lazily, pages not touched recently cost far more than a memory copy.
     */
    private static double pageCacheAppendGBps(Path dir, long bytes) throws IOException {
        Path file = Files.createTempFile(dir, "append", ".bin");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
            ByteBuffer buf = ByteBuffer.allocateDirect(MIB);
            long t0 = System.nanoTime();
            for (long written = 0; written < bytes; written += MIB) {
                buf.clear();
                while (buf.hasRemaining()) ch.write(buf);
            }
            return bytes / (double) (System.nanoTime() - t0);
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /**
     * Appends {@code gib} GiB to a new file in direct buffers of {@code writeSize} bytes (a broker's
     * log append writes one producer batch, 16 KiB by default), without forcing it, and returns
     * this thread's CPU seconds per GB for each GiB: the kernel's cost of filling the page cache.
     * On a virtual machine that backs guest memory lazily, the first GiBs can land on pages the
     * guest recycles (cheap), and the rest on fresh memory, each page then faulted in by the host:
     * a broker that writes GBs pays the latter, so the slowest GiB is the figure to judge it by.
     */
    private static double[] pageCacheAppendCpuPerGB(Path dir, int gib, int writeSize) throws IOException {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Path file = Files.createTempFile(dir, "append", ".bin");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
            ByteBuffer buf = ByteBuffer.allocateDirect(writeSize);
            double[] cpuPerGB = new double[gib];
            for (int g = 0; g < gib; g++) {
                long cpu0 = threads.getCurrentThreadCpuTime();
                for (long written = 0; written < 1L << 30; written += writeSize) {
                    buf.clear();
                    while (buf.hasRemaining()) ch.write(buf);
                }
                cpuPerGB[g] = (threads.getCurrentThreadCpuTime() - cpu0) / 1e9 / ((1L << 30) / 1e9);
            }
            return cpuPerGB;
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /** Appends 4 KiB and forces the file after each append, as a broker with flush.messages=1 would. */
    private static double fsyncPerSecond(Path dir, int count) throws IOException {
        Path file = Files.createTempFile(dir, "fsync", ".bin");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
            ByteBuffer buf = ByteBuffer.allocateDirect(4096);
            long t0 = System.nanoTime();
            for (int i = 0; i < count; i++) {
                buf.clear();
                ch.write(buf);
                ch.force(false);
            }
            return count / ((System.nanoTime() - t0) / 1e9);
        } finally {
            Files.deleteIfExists(file);
        }
    }
}
