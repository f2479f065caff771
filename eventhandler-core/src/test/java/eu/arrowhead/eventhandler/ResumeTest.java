package eu.arrowhead.eventhandler;

import static org.junit.jupiter.api.Assertions.assertEquals;

import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.testing.SseStream;
import eu.arrowhead.eventhandler.testing.SseStream.Frame;
import eu.arrowhead.eventhandler.testing.TestServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ResumeTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @Test
    void resumingWithLastEventIdGetsExactlyTheMissedEventsThenLive() throws Exception {
        try (TestServer server = TestServer.start()) {
            long lastSeen;
            try (SseStream stream = server.subscribe("?eventType=resume")) {
                server.publish("resume", "before");
                lastSeen = Long.parseLong(stream.nextEvent(WAIT).id());
            }
            List<Long> missed = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                missed.add(server.publish("resume", "missed-" + i));
            }
            try (SseStream stream = server.subscribe("?eventType=resume", "Last-Event-ID", Long.toString(lastSeen))) {
                List<Frame> replayed = stream.events(100, WAIT);
                for (int i = 0; i < 100; i++) {
                    assertEquals(Long.toString(missed.get(i)), replayed.get(i).id());
                }
                long live = server.publish("resume", "live");
                assertEquals(Long.toString(live), stream.nextEvent(WAIT).id());
            }
        }
    }

    @Test
    void eventsPublishedDuringTheReplayAreNeitherLostNorDuplicated() throws Exception {
        try (TestServer server = TestServer.start("replay.window-events", "5000")) {
            for (int i = 0; i < 2_000; i++) {
                server.publish("racing", "old-" + i);
            }
            AtomicBoolean publishing = new AtomicBoolean(true);
            AtomicLong lastPublished = new AtomicLong();
            Thread publisher = new Thread(() -> {
                while (publishing.get()) {
                    lastPublished.set(server.publish("racing", "new"));
                }
            });
            publisher.start();
            List<Long> received = new ArrayList<>();
            try (SseStream stream = server.subscribe("?eventType=racing&lastEventId=0")) {
                while (received.size() < 2_500) {
                    received.add(Long.parseLong(stream.nextEvent(WAIT).id()));
                }
                publishing.set(false);
                publisher.join();
                while (received.get(received.size() - 1) < lastPublished.get()) {
                    received.add(Long.parseLong(stream.nextEvent(WAIT).id()));
                }
            }
            for (int i = 0; i < received.size(); i++) {
                assertEquals(i + 1, received.get(i), "gap-free, duplicate-free sequence");
            }
        }
    }

    @Test
    void lastEventIdHeaderWinsOverTheQueryParameter() throws Exception {
        try (TestServer server = TestServer.start()) {
            long first = server.publish("both", "1");
            long second = server.publish("both", "2");
            try (SseStream stream = server.subscribe("?eventType=both&lastEventId=0",
                    "Last-Event-ID", Long.toString(first))) {
                assertEquals(Long.toString(second), stream.nextEvent(WAIT).id());
            }
        }
    }

    @Test
    void resumingAcrossTopicsMergesTheReplayInIdOrder() throws Exception {
        try (TestServer server = TestServer.start()) {
            List<Long> ids = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                ids.add(server.publish(i % 2 == 0 ? "left" : "right", Integer.toString(i)));
            }
            try (SseStream stream = server.subscribe("?eventType=left&eventType=right&lastEventId=0")) {
                List<Frame> frames = stream.events(10, WAIT);
                for (int i = 0; i < 10; i++) {
                    assertEquals(Long.toString(ids.get(i)), frames.get(i).id());
                }
            }
        }
    }

    @Test
    void aResumePointOlderThanTheWindowIsReportedBeforeTheReplay() throws Exception {
        try (TestServer server = TestServer.start("replay.window-events", "10")) {
            List<Long> ids = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                ids.add(server.publish("windowed", Integer.toString(i)));
            }
            try (SseStream stream = server.subscribe("?eventType=windowed", "Last-Event-ID", Long.toString(ids.get(4)))) {
                assertEquals(new ReplayGap(ids.get(4), ids.get(19)), stream.nextGapNotice(WAIT));
                List<Frame> replayed = stream.events(10, WAIT);
                for (int i = 0; i < 10; i++) {
                    assertEquals(Long.toString(ids.get(20 + i)), replayed.get(i).id());
                }
            }
        }
    }

    @Test
    void aResumePointBeyondTheSequenceMeansTheSequenceStartedAgain() throws Exception {
        try (TestServer server = TestServer.start()) {
            long id = server.publish("restarted", "new");
            try (SseStream stream = server.subscribe("?eventType=restarted", "Last-Event-ID", "5000")) {
                assertEquals(new ReplayGap(5000, 0), stream.nextGapNotice(WAIT));
                assertEquals(Long.toString(id), stream.nextEvent(WAIT).id());
            }
        }
    }

    @Test
    void noResumePointMeansLiveEventsOnly() throws Exception {
        try (TestServer server = TestServer.start()) {
            server.publish("live.only", "old");
            try (SseStream stream = server.subscribe("?eventType=live.only")) {
                long id = server.publish("live.only", "new");
                assertEquals(Long.toString(id), stream.nextEvent(WAIT).id());
            }
        }
    }
}
