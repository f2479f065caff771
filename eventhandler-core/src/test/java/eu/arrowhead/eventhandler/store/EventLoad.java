package eu.arrowhead.eventhandler.store;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.io.entity.StringEntity;

/** Publishes and reads for the event log's process tests, over plain HTTP. */
final class EventLoad {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int BATCH = 1_000;

    private EventLoad() {
    }

    /** A server process's arguments: a free port on 127.0.0.1, the database's settings, then {@code more}. */
    static String[] serverArguments(TestDatabase database, String... more) {
        List<String> args = new ArrayList<>(List.of("--server.port=0", "--server.host=127.0.0.1"));
        database.settings().forEach((key, value) -> args.add("--" + key + "=" + value));
        args.addAll(List.of(more));
        return args.toArray(String[]::new);
    }

    /**
     * Fills the log with {@code count} small events of one type, a thousand to a request, and returns once the
     * store has written them all. (In async mode an answer means accepted, not written: without the wait, a test's
     * measured phase began with the store's buffer still full of seed, and its first publishes were refused as
     * backpressure; ReadFloodIT failed so in CI.)
     */
    static void seed(URI base, String type, int count) throws IOException {
        try (CloseableHttpClient client = HttpClients.custom().disableAutomaticRetries().build()) {
            for (int sent = 0; sent < count; sent += BATCH) {
                StringBuilder body = new StringBuilder("[");
                for (int i = 0; i < Math.min(BATCH, count - sent); i++) {
                    body.append(i == 0 ? "" : ",").append("{\"eventType\":\"").append(type)
                            .append("\",\"payload\":\"seed ").append(sent + i).append("\"}");
                }
                HttpPost post = new HttpPost(base.resolve("/eventhandler/publish/batch"));
                post.setEntity(new StringEntity(body.append(']').toString(), ContentType.APPLICATION_JSON));
                int status = client.execute(post, response -> {
                    EntityUtils.consume(response.getEntity());
                    return response.getCode();
                });
                if (status == 503) {
                    // The writer is behind (backpressure): as a publisher honouring Retry-After, but sooner.
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
                    sent -= BATCH;
                    continue;
                }
                if (status != 200) {
                    throw new AssertionError("seeding the log: publish/batch answered " + status);
                }
            }
        }
        awaitWritten(base);
    }

    /** Waits until the store holds no accepted event that is not yet written; fails after two minutes. */
    static void awaitWritten(URI base) {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        double buffered;
        while ((buffered = EventLogClient.metric(base, "eventhandler_store_buffered_events")) > 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(buffered + " events still wait to be written after two minutes");
            }
            // Polling a condition the server exposes only as a metric.
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }

    /** Publishes one event and returns its id; fails unless the answer is 200. */
    static long publish(URI base, String type, String payload) throws IOException {
        String[] answer = post(base, "/eventhandler/publish",
                "{\"eventType\":\"" + type + "\",\"payload\":\"" + payload + "\"}", null);
        if (!answer[0].equals("200")) {
            throw new AssertionError("publish answered " + answer[0] + ": " + answer[1]);
        }
        return JSON.readTree(answer[1]).get("id").asLong();
    }

    /**
     * POSTs a JSON body, with an {@code Idempotency-Key} unless {@code key} is null.
     *
     * @return the status and the body
     */
    static String[] post(URI base, String path, String json, String key) throws IOException {
        try (CloseableHttpClient client = HttpClients.custom().disableAutomaticRetries().build()) {
            HttpPost post = new HttpPost(base.resolve(path));
            post.setEntity(new StringEntity(json, ContentType.APPLICATION_JSON));
            if (key != null) {
                post.setHeader("Idempotency-Key", key);
            }
            return client.execute(post, response -> new String[] {
                    Integer.toString(response.getCode()), EntityUtils.toString(response.getEntity())});
        }
    }

    /** A GET whose body is read and dropped; its status. */
    static int query(URI base, String pathAndQuery) throws IOException {
        try (CloseableHttpClient client = HttpClients.custom().disableAutomaticRetries().build()) {
            return client.execute(new HttpGet(base.resolve(pathAndQuery)), response -> {
                EntityUtils.consume(response.getEntity());
                return response.getCode();
            });
        }
    }
}
