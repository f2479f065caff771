package eu.arrowhead.eventhandler.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

/**
 * A server already running, given by its address. Its threads, memory and CPU time are seen through
 * {@code /proc} only when its process id is given; then its heap too, after a full collection that
 * {@code jcmd PID GC.run} asks for, as the in-process target does, read from its own {@code /metrics}.
 */
record RemoteTarget(URI baseUri, OptionalLong pid) implements Target {
    private static final String HEAP_USED = "jvm_memory_used_bytes{area=\"heap\"} ";
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    @Override
    public ResourceSnapshot snapshot() {
        if (pid.isEmpty()) {
            return ResourceSnapshot.UNKNOWN;
        }
        Long heap = heapAfterGc();
        ProcStatus status = ProcStatus.read(Long.toString(pid.getAsLong()));
        return new ResourceSnapshot(status.threads(), null, status.rssBytes(), heap, status.cpuNanos());
    }

    /** The heap in use after a full collection, or null where jcmd or the metrics cannot tell it. */
    private Long heapAfterGc() {
        try {
            Process jcmd = new ProcessBuilder("jcmd", Long.toString(pid.getAsLong()), "GC.run")
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!jcmd.waitFor(TIMEOUT.toSeconds(), TimeUnit.SECONDS) || jcmd.exitValue() != 0) {
                jcmd.destroyForcibly();
                return null;
            }
            // A one-off GET: the JDK's client is enough here (no kept-alive connection is reused).
            String metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(baseUri.resolve("/metrics"))
                    .timeout(TIMEOUT).build(), HttpResponse.BodyHandlers.ofString()).body();
            return metrics.lines().filter(line -> line.startsWith(HEAP_USED))
                    .map(line -> (long) Double.parseDouble(line.substring(HEAP_USED.length()).trim()))
                    .findFirst().orElse(null);
        } catch (IOException | RuntimeException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    @Override
    public void close() {
        // the server is not ours to stop
    }
}
