package eu.arrowhead.eventhandler.security;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import eu.arrowhead.eventhandler.NamedThreads;
import eu.arrowhead.eventhandler.api.SystemRequest;
import eu.arrowhead.eventhandler.http.JsonMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Arrowhead Authorization system, asked which publishers a subscriber may receive events from, as the
 * 4.x Event Handler asks it: {@code POST {uri}/subscription/check} with
 * {@code {"consumer": SYSTEM, "publishers": null}} (null: every publisher), answered with
 * {@code {"consumer": SYSTEM, "publishers": [SYSTEM...]}}. The answer is kept per subscriber until the
 * Authorization system announces a change ({@link #forgetAll}, on {@code SUBSCRIBER_AUTH_UPDATE}).
 *
 * <p>Fail closed: while the Authorization system cannot be reached, every subscriber whose publishers are
 * not known yet is authorized for none. Reachability is probed with {@code GET {uri}/echo}: at start
 * {@code 1 + security.authorization.start-retries} times, then in the background every
 * {@code security.authorization.retry-seconds} until it answers.
 */
public final class AuthorizationSystem implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(AuthorizationSystem.class);
    /** Longest wait for a connection to, and for an answer of, the Authorization system. */
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private final URI checkUri;
    private final URI echoUri;
    private final HttpClient client;
    private final Duration retryInterval;
    private final ScheduledExecutorService prober = Executors.newSingleThreadScheduledExecutor(
            NamedThreads.daemons("eh-authorization-probe"));
    private final AtomicBoolean probing = new AtomicBoolean();
    private final Map<String, Set<String>> publishers = new ConcurrentHashMap<>();
    /**
     * How many times the answers were forgotten; guarded by {@link #publishers}'s monitor with the forgetting
     * itself. An answer to a check sent before a forget may be of the old rules, and is not kept.
     */
    private long forgets;
    private volatile boolean reachable;
    private final List<Runnable> reachableAgain = new CopyOnWriteArrayList<>();

    private AuthorizationSystem(URI base, SSLContext context, Duration retryInterval) {
        this.checkUri = URI.create(base + "/subscription/check");
        this.echoUri = URI.create(base + "/echo");
        HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(TIMEOUT);
        if (context != null) {
            builder.sslContext(context);
        }
        this.client = builder.build();
        this.retryInterval = retryInterval;
    }

    /**
     * Connects at start: tries {@code 1 + startRetries} times, {@code retryInterval} apart; if it never
     * answers, returns anyway (failing closed) and goes on trying in the background.
     *
     * @param context the Event Handler's own TLS context, for an https {@code base}
     */
    public static AuthorizationSystem connect(URI base, SSLContext context, int startRetries, Duration retryInterval) {
        AuthorizationSystem system = new AuthorizationSystem(base, context, retryInterval);
        for (int attempt = 0; attempt <= startRetries && !system.reachable; attempt++) {
            if (attempt > 0 && !pause(retryInterval)) {
                break;
            }
            system.reachable = system.answersEcho();
        }
        if (system.reachable) {
            LOG.info("the Authorization system at {} answers", base);
        } else {
            LOG.warn("the Authorization system at {} cannot be reached; until it can, subscribers are authorized"
                    + " for no publisher; trying again every {} s", base, retryInterval.toSeconds());
            system.probeInBackground();
        }
        return system;
    }

    /**
     * The names (lower case) of the publishers {@code subscriber} may receive events from; empty when the
     * Authorization system authorizes none, or cannot say.
     */
    public Set<String> authorizedPublishers(SystemRequest subscriber) {
        String key = subscriber.systemName().toLowerCase(Locale.ROOT);
        Set<String> known = publishers.get(key);
        if (known != null) {
            return known;
        }
        if (!reachable) {
            return Set.of();
        }
        long forgotten = forgotten();
        try {
            Set<String> authorized = check(subscriber);
            if (authorized == null) {
                // A refusal may be passing (a 500): denied now, asked again next time rather than remembered.
                return Set.of();
            }
            keep(key, authorized, forgotten);
            return authorized;
        } catch (IOException e) {
            LOG.warn("the Authorization system at {} cannot be reached ({}); subscribers are authorized for no"
                    + " publisher until it can", checkUri, e.toString());
            reachable = false;
            probeInBackground();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return Set.of();
    }

    /** Forgets what the Authorization system said about every subscriber; each is asked again. */
    public void forgetAll() {
        synchronized (publishers) {
            forgets++;
            publishers.clear();
        }
    }

    private long forgotten() {
        synchronized (publishers) {
            return forgets;
        }
    }

    /** Keeps an answer unless the answers were forgotten since its check was sent. */
    private void keep(String key, Set<String> authorized, long forgottenBefore) {
        synchronized (publishers) {
            if (forgets == forgottenBefore) {
                publishers.put(key, authorized);
            }
        }
    }

    /** Calls {@code listener} on the prober's thread each time the Authorization system answers after an outage. */
    public void onReachableAgain(Runnable listener) {
        reachableAgain.add(listener);
    }

    /** The authorized publishers' names, or {@code null} when the Authorization system answers with an error. */
    private Set<String> check(SystemRequest subscriber) throws IOException, InterruptedException {
        ObjectNode body = JsonMapper.get().createObjectNode();
        body.set("consumer", JsonMapper.get().valueToTree(subscriber));
        body.putNull("publishers");
        HttpRequest request = HttpRequest.newBuilder(checkUri).timeout(TIMEOUT)
                .header("Content-Type", "application/json").header("Accept", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(JsonMapper.get().writeValueAsBytes(body)))
                .build();
        HttpResponse<byte[]> response = client.send(request, HttpResponse.BodyHandlers.ofByteArray());
        if (response.statusCode() != 200) {
            LOG.warn("the Authorization system answered {} to the check of subscriber {}: {}; it is authorized"
                    + " for no publisher", response.statusCode(), subscriber.systemName(),
                    new String(response.body(), StandardCharsets.UTF_8));
            return null;
        }
        Set<String> names = new HashSet<>();
        for (JsonNode publisher : JsonMapper.get().readTree(response.body()).path("publishers")) {
            String name = publisher.path("systemName").asText("");
            if (!name.isEmpty()) {
                names.add(name.toLowerCase(Locale.ROOT));
            }
        }
        return Set.copyOf(names);
    }

    private boolean answersEcho() {
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

    private void probeInBackground() {
        if (probing.compareAndSet(false, true)) {
            probeLater();
        }
    }

    private void probe() {
        if (answersEcho()) {
            reachable = true;
            probing.set(false);
            LOG.info("the Authorization system at {} answers again", echoUri);
            for (Runnable listener : reachableAgain) {
                try {
                    listener.run();
                } catch (RuntimeException e) {
                    LOG.error("recomputing authorizations after the Authorization system came back failed", e);
                }
            }
        } else {
            probeLater();
        }
    }

    private void probeLater() {
        try {
            prober.schedule(this::probe, retryInterval.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // closed: the server is stopping
        }
    }

    private static boolean pause(Duration interval) {
        try {
            Thread.sleep(interval.toMillis());
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public void close() {
        prober.shutdownNow();
    }
}
