package eu.arrowhead.eventhandler.push;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import eu.arrowhead.eventhandler.api.ErrorMessage;
import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.api.PushedEvent;
import eu.arrowhead.eventhandler.api.SubscriptionListResponse;
import eu.arrowhead.eventhandler.api.SubscriptionRequest;
import eu.arrowhead.eventhandler.api.SubscriptionResponse;
import eu.arrowhead.eventhandler.protocol.JsonMapper;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import org.apache.hc.client5.http.classic.methods.HttpDelete;
import org.apache.hc.client5.http.classic.methods.HttpPut;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.ByteArrayEntity;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A 4.x client's bodies, written from the field lists of core-java-spring's DTOs, are read and written back
 * unchanged, and the endpoints answer as 4.x does.
 */
class Arrowhead4xCompatibilityTest {
    private static final ObjectMapper PLAIN = new ObjectMapper();

    /** SystemRequestDTO: systemName, address, port, authenticationInfo, metadata. */
    private static final String SYSTEM = "{\"systemName\":\"consumer\",\"address\":\"127.0.0.1\",\"port\":9001,"
            + "\"authenticationInfo\":\"MIIB\",\"metadata\":{\"zone\":\"a\"}}";
    /** SubscriptionRequestDTO: eventType, subscriberSystem, filterMetaData, notifyUri, matchMetaData, startDate, endDate, sources. */
    private static final String SUBSCRIPTION_REQUEST = "{\"eventType\":\"temperature\",\"subscriberSystem\":" + SYSTEM
            + ",\"filterMetaData\":{\"unit\":\"celsius\"},\"notifyUri\":\"/notify\",\"matchMetaData\":true,"
            + "\"startDate\":\"2026-01-01T00:00:00Z\",\"endDate\":\"2099-01-01T00:00:00Z\","
            + "\"sources\":[{\"systemName\":\"sensor\",\"address\":\"10.0.0.2\",\"port\":8080}]}";
    /** SystemResponseDTO: id, systemName, address, port, authenticationInfo, metadata, createdAt, updatedAt. */
    private static final String SYSTEM_RESPONSE = "{\"id\":5,\"systemName\":\"consumer\",\"address\":\"127.0.0.1\","
            + "\"port\":9001,\"authenticationInfo\":\"MIIB\",\"metadata\":{\"zone\":\"a\"},"
            + "\"createdAt\":\"2026-01-01T00:00:00Z\",\"updatedAt\":\"2026-01-02T00:00:00Z\"}";
    /** SubscriptionResponseDTO with EventTypeResponseDTO (id, eventTypeName, createdAt, updatedAt). */
    private static final String SUBSCRIPTION_RESPONSE = "{\"id\":1,\"eventType\":{\"id\":2,\"eventTypeName\":"
            + "\"temperature\",\"createdAt\":\"2026-01-01T00:00:00Z\",\"updatedAt\":\"2026-01-01T00:00:00Z\"},"
            + "\"subscriberSystem\":" + SYSTEM_RESPONSE + ",\"filterMetaData\":{\"unit\":\"celsius\"},"
            + "\"notifyUri\":\"/notify\",\"matchMetaData\":true,\"startDate\":\"2026-01-01T00:00:00Z\","
            + "\"endDate\":\"2099-01-01T00:00:00Z\",\"sources\":[" + SYSTEM_RESPONSE + "],"
            + "\"createdAt\":\"2026-01-01T00:00:00Z\",\"updatedAt\":\"2026-01-02T00:00:00Z\"}";

    @Test
    void fourXBodiesRoundTripUnchanged() throws Exception {
        roundTrip(SUBSCRIPTION_REQUEST, SubscriptionRequest.class);
        roundTrip(SUBSCRIPTION_RESPONSE, SubscriptionResponse.class);
        roundTrip("{\"data\":[" + SUBSCRIPTION_RESPONSE + "],\"count\":1}", SubscriptionListResponse.class);
        roundTrip("{\"eventType\":\"temperature\",\"payload\":\"21\",\"metaData\":{\"unit\":\"celsius\"},"
                + "\"timeStamp\":\"2026-01-01T00:00:00Z\"}", PushedEvent.class);
        roundTrip("{\"eventType\":\"SUBSCRIBER_AUTH_UPDATE\",\"metaData\":{},\"payload\":\"5\",\"source\":" + SYSTEM
                + ",\"timeStamp\":\"2026-01-01T00:00:00Z\"}", EventPublishRequest.class);
        roundTrip("{\"errorMessage\":\"x\",\"errorCode\":400,\"exceptionType\":\"BAD_PAYLOAD\",\"origin\":\"/y\"}",
                ErrorMessage.class);
    }

    private static void roundTrip(String json, Class<?> type) throws Exception {
        Object read = JsonMapper.get().readValue(json, type);
        assertEquals(PLAIN.readTree(json), PLAIN.readTree(JsonMapper.get().writeValueAsString(read)), type.getName());
    }

    @Test
    void aSubscriptionIsListedWithFourXFieldNames() throws Exception {
        try (TestServer server = TestServer.start()) {
            assertEquals(200, server.post("/eventhandler/subscribe", SUBSCRIPTION_REQUEST).statusCode());
            Reply list = server.get("/eventhandler/mgmt/subscriptions");
            assertEquals(200, list.statusCode(), list.body());
            JsonNode page = PLAIN.readTree(list.body());
            assertEquals(1, page.get("count").asInt());
            JsonNode subscription = page.get("data").get(0);
            Set<String> dtoFields = Set.of("id", "eventType", "subscriberSystem", "filterMetaData", "notifyUri",
                    "matchMetaData", "startDate", "endDate", "sources", "createdAt", "updatedAt");
            assertEquals(dtoFields, names(subscription));
            assertEquals("temperature", subscription.get("eventType").get("eventTypeName").asText());
            assertEquals("consumer", subscription.get("subscriberSystem").get("systemName").asText());
            assertEquals(9001, subscription.get("subscriberSystem").get("port").asInt());
            assertEquals("sensor", subscription.get("sources").get(0).get("systemName").asText());
            assertEquals("2026-01-01T00:00:00Z", subscription.get("startDate").asText());
            long id = subscription.get("id").asLong();
            Reply one = server.get("/eventhandler/mgmt/subscriptions/" + id);
            assertEquals(PLAIN.readTree(one.body()), subscription);
            SubscriptionResponse typed = JsonMapper.get().readValue(one.body(), SubscriptionResponse.class);
            assertEquals("/notify", typed.notifyUri());
        }
    }

    @Test
    void managementPagesSortsUpdatesAndDeletes() throws Exception {
        try (TestServer server = TestServer.start()) {
            for (String type : new String[] {"a", "b", "c"}) {
                assertEquals(200, server.post("/eventhandler/subscribe", SUBSCRIPTION_REQUEST
                        .replace("\"temperature\"", "\"" + type + "\"")).statusCode());
            }
            JsonNode page = PLAIN.readTree(server.get("/eventhandler/mgmt/subscriptions?page=0&item_per_page=2")
                    .body());
            assertEquals(3, page.get("count").asInt());
            assertEquals(2, page.get("data").size());
            JsonNode last = PLAIN.readTree(server.get(
                    "/eventhandler/mgmt/subscriptions?page=1&item_per_page=2&direction=ASC&sort_field=id").body());
            assertEquals("c", last.get("data").get(0).get("eventType").get("eventTypeName").asText());
            JsonNode descending = PLAIN.readTree(server.get(
                    "/eventhandler/mgmt/subscriptions?direction=DESC&sort_field=createdAt").body());
            assertEquals("c", descending.get("data").get(0).get("eventType").get("eventTypeName").asText());
            long id = descending.get("data").get(0).get("id").asLong();

            HttpPut put = new HttpPut(server.uri("/eventhandler/mgmt/subscriptions/" + id));
            put.setEntity(new ByteArrayEntity(SUBSCRIPTION_REQUEST.replace("\"temperature\"", "\"d\"")
                    .replace("/notify", "/changed").getBytes(StandardCharsets.UTF_8), ContentType.APPLICATION_JSON));
            Reply updated = server.send(put);
            assertEquals(200, updated.statusCode(), updated.body());
            assertEquals("/changed", PLAIN.readTree(updated.body()).get("notifyUri").asText());
            assertEquals(id, PLAIN.readTree(updated.body()).get("id").asLong());

            assertEquals(200, server.send(new HttpDelete(server.uri("/eventhandler/mgmt/subscriptions/" + id)))
                    .statusCode());
            assertEquals(200, server.send(new HttpDelete(server.uri("/eventhandler/mgmt/subscriptions/" + id)))
                    .statusCode(), "deleting what is not there succeeds, as 4.x");
            assertEquals(2, PLAIN.readTree(server.get("/eventhandler/mgmt/subscriptions").body()).get("count").asInt());
            assertBad(server.get("/eventhandler/mgmt/subscriptions/" + id));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "{\"subscriberSystem\":{\"systemName\":\"s\",\"address\":\"h\",\"port\":1},\"notifyUri\":\"/n\"}",
        "{\"eventType\":\"t\",\"notifyUri\":\"/n\"}",
        "{\"eventType\":\"t\",\"subscriberSystem\":{\"address\":\"h\",\"port\":1},\"notifyUri\":\"/n\"}",
        "{\"eventType\":\"t\",\"subscriberSystem\":{\"systemName\":\"s\",\"port\":1},\"notifyUri\":\"/n\"}",
        "{\"eventType\":\"t\",\"subscriberSystem\":{\"systemName\":\"s\",\"address\":\"h\"},\"notifyUri\":\"/n\"}",
        "{\"eventType\":\"t\",\"subscriberSystem\":{\"systemName\":\"s\",\"address\":\"h\",\"port\":70000},\"notifyUri\":\"/n\"}",
        "{\"eventType\":\"t\",\"subscriberSystem\":{\"systemName\":\"s\",\"address\":\"h\",\"port\":1}}",
        "{\"eventType\":\"t\",\"subscriberSystem\":{\"systemName\":\"s\",\"address\":\"h\",\"port\":1},\"notifyUri\":\"/a b\"}",
        "{\"eventType\":\"a\\nb\",\"subscriberSystem\":{\"systemName\":\"s\",\"address\":\"h\",\"port\":1},\"notifyUri\":\"/n\"}",
        "{\"eventType\":\"t\",\"subscriberSystem\":{\"systemName\":\"s\",\"address\":\"h\",\"port\":1},\"notifyUri\":\"/n\",\"startDate\":\"yesterday\"}",
        "{\"eventType\":\"t\",\"subscriberSystem\":{\"systemName\":\"s\",\"address\":\"h\",\"port\":1},\"notifyUri\":\"/n\",\"startDate\":\"2026-02-01T00:00:00Z\",\"endDate\":\"2026-01-01T00:00:00Z\"}",
        "{\"eventType\":\"t\",\"subscriberSystem\":{\"systemName\":\"s\",\"address\":\"h\",\"port\":1},\"notifyUri\":\"/n\",\"matchMetaData\":true}",
        "{\"eventType\":\"t\",\"subscriberSystem\":{\"systemName\":\"s\",\"address\":\"h\",\"port\":1},\"notifyUri\":\"/n\",\"sources\":[{\"address\":\"x\"}]}",
        "{\"eventType\":\"t\",\"subscriberSystem\":{\"systemName\":\"s\",\"address\":\"h\",\"port\":1},\"notifyUri\":\"/n\",\"extra\":1}",
        "null",
        "[",
    })
    void aBadSubscriptionIsA400(String body) throws Exception {
        try (TestServer server = TestServer.start()) {
            assertBad(server.post("/eventhandler/subscribe", body));
            assertEquals(0, PLAIN.readTree(server.get("/eventhandler/mgmt/subscriptions").body()).get("count").asInt());
        }
    }

    @Test
    void badParametersAreA400() throws Exception {
        try (TestServer server = TestServer.start()) {
            for (String query : new String[] {"page=0", "item_per_page=2", "page=-1&item_per_page=2",
                    "page=0&item_per_page=0", "page=x&item_per_page=1", "direction=UP", "sort_field=eventType"}) {
                assertBad(server.get("/eventhandler/mgmt/subscriptions?" + query));
            }
            assertBad(server.get("/eventhandler/mgmt/subscriptions/0"));
            assertBad(server.get("/eventhandler/mgmt/subscriptions/abc"));
            assertBad(server.get("/eventhandler/mgmt/subscriptions/99"));
            assertBad(server.send(new HttpDelete(server.uri("/eventhandler/unsubscribe?system_name=s"))));
            assertBad(server.send(new HttpDelete(server.uri("/eventhandler/unsubscribe?event_type=t"))));
            assertBad(server.send(new HttpDelete(server.uri(
                    "/eventhandler/unsubscribe?event_type=t&system_name=s&address=h&port=x"))));
        }
    }

    @Test
    void authorizationUpdatesTakeTheFourXEvent() throws Exception {
        try (TestServer server = TestServer.start()) {
            String update = "{\"eventType\":\"SUBSCRIBER_AUTH_UPDATE\",\"payload\":\"5\",\"source\":"
                    + "{\"systemName\":\"authorization\",\"address\":\"127.0.0.1\",\"port\":8445},"
                    + "\"timeStamp\":\"2026-01-01T00:00:00Z\"}";
            Reply ok = server.post("/eventhandler/publish/authupdate", update);
            assertEquals(200, ok.statusCode(), ok.body());
            assertBad(server.post("/eventhandler/publish/authupdate", update.replace("SUBSCRIBER_AUTH_UPDATE", "x")));
            assertBad(server.post("/eventhandler/publish/authupdate", update.replace("\"5\"", "\"five\"")));
        }
    }

    private static void assertBad(Reply reply) throws Exception {
        assertEquals(400, reply.statusCode(), reply.body());
        ErrorMessage error = JsonMapper.get().readValue(reply.body(), ErrorMessage.class);
        assertEquals(400, error.errorCode());
        assertTrue(error.errorMessage() != null && !error.errorMessage().isBlank());
    }

    private static Set<String> names(JsonNode node) {
        Set<String> names = new HashSet<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }
}
