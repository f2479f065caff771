package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.testing.Await;
import eu.arrowhead.eventhandler.testing.RawSubscriber;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Threads are bounded by configuration, not by the number of subscribers. */
class ThreadBoundTest {
    private static final int SUBSCRIBERS = 1_000;

    @Test
    void aThousandSubscribersAddNoThreads() throws Exception {
        int selectors = 2;
        int workers = 4;
        int writers = 2;
        try (TestServer server = TestServer.start("server.selector-threads", Integer.toString(selectors),
                "server.worker-threads", Integer.toString(workers),
                "subscriber.writer-threads", Integer.toString(writers))) {
            server.publish("warm.up", "x");
            int before = ManagementFactory.getThreadMXBean().getThreadCount();
            List<RawSubscriber> subscribers = new ArrayList<>(SUBSCRIBERS);
            try {
                for (int i = 0; i < SUBSCRIBERS; i++) {
                    RawSubscriber subscriber = RawSubscriber.open(server.port(), "?eventType=crowd", 0);
                    subscribers.add(subscriber);
                    subscriber.awaitText(":ok", 10_000);
                }
                int serverThreads = serverThreads();
                int bound = selectors + workers + writers + 1;
                assertTrue(serverThreads <= bound, serverThreads + " server threads; the bound is " + bound);
                int after = ManagementFactory.getThreadMXBean().getThreadCount();
                assertTrue(after - before <= writers, "threads grew from " + before + " to " + after
                        + " with " + SUBSCRIBERS + " subscribers");

                long id = server.publish("crowd", "to everyone");
                for (RawSubscriber subscriber : subscribers) {
                    subscriber.awaitText("id: " + id + "\n", 10_000);
                }
            } finally {
                subscribers.forEach(RawSubscriber::close);
            }
            Await.until("every subscriber is gone", Duration.ofSeconds(20),
                    () -> server.topic("crowd").orElseThrow().subscribers() == 0);
        }
    }

    private static int serverThreads() {
        ThreadInfo[] threads = ManagementFactory.getThreadMXBean().dumpAllThreads(false, false);
        return (int) Arrays.stream(threads).filter(t -> t.getThreadName().startsWith("eh-")).count();
    }
}
