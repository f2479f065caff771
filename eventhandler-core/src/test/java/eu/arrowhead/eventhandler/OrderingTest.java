package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;

import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.SseStream.Frame;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** Every subscriber receives every event exactly once, all in the same order. */
class OrderingTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    @Test
    void onePublisherThreeSubscribersReceiveAllTenThousandInPublishOrder() throws Exception {
        int events = 10_000;
        try (TestServer server = TestServer.start()) {
            List<SseStream> streams = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                streams.add(server.subscribe("?eventType=ordered"));
            }
            List<Long> ids = new ArrayList<>(events);
            for (int i = 0; i < events; i++) {
                ids.add(server.publish("ordered", Integer.toString(i)));
            }
            for (SseStream stream : streams) {
                List<Frame> received = stream.events(events, WAIT);
                for (int i = 0; i < events; i++) {
                    assertEquals(Long.toString(ids.get(i)), received.get(i).id(), "event " + i);
                    assertEquals("{\"id\":" + ids.get(i) + ",\"eventType\":\"ordered\",\"payload\":\"" + i + "\"",
                            received.get(i).data().substring(0, received.get(i).data().indexOf(",\"timeStamp\"")));
                }
                stream.close();
            }
        }
    }

    @Test
    void eightConcurrentPublishersFourSubscribersEveryEventExactlyOnceInTheSameOrder() throws Exception {
        int publishers = 8;
        int perPublisher = 5_000;
        try (TestServer server = TestServer.start()) {
            List<SseStream> streams = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                streams.add(server.subscribe("?eventType=concurrent"));
            }
            ExecutorService pool = Executors.newFixedThreadPool(publishers);
            List<Future<List<Long>>> published = new ArrayList<>();
            for (int p = 0; p < publishers; p++) {
                int publisher = p;
                published.add(pool.submit(() -> {
                    List<Long> ids = new ArrayList<>(perPublisher);
                    for (int i = 0; i < perPublisher; i++) {
                        ids.add(server.publish("concurrent", publisher + "-" + i));
                    }
                    return ids;
                }));
            }
            Set<Long> all = new HashSet<>();
            for (Future<List<Long>> future : published) {
                List<Long> ids = future.get();
                for (int i = 1; i < ids.size(); i++) {
                    // One publisher's events keep their order: each waits for the previous one's 200.
                    assertEquals(true, ids.get(i) > ids.get(i - 1));
                }
                all.addAll(ids);
            }
            pool.shutdown();
            int total = publishers * perPublisher;
            assertEquals(total, all.size(), "ids are unique");

            List<String> first = null;
            for (SseStream stream : streams) {
                List<String> order = stream.events(total, WAIT).stream().map(Frame::id).toList();
                assertEquals(total, new HashSet<>(order).size(), "no duplicates");
                Set<Long> received = new HashSet<>();
                long previous = 0;
                for (String id : order) {
                    long value = Long.parseLong(id);
                    assertEquals(true, value > previous, "ids strictly increase");
                    previous = value;
                    received.add(value);
                }
                assertEquals(all, received, "every published event, nothing else");
                if (first == null) {
                    first = order;
                } else {
                    assertEquals(first, order, "same order for every subscriber");
                }
                stream.close();
            }
        }
    }
}
