package eu.arrowhead.eventhandler.store;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.core5.http.io.entity.EntityUtils;

/** What the process tests ask a server at {@code base} about its event log. */
final class EventLogClient {
    private static final ObjectMapper JSON = new ObjectMapper();

    private EventLogClient() {
    }

    /** The ids of every event in the log, in order, following the pages of {@code mgmt/events}. */
    static List<Long> loggedIds(URI base) throws IOException {
        return loggedIdsAfter(base, 0);
    }

    /**
     * The ids of the events after {@code firstAfterId}, in order: a test that asks only about ids after a seeded log
     * need not read the seed back.
     */
    static List<Long> loggedIdsAfter(URI base, long firstAfterId) throws IOException {
        List<Long> ids = new ArrayList<>();
        try (CloseableHttpClient client = HttpClients.createDefault()) {
            long afterId = firstAfterId;
            while (true) {
                HttpGet get = new HttpGet(base.resolve("/eventhandler/mgmt/events?afterId=" + afterId));
                String body = client.execute(get, response -> EntityUtils.toString(response.getEntity()));
                JsonNode page = JSON.readTree(body);
                page.get("data").forEach(event -> ids.add(event.get("id").asLong()));
                if (page.get("nextAfterId") == null) {
                    return ids;
                }
                afterId = page.get("nextAfterId").asLong();
            }
        }
    }

    /** The value of one series of {@code GET /metrics}. */
    static double metric(URI base, String series) {
        try (CloseableHttpClient client = HttpClients.createDefault()) {
            String body = client.execute(new HttpGet(base.resolve("/metrics")),
                    response -> EntityUtils.toString(response.getEntity()));
            for (String line : body.split("\n")) {
                if (line.startsWith(series + " ")) {
                    return Double.parseDouble(line.substring(series.length() + 1).strip());
                }
            }
            throw new AssertionError("no metric " + series);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
