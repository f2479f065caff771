package eu.arrowhead.eventhandler.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.AuthorizationStandIn;
import eu.arrowhead.eventhandler.testing.NatsCluster;
import eu.arrowhead.eventhandler.testing.Reply;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.TestClient;
import eu.arrowhead.eventhandler.testing.TestPki;
import eu.arrowhead.eventhandler.testing.TestServer;
import io.nats.client.NKey;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Secure mode and cluster mode together: two nodes in secure mode (clients with certificates, an ACL, the
 * Authorization system's stand-in) whose link to NATS is TLS with their own key store and trust store, as secure mode
 * defaults it, and an NKey; the NATS server requires a client certificate from the cloud's CA and the NKey.
 */
class SecureClusterTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final String ACL = """
            publish   publisher  alarms
            publish   other      alarms
            subscribe subscriber alarms
            """;

    @TempDir
    Path directory;

    private final TestPki pki = TestPki.get();

    @Test
    void everyNodeAppliesTheAclAndTheAuthorizationSystemOverAMutualTlsLink() throws Exception {
        NKey nodes = NKey.createUser(new SecureRandom());
        Path seed = Files.writeString(directory.resolve("nodes.nk"), new String(nodes.getSeed()) + "\n",
                StandardCharsets.US_ASCII);
        String config = "tls { " + pki.natsServerTls() + " }\n"
                + "authorization { users: [\n"
                + "  { nkey: " + new String(nodes.getPublicKey()) + ", " + SecuredLinkTest.NODE_PERMISSIONS + " }\n"
                + "  { user: probe, password: probe }\n"
                + "] }\n";
        Path acl = Files.writeString(directory.resolve("acl"), ACL);
        try (NatsCluster nats = NatsCluster.start(directory, 1, new NatsCluster.Gate("tls", config,
                     options -> options.sslContext(pki.context(TestPki.SERVER)).userInfo("probe", "probe")));
             AuthorizationStandIn authorization = new AuthorizationStandIn(pki, 0);
             TestServer first = node(nats, "first", seed, acl, authorization);
             TestServer second = node(nats, "second", seed, acl, authorization);
             TestClient publisher = first.client(pki.context("publisher"));
             TestClient other = first.client(pki.context("other"));
             TestClient subscriber = second.client(pki.context("subscriber"));
             TestClient otherOnSecond = second.client(pki.context("other"))) {
            authorization.authorize("subscriber", "publisher");
            try (SseStream stream = subscriber.subscribe("?eventType=alarms")) {
                publish(other, "other", "not authorized for the subscriber");
                publish(publisher, "publisher", "authorized");
                SseStream.Frame event = stream.nextEvent(WAIT);
                assertTrue(event.data().contains("\"payload\":\"authorized\""), event.data());
            }
            assertEquals(403, otherOnSecond.streamStatus("?eventType=alarms"), "the ACL of the second node");
            Reply refused = subscriber.post("/eventhandler/publish", "{\"eventType\":\"alarms\",\"payload\":\"x\","
                    + "\"source\":{\"systemName\":\"subscriber\"}}");
            assertEquals(403, refused.statusCode(), refused.body());
        }
    }

    /** A node in secure mode; its link to NATS takes the node's own key store and trust store. */
    private TestServer node(NatsCluster nats, String name, Path seed, Path acl, AuthorizationStandIn authorization) {
        return TestServer.start(pki.context("publisher"), pki.serverSettings("cluster.enabled", "true",
                "cluster.nats-urls", nats.urls(), "cluster.node-name", name, "cluster.nkey-seed-file", seed.toString(),
                "security.acl-file", acl.toString(), "security.authorization.enabled", "true",
                "security.authorization.uri", authorization.uri().toString(),
                "security.authorization.start-retries", "0"));
    }

    private static void publish(TestClient client, String source, String payload) {
        Reply reply = client.post("/eventhandler/publish", "{\"eventType\":\"alarms\",\"payload\":\"" + payload
                + "\",\"source\":{\"systemName\":\"" + source + "\"}}");
        assertEquals(200, reply.statusCode(), reply.body());
    }
}
