package eu.arrowhead.eventhandler.bench;

import com.fasterxml.jackson.databind.JsonNode;
import eu.arrowhead.eventhandler.metrics.HealthResource;
import eu.arrowhead.eventhandler.protocol.JsonMapper;
import eu.arrowhead.eventhandler.store.EventStore;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.LongPredicate;
import java.util.stream.LongStream;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.util.Timeout;

/**
 * A server's event store as its management API shows it: how far the writer has got
 * ({@code mgmt/health}) and which events the log holds ({@code mgmt/events}). Asked over HTTP, not through
 * the in-process server's objects, so that the bench checks what any reader of the log would get.
 */
final class StoreProbe implements AutoCloseable {
    private static final Timeout TIMEOUT = Timeout.ofSeconds(10);
    /** Between health requests: often enough to time a catch-up, seldom enough not to slow it down. */
    private static final Duration HEALTH_POLL = Duration.ofMillis(10);
    private static final int DEGRADED = 503;

    private final URI base;
    private final CloseableHttpClient client;

    StoreProbe(URI base) {
        this.base = base;
        this.client = HttpClients.custom()
                .setDefaultRequestConfig(RequestConfig.custom().setConnectionRequestTimeout(TIMEOUT)
                        .setResponseTimeout(TIMEOUT).build())
                .build();
    }

    /**
     * Waits until the store has written every event up to {@code lastId} and holds none unwritten.
     *
     * @return whether it had by the deadline
     */
    boolean awaitWritten(long lastId, Deadline deadline, String label) {
        Progress progress = new Progress(label + " log written up to id", lastId);
        return deadline.await(() -> {
            EventStore.Status store = status();
            progress.update(store.lastLoggedId());
            return store.bufferedEvents() == 0 && store.lastLoggedId() >= lastId;
        }, () -> { }, HEALTH_POLL);
    }

    /**
     * Waits until the store holds no event unwritten, so that the CPU time of writing what was accepted so
     * far is spent; at once with the store off.
     *
     * @return whether it had by the deadline
     */
    boolean awaitIdle(Deadline deadline) {
        return deadline.await(() -> {
            EventStore.Status store = health().store();
            return store == null || store.bufferedEvents() == 0;
        }, () -> { }, HEALTH_POLL);
    }

    /** The ids of {@code acknowledged} (ascending) that the log does not hold; the log is read page by page. */
    long[] missing(long[] acknowledged) {
        LongStream.Builder missing = LongStream.builder();
        int[] next = {0};
        forEachLogged(id -> {
            for (; next[0] < acknowledged.length && acknowledged[next[0]] < id; next[0]++) {
                missing.add(acknowledged[next[0]]);
            }
            if (next[0] < acknowledged.length && acknowledged[next[0]] == id) {
                next[0]++;
            }
            return next[0] < acknowledged.length;
        });
        LongStream.of(acknowledged).skip(next[0]).forEach(missing);
        return missing.build().toArray();
    }

    /** The ids of every event the log holds, ascending. */
    long[] logged() {
        LongStream.Builder logged = LongStream.builder();
        forEachLogged(id -> {
            logged.add(id);
            return true;
        });
        return logged.build().toArray();
    }

    /** Reads the log page by page, oldest first, and tells {@code each} of every id until it answers false. */
    private void forEachLogged(LongPredicate each) {
        String afterId = "0";
        while (afterId != null) {
            JsonNode page = readTree(get("/eventhandler/mgmt/events?afterId=" + afterId, false));
            if (!page.path("data").isArray()) {
                throw new BenchException("mgmt/events answered no data array: " + page);
            }
            for (JsonNode event : page.get("data")) {
                if (!each.test(event.path("id").asLong())) {
                    return;
                }
            }
            // Only a full page names the id to go on after; a shorter one was the end of the log.
            afterId = page.has("nextAfterId") ? page.get("nextAfterId").asText() : null;
        }
    }

    /** Events the store has dropped from the log so far (its buffer overflowed); null without a store. */
    Long droppedEvents() {
        EventStore.Status store = health().store();
        return store == null ? null : store.droppedEvents();
    }

    private EventStore.Status status() {
        EventStore.Status store = health().store();
        if (store == null) {
            throw new BenchException("mgmt/health reports no event store");
        }
        return store;
    }

    private HealthResource.Health health() {
        try {
            return JsonMapper.get().readValue(get("/eventhandler/mgmt/health", true), HealthResource.Health.class);
        } catch (IOException e) {
            throw new BenchException("mgmt/health answered what is not its report: " + e.getMessage(), e);
        }
    }

    private static JsonNode readTree(byte[] json) {
        try {
            return JsonMapper.get().readTree(json);
        } catch (IOException e) {
            throw new BenchException("mgmt/events answered what is not JSON: " + e.getMessage(), e);
        }
    }

    /** @param degradedToo whether a 503 is an answer too: mgmt/health's while the store cannot write */
    private byte[] get(String path, boolean degradedToo) {
        try {
            return client.execute(new HttpGet(base.resolve(path)), response -> {
                byte[] body = response.getEntity() == null ? new byte[0]
                        : EntityUtils.toByteArray(response.getEntity());
                if (response.getCode() != 200 && !(degradedToo && response.getCode() == DEGRADED)) {
                    throw new BenchException("GET " + path + " was answered " + response.getCode() + ": "
                            + new String(body, StandardCharsets.UTF_8));
                }
                return body;
            });
        } catch (IOException e) {
            throw new BenchException("GET " + base.resolve(path) + " failed: " + e, e);
        }
    }

    @Override
    public void close() {
        try {
            client.close();
        } catch (IOException ignored) {
            // the connections are gone either way
        }
    }
}
