package eu.arrowhead.eventhandler.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * What Linux tells of a process in {@code /proc/PID/status}.
 *
 * @param rssBytes resident set size ({@code VmRSS})
 * @param threads  threads of the process ({@code Threads})
 */
record ProcStatus(long rssBytes, long threads) {

    /** Reads the status of process {@code pid}, or of this process for {@code "self"}. */
    static ProcStatus read(String pid) {
        Path path = Path.of("/proc", pid, "status");
        List<String> lines;
        try {
            lines = Files.readAllLines(path);
        } catch (IOException e) {
            throw new BenchException("cannot read " + path + " (is the process running, on this machine?): " + e, e);
        }
        return new ProcStatus(field(lines, "VmRSS", path) * 1024, field(lines, "Threads", path));
    }

    /** A field's number; {@code VmRSS} is given in kB. */
    private static long field(List<String> lines, String name, Path path) {
        return lines.stream().filter(line -> line.startsWith(name + ":"))
                .map(line -> line.substring(name.length() + 1).trim().split("\\s+")[0])
                .mapToLong(Long::parseLong).findFirst()
                .orElseThrow(() -> new BenchException(path + " has no " + name + " line"));
    }
}
