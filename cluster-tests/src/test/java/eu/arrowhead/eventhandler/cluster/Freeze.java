package eu.arrowhead.eventhandler.cluster;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * A process stopped with SIGSTOP until {@link #close} sends SIGCONT: it keeps its sockets open and answers nothing,
 * as a server cut off by a partition or stalled by its machine does.
 */
final class Freeze implements AutoCloseable {
    private final long pid;

    private Freeze(long pid) {
        this.pid = pid;
    }

    static Freeze of(long pid) throws IOException, InterruptedException {
        signal("STOP", pid);
        return new Freeze(pid);
    }

    @Override
    public void close() throws IOException, InterruptedException {
        signal("CONT", pid);
    }

    private static void signal(String name, long pid) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(pid)).inheritIO().start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IOException("kill -" + name + " " + pid + " failed");
        }
    }
}
