package eu.arrowhead.eventhandler.push;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import eu.arrowhead.eventhandler.api.ErrorMessage;
import eu.arrowhead.eventhandler.api.ExceptionType;
import eu.arrowhead.eventhandler.api.SubscriptionRequest;
import eu.arrowhead.eventhandler.protocol.JsonMapper;
import eu.arrowhead.eventhandler.protocol.RequestException;
import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.StringEntity;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.slf4j.LoggerFactory;

/**
 * Issue 27 item 2, no open relay: a push subscription cannot make the Event Handler POST to itself, to a
 * link-local or metadata address, or anywhere but the host and port it names; and a push that reaches an
 * Event Handler anyway (through another one, or a name that moved) ends at the first hop.
 */
class OpenRelayTest {
    private static TestServer server;

    @BeforeAll
    static void start() {
        server = PushDeliveryTest.server();
    }

    @AfterAll
    static void stop() {
        TestServer.closeAll(server);
    }

    private static String subscription(String address, int port, String notifyUri) {
        return "{\"eventType\":\"relay\",\"subscriberSystem\":{\"systemName\":\"s\",\"address\":\""
                + address.replace("\\", "\\\\") + "\",\"port\":" + port + "},\"notifyUri\":\"" + notifyUri + "\"}";
    }

    /** Subscribes and expects a 400 whose message holds {@code rule}; nothing is subscribed. */
    private static void assertRefused(TestServer server, String json, String rule) throws Exception {
        double before = server.metric("eventhandler_push_subscriptions");
        Reply reply = server.post("/eventhandler/subscribe", json);
        assertEquals(400, reply.statusCode(), reply.body());
        ErrorMessage error = JsonMapper.get().readValue(reply.body(), ErrorMessage.class);
        assertEquals(ExceptionType.BAD_PAYLOAD.name(), error.exceptionType());
        assertTrue(error.errorMessage().contains(rule), error.errorMessage() + " should name: " + rule);
        assertEquals(before, server.metric("eventhandler_push_subscriptions"), "nothing was subscribed");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "127.0.0.1", "localhost", "LocalHost", "127.0.0.2", "::1", "[::1]", "0.0.0.0", "::ffff:127.0.0.1"})
    void theEventHandlerItselfIsRefusedByNameOrNumber(String address) throws Exception {
        assertRefused(server, subscription(address, server.port(), "/eventhandler/publish"),
                "is the Event Handler itself");
    }

    @Test
    void theMachinesOtherAddressesAreItselfToo() throws Exception {
        List<InetAddress> others = NetworkInterface.networkInterfaces().flatMap(NetworkInterface::inetAddresses)
                .filter(address -> !address.isLoopbackAddress() && !address.isLinkLocalAddress())
                .toList();
        for (InetAddress other : others) {
            String text = other instanceof Inet4Address ? other.getHostAddress()
                    : other.getHostAddress().replaceAll("%.*", "");
            assertRefused(server, subscription(text, server.port(), "/eventhandler/publish"),
                    "is the Event Handler itself");
        }
        // The machine's name, when it resolves to one of its addresses (127.0.1.1 on Debian, the container's
        // address in Docker).
        String name;
        try {
            name = InetAddress.getLocalHost().getHostName();
        } catch (java.net.UnknownHostException e) {
            return;
        }
        if (name.matches("[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?")) {
            assertRefused(server, subscription(name, server.port(), "/notify"), "is the Event Handler itself");
        }
    }

    /** A subscriber beside the Event Handler, on another port of 127.0.0.1, still gets its events. */
    @Test
    void anotherPortOfThisMachineReceivesEvents() throws Exception {
        try (TestServer own = PushDeliveryTest.server(); StandInSubscriber subscriber = StandInSubscriber.healthy()) {
            PushDeliveryTest.subscribe(own, subscriber.subscription("beside", "relay", ""));
            PushDeliveryTest.subscribe(own, subscription("localhost", subscriber.port(), "notify")
                    .replace("\"s\"", "\"by-name\""));
            own.publish("relay", "one");
            subscriber.awaitEvents(2);
            assertEquals(List.of("one", "one"), subscriber.payloads());
        }
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "127.0.0.1/x?        | no port, path, query",
        "127.0.0.1:8080      | no port, path, query or userinfo",
        "user@127.0.0.1      | user@",
        "http://127.0.0.1    | no port, path, query",
        "127.0.0.1#x         | no port, path, query",
        "127.1               | four decimal numbers",
        "0177.0.0.1          | four decimal numbers",
        "0x7f.0.0.1          | four decimal numbers",
        "2130706433          | four decimal numbers",
        "256.0.0.1           | from 0 to 255",
        "[::1]:80            | IPv6 address",
        "::1/x               | IPv6 address",
        "fe80::1%lo          | IPv6 zone",
        "a_b.example         | host name",
        "-a.example          | host name",
        "localhost.          | host name",
    })
    void anAddressIsAHostOrAnIpAddressAndNothingElse(String address, String rule) throws Exception {
        assertRefused(server, subscription(address, 29_101, "/notify"), rule);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "http://127.0.0.1:1/x    | not a URL",
        "//evil.example/x        | may not start with //",
        "/a?b                    | query",
        "/a#b                    | fragment",
        "/a%20b                  | '%'",
        "/a b                    | no space",
        "/notify/../eventhandler | '..' segment",
        "./notify                | '.'",
    })
    void aNotifyUriIsAPath(String notifyUri, String rule) throws Exception {
        assertRefused(server, subscription("127.0.0.1", 29_101, notifyUri), rule);
    }

    /** 4.x subscribers write "/notify" or "notify"; the URL is built from the parts, never from text. */
    @Test
    void theUrlIsBuiltFromTheCheckedParts() throws Exception {
        assertEquals("http://127.0.0.1:29101/notify", target("127.0.0.1", "notify", false));
        assertEquals("https://127.0.0.1:29101/a/b:c@d", target(" 127.0.0.1 ", "/a/b:c@d", true));
        assertEquals("http://[0:0:0:0:0:0:0:1]:29101/n", target("::1", "/n", false));
        assertEquals("http://[0:0:0:0:0:0:0:1]:29101/n", target("[::1]", "/n", false));
        assertEquals("http://subscriber.plant.example:29101/n", target("Subscriber.Plant.example", "/n", false));
    }

    private static String target(String address, String notifyUri, boolean https) throws Exception {
        return PushSubscription.validate(JsonMapper.get().readValue(subscription(address, 29_101, notifyUri),
                SubscriptionRequest.class), 1, Instant.EPOCH, Instant.EPOCH).target(https).toString();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "169.254.169.254        | push.denied-targets 169.254.0.0/16 refuses 169.254.169.254",
        "::ffff:169.254.169.254 | push.denied-targets 169.254.0.0/16",
        "fe80::1                | push.denied-targets fe80::/10",
        "100.100.100.200        | push.denied-targets 100.100.100.200/32",
        "fd00:ec2::254          | push.denied-targets fd00:ec2::254/128",
    })
    void linkLocalAndMetadataAddressesAreDeniedByDefault(String address, String rule) throws Exception {
        assertRefused(server, subscription(address, 80, "/latest/meta-data"), rule);
    }

    @Test
    void aDeniedRangeSetByConfigurationIsRefusedByNumberAndByName() throws Exception {
        try (TestServer denying = PushDeliveryTest.server("push.denied-targets", "127.0.0.0/8");
             StandInSubscriber subscriber = StandInSubscriber.healthy()) {
            assertRefused(denying, subscriber.subscription("s", "relay", ""), "push.denied-targets 127.0.0.0/8");
            assertRefused(denying, subscription("localhost", subscriber.port(), "/notify"),
                    "it resolves to 127.0.0.1, and push.denied-targets 127.0.0.0/8");
            assertEquals(0, subscriber.requests());
        }
    }

    @Test
    void anAllowedRangeWinsOverADeniedOne() throws Exception {
        try (TestServer allowList = PushDeliveryTest.server("push.denied-targets", "0.0.0.0/0,::/0",
                "push.allowed-targets", "127.0.0.1/32");
             StandInSubscriber subscriber = StandInSubscriber.healthy()) {
            PushDeliveryTest.subscribe(allowList, subscriber.subscription("s", "relay", ""));
            allowList.publish("relay", "allowed");
            subscriber.awaitEvents(1);
            assertRefused(allowList, subscription("10.1.2.3", 8080, "/notify").replace("\"s\"", "\"t\""),
                    "push.denied-targets 0.0.0.0/0 refuses 10.1.2.3");
        }
        try (TestServer zeroconf = PushDeliveryTest.server("push.allowed-targets", "169.254.7.0/24")) {
            PushDeliveryTest.subscribe(zeroconf, subscription("169.254.7.9", 8080, "/notify"));
            assertRefused(zeroconf, subscription("169.254.169.254", 80, "/").replace("relay", "other"),
                    "push.denied-targets 169.254.0.0/16");
        }
    }

    /**
     * The check holds on every connection, not only at subscribe: a stored subscription by name, loaded when
     * its address is denied (a name that moved, DNS rebinding), gets no POST.
     */
    @Test
    void aNameIsCheckedAgainOnEveryConnection(@TempDir Path directory) throws Exception {
        String[] store = {"store.mode", "async", "store.url", "jdbc:h2:file:" + directory.resolve("log"),
                "store.user", "sa", "store.password", ""};
        try (StandInSubscriber subscriber = StandInSubscriber.healthy()) {
            try (TestServer before = PushDeliveryTest.server(store)) {
                PushDeliveryTest.subscribe(before, subscription("localhost", subscriber.port(), "/notify"));
            }
            String[] denying = java.util.stream.Stream.concat(java.util.Arrays.stream(store), java.util.stream.Stream.of(
                    "push.denied-targets", "127.0.0.0/8,::1/128", "push.max-retries", "0")).toArray(String[]::new);
            try (TestServer after = TestServer.start(denying)) {
                assertEquals(1, after.metric("eventhandler_push_subscriptions"), "loaded: a name is not looked up");
                after.publish("relay", "never");
                Await.until("the POST failed", Duration.ofSeconds(10),
                        () -> after.metric("eventhandler_push_failed_attempts_total") == 1);
                assertEquals(0, subscriber.requests());
            }
        }
    }

    @ParameterizedTest
    @CsvSource({"/eventhandler/publish", "/eventhandler/publish/batch", "/eventhandler/publish/authupdate",
        "/eventhandler/subscribe"})
    void aPushedRequestIsRefusedByEveryEndpoint(String path) throws Exception {
        HttpPost pushed = new HttpPost(server.uri(path));
        pushed.setHeader(PushLoopGuard.HEADER, "1");
        pushed.setEntity(new StringEntity("{\"eventType\":\"SUBSCRIBER_AUTH_UPDATE\",\"payload\":\"1\"}",
                ContentType.APPLICATION_JSON));
        Reply reply = server.send(pushed);
        assertEquals(400, reply.statusCode(), reply.body());
        ErrorMessage error = JsonMapper.get().readValue(reply.body(), ErrorMessage.class);
        assertEquals(ExceptionType.INVALID_PARAMETER.name(), error.exceptionType());
        assertTrue(error.errorMessage().contains("carries Eventhandler-Push"), error.errorMessage());
        assertTrue(server.topic("SUBSCRIBER_AUTH_UPDATE").isEmpty());
    }

    /**
     * Two Event Handlers, each subscribed to push to the other's publish: each event is refused at the first
     * hop and published nowhere else, and the refusals are logged once, not once each.
     */
    @Test
    void aLoopThroughTwoEventHandlersEndsAfterOneHop() throws Exception {
        ch.qos.logback.classic.Logger guardLog =
                (ch.qos.logback.classic.Logger) LoggerFactory.getLogger(PushLoopGuard.class);
        ListAppender<ILoggingEvent> log = new ListAppender<>();
        log.start();
        guardLog.addAppender(log);
        try (TestServer a = TestServer.start("push.max-retries", "0");
             TestServer b = TestServer.start("push.max-retries", "0")) {
            PushDeliveryTest.subscribe(a, subscription("127.0.0.1", b.port(), "/eventhandler/publish"));
            PushDeliveryTest.subscribe(b, subscription("127.0.0.1", a.port(), "/eventhandler/publish"));
            int events = 20;
            for (int i = 0; i < events; i++) {
                a.publish("relay", "e" + i);
            }
            Await.until("every push from a refused by b", Duration.ofSeconds(10),
                    () -> a.metric("eventhandler_push_dropped_events_total{reason=\"retries-exhausted\"}") == events);
            assertEquals(events, a.metric("eventhandler_push_failed_attempts_total"));
            assertEquals(0, a.metric("eventhandler_push_delivered_events_total"));
            assertEquals(Optional.empty(), b.topic("relay").filter(topic -> topic.published() > 0),
                    "b published none of them");
            assertEquals(events, a.topic("relay").orElseThrow().published());
            assertEquals(0, b.metric("eventhandler_push_failed_attempts_total"), "b had nothing to push back");
        } finally {
            guardLog.detachAppender(log);
        }
        assertEquals(1, log.list.size(), "refusals logged: " + log.list.stream()
                .map(ILoggingEvent::getFormattedMessage).toList());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {"metadata.google.internal", "10.0.0.0/33", "10.0.0/8", "fe80::/129"})
    void aTargetListHoldsCidrBlocksOnly(String value) {
        eu.arrowhead.eventhandler.config.ConfigException refused = org.junit.jupiter.api.Assertions.assertThrows(
                eu.arrowhead.eventhandler.config.ConfigException.class,
                () -> eu.arrowhead.eventhandler.config.ConfigLoader.withOverrides(
                        java.util.Map.of("push.denied-targets", "169.254.0.0/16," + value)));
        assertTrue(refused.getMessage().contains("push.denied-targets") && refused.getMessage().contains(value),
                refused.getMessage());
    }

    /** A refusal carries no stack trace: it is an answer. */
    @Test
    void aRefusalIsARequestException() {
        RequestException refused = org.junit.jupiter.api.Assertions.assertThrows(RequestException.class,
                () -> NotifyTarget.of("127.0.0.1/x?", 29_101, "/n"));
        assertEquals(0, refused.getStackTrace().length);
    }
}
