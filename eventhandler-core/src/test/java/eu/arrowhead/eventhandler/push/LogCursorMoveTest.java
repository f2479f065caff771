package eu.arrowhead.eventhandler.push;

import static org.junit.jupiter.api.Assertions.assertEquals;

import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;
import org.apache.hc.client5.http.classic.methods.HttpPut;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.ByteArrayEntity;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A push subscription moved to another event type ({@code PUT mgmt/subscriptions/{id}}) with an event store: its
 * cursor moves only once the store has the move. One the store refuses leaves the cursor where it was, so the
 * subscriber still gets its backlog of the old type.
 */
class LogCursorMoveTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path directory;

    @Test
    void aMoveTheStoreRefusesKeepsTheBacklogOfTheOldType() throws Exception {
        AtomicBoolean down = new AtomicBoolean(true);
        try (TestServer server = PushDeliveryTest.server("store.mode", "async",
                "store.url", "jdbc:h2:file:" + directory.resolve("log"), "store.user", "sa", "store.password", "",
                "store.id-mark-file", directory.resolve("log.ids").toString());
             StandInSubscriber subscriber = StandInSubscriber.answering(request -> down.get() ? 503 : 200)) {
            PushDeliveryTest.subscribe(server, subscriber.subscription("consumer", "reading", ""));
            for (int i = 0; i < 50; i++) {
                server.publish("reading", "e" + i);
            }
            Await.until("POSTs fail while the subscriber is down", WAIT,
                    () -> server.metric("eventhandler_push_failed_attempts_total") >= 2);
            // The same embedded database as the server's (its URL as the store opens it): the row locked here
            // makes the server's save of the move wait past H2's lock timeout and fail.
            try (Connection locking = DriverManager.getConnection("jdbc:h2:file:async:" + directory.resolve("log"),
                    "sa", "")) {
                locking.setAutoCommit(false);
                try (Statement select = locking.createStatement()) {
                    select.execute("SELECT * FROM eh_push_subscription FOR UPDATE");
                }
                Reply refused = server.send(put(server, subscriber.subscription("consumer", "other", "")));
                assertEquals(503, refused.statusCode(), refused.body());
                locking.rollback();
            }
            Reply kept = server.get("/eventhandler/mgmt/subscriptions/1");
            assertEquals("reading", StandInSubscriber.read(kept.body()).get("eventType").get("eventTypeName").asText(),
                kept.body());

            down.set(false);
            server.publish("reading", "after");
            Await.until("the backlog and the next event at the subscriber", WAIT,
                    () -> subscriber.payloads().contains("after"));
            List<String> expected = new ArrayList<>(IntStream.range(0, 50).mapToObj(i -> "e" + i).toList());
            expected.add("after");
            assertEquals(expected, subscriber.payloads(), "none lost, none twice, in order");

            // The same move, now saved: from the new type's newest event, nothing more of the old one.
            assertEquals(200, server.send(put(server, subscriber.subscription("consumer", "other", ""))).statusCode());
            server.publish("reading", "left");
            server.publish("other", "moved");
            Await.until("the new type's event at the subscriber", WAIT,
                    () -> subscriber.payloads().contains("moved"));
            expected.add("moved");
            assertEquals(expected, subscriber.payloads());
        }
    }

    private static HttpPut put(TestServer server, String json) {
        HttpPut put = new HttpPut(server.uri("/eventhandler/mgmt/subscriptions/1"));
        put.setEntity(new ByteArrayEntity(json.getBytes(StandardCharsets.UTF_8), ContentType.APPLICATION_JSON));
        return put;
    }
}
