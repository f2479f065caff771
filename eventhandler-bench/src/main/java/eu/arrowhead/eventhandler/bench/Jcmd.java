package eu.arrowhead.eventhandler.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Runs {@code jcmd} against a JVM of this machine. */
final class Jcmd {
    /** A JVM short of heap, or on a loaded machine, took 6 to 10 s to answer jcmd. */
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private Jcmd() {
    }

    /** jcmd's output, or null when it fails or takes too long. */
    static String run(String pid, String command) {
        Process jcmd;
        try {
            jcmd = new ProcessBuilder("jcmd", pid, command).redirectErrorStream(true).start();
        } catch (IOException e) {
            return null;
        }
        try {
            // The output is small: read to its end, which comes when jcmd exits; a jcmd that hangs is destroyed.
            CompletableFuture<byte[]> output = CompletableFuture.supplyAsync(() -> {
                try {
                    return jcmd.getInputStream().readAllBytes();
                } catch (IOException e) {
                    return new byte[0];
                }
            });
            if (!jcmd.waitFor(TIMEOUT.toSeconds(), TimeUnit.SECONDS) || jcmd.exitValue() != 0) {
                return null;
            }
            return new String(output.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS), StandardCharsets.UTF_8);
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } finally {
            jcmd.destroyForcibly();
        }
    }
}
