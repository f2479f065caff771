package eu.arrowhead.eventhandler.security;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import eu.arrowhead.eventhandler.api.SystemRequest;
import eu.arrowhead.eventhandler.diagnostics.LogThrottle;
import eu.arrowhead.eventhandler.protocol.JsonMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Arrowhead Authorization system, asked which publishers a subscriber may receive events from, as the
 * 4.x Event Handler asks it: {@code POST {uri}/subscription/check} with
 * {@code {"consumer": SYSTEM, "publishers": null}} (null: every publisher), answered with
 * {@code {"consumer": SYSTEM, "publishers": [SYSTEM...]}}; and whether it is there at all:
 * {@code GET {uri}/echo}. What it said is kept by {@link AuthorizationAnswers}.
 */
final class AuthorizationSystem {
    private static final Logger LOG = LoggerFactory.getLogger(AuthorizationSystem.class);
    /** Longest wait for a connection to, and for an answer of, the Authorization system. */
    private static final Duration TIMEOUT = Duration.ofSeconds(5);
    /** Checks in flight at once during an update or a recheck: enough to overlap round trips, few for a Pi. */
    private static final int PARALLEL_CHECKS = 8;

    private final URI base;
    private final URI checkUri;
    private final URI echoUri;
    private final HttpClient client;
    private final LogThrottle refusals = new LogThrottle(Duration.ofMinutes(1));

    /** @param context the Event Handler's own TLS context, for an https {@code base}; {@code null} for http */
    AuthorizationSystem(URI base, SSLContext context) {
        this.base = base;
        this.checkUri = URI.create(base + "/subscription/check");
        this.echoUri = URI.create(base + "/echo");
        HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(TIMEOUT);
        if (context != null) {
            builder.sslContext(context);
        }
        this.client = builder.build();
    }

    URI uri() {
        return base;
    }

    /**
     * The names (lower case) of the publishers {@code subscriber} may receive events from, or {@code null} when
     * the Authorization system answers with an error.
     *
     * @throws IOException if it cannot be reached
     */
    Set<String> check(SystemRequest subscriber) throws IOException, InterruptedException {
        try {
            return sendCheck(subscriber).get();
        } catch (ExecutionException e) {
            throw ioException(e.getCause());
        }
    }

    /**
     * What {@link #checkAll} learnt: the answers it got, and why it stopped early if it did.
     *
     * @param answers     the publishers of each subscriber it answered for (not those it answered with an error)
     * @param unreachable the failure that stopped the checks, {@code null} if every check was answered
     */
    record Answers(Map<SystemRequest, Set<String>> answers, IOException unreachable) {
    }

    /**
     * Asks about every subscriber, {@value #PARALLEL_CHECKS} at a time: an authorization update is answered
     * after the slowest check, not after the sum of them all. Sends no more once one cannot reach it, so that an
     * Authorization system that is gone costs one timeout, not one per subscriber.
     */
    Answers checkAll(Collection<SystemRequest> subscribers) throws InterruptedException {
        Semaphore slots = new Semaphore(PARALLEL_CHECKS);
        Map<SystemRequest, CompletableFuture<Set<String>>> pending = new LinkedHashMap<>();
        AtomicReference<IOException> unreachable = new AtomicReference<>();
        for (SystemRequest subscriber : subscribers) {
            slots.acquire();
            if (unreachable.get() != null) {
                break;
            }
            try {
                pending.put(subscriber, sendCheck(subscriber).whenComplete((answer, failure) -> {
                    if (failure != null) {
                        unreachable.compareAndSet(null, ioException(failure));
                    }
                    slots.release();
                }));
            } catch (IOException e) {
                unreachable.compareAndSet(null, e);
                break;
            }
        }
        Map<SystemRequest, Set<String>> answers = new HashMap<>();
        for (Map.Entry<SystemRequest, CompletableFuture<Set<String>>> check : pending.entrySet()) {
            try {
                Set<String> answer = check.getValue().get();
                if (answer != null) {
                    answers.put(check.getKey(), answer);
                }
            } catch (ExecutionException e) {
                // counted in unreachable
            }
        }
        return new Answers(answers, unreachable.get());
    }

    private static IOException ioException(Throwable failure) {
        Throwable cause = failure instanceof CompletionException ? failure.getCause() : failure;
        return cause instanceof IOException io ? io : new IOException(cause);
    }

    private CompletableFuture<Set<String>> sendCheck(SystemRequest subscriber) throws IOException {
        ObjectNode body = JsonMapper.get().createObjectNode();
        body.set("consumer", JsonMapper.get().valueToTree(subscriber));
        body.putNull("publishers");
        HttpRequest request = HttpRequest.newBuilder(checkUri).timeout(TIMEOUT)
                .header("Content-Type", "application/json").header("Accept", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(JsonMapper.get().writeValueAsBytes(body)))
                .build();
        // The request's timeout ends with the answer's headers; a body trickled slowly is cut off here.
        return client.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray())
                .orTimeout(2 * TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                .thenApply(response -> publishers(subscriber, response));
    }

    private Set<String> publishers(SystemRequest subscriber, HttpResponse<byte[]> response) {
        if (response.statusCode() != 200) {
            // A subscriber's name comes from the client in insecure mode: one line a minute at most.
            long held = refusals.pass();
            if (held >= 0) {
                LOG.warn("the Authorization system answered {} to the check of subscriber {} ({} more such answers in"
                        + " the last minute): {}", response.statusCode(), subscriber.systemName(), held,
                        abbreviated(new String(response.body(), StandardCharsets.UTF_8)));
            }
            return null;
        }
        Set<String> names = new HashSet<>();
        try {
            for (JsonNode publisher : JsonMapper.get().readTree(response.body()).path("publishers")) {
                String name = publisher.path("systemName").asText("");
                if (!name.isEmpty()) {
                    names.add(name.toLowerCase(Locale.ROOT));
                }
            }
        } catch (IOException e) {
            long held = refusals.pass();
            if (held >= 0) {
                LOG.warn("the Authorization system's answer to the check of subscriber {} is not JSON ({} more such"
                        + " answers in the last minute): {}", subscriber.systemName(), held, e.getMessage());
            }
            return null;
        }
        return Set.copyOf(names);
    }

    private static String abbreviated(String body) {
        return body.length() <= 200 ? body : body.substring(0, 200) + "...";
    }

    /** Whether it answers its echo. */
    boolean answersEcho() {
        try {
            HttpRequest request = HttpRequest.newBuilder(echoUri).timeout(TIMEOUT).GET().build();
            return client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
        } catch (IOException e) {
            LOG.debug("the Authorization system at {} does not answer: {}", echoUri, e.toString());
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
