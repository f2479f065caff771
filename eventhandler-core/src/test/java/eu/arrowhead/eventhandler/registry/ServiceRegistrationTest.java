package eu.arrowhead.eventhandler.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import eu.arrowhead.eventhandler.config.ConfigException;
import eu.arrowhead.eventhandler.config.ServiceRegistryConfig;
import eu.arrowhead.eventhandler.registry.StandInServiceRegistry.Entry;
import eu.arrowhead.eventhandler.registry.StandInServiceRegistry.Request;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.security.KeyPairGenerator;
import java.security.PublicKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The Event Handler registers its services in a real (stand-in) 4.x Service Registry over HTTP. */
class ServiceRegistrationTest {
    private static final Duration DEADLINE = Duration.ofSeconds(10);
    private static final String REGISTERED = "eventhandler_service_registry_registered";
    private static final Map<String, String> URIS = Map.of(
            "event-publish", "/eventhandler/publish",
            "event-subscribe", "/eventhandler/subscribe",
            "event-unsubscribe", "/eventhandler/unsubscribe",
            "event-publish-auth-update", "/eventhandler/publish/authupdate");

    private static TestServer eventHandler(String registryUri, String... more) {
        List<String> settings = new ArrayList<>(List.of(
                "arrowhead.service-registry.enabled", "true",
                "arrowhead.service-registry.uri", registryUri,
                "arrowhead.service-registry.retry-seconds", "1",
                "arrowhead.service-registry.timeout-seconds", "2"));
        settings.addAll(Arrays.asList(more));
        return TestServer.start(settings.toArray(String[]::new));
    }

    private static void awaitRegistered(StandInServiceRegistry registry, TestServer server)
            throws InterruptedException {
        Await.until("the four services registered", DEADLINE,
                () -> server.metric(REGISTERED) == 1);
        assertEquals(4, registry.entriesOf("eventhandler").size());
    }

    @Test
    void registersTheFourServicesAfterRemovingStaleEntries() throws Exception {
        try (StandInServiceRegistry registry = StandInServiceRegistry.start()) {
            Entry stale = registry.add("event-publish", "eventhandler", "10.0.0.9", 8455, "/eventhandler/publish");
            Entry otherSystem = registry.add("event-publish", "other-broker", "10.0.0.7", 8455, "/publish");
            try (TestServer server = eventHandler(registry.uri().toString())) {
                awaitRegistered(registry, server);

                assertFalse(registry.entries().contains(stale), "the stale entry is removed");
                assertTrue(registry.entries().contains(otherSystem), "another system's entry stays");
                List<Request> requests = registry.requests();
                assertEquals("GET /echo", requests.get(0).method() + " " + requests.get(0).operation());
                Request removal = registry.requests("/unregister").get(0);
                assertEquals(Map.of("service_definition", "event-publish", "system_name", "eventhandler",
                        "address", "10.0.0.9", "port", "8455", "service_uri", "/eventhandler/publish"),
                        removal.params());
                int publishRegistration = requests.stream().map(r -> r.body() == null ? "" : r.body()
                        .path("serviceDefinition").asText()).toList().indexOf("event-publish");
                assertTrue(requests.indexOf(removal) < publishRegistration, "stale entries go before registering");
                assertEquals(List.of("event-publish", "event-subscribe", "event-unsubscribe",
                                "event-publish-auth-update"),
                        registry.requests("/query").stream()
                                .map(q -> q.body().path("serviceDefinitionRequirement").asText()).toList());

                for (Entry entry : registry.entriesOf("eventhandler")) {
                    assertEquals(URIS.get(entry.serviceDefinition()), entry.serviceUri());
                    assertEquals("127.0.0.1", entry.address());
                    assertEquals(server.port(), entry.port());
                    assertEquals("NOT_SECURE", entry.secure());
                    assertEquals(List.of("HTTP-INSECURE-JSON"), entry.interfaces());
                    assertNull(entry.authenticationInfo());
                }
                JsonNode body = registry.requests("/register").get(0).body();
                assertEquals(new TreeSet<>(List.of("interfaces", "providerSystem", "secure", "serviceDefinition", "serviceUri")),
                        fieldNames(body));
                assertEquals(new TreeSet<>(List.of("address", "port", "systemName")), fieldNames(body.get("providerSystem")));
            }
        }
    }

    @Test
    void unregistersAtShutdown() throws Exception {
        try (StandInServiceRegistry registry = StandInServiceRegistry.start()) {
            int port;
            try (TestServer server = eventHandler(registry.uri().toString())) {
                awaitRegistered(registry, server);
                port = server.port();
            }
            assertEquals(List.of(), registry.entriesOf("eventhandler"));
            List<Request> removals = registry.requests("/unregister");
            assertEquals(4, removals.size());
            for (Request removal : removals) {
                assertEquals("DELETE", removal.method());
                assertEquals(String.valueOf(port), removal.params().get("port"));
                assertEquals("eventhandler", removal.params().get("system_name"));
                assertEquals("127.0.0.1", removal.params().get("address"));
                assertEquals(URIS.get(removal.params().get("service_definition")), removal.params().get("service_uri"));
            }
        }
    }

    @Test
    void servesEventsWhileTheRegistryIsDownAndRegistersOnceItIsUp() throws Exception {
        int registryPort = TestServer.freePort();
        try (TestServer server = eventHandler("http://127.0.0.1:" + registryPort + "/serviceregistry")) {
            assertTrue(server.publish("temperature", "21.5") > 0, "publishing works without a registry");
            assertEquals(0, server.metric(REGISTERED));
            try (StandInServiceRegistry registry = StandInServiceRegistry.start(registryPort)) {
                awaitRegistered(registry, server);
                assertTrue(server.publish("temperature", "21.6") > 0);
            }
        }
    }

    @Test
    void retriesAfterAnErrorAndReplacesAnEntryTheRegistrySaysExists() throws Exception {
        try (StandInServiceRegistry registry = StandInServiceRegistry.start()) {
            registry.refuseNextRegistration("event-publish", 503);
            registry.refuseNextRegistration("event-subscribe", 400);
            try (TestServer server = eventHandler(registry.uri().toString())) {
                awaitRegistered(registry, server);

                assertEquals(2, registry.requests("/echo").size(), "one more round after the 503");
                List<String> subscribe = registry.requests().stream()
                        .filter(r -> !r.operation().equals("/query"))
                        .filter(r -> "event-subscribe".equals(r.params().get("service_definition"))
                                || r.body() != null && r.body().path("serviceDefinition").asText().equals("event-subscribe"))
                        .map(r -> r.method() + " " + r.operation()).toList();
                assertEquals(List.of("POST /register", "DELETE /unregister", "POST /register"), subscribe,
                        "as 4.x: unregistered, then registered again");
                assertEquals(String.valueOf(server.port()), registry.requests("/unregister").get(0).params().get("port"));
            }
        }
    }

    @Test
    void shutdownDoesNotWaitLongForARegistryThatHangs() throws Exception {
        try (StandInServiceRegistry registry = StandInServiceRegistry.start()) {
            TestServer server = eventHandler(registry.uri().toString(), "arrowhead.service-registry.timeout-seconds", "1");
            Duration took;
            try {
                awaitRegistered(registry, server);
                registry.hangUnregistrations();
            } finally {
                long start = System.nanoTime();
                server.close();
                took = Duration.ofNanos(System.nanoTime() - start);
            }
            assertFalse(registry.requests("/unregister").isEmpty(), "it tried");
            assertTrue(took.compareTo(Duration.ofSeconds(3)) < 0, "shutdown took " + took);
        }
    }

    @Test
    void disabledMeansNoRequestAtAll() throws Exception {
        try (TestServer server = TestServer.start()) {
            server.publish("temperature", "21.5");
            assertFalse(server.get("/metrics").body().contains(REGISTERED));
        }
        // Nor can a registry be named while registration is off: that setting would do nothing.
        try (StandInServiceRegistry registry = StandInServiceRegistry.start()) {
            ConfigException refused = assertThrows(ConfigException.class, () -> TestServer.start(
                    "arrowhead.service-registry.uri", registry.uri().toString()));
            assertTrue(refused.getMessage().startsWith("arrowhead.service-registry.uri is set, but it cannot take"
                    + " effect: arrowhead.service-registry.enabled is false"), refused.getMessage());
            assertEquals(List.of(), registry.requests());
        }
    }

    @Test
    void secureModeRegistersCertificateSecurityWithThePublicKey() throws Exception {
        PublicKey key = KeyPairGenerator.getInstance("RSA").generateKeyPair().getPublic();
        try (StandInServiceRegistry registry = StandInServiceRegistry.start()) {
            ServiceRegistryConfig config = new ServiceRegistryConfig(true, registry.uri(), "eventhandler",
                    "eventhandler.local", Duration.ofSeconds(1), Duration.ofSeconds(2));
            try (ServiceRegistration registration = ServiceRegistration.start(config, "0.0.0.0", 8455, true, null, key)
                    .orElseThrow()) {
                Await.until("registered", DEADLINE, registration::registered);
            }
            Request first = registry.requests("/register").get(0);
            assertEquals("CERTIFICATE", first.body().path("secure").asText());
            assertEquals("HTTP-SECURE-JSON", first.body().path("interfaces").get(0).asText());
            JsonNode provider = first.body().path("providerSystem");
            assertEquals("eventhandler.local", provider.path("address").asText());
            assertEquals(8455, provider.path("port").asInt());
            assertEquals(Base64.getEncoder().encodeToString(key.getEncoded()),
                    provider.path("authenticationInfo").asText());
            assertEquals(4, registry.requests("/unregister").size(), "unregistered when closed");
        }
    }

    @Test
    void advertisesTheConfiguredAddressElseTheHostElseAnAddressOfThisMachine() {
        assertEquals("eh.example.org", ServiceRegistration.advertisedAddress(" eh.example.org ", "0.0.0.0"));
        assertEquals("192.168.1.20", ServiceRegistration.advertisedAddress("", "192.168.1.20"));
        String found = ServiceRegistration.advertisedAddress("", "0.0.0.0");
        assertNotEquals("0.0.0.0", found);
        assertTrue(found.matches("\\d+\\.\\d+\\.\\d+\\.\\d+"), found);
    }

    private static Set<String> fieldNames(JsonNode node) {
        Set<String> names = new TreeSet<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }
}
