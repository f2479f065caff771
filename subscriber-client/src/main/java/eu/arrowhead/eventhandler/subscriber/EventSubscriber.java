package eu.arrowhead.eventhandler.subscriber;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A subscription to events of an Event Handler: one Server-Sent Events stream
 * ({@code GET /eventhandler/events}) that stays open until {@link #close()}, and hands every matching
 * event to an {@link EventListener}.
 *
 * <pre>{@code
 * try (EventSubscriber subscriber = EventSubscriber.builder(URI.create("http://localhost:8455"))
 *         .eventTypes("temperature")
 *         .listener(event -> log.info("{}: {}", event.eventType(), event.payload()))
 *         .subscribe()) {
 *     ...
 * }
 * }</pre>
 *
 * <p><b>Exactly once, in order.</b> The listener receives each event once, in id order, across
 * reconnects: the subscription remembers the id of the last event it delivered, resumes after it with
 * {@code Last-Event-ID}, and skips any event it has already delivered. Only what the server no longer
 * holds can be missed, and then {@link SubscriptionListener#onReplayGap} says so. A new stream opens with
 * the id where it starts, so a subscription started without {@link Builder#startAfterId} that loses its
 * first connection before any event still resumes from there, and misses nothing published meanwhile.
 *
 * <p><b>Reconnects.</b> Every failure is retried: a refused or reset connection, a server that ends the
 * stream, a stream silent for longer than the read timeout, 5xx and the server's notice that it cannot
 * serve the stream now (reported as a 503; at least as late as its {@code retry} or {@code Retry-After}
 * asks), 408 and 429. The wait starts at the minimum backoff and doubles with each
 * failure in a row up to the maximum, with random jitter; a connection that opened starts it again from
 * the minimum. Only another 4xx (an invalid subscription, or one not authorized) ends the subscription,
 * through {@link SubscriptionListener#onStopped}.
 *
 * <p><b>Threads.</b> Each subscription has one daemon thread, named {@code eventhandler-subscriber-N},
 * and its own connection; all listeners are called on that thread. The methods of this class are
 * thread-safe.
 */
public final class EventSubscriber implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(EventSubscriber.class);
    private static final AtomicInteger THREADS = new AtomicInteger();
    /** How long {@link #close()} waits for the subscription's thread to end. */
    static final Duration CLOSE_WAIT = Duration.ofMillis(500);

    private final SubscriptionLoop loop;
    private final Thread thread;

    private EventSubscriber(SubscriptionLoop loop) {
        this.loop = loop;
        this.thread = new Thread(loop, "eventhandler-subscriber-" + THREADS.incrementAndGet());
        thread.setDaemon(true);
    }

    /**
     * Starts describing a subscription.
     *
     * @param baseUri the Event Handler's address, such as {@code http://localhost:8455}; events are read
     *                from {@code baseUri/eventhandler/events}. {@code https} needs
     *                {@link Builder#sslContext} unless the JVM's default trust store trusts the server.
     * @return a builder; {@link Builder#eventTypes} and {@link Builder#listener} are required
     * @throws IllegalArgumentException if the URI is not an absolute {@code http} or {@code https} URI
     *                                  without query or fragment
     */
    public static Builder builder(URI baseUri) {
        return new Builder(List.of(checked(baseUri)));
    }

    /**
     * Starts describing a subscription to the nodes of an Event Handler cluster (cluster mode), each given as
     * {@link #builder(URI)} takes it. The subscription connects to the first node; whenever its stream fails or
     * ends, it reconnects to the next node, round robin, resuming after the last event it received with
     * {@code Last-Event-ID}, which every node of a cluster serves exactly. Each node not yet tried since the
     * stream was lost is tried at once; once every node has failed in a row, the backoff applies.
     *
     * @param nodes the nodes' base URIs, at least one, no two the same
     * @return a builder; {@link Builder#eventTypes} and {@link Builder#listener} are required
     * @throws IllegalArgumentException if the list is empty, holds a URI twice, or holds one that
     *                                  {@link #builder(URI)} would refuse
     */
    public static Builder builder(List<URI> nodes) {
        if (nodes == null || nodes.isEmpty()) {
            throw new IllegalArgumentException("at least one node is required, such as http://localhost:8455");
        }
        nodes.forEach(EventSubscriber::checked);
        if (new HashSet<>(nodes).size() != nodes.size()) {
            throw new IllegalArgumentException("a node is named twice: " + nodes);
        }
        return new Builder(List.copyOf(nodes));
    }

    private static URI checked(URI baseUri) {
        Objects.requireNonNull(baseUri, "baseUri");
        String scheme = baseUri.getScheme();
        if (!"http".equalsIgnoreCase(scheme) && !"https".equalsIgnoreCase(scheme) || baseUri.getHost() == null) {
            throw new IllegalArgumentException("baseUri must be an http or https URI with a host, such as"
                    + " http://localhost:8455, not '" + baseUri + "'");
        }
        if (baseUri.getRawQuery() != null || baseUri.getRawFragment() != null) {
            throw new IllegalArgumentException("baseUri may not have a query or a fragment: '" + baseUri + "'");
        }
        return baseUri;
    }

    /**
     * Where the next connection resumes: the id of the last event handed to the listener (whether it
     * returned or threw), or a later one when the subscription skipped an event it could not read or the
     * server announced where a new stream starts (its {@code eventhandler.open} notice, or an SSE
     * {@code id} field without data from an older server).
     *
     * @return that id; before the first event, where the server said the stream starts, else the
     *         {@link Builder#startAfterId} given, or empty if none.
     *         After the server's sequence started again it is the id the server resumed after (see
     *         {@link SubscriptionListener#onReplayGap}).
     */
    public OptionalLong lastEventId() {
        return loop.lastEventId();
    }

    /**
     * Whether the stream is open now: the server accepted the subscription and nothing has failed since.
     *
     * @return false while connecting, waiting to reconnect, and after the subscription ended
     */
    public boolean isConnected() {
        return loop.isConnected();
    }

    /**
     * Ends the subscription: closes the connection, stops reconnecting and calls
     * {@link SubscriptionListener#onStopped onStopped(null)}, unless the subscription had already stopped.
     *
     * <p>Returns within half a second, whether the subscription is connecting, reading or waiting to
     * reconnect, and its thread has ended by then. After it returns no listener is called, with one
     * exception: when a listener call is still running after that half second (a listener that blocks),
     * {@code close()} returns anyway, and the thread ends, calling {@code onStopped}, when the listener
     * returns. Called from a listener, it returns at once and the subscription ends when the listener
     * returns. Calling it again does nothing.
     */
    @Override
    public void close() {
        if (!loop.close() || Thread.currentThread() == thread) {
            return;
        }
        try {
            thread.join(CLOSE_WAIT.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            LOG.warn("a listener of the subscription to {} is still running {} ms after close(); the subscription"
                    + " ends when it returns", loop.uri(), CLOSE_WAIT.toMillis());
        }
    }

    @Override
    public String toString() {
        return "EventSubscriber[" + loop.uri() + (isConnected() ? ", connected" : "") + "]";
    }

    /**
     * Describes a subscription, then starts it with {@link #subscribe()}. Only the event types and the
     * listener are required; every other setting has a default that suits a server on the same network.
     *
     * <p>Not thread-safe; each {@link #subscribe()} starts a new, independent subscription with the
     * settings of the moment.
     */
    public static final class Builder {
        private static final int MAX_EVENT_TYPE_LENGTH = 255;
        private static final String EVENT_TYPE_PUNCTUATION = "._-:/";
        private static final Duration MAX_DURATION = Duration.ofMillis(Integer.MAX_VALUE);

        final List<URI> nodes;
        List<String> eventTypes = List.of();
        List<String> sources = List.of();
        final Map<String, String> metaData = new LinkedHashMap<>();
        String subscriberSystem;
        EventListener listener;
        SubscriptionListener subscriptionListener;
        Duration minBackoff = Duration.ofMillis(100);
        Duration maxBackoff = Duration.ofSeconds(30);
        double jitter = 0.2;
        Duration connectTimeout = Duration.ofSeconds(5);
        Duration readTimeout = Duration.ofSeconds(45);
        OptionalLong startAfterId = OptionalLong.empty();
        SSLContext sslContext;

        private Builder(List<URI> nodes) {
            this.nodes = nodes;
        }

        /**
         * The event types to receive; required. Types are matched case-insensitively, and the events of
         * all of them arrive on this one subscription, in id order. Replaces the types given before.
         *
         * @param types one or more types, each 1 to 255 letters, digits and {@code . _ - : /} (the
         *              server's rule, checked here so that a typo fails now rather than at the server)
         * @return this builder
         * @throws IllegalArgumentException if there is no type or one breaks the rule
         */
        public Builder eventTypes(String... types) {
            if (types == null || types.length == 0) {
                throw new IllegalArgumentException("at least one event type is required");
            }
            List<String> checked = new ArrayList<>(types.length);
            for (String type : types) {
                checked.add(checkEventType(type));
            }
            this.eventTypes = List.copyOf(checked);
            return this;
        }

        private static String checkEventType(String type) {
            if (type == null || type.isEmpty() || type.length() > MAX_EVENT_TYPE_LENGTH) {
                throw new IllegalArgumentException("an event type is 1 to " + MAX_EVENT_TYPE_LENGTH
                        + " characters long, not " + (type == null ? "null" : "'" + type + "'"));
            }
            for (int i = 0; i < type.length(); i++) {
                char c = type.charAt(i);
                boolean allowed = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
                        || EVENT_TYPE_PUNCTUATION.indexOf(c) >= 0;
                if (!allowed) {
                    throw new IllegalArgumentException("event type '" + type + "' may contain only letters,"
                            + " digits and . _ - : / (found '" + c + "' at position " + (i + 1) + ")");
                }
            }
            return type;
        }

        /**
         * Receive only events published by these systems ({@code source.systemName}, case-insensitive);
         * by default events from any source, and from none. Replaces the sources given before.
         *
         * @param systemNames the systems' names; none means any source
         * @return this builder
         * @throws IllegalArgumentException if a name is null or blank
         */
        public Builder sources(String... systemNames) {
            List<String> checked = new ArrayList<>();
            for (String name : Objects.requireNonNull(systemNames, "systemNames")) {
                if (name == null || name.isBlank()) {
                    throw new IllegalArgumentException("a source system name may not be null or blank");
                }
                checked.add(name);
            }
            this.sources = List.copyOf(checked);
            return this;
        }

        /**
         * The name of the system that subscribes, sent as the {@code subscriber} parameter. The server
         * needs it when it asks the Arrowhead Authorization system which publishers a subscriber may hear
         * from ({@code security.authorization.enabled}) without TLS; in secure mode it must be the name in
         * this system's certificate, and may be left out. By default none is sent.
         *
         * @param systemName the subscribing system's name, not blank
         * @return this builder
         * @throws IllegalArgumentException if the name is null or blank
         */
        public Builder subscriberSystem(String systemName) {
            if (systemName == null || systemName.isBlank()) {
                throw new IllegalArgumentException("the subscriber system's name may not be null or blank");
            }
            this.subscriberSystem = systemName;
            return this;
        }

        /**
         * Receive only events whose {@code metaData} contain this pair; call once per pair (an event
         * must match all). Keys match exactly, values case-insensitively. Giving a key again replaces
         * its value.
         *
         * @param key   the metadata key, not empty
         * @param value the value it must have
         * @return this builder
         * @throws IllegalArgumentException if the key is empty or either is null
         */
        public Builder metaData(String key, String value) {
            if (key == null || key.isEmpty() || value == null) {
                throw new IllegalArgumentException("a metadata filter needs a key that is not empty and a value,"
                        + " not " + key + "=" + value);
            }
            metaData.put(key, value);
            return this;
        }

        /**
         * Who receives the events; required.
         *
         * @param listener called on the subscription's thread for each event, see {@link EventListener}
         * @return this builder
         */
        public Builder listener(EventListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * Who hears about connects, disconnects, replay gaps, listener errors and the end of the
         * subscription; optional. Without one, listener errors are logged as warnings and the rest is
         * only logged.
         *
         * @param subscriptionListener called on the subscription's thread
         * @return this builder
         */
        public Builder subscriptionListener(SubscriptionListener subscriptionListener) {
            this.subscriptionListener = Objects.requireNonNull(subscriptionListener, "subscriptionListener");
            return this;
        }

        /**
         * How long to wait before reconnecting: {@code min} after the first failure, then twice as long
         * after each further failure in a row, up to {@code max}. Defaults: 100 ms and 30 s.
         *
         * @param min the first wait, from 1 ms to about 24 days
         * @param max the longest wait, from {@code min} to about 24 days
         * @return this builder
         * @throws IllegalArgumentException if either is out of its range
         */
        public Builder reconnectBackoff(Duration min, Duration max) {
            requireMillis("min backoff", min);
            if (requireMillis("max backoff", max).compareTo(min) < 0) {
                throw new IllegalArgumentException("max backoff " + max + " is less than min backoff " + min);
            }
            this.minBackoff = min;
            this.maxBackoff = max;
            return this;
        }

        /**
         * How much each reconnect wait varies at random, as a fraction of it: 0.2 (the default) makes a
         * wait of 1 s anything from 0.8 s to 1.2 s. Spreads out subscribers that lost the server together.
         *
         * @param fraction from 0 (no jitter) to 1
         * @return this builder
         * @throws IllegalArgumentException if the fraction is outside 0..1
         */
        public Builder jitter(double fraction) {
            if (!(fraction >= 0 && fraction <= 1)) {
                throw new IllegalArgumentException("jitter is a fraction from 0 to 1, not " + fraction);
            }
            this.jitter = fraction;
            return this;
        }

        /**
         * How long a TCP connect may take before the attempt counts as failed. Default: 5 s.
         *
         * @param timeout from 1 ms to about 24 days
         * @return this builder
         * @throws IllegalArgumentException if it is out of that range
         */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = requireMillis("connectTimeout", timeout);
            return this;
        }

        /**
         * How long the stream may stay silent before the connection counts as dead and is replaced.
         * Default: 45 s, three times the server's default heartbeat interval
         * ({@code sse.heartbeat-seconds}, 15 s): an idle but healthy stream carries a heartbeat comment
         * at least that often, so only a dead connection stays silent this long. Keep it above the
         * server's heartbeat interval.
         *
         * @param timeout from 1 ms to about 24 days
         * @return this builder
         * @throws IllegalArgumentException if it is out of that range
         */
        public Builder readTimeout(Duration timeout) {
            this.readTimeout = requireMillis("readTimeout", timeout);
            return this;
        }

        /**
         * Start after this event rather than with live events only: the first connection asks the
         * server for the events after {@code id} that it still holds, then live events. Use the
         * {@link EventSubscriber#lastEventId()} of an earlier subscription to go on where it stopped, or 0
         * for everything the server holds. Without it, the first connection receives the events published
         * from then on.
         *
         * @param id an event id, 0 or more
         * @return this builder
         * @throws IllegalArgumentException if the id is negative
         */
        public Builder startAfterId(long id) {
            if (id < 0) {
                throw new IllegalArgumentException("startAfterId is an event id, 0 or more, not " + id);
            }
            this.startAfterId = OptionalLong.of(id);
            return this;
        }

        /**
         * The TLS settings for an {@code https} base URI: the trust store that authenticates the server,
         * and for mutual TLS the key store whose certificate identifies this system. Default: the JVM's.
         *
         * @param sslContext an initialised context
         * @return this builder
         */
        public Builder sslContext(SSLContext sslContext) {
            this.sslContext = Objects.requireNonNull(sslContext, "sslContext");
            return this;
        }

        /**
         * Starts the subscription on a new daemon thread, which connects at once and reconnects on every
         * failure until {@link EventSubscriber#close()}. Returns without waiting for the connection; see
         * {@link SubscriptionListener#onConnected()} or {@link EventSubscriber#isConnected()}.
         *
         * @return the running subscription; close it to end it
         * @throws IllegalStateException if the event types or the listener are missing
         */
        public EventSubscriber subscribe() {
            if (eventTypes.isEmpty()) {
                throw new IllegalStateException("eventTypes(...) is required: which events to subscribe to");
            }
            if (listener == null) {
                throw new IllegalStateException("listener(...) is required: who receives the events");
            }
            EventSubscriber subscriber = new EventSubscriber(new SubscriptionLoop(this));
            subscriber.thread.start();
            return subscriber;
        }

        /** Sockets take whole milliseconds in an int; 0 would mean no timeout at all. */
        private static Duration requireMillis(String name, Duration duration) {
            Objects.requireNonNull(duration, name);
            if (duration.compareTo(Duration.ofMillis(1)) < 0 || duration.compareTo(MAX_DURATION) > 0) {
                throw new IllegalArgumentException(name + " must be from 1 ms to about 24 days (" + MAX_DURATION
                        + "), not " + duration);
            }
            return duration;
        }
    }
}
