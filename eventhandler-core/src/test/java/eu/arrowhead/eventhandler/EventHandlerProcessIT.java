package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The runnable jar as users run it: a separate process, stopped by a signal. */
class EventHandlerProcessIT {
    private static final Pattern LISTENING = Pattern.compile("listening on port (\\d+)");

    @Test
    void sigtermStopsTheServerWithExitCodeZero() throws Exception {
        Process process = start("--server.port=0", "--server.host=127.0.0.1");
        Lines output = new Lines(process);
        int port = Integer.parseInt(output.await(LISTENING, 30).group(1));
        HttpResponse<String> echo = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/eventhandler/echo")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals("Got it!", echo.body());

        // SIGTERM; Process.destroy() would also close our end of its output, losing the last lines.
        process.toHandle().destroy();
        assertTrue(process.waitFor(30, TimeUnit.SECONDS), "the server did not stop");
        assertEquals(0, process.exitValue(), output.all());
        output.await(Pattern.compile("INFO .* stopped"), 10);
    }

    @Test
    void aConfigurationErrorStopsTheStartWithExitCodeTwoNamingTheKey() throws Exception {
        Process process = start("--server.prot=1");
        Lines output = new Lines(process);
        assertTrue(process.waitFor(30, TimeUnit.SECONDS));
        assertEquals(2, process.exitValue());
        output.await(Pattern.compile("unknown configuration key 'server.prot'"), 5);
    }

    @Test
    void aBadEnvironmentValueIsNamedToo() throws Exception {
        ProcessBuilder builder = command("--server.host=127.0.0.1");
        builder.environment().put("EH_SERVER_PORT", "eighty");
        Process process = builder.start();
        Lines output = new Lines(process);
        assertTrue(process.waitFor(30, TimeUnit.SECONDS));
        assertEquals(2, process.exitValue());
        output.await(Pattern.compile("'server.port' has the value 'eighty'"), 5);
    }

    private static Process start(String... args) throws IOException {
        return command(args).start();
    }

    private static ProcessBuilder command(String... args) {
        String jar = System.getProperty("eventhandler.jar");
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx128m", "-jar", jar));
        command.addAll(List.of(args));
        return new ProcessBuilder(command).redirectErrorStream(true);
    }

    /** The process's output, read by a thread of its own so that the process never blocks on a full pipe. */
    private static final class Lines {
        private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        private final StringBuffer all = new StringBuffer();

        Lines(Process process) {
            Thread reader = new Thread(() -> {
                try (BufferedReader in = new BufferedReader(
                        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line; (line = in.readLine()) != null; ) {
                        all.append(line).append('\n');
                        lines.add(line);
                    }
                } catch (IOException ignored) {
                    // the process ended
                }
            });
            reader.setDaemon(true);
            reader.start();
        }

        Matcher await(Pattern pattern, int seconds) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            while (true) {
                String line = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (line == null) {
                    throw new AssertionError("no line matching " + pattern + " in:\n" + all);
                }
                Matcher matcher = pattern.matcher(line);
                if (matcher.find()) {
                    return matcher;
                }
            }
        }

        String all() {
            return all.toString();
        }
    }
}
