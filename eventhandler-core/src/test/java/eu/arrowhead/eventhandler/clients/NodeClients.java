package eu.arrowhead.eventhandler.clients;

import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import eu.arrowhead.eventhandler.testing.Await;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * SSE clients that nobody on this project wrote, Chromium's {@code EventSource} or the npm {@code eventsource}
 * package, run by {@code src/test/js/clients.mjs} in a Node process of their own. Commands go to its stdin and
 * what the clients see comes back on its stdout, one JSON object a line; each observation is kept as a
 * {@link Seen}, in the order the client saw it.
 *
 * <p>They need Node.js 20+, the modules of {@code src/test/js} ({@code npm ci} there) and, for the browser,
 * Debian's Chromium: without them ({@link #missing}) the tests are skipped, or fail when the environment
 * variable {@value #REQUIRED_VARIABLE} is {@code required} (as {@code .ci/run} sets it).
 */
final class NodeClients implements AutoCloseable {
    static final String REQUIRED_VARIABLE = "EVENTHANDLER_TEST_CLIENTS";
    static final Duration WAIT = Duration.ofSeconds(30);
    /** Named events of the server's own that every EventSource listens to, so that the tests see them. */
    static final List<String> SERVER_NOTICES = List.of("eventhandler.open", "eventhandler.unavailable",
            "eventhandler.replay-gap");

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path SCRIPTS = Path.of("src", "test", "js");
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");

    /** Which clients the Node process runs. */
    enum Kind {
        BROWSER("browser", "playwright-core"),
        NPM("npm", "eventsource");

        private final String argument;
        private final String module;

        Kind(String argument, String module) {
            this.argument = argument;
            this.module = module;
        }
    }

    /**
     * One thing a client saw: {@code kind} {@code open}, {@code error} (with the EventSource's
     * {@code readyState}: 0 reconnecting, 2 closed for good), {@code event} (its {@code type}, {@code message}
     * for {@code onmessage}, and {@code lastEventId} and {@code data}) or, in a browser, {@code console} (a line
     * the page logged, in {@code data}; {@code source} is the page).
     */
    record Seen(String source, String kind, String type, String id, String data, int readyState) {
        boolean isEvent(String eventType) {
            return kind.equals("event") && type.equals(eventType);
        }
    }

    private final Kind kind;
    private final Process process;
    private final Writer stdin;
    private final JsonNode hello;
    private final Map<Long, CompletableFuture<JsonNode>> acks = new ConcurrentHashMap<>();
    private final List<Seen> seen = new ArrayList<>();
    private final StringBuffer transcript = new StringBuffer();
    private final StringBuffer stderr = new StringBuffer();
    private final Map<String, String> pageOfSource = new HashMap<>();
    private long nextSeq;

    private NodeClients(Kind kind, Process process) throws InterruptedException {
        this.kind = kind;
        this.process = process;
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        CompletableFuture<JsonNode> ready = new CompletableFuture<>();
        daemon("node-clients-stdout", () -> readLines(process.getInputStream(), line -> onLine(line, ready)));
        daemon("node-clients-stderr", () -> readLines(process.getErrorStream(), line -> stderr.append(line).append('\n')));
        this.hello = await(ready, Duration.ofSeconds(60), "the Node process to start its clients");
    }

    /**
     * What this machine lacks to run {@code kind}'s clients, as a message for a skipped test, or null when
     * nothing is missing. Fails instead of returning a message when {@value #REQUIRED_VARIABLE} is
     * {@code required}.
     */
    static String missing(Kind kind) throws InterruptedException {
        String missing = null;
        if (nodeVersion() < 20) {
            missing = "Node.js 20 or later ('node' on the PATH)";
        } else if (!Files.isRegularFile(SCRIPTS.resolve("node_modules").resolve(kind.module).resolve("package.json"))) {
            missing = "the npm module " + kind.module + " ('npm ci' in eventhandler-core/src/test/js)";
        } else if (kind == Kind.BROWSER && !Files.isExecutable(CHROMIUM)) {
            missing = "Chromium at " + CHROMIUM + " ('apt-get install chromium')";
        }
        if (missing == null) {
            return null;
        }
        String message = "the suites with third-party SSE clients need " + missing + "; .ci/run installs it";
        if ("required".equals(System.getenv(REQUIRED_VARIABLE))) {
            fail(message + " (" + REQUIRED_VARIABLE + "=required)");
        }
        return message;
    }

    /** Starts the Node process with {@code kind}'s clients; {@link #missing} says whether it can. */
    static NodeClients start(Kind kind) throws InterruptedException {
        Process process;
        try {
            process = new ProcessBuilder("node", "clients.mjs", kind.argument).directory(SCRIPTS.toFile()).start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            return new NodeClients(kind, process);
        } catch (AssertionError | InterruptedException e) {
            end(process);
            throw e;
        }
    }

    private static int nodeVersion() throws InterruptedException {
        try {
            Process node = new ProcessBuilder("node", "--version").redirectErrorStream(true).start();
            String version = new String(node.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (!node.waitFor(30, TimeUnit.SECONDS) || node.exitValue() != 0 || !version.matches("v\\d+\\..*")) {
                return 0;
            }
            return Integer.parseInt(version.substring(1, version.indexOf('.')));
        } catch (IOException e) {
            return 0;
        }
    }

    /** What the Node process said when it was ready (the browser's {@code pageOrigins}, two origins of its own). */
    JsonNode hello() {
        return hello;
    }

    /** Browser only: opens a page, named {@code page}, at {@code url}, and waits until it has loaded. */
    void openPage(String page, URI url) throws InterruptedException {
        command("page", Map.of("page", page, "url", url.toString()));
    }

    /** Browser only: runs the script {@code file} of src/test/js in {@code page}; what it logs is seen as {@code console}. */
    void runScript(String page, String file) throws InterruptedException {
        command("script", Map.of("page", page, "file", file));
    }

    /**
     * Opens an EventSource named {@code source} on {@code stream}, in {@code page} for a browser (null for the
     * npm client), with a listener for each of {@code eventTypes} (named events) and {@link #SERVER_NOTICES}
     * besides {@code onmessage}.
     */
    void open(String page, String source, URI stream, String... eventTypes) throws InterruptedException {
        List<String> types = new ArrayList<>(List.of(eventTypes));
        types.addAll(SERVER_NOTICES);
        Map<String, Object> arguments = new HashMap<>(Map.of("source", source, "url", stream.toString(), "types", types));
        if (page != null) {
            arguments.put("page", page);
            pageOfSource.put(source, page);
        }
        command("open", arguments);
    }

    /** Closes the EventSource named {@code source}, as an application would. */
    void close(String source) throws InterruptedException {
        Map<String, Object> arguments = new HashMap<>(Map.of("source", source));
        if (pageOfSource.containsKey(source)) {
            arguments.put("page", pageOfSource.get(source));
        }
        command("close", arguments);
    }

    /**
     * Browser only: a {@code fetch} from the page with a JSON body; the answer is {@code {status, body}}, or
     * {@code {failed}} when the browser refused it (as it refuses what CORS does not allow).
     */
    JsonNode fetchJson(String page, String method, URI url, String json) throws InterruptedException {
        return command("fetch", Map.of("page", page, "method", method, "url", url.toString(),
                "headers", Map.of("Content-Type", "application/json"), "body", json));
    }

    /** Closes every EventSource (and page) and forgets what was seen: between tests. */
    void reset() throws InterruptedException {
        command("reset", Map.of());
        pageOfSource.clear();
        synchronized (seen) {
            seen.clear();
        }
        transcript.setLength(0);
    }

    /** What {@code source} has seen so far, in order. */
    List<Seen> seen(String source) {
        synchronized (seen) {
            return seen.stream().filter(s -> s.source().equals(source)).toList();
        }
    }

    /** The events of type {@code eventType} (the type an EventSource dispatched them as) at {@code source}. */
    List<Seen> events(String source, String eventType) {
        return seen(source).stream().filter(s -> s.isEvent(eventType)).toList();
    }

    /** Waits until {@code source} has seen {@code count} events of {@code eventType}; returns them all. */
    List<Seen> awaitEvents(String source, String eventType, int count) throws InterruptedException {
        awaitThat(source + " to see " + count + " '" + eventType + "' event(s)",
                () -> events(source, eventType).size() >= count);
        return events(source, eventType);
    }

    /** Waits until {@code source} has seen something of {@code kind} (open, error); returns the first. */
    Seen awaitFirst(String source, String kind) throws InterruptedException {
        awaitThat(source + " to see '" + kind + "'", () -> seen(source).stream().anyMatch(s -> s.kind().equals(kind)));
        return seen(source).stream().filter(s -> s.kind().equals(kind)).findFirst().orElseThrow();
    }

    /** As {@link Await#until}, with what the clients said in the failure's message. */
    void awaitThat(String what, BooleanSupplier condition) throws InterruptedException {
        try {
            Await.until(what, WAIT, condition);
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "\n" + transcript(), e);
        }
    }

    /** Everything the Node process said since the last {@link #reset}: for failure messages. */
    String transcript() {
        return kind.argument + " clients said:\n" + transcript + (stderr.length() > 0 ? "stderr:\n" + stderr : "");
    }

    private JsonNode command(String op, Map<String, ?> arguments) throws InterruptedException {
        long seq;
        CompletableFuture<JsonNode> ack = new CompletableFuture<>();
        synchronized (this) {
            seq = ++nextSeq;
            acks.put(seq, ack);
        }
        ObjectNode command = JSON.valueToTree(arguments);
        command.put("op", op).put("seq", seq);
        try {
            synchronized (stdin) {
                stdin.write(JSON.writeValueAsString(command) + "\n");
                stdin.flush();
            }
        } catch (IOException e) {
            throw new AssertionError("the Node process does not take commands\n" + transcript(), e);
        }
        JsonNode answer = await(ack, WAIT, op + " " + arguments);
        if (answer.hasNonNull("error")) {
            throw new AssertionError(op + " " + arguments + " failed: " + answer.get("error").asText() + "\n" + transcript());
        }
        return answer.get("result");
    }

    private JsonNode await(CompletableFuture<JsonNode> future, Duration timeout, String what) throws InterruptedException {
        try {
            return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            throw new AssertionError("no answer from the Node process within " + timeout + " to: " + what
                    + (process.isAlive() ? "" : " (it exited with " + process.exitValue() + ")") + "\n" + transcript(), e);
        }
    }

    private void onLine(String line, CompletableFuture<JsonNode> ready) {
        transcript.append(line).append('\n');
        JsonNode message;
        try {
            message = JSON.readTree(line);
        } catch (IOException e) {
            return; // not ours: kept in the transcript
        }
        if (message.has("ack")) {
            CompletableFuture<JsonNode> ack = acks.remove(message.get("ack").asLong());
            if (ack != null) {
                ack.complete(message);
            }
        } else if (message.has("ready")) {
            ready.complete(message);
        } else if (message.has("source")) {
            Seen observation = new Seen(message.get("source").asText(), message.get("kind").asText(),
                    message.path("type").asText(null), message.path("id").asText(null),
                    message.path("data").asText(null), message.path("readyState").asInt(-1));
            synchronized (seen) {
                seen.add(observation);
            }
        }
    }

    private static void readLines(InputStream stream, Consumer<String> onLine) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null; ) {
                onLine.accept(line);
            }
        } catch (IOException ignored) {
            // the process ended
        }
    }

    private static void daemon(String name, Runnable task) {
        Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        thread.start();
    }

    /** Ends the Node process and whatever it started (the browser above all): see {@link #end}. */
    @Override
    public void close() throws InterruptedException {
        end(process);
    }

    /**
     * Closing its stdin makes the Node process close what it opened; whatever of it or of its children is still
     * alive after that is killed, so that no Chromium outlives the tests.
     */
    private static void end(Process process) throws InterruptedException {
        // Taken before Node exits: its children would then belong to no one we could find.
        List<ProcessHandle> family = new ArrayList<>(process.descendants().toList());
        family.add(process.toHandle());
        try {
            process.getOutputStream().close();
        } catch (IOException ignored) {
            // it ended already
        }
        process.waitFor(20, TimeUnit.SECONDS);
        // SIGKILL for what is left; a process that ended already is not touched (a handle knows its start time).
        family.forEach(ProcessHandle::destroyForcibly);
        process.waitFor(10, TimeUnit.SECONDS);
    }
}
