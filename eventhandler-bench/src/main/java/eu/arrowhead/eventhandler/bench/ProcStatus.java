package eu.arrowhead.eventhandler.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;
import java.util.stream.Stream;

/**
 * What Linux tells of a process in {@code /proc/PID/status} and {@code /proc/PID/stat}.
 *
 * @param rssBytes resident set size ({@code VmRSS})
 * @param threads  threads of the process ({@code Threads})
 * @param cpuNanos user and system CPU time of the process so far
 */
record ProcStatus(long rssBytes, long threads, long cpuNanos) {
    /** Linux reports CPU time in clock ticks of USER_HZ, which is 100 on every architecture it runs on. */
    private static final long NANOS_PER_TICK = 10_000_000L;
    /** In {@code /proc/PID/stat}, after the name in parentheses: utime and stime are the 12th and 13th. */
    private static final int UTIME_AFTER_NAME = 11;

    /** Reads process {@code pid}, or this process for {@code "self"}. */
    static ProcStatus read(String pid) {
        Path status = Path.of("/proc", pid, "status");
        Path stat = Path.of("/proc", pid, "stat");
        try {
            List<String> lines = Files.readAllLines(status);
            String statLine = Files.readString(stat);
            String[] fields = statLine.substring(statLine.lastIndexOf(')') + 2).split(" ");
            long ticks = Long.parseLong(fields[UTIME_AFTER_NAME]) + Long.parseLong(fields[UTIME_AFTER_NAME + 1]);
            return new ProcStatus(field(lines, "VmRSS", status) * 1024, field(lines, "Threads", status),
                    ticks * NANOS_PER_TICK);
        } catch (IOException | RuntimeException e) {
            throw new BenchException("cannot read " + status + " and " + stat
                    + " (is the process running, on this machine?): " + e, e);
        }
    }

    /** The file descriptors process {@code pid} holds open, its sockets among them: {@code /proc/PID/fd}'s entries. */
    static long openFiles(String pid) {
        Path fd = Path.of("/proc", pid, "fd");
        try (Stream<Path> files = Files.list(fd)) {
            return files.count();
        } catch (IOException | UncheckedIOException e) {
            throw new BenchException("cannot list " + fd + " (is the process running, as this user?): " + e, e);
        }
    }

    /** The process whose command name ({@code /proc/PID/comm}) is {@code name}, if one runs here. */
    static OptionalLong find(String name) {
        try (DirectoryStream<Path> processes = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
            for (Path process : processes) {
                try {
                    if (Files.readString(process.resolve("comm")).trim().equals(name)) {
                        return OptionalLong.of(Long.parseLong(process.getFileName().toString()));
                    }
                } catch (IOException e) {
                    // the process ended while we looked
                }
            }
        } catch (IOException e) {
            return OptionalLong.empty();
        }
        return OptionalLong.empty();
    }

    ResourceSnapshot snapshot() {
        return new ResourceSnapshot(threads, null, rssBytes, null, cpuNanos);
    }

    /** A field's number; {@code VmRSS} is given in kB. */
    private static long field(List<String> lines, String name, Path path) {
        return lines.stream().filter(line -> line.startsWith(name + ":"))
                .map(line -> line.substring(name.length() + 1).trim().split("\\s+")[0])
                .mapToLong(Long::parseLong).findFirst()
                .orElseThrow(() -> new BenchException(path + " has no " + name + " line"));
    }
}
