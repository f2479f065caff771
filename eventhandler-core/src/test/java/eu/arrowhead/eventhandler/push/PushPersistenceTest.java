package eu.arrowhead.eventhandler.push;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Push subscriptions are kept in the event store's database and survive a restart. */
class PushPersistenceTest {

    @TempDir
    Path directory;

    private TestServer start(String storeMode) {
        return PushDeliveryTest.server("store.mode", storeMode, "store.url", "jdbc:h2:file:" + directory.resolve("log"),
                "store.user", "sa", "store.password", "");
    }

    @Test
    void subscriptionsSurviveARestart() throws Exception {
        try (StandInSubscriber subscriber = StandInSubscriber.healthy()) {
            long id;
            try (TestServer server = start("async")) {
                PushDeliveryTest.subscribe(server, subscriber.subscription("consumer", "Valve",
                        "\"matchMetaData\":true,\"filterMetaData\":{\"site\":\"north\"}"));
                id = listed(server).get("data").get(0).get("id").asLong();
            }
            try (TestServer server = start("async")) {
                JsonNode page = listed(server);
                assertEquals(1, page.get("count").asInt());
                assertEquals(id, page.get("data").get(0).get("id").asLong());
                PushDeliveryTest.publish(server, "{\"eventType\":\"valve\",\"payload\":\"south\","
                        + "\"metaData\":{\"site\":\"south\"}}");
                PushDeliveryTest.publish(server, "{\"eventType\":\"valve\",\"payload\":\"north\","
                        + "\"metaData\":{\"site\":\"NORTH\"}}");
                subscriber.awaitEvents(1);
                assertEquals(List.of("north"), subscriber.payloads());

                PushDeliveryTest.subscribe(server, subscriber.subscription("other", "valve", ""));
                assertEquals(id + 1, listed(server).get("data").get(1).get("id").asLong());
                server.send(new org.apache.hc.client5.http.classic.methods.HttpDelete(
                        server.uri("/eventhandler/mgmt/subscriptions/" + id)));
            }
            try (TestServer server = start("sync")) {
                JsonNode page = listed(server);
                assertEquals(1, page.get("count").asInt());
                assertEquals(id + 1, page.get("data").get(0).get("id").asLong());
            }
        }
    }

    @Test
    void withoutAStoreSubscriptionsLiveInMemoryOnly() throws Exception {
        try (StandInSubscriber subscriber = StandInSubscriber.healthy()) {
            try (TestServer server = PushDeliveryTest.server()) {
                PushDeliveryTest.subscribe(server, subscriber.subscription("consumer", "valve", ""));
                assertEquals(1, listed(server).get("count").asInt());
            }
            try (TestServer server = PushDeliveryTest.server()) {
                assertEquals(0, listed(server).get("count").asInt());
            }
        }
    }

    private static JsonNode listed(TestServer server) {
        return StandInSubscriber.read(server.get("/eventhandler/mgmt/subscriptions").body());
    }
}
