package eu.arrowhead.eventhandler.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.NatsCluster;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node that cannot join for a reason waiting will not mend is refused in seconds, with a message that names the
 * reason: JetStream off, a stream of another cluster's subjects, a node name a running node has. (Joining waits up
 * to a minute for JetStream otherwise, which a leader election needs.)
 */
class ClusterMisconfigurationTest {
    /** Far below the minute joining would wait if it took these for passing trouble. */
    private static final Duration REFUSED_WITHIN = Duration.ofSeconds(10);

    @TempDir
    Path directory;

    private static TestServer node(NatsCluster nats, String... more) {
        String[] settings = new String[6 + more.length];
        System.arraycopy(new String[] {"cluster.enabled", "true", "cluster.nats-urls", nats.urls(),
                "cluster.replicas", "1"}, 0, settings, 0, 6);
        System.arraycopy(more, 0, settings, 6, more.length);
        return TestServer.start(settings);
    }

    /** Starts a node that must be refused: the reason, which it gave within {@link #REFUSED_WITHIN}. */
    private static String refused(NatsCluster nats, String... more) {
        long start = System.nanoTime();
        RuntimeException refusal = assertThrows(RuntimeException.class, () -> node(nats, more).close());
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertTrue(took.compareTo(REFUSED_WITHIN) < 0, "refused only after " + took + ": " + refusal);
        Throwable cause = refusal;
        while (!(cause instanceof IOException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause.getMessage();
    }

    @Test
    void aNatsServerWithoutJetStream() throws Exception {
        try (NatsCluster nats = NatsCluster.startWithoutJetStream(directory)) {
            String why = refused(nats, "cluster.node-name", "no-js");
            assertTrue(why.contains("has JetStream off") && why.contains("-js"), why);
        }
    }

    @Test
    void aStreamOfOtherSubjects() throws Exception {
        try (NatsCluster nats = NatsCluster.start(directory, 1)) {
            try (TestServer first = node(nats, "cluster.node-name", "first", "cluster.stream", "SHARED",
                    "cluster.subject-prefix", "first.events")) {
                String why = refused(nats, "cluster.node-name", "second", "cluster.stream", "SHARED",
                        "cluster.subject-prefix", "second.events");
                assertTrue(why.contains("exists with the subjects [first.events.>]")
                        && why.contains("cluster.subject-prefix"), why);
                assertEquals(200, first.get("/eventhandler/mgmt/health").statusCode());
            }
        }
    }

    @Test
    void aNodeNameARunningNodeHasAndAgainOnceItStopped() throws Exception {
        try (NatsCluster nats = NatsCluster.start(directory, 1)) {
            TestServer twin = node(nats, "cluster.node-name", "twin.a b");
            try {
                String why = refused(nats, "cluster.node-name", "twin.a b");
                assertTrue(why.contains("cluster.node-name twin.a b is in use by a running node"), why);
                // A name that differs only where the subject's token escapes it is another name.
                node(nats, "cluster.node-name", "twin%002ea b").close();
            } finally {
                twin.close();
            }
            try (TestServer again = node(nats, "cluster.node-name", "twin.a b")) {
                assertEquals(200, again.get("/eventhandler/mgmt/health").statusCode());
            }
        }
    }
}
