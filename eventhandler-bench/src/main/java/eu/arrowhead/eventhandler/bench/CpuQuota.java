package eu.arrowhead.eventhandler.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A process held to a fixed share of a CPU with a cgroup of its own: {@code cpu.cfs_quota_us} in cgroup v1's cpu
 * hierarchy, or {@code cpu.max} in cgroup v2. Needs root. The group is removed on {@link #close}, once its process
 * has ended.
 */
final class CpuQuota implements AutoCloseable {
    private static final Path V1 = Path.of("/sys/fs/cgroup/cpu");
    private static final Path V2 = Path.of("/sys/fs/cgroup");
    /**
     * The quota is given per 10 ms rather than the default 100 ms: a node that spends its share early in a period
     * waits for the next, and with 100 ms periods that wait alone (75 ms at 0.25 core) broke a 50 ms p99 at any
     * load (scenario cluster, first run: p99 449 ms at 50 events/s).
     */
    private static final long PERIOD_MICROS = 10_000;

    private final Path group;

    private CpuQuota(Path group) {
        this.group = group;
    }

    /**
     * Puts {@code pid} into a new group {@code name} limited to {@code cores} (0.4: 4 ms of CPU per 10 ms).
     *
     * @throws BenchException if no cpu cgroup can be written here
     */
    static CpuQuota hold(String name, long pid, double cores) {
        long quota = Math.round(cores * PERIOD_MICROS);
        try {
            if (Files.isWritable(V1.resolve("cgroup.procs"))) {
                Path group = Files.createDirectories(V1.resolve(name));
                Files.writeString(group.resolve("cpu.cfs_period_us"), Long.toString(PERIOD_MICROS));
                Files.writeString(group.resolve("cpu.cfs_quota_us"), Long.toString(quota));
                Files.writeString(group.resolve("cgroup.procs"), Long.toString(pid));
                return new CpuQuota(group);
            }
            if (Files.isRegularFile(V2.resolve("cgroup.controllers"))) {
                Path group = Files.createDirectories(V2.resolve(name));
                Files.writeString(group.resolve("cpu.max"), quota + " " + PERIOD_MICROS);
                Files.writeString(group.resolve("cgroup.procs"), Long.toString(pid));
                return new CpuQuota(group);
            }
        } catch (IOException e) {
            throw new BenchException("cannot hold process " + pid + " to " + cores + " core with a cgroup (root and a"
                    + " writable cpu cgroup are needed): " + e, e);
        }
        throw new BenchException("no writable cpu cgroup at " + V1 + " or " + V2 + ": run as root");
    }

    /** Removes the group; its process must have ended. */
    @Override
    public void close() {
        try {
            Files.deleteIfExists(group);
        } catch (IOException e) {
            System.err.println("bench: the cgroup " + group + " could not be removed: " + e);
        }
    }
}
