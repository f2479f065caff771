package eu.arrowhead.eventhandler.bench;

import eu.arrowhead.eventhandler.bench.PublishLoop.Shape;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The latency scenarios that measure one server, from the dissertation's chapter 7 and beyond, each row
 * beside the same row through the {@link Peer} brokers that run here (same counts, payloads and clock):
 * <ul>
 *   <li>A: 1 publisher, 1 subscriber; with the ablation of a new connection per publish (the original
 *       Event Handler's clients) and the same loop through our client libraries;</li>
 *   <li>B: 1 publisher, 1 and then 6 subscribers, 9 000 events;</li>
 *   <li>C: 10 publishers at once, 10 subscribers, one topic, 1 000 events each;</li>
 *   <li>F: fan-out, 1 publisher, 1 000 subscribers;</li>
 *   <li>P: Arrowhead 4.x push delivery to 1, 10 and 100 subscribers, and to 1 at a fixed 500 events/s,
 *       each beside the same count of SSE subscribers (no peers: push is ours alone).</li>
 * </ul>
 */
final class LoopScenarios {
    static final int C_PUBLISHERS = 10;
    static final int C_SUBSCRIBERS = 10;
    static final int F_SUBSCRIBERS = 1000;
    /** P's subscriber counts; the largest gets a quarter of the events, so that its rows stay near 30 s. */
    static final List<Integer> P_SUBSCRIBERS = List.of(1, 10, 100);
    private static final int P_MANY_SUBSCRIBERS = 100;
    /**
     * The pace of P's last pair of rows, well below what one push subscriber takes (one POST in flight, about
     * 2 500 a second here): the latency of a POST itself, where the unpaced rows also measure the queue that
     * a publisher faster than its subscriber builds.
     */
    static final int P_PACED_RATE = 500;

    private final Target target;
    private final List<PublishLoop> loops = new ArrayList<>();

    private LoopScenarios(Target target) {
        this.target = target;
    }

    static Scenario.Result a(Target target, int events) {
        return new LoopScenarios(target)
                .ours(Shape.of("A", 1, 1, events), new RawHttpEnds(false))
                .ours(Shape.of("A-new-connection-per-publish", 1, 1, events), new RawHttpEnds(true))
                .ours(Shape.of("A-client-libraries", 1, 1, events), new ClientLibraryEnds())
                .peers(Shape.of("A", 1, 1, events))
                .run("A");
    }

    static Scenario.Result b(Target target, int events) {
        return new LoopScenarios(target)
                .ours(Shape.of("B-1-subscriber", 1, 1, events), new RawHttpEnds(false))
                .peers(Shape.of("B-1-subscriber", 1, 1, events))
                .ours(Shape.of("B-6-subscribers", 1, 6, events), new RawHttpEnds(false))
                .peers(Shape.of("B-6-subscribers", 1, 6, events))
                .run("B");
    }

    static Scenario.Result c(Target target, int eventsPerPublisher) {
        Shape shape = Shape.of("C", C_PUBLISHERS, C_SUBSCRIBERS, eventsPerPublisher);
        return new LoopScenarios(target)
                .ours(shape, new RawHttpEnds(false))
                .ours(Shape.of("C-client-libraries", C_PUBLISHERS, C_SUBSCRIBERS, eventsPerPublisher),
                        new ClientLibraryEnds())
                .peers(shape)
                .run("C");
    }

    static Scenario.Result f(Target target, int events) {
        Shape shape = Shape.of("F", 1, F_SUBSCRIBERS, events);
        return new LoopScenarios(target).ours(shape, new RawHttpEnds(false)).peers(shape).run("F");
    }

    static Scenario.Result p(Target target, int events) {
        LoopScenarios scenarios = new LoopScenarios(target);
        for (int subscribers : P_SUBSCRIBERS) {
            int rowEvents = subscribers >= P_MANY_SUBSCRIBERS ? Math.max(1, events / 4) : events;
            scenarios.push(Shape.of("P-" + subscribers, 1, subscribers, rowEvents))
                    .ours(Shape.of("P-" + subscribers + "-sse", 1, subscribers, rowEvents), new RawHttpEnds(false));
        }
        Shape paced = new Shape("P-1-paced", 1, 1, events, 0, P_PACED_RATE);
        return scenarios.push(paced).ours(paced.labelled("P-1-paced-sse"), new RawHttpEnds(false)).run("P");
    }

    private LoopScenarios ours(Shape shape, PublishLoop.Ends ends) {
        loops.add(new PublishLoop(shape, target.baseUri(), ends, target::snapshot));
        return this;
    }

    /** Push subscribers on an event type of the row's own, which their subscriptions are removed from after. */
    private LoopScenarios push(Shape shape) {
        String eventType = "bench." + shape.label().toLowerCase(Locale.ROOT);
        loops.add(new PublishLoop(shape, target.baseUri(), new PushEnds(eventType), target::snapshot, eventType));
        return this;
    }

    /** The same shape through each peer that is running, labelled with its name; one that is not is skipped. */
    private LoopScenarios peers(Shape shape) {
        for (Peer peer : Peer.values()) {
            if (peer.reachable()) {
                loops.add(new PublishLoop(shape.labelled(shape.label() + "-" + peer.label()), peer.address(),
                        peer.ends(), peer::snapshot));
            } else {
                System.err.println("bench: " + peer.label() + " not reachable at " + peer.hostPort()
                        + "; its " + shape.label() + " row is skipped");
            }
        }
        return this;
    }

    private Scenario.Result run(String name) {
        return LoopTable.of(name, loops.stream().map(PublishLoop::run).toList());
    }
}
