package eu.arrowhead.eventhandler.publisher;

import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.api.SystemRequest;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes events to an Event Handler, or to the nodes of an Event Handler cluster, over kept-alive HTTP
 * connections.
 *
 * <p>Create one publisher per Event Handler and share it: it holds a pool of connections, opened when
 * first needed and then kept, so that a publish costs one request on an open connection instead of a new
 * TCP (and TLS) connection each time. It is thread-safe. Close it when done; it is {@link AutoCloseable}.
 *
 * <pre>{@code
 * try (EventPublisher publisher = EventPublisher.builder(URI.create("http://localhost:8455"))
 *         .source(SystemRequest.named("sensor-1"))
 *         .build()) {
 *     long id = publisher.publish(EventPublishRequest.of("temperature", "21.5"));
 * }
 * }</pre>
 *
 * <h2>Order</h2>
 * One thread's {@link #publish publish} calls reach the server in the order they are made (each waits for
 * its answer), and so are given increasing ids. So are {@link #publishAsync publishAsync} calls, from any
 * number of threads: they are sent one after the other by the publisher's own thread. Calls from different
 * threads to {@code publish} take turns on the connection with the default {@link Builder#maxConnections
 * maxConnections} of 1; with more connections they run side by side, in no defined order.
 *
 * <h2>Several nodes</h2>
 * {@link #builder(List)} takes every node of a cluster. The publisher publishes to one node at a time and moves
 * to the next when an attempt fails in a way the {@link RetryPolicy} retries, so a retry after a node's death
 * goes to another node. Every attempt of a publish carries the same {@code Idempotency-Key}, which the cluster
 * remembers on all nodes: the event is stored once, even when the first node stored it but died before it
 * answered.
 *
 * <h2>Failures, and a server that restarts</h2>
 * A publish that fails throws a {@link PublishException} saying why, after the {@link RetryPolicy} has
 * retried what can be retried. The default policy retries for 60 s, so a server that restarts, or a cluster
 * that elects a new leader, costs the application waiting, not failures. A publish whose last attempts were
 * not answered fails with {@link PublishException.Kind#OUTCOME_UNKNOWN} and its
 * {@link PublishException#idempotencyKey() Idempotency-Key}: {@link #publish(EventPublishRequest, String)}
 * with that key learns its id without publishing it twice. Against a server that ignores the key, retrying
 * makes delivery at-least-once; see {@link RetryPolicy}.
 */
public final class EventPublisher implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(EventPublisher.class);

    private final SystemRequest source;
    private final Duration readTimeout;
    private final Transport transport;
    private final RequestKeys requestKeys = new RequestKeys();
    private final Nodes nodes;
    private final NodePublisher sender;
    private final PublishQueue queue;
    private final AtomicBoolean closed = new AtomicBoolean();

    private EventPublisher(Builder builder) {
        this.source = builder.source;
        this.readTimeout = builder.readTimeout;
        this.transport = new Transport(builder.connectTimeout, builder.readTimeout, builder.maxConnections,
                builder.sslContext);
        this.nodes = new Nodes(builder.nodes, transport);
        this.sender = new NodePublisher(nodes, transport, new Retrier(builder.retryPolicy, builder.readTimeout),
                requestKeys);
        this.queue = new PublishQueue(builder.maxQueuedBytes, builder.maxAsyncBatch, sender);
    }

    /**
     * Starts configuring a publisher.
     *
     * @param baseUri where the Event Handler listens, such as {@code http://localhost:8455} or
     *                {@code https://eventhandler.example:8455}; the publisher appends
     *                {@code /eventhandler/publish} to it (after any path it has, for a server behind a
     *                reverse proxy)
     * @throws IllegalArgumentException if {@code baseUri} is null, is not an absolute {@code http} or
     *                                  {@code https} URI with a host, or has a query or fragment
     * @return a builder with every setting at its default
     */
    public static Builder builder(URI baseUri) {
        return new Builder(baseUri == null ? null : List.of(baseUri));
    }

    /**
     * Starts configuring a publisher to the nodes of an Event Handler cluster (cluster mode), each given as
     * {@link #builder(URI)} takes it. The publisher publishes to the first node; an attempt that fails in a way
     * the {@link RetryPolicy} retries (no connection, a timeout, 503) moves it to the next node, round robin, for
     * the retry and the publishes after it. Every attempt of one publish carries the same
     * {@code Idempotency-Key}, which the cluster remembers on every node: a retry on another node after a lost
     * answer gets the first attempt's id, and the event is stored once.
     *
     * @param nodes the nodes' base URIs, at least one, no two the same
     * @throws IllegalArgumentException if the list is empty, holds a URI twice, or holds one that
     *                                  {@link #builder(URI)} would refuse
     * @return a builder with every setting at its default
     */
    public static Builder builder(List<URI> nodes) {
        return new Builder(nodes);
    }

    /**
     * Publishes one event and returns the id the server gave it, waiting for the server's answer.
     *
     * <p>An event without a {@code source} is sent with the publisher's {@link Builder#source default
     * source}, when there is one.
     *
     * @param event the event; the server checks it (see {@link EventPublishRequest})
     * @return the event's id in the server's global, strictly increasing sequence
     * @throws PublishException      if the server refused the event (its {@link PublishException#statusCode()
     *                               status} and {@link PublishException#errorMessage() error} say why) or no
     *                               answer came back, once the retry policy has given up; its
     *                               {@link PublishException#kind() kind} says whether it may have been published
     * @throws IllegalStateException if the publisher is closed
     * @throws NullPointerException  if {@code event} is null
     */
    public long publish(EventPublishRequest event) throws PublishException {
        return publishUnder(event, requestKeys.next());
    }

    /**
     * Publishes one event under an {@code Idempotency-Key} the caller gives: to learn what became of a publish
     * that failed with {@link PublishException.Kind#OUTCOME_UNKNOWN}, call this with the same event and the
     * failure's {@link PublishException#idempotencyKey() key}. If the server had published it, it answers with
     * the first id and publishes nothing; if not, it publishes it now. Either way the event is published once.
     *
     * <p>The server remembers a key for {@code publish.idempotency-window-seconds} (120 s by default) after its
     * first publish; once it has forgotten the key, this publishes the event again, whether or not the first
     * attempt had. The request must be the same: the same event, sent through the same default source, or the
     * server refuses it with {@code 422}. The retry policy applies as for {@link #publish(EventPublishRequest)}.
     *
     * @param event the event, the same as the first time
     * @param idempotencyKey the key of the first publish: 1 to 128 visible ASCII characters
     * @return the event's id
     * @throws PublishException         as {@link #publish(EventPublishRequest)} throws it
     * @throws IllegalArgumentException if the key is not 1 to 128 visible ASCII characters
     * @throws IllegalStateException    if the publisher is closed
     * @throws NullPointerException     if {@code event} or {@code idempotencyKey} is null
     */
    public long publish(EventPublishRequest event, String idempotencyKey) throws PublishException {
        RequestKeys.check(idempotencyKey);
        return publishUnder(event, idempotencyKey);
    }

    private long publishUnder(EventPublishRequest event, String idempotencyKey) throws PublishException {
        Objects.requireNonNull(event, "event");
        requireOpen();
        long start = System.nanoTime();
        return sender.send(event.eventType(), Transport.encode(NodePublisher.PUBLISH, withSource(event)),
                idempotencyKey, start);
    }

    /**
     * Publishes several events in one request, all of them or none, and returns their ids, waiting for the
     * server's answer. The server gives them consecutive ids, in the order of the list, with no other event in
     * between; a subscriber receives them in that order. Events without a {@code source} get the default one.
     * (In a cluster the ids increase in the order of the list but other nodes' events may lie between them, and
     * a batch the stream took only in part is completed by the retry, with the same ids for the part it has. Should
     * a leader election split the batch, an event sent again is stored after later ones of the list that found the
     * new leader first: every event has its id, not always in the order of the list.)
     *
     * <p>The server takes at most {@code publish.max-batch-events} (1000) events and 1 MiB in one batch; a
     * larger batch is refused with {@code 400} or {@code 413}. An empty list publishes nothing and sends
     * nothing.
     *
     * @param events the events, in order
     * @return their ids, in the same order
     * @throws PublishException      if the server refused the batch (then none of its events was published;
     *                               the message names the first offending event) or no answer came back
     * @throws IllegalStateException if the publisher is closed
     * @throws NullPointerException  if {@code events} or one of its elements is null
     */
    public List<Long> publishBatch(List<EventPublishRequest> events) throws PublishException {
        return publishBatchUnder(events, requestKeys.next());
    }

    /**
     * Publishes a batch under an {@code Idempotency-Key} the caller gives, as
     * {@link #publish(EventPublishRequest, String)} does one event: with the same events and the key of a
     * batch that failed with {@link PublishException.Kind#OUTCOME_UNKNOWN}, it returns the first ids if the
     * server had published them, and publishes them now if not.
     *
     * @param events         the events, the same and in the same order as the first time
     * @param idempotencyKey the key of the first publish: 1 to 128 visible ASCII characters
     * @return their ids, in the same order
     * @throws PublishException         as {@link #publishBatch(List)} throws it
     * @throws IllegalArgumentException if the key is not 1 to 128 visible ASCII characters
     * @throws IllegalStateException    if the publisher is closed
     * @throws NullPointerException     if {@code events}, one of its elements or {@code idempotencyKey} is null
     */
    public List<Long> publishBatch(List<EventPublishRequest> events, String idempotencyKey) throws PublishException {
        RequestKeys.check(idempotencyKey);
        return publishBatchUnder(events, idempotencyKey);
    }

    private List<Long> publishBatchUnder(List<EventPublishRequest> events, String idempotencyKey)
            throws PublishException {
        Objects.requireNonNull(events, "events");
        List<EventPublishRequest> batch = new ArrayList<>(events.size());
        for (EventPublishRequest event : events) {
            batch.add(withSource(Objects.requireNonNull(event, "an event of the batch is null")));
        }
        requireOpen();
        if (batch.isEmpty()) {
            return List.of();
        }
        long start = System.nanoTime();
        return sender.sendBatch(Transport.encode(NodePublisher.BATCH, batch), batch.size(), idempotencyKey, start);
    }

    /**
     * Queues one event to be published by the publisher's own thread, and returns at once. Queued events
     * are published one request at a time in the order of the calls, whichever threads make them, so their ids
     * increase in that order.
     *
     * <p>The future completes with the event's id, or exceptionally with a {@link PublishException} (as
     * {@link #publish} would throw it). Dependent actions that are not {@code ...Async} run on the publisher's
     * thread and hold up the queue while they run: keep them short. Cancelling the future before the event is
     * sent withdraws the event.
     *
     * <p><b>While the server is away</b> (restarting, say), the event being sent is retried as the
     * {@link RetryPolicy} says, and the events behind it wait in the queue: only one request is in flight at a time, so
     * they are published in order once the server is back. The deadline of a {@link RetryPolicy#deadline
     * deadline policy} counts from this call, for each event: an event still unpublished at its deadline fails
     * with a {@link PublishException} (of kind {@link PublishException.Kind#NOT_SENT} if it never left the
     * queue, {@link PublishException.Kind#OUTCOME_UNKNOWN} with its key if it was sent and not answered). A
     * failed event does not stop the ones queued after it: they go on, in order, each until its own deadline.
     * (Publishing the failed one again later puts it after them.)
     *
     * <p>With {@link Builder#maxAsyncBatch maxAsyncBatch} above 1, events queued behind the one whose turn it is
     * are sent with it in one request; see there what that changes.
     *
     * <p>The queue is bounded by {@link Builder#maxQueuedBytes maxQueuedBytes} of request bodies (8 MiB by
     * default), the event being sent included: an event that does not fit is not queued, and its future fails
     * at once with {@link PublishException.Kind#QUEUE_FULL}. The caller's thread never waits. The thread, a
     * daemon named {@code eventhandler-publisher-N}, is started by the first call and ends with
     * {@link #close()}, which first publishes what is queued.
     *
     * @param event the event; one without a {@code source} gets the default one
     * @return the event's id, when it has been published
     * @throws IllegalStateException if the publisher is closed
     * @throws NullPointerException  if {@code event} is null
     */
    public CompletableFuture<Long> publishAsync(EventPublishRequest event) {
        Objects.requireNonNull(event, "event");
        requireOpen();
        long start = System.nanoTime();
        byte[] body;
        try {
            body = Transport.encode(NodePublisher.PUBLISH, withSource(event));
        } catch (PublishException e) {
            return CompletableFuture.failedFuture(e);
        }
        return queue.submit(event.eventType(), body, requestKeys.next(), start);
    }

    /**
     * Closes the publisher. Events already queued by {@link #publishAsync publishAsync} are published first,
     * for at most the {@link Builder#readTimeout read timeout}; the futures of those still waiting then fail
     * with a {@link PublishException}. Then the connections are closed: a {@code publish} still running on
     * another thread fails. Every later call throws {@link IllegalStateException}.
     *
     * <p>Closing again, or while another thread is closing, does nothing. Closing from the publisher's own
     * thread (in a dependent action of a {@code publishAsync} future) does not wait: the events still queued
     * fail.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        queue.close(readTimeout);
        transport.close();
        LOG.debug("publisher to {} closed", nodes.baseUris());
    }

    private EventPublishRequest withSource(EventPublishRequest event) {
        if (event.source() != null || source == null) {
            return event;
        }
        return new EventPublishRequest(event.eventType(), event.payload(), event.metaData(), source,
                event.timeStamp());
    }

    private void requireOpen() {
        if (closed.get()) {
            throw new IllegalStateException("publisher is closed");
        }
    }

    /**
     * Configures an {@link EventPublisher}. Every setting has a default, so
     * {@code EventPublisher.builder(uri).build()} is a working publisher. Not thread-safe; each setter
     * returns this builder and checks its argument at once.
     */
    public static final class Builder {
        private final List<URI> nodes;
        private SystemRequest source;
        private Duration connectTimeout = Duration.ofSeconds(5);
        private Duration readTimeout = Duration.ofSeconds(30);
        private int maxConnections = 1;
        private long maxQueuedBytes = 8L << 20;
        private int maxAsyncBatch = 1;
        private RetryPolicy retryPolicy = RetryPolicy.DEFAULT;
        private SSLContext sslContext;

        private Builder(List<URI> nodes) {
            if (nodes == null || nodes.isEmpty()) {
                throw new IllegalArgumentException("baseUri is required, such as http://localhost:8455");
            }
            for (URI baseUri : nodes) {
                checkBaseUri(baseUri);
            }
            if (new HashSet<>(nodes).size() != nodes.size()) {
                throw new IllegalArgumentException("a node is named twice: " + nodes);
            }
            this.nodes = List.copyOf(nodes);
        }

        private static void checkBaseUri(URI baseUri) {
            if (baseUri == null) {
                throw new IllegalArgumentException("baseUri is required, such as http://localhost:8455");
            }
            String scheme = baseUri.getScheme() == null ? "" : baseUri.getScheme().toLowerCase(Locale.ROOT);
            if (!baseUri.isAbsolute() || !(scheme.equals("http") || scheme.equals("https"))
                    || baseUri.getHost() == null) {
                throw new IllegalArgumentException("baseUri must be an http or https URI with a host, such as"
                        + " http://localhost:8455: " + baseUri);
            }
            if (baseUri.getRawQuery() != null || baseUri.getRawFragment() != null) {
                throw new IllegalArgumentException("baseUri must have no query or fragment: " + baseUri);
            }
        }

        /**
         * The system put as {@code source} on every event that has none. Subscribers can filter on its
         * {@code systemName}. Default: none, so such events are published without a source.
         *
         * @param source the publishing system
         * @return this builder
         * @throws IllegalArgumentException if {@code source} is null or has no {@code systemName}
         */
        public Builder source(SystemRequest source) {
            if (source == null || source.systemName() == null || source.systemName().isBlank()) {
                throw new IllegalArgumentException("source must be a system with a systemName: " + source);
            }
            this.source = source;
            return this;
        }

        /**
         * How long opening a connection may take before the attempt fails (and is retried, as nothing was
         * sent). Default: 5 seconds.
         *
         * @param connectTimeout at least 1 ms
         * @return this builder
         * @throws IllegalArgumentException if it is null or not between 1 ms and about 24 days
         */
        public Builder connectTimeout(Duration connectTimeout) {
            this.connectTimeout = requireMillis("connectTimeout", connectTimeout);
            return this;
        }

        /**
         * How long the server may stay silent while the publisher waits for its answer before the attempt
         * fails (and is retried: the event may have been published, see {@link RetryPolicy}). An attempt near
         * the retry policy's deadline waits only until the deadline. Also bounds the wait for a free
         * connection when all are in use, and how long {@link EventPublisher#close()} lets queued asynchronous
         * publishes finish. Default: 30 seconds.
         *
         * @param readTimeout at least 1 ms
         * @return this builder
         * @throws IllegalArgumentException if it is null or not between 1 ms and about 24 days
         */
        public Builder readTimeout(Duration readTimeout) {
            this.readTimeout = requireMillis("readTimeout", readTimeout);
            return this;
        }

        /**
         * How many connections to the server the publisher may hold open at once. Default: 1.
         *
         * <p>With 1, publishes are sent one at a time on one kept-alive connection: calls from different
         * threads take turns, so the server sees them in the order they get the connection, and there is
         * never more than one connection open. With more, up to that many {@link EventPublisher#publish publish}
         * calls from different threads are sent at once, for more throughput, but with no defined order
         * between threads. A single thread's calls, and {@link EventPublisher#publishAsync publishAsync},
         * keep their order either way.
         *
         * @param maxConnections 1 or more
         * @return this builder
         * @throws IllegalArgumentException if it is less than 1
         */
        public Builder maxConnections(int maxConnections) {
            if (maxConnections < 1) {
                throw new IllegalArgumentException("maxConnections must be at least 1: " + maxConnections);
            }
            this.maxConnections = maxConnections;
            return this;
        }

        /**
         * How many bytes of request bodies {@link EventPublisher#publishAsync publishAsync} may hold queued,
         * the event being sent included: what the application's heap gives to events waiting for a server
         * that is away. An event that does not fit fails at once with
         * {@link PublishException.Kind#QUEUE_FULL}; the caller never waits. Default: 8 MiB.
         *
         * @param maxQueuedBytes 1 or more
         * @return this builder
         * @throws IllegalArgumentException if it is less than 1
         */
        public Builder maxQueuedBytes(long maxQueuedBytes) {
            if (maxQueuedBytes < 1) {
                throw new IllegalArgumentException("maxQueuedBytes must be at least 1: " + maxQueuedBytes);
            }
            this.maxQueuedBytes = maxQueuedBytes;
            return this;
        }

        /**
         * How many {@link EventPublisher#publishAsync publishAsync} events the publisher's thread may send in one
         * {@code publish/batch} request when they are queued, waiting for their turn. Default: 1, a request per
         * event.
         *
         * <p>With more, the thread sends the event whose turn it is together with those already queued behind it,
         * up to this many and 1 MiB of JSON (the server's default limits); it never waits for more to come. One
         * request's round trip is then shared by many events, so a publisher whose events come faster than its
         * answers gets more of them through: most of all against a cluster, where each request waits until the
         * stream's replicas have it. Ids increase in call order, as without batching, except in a cluster
         * during a leader election: a batch the election splits keeps all its ids, not always their order (see
         * {@link EventPublisher#publishBatch(List)}). What else changes:
         * <ul>
         *   <li>The events sent together are published or fail together: their futures fail with the same
         *   exception. Its {@link PublishException#idempotencyKey() key} names the batch, so
         *   {@link EventPublisher#publishBatch(List, String) publishBatch} with those events, in the order they were
         *   queued, and that key learns their ids after {@link PublishException.Kind#OUTCOME_UNKNOWN}.</li>
         *   <li>A batch is retried until the deadline of its first event.</li>
         *   <li>Cancelling the future of an event already sent in a batch does not withdraw it.</li>
         *   <li>A batch the server refuses at its first attempt in a way that says it stored none of it (400, 403,
         *   408, 413, 415) is sent again one event at a time, so only the events it refuses fail. A server without
         *   {@code publish/batch} (an Arrowhead 4.x Event Handler answers 404) turns batching off for this
         *   publisher, and one that finds a batch too large (its {@code publish.max-batch-events} or
         *   {@code publish.max-request-bytes} are lower) gets batches half as large from then on; each such change
         *   is logged once at INFO.</li>
         * </ul>
         *
         * @param maxAsyncBatch 1 to 1000 (the server's default {@code publish.max-batch-events}; no more than the
         *                      server's)
         * @return this builder
         * @throws IllegalArgumentException if it is not between 1 and 1000
         */
        public Builder maxAsyncBatch(int maxAsyncBatch) {
            if (maxAsyncBatch < 1 || maxAsyncBatch > PublishQueue.MAX_BATCH_EVENTS) {
                throw new IllegalArgumentException("maxAsyncBatch must be between 1 and "
                        + PublishQueue.MAX_BATCH_EVENTS + ": " + maxAsyncBatch);
            }
            this.maxAsyncBatch = maxAsyncBatch;
            return this;
        }

        /**
         * Which failures to retry, for how long and how patiently. Default: {@link RetryPolicy#DEFAULT}, retries
         * for 60 s after the call, which rides out a server's restart (exactly-once against this server, through
         * the {@code Idempotency-Key}); {@link RetryPolicy#NONE} for at-most-once.
         *
         * @param retryPolicy the policy
         * @return this builder
         * @throws IllegalArgumentException if it is null
         */
        public Builder retryPolicy(RetryPolicy retryPolicy) {
            if (retryPolicy == null) {
                throw new IllegalArgumentException("retryPolicy is required; RetryPolicy.NONE turns retries off");
            }
            this.retryPolicy = retryPolicy;
            return this;
        }

        /**
         * The TLS context for an {@code https} base URI (the Event Handler's secure mode). Its trust
         * managers decide which server certificates are trusted, and its key managers supply the client
         * certificate for mutual TLS (in Arrowhead's secure mode, the certificate names the system). The
         * server's host name is checked against its certificate. Default: none, so an {@code https} base
         * URI is trusted as the JVM trusts servers by default, and no client certificate is sent.
         *
         * @param sslContext the TLS context, with key managers for mutual TLS
         * @return this builder
         * @throws IllegalArgumentException if it is null
         */
        public Builder sslContext(SSLContext sslContext) {
            if (sslContext == null) {
                throw new IllegalArgumentException("sslContext must not be null");
            }
            this.sslContext = sslContext;
            return this;
        }

        /**
         * Creates the publisher. It opens no connection yet: the first publish does.
         *
         * @return the publisher, open until {@link EventPublisher#close() closed}
         * @throws IllegalArgumentException if an {@link #sslContext sslContext} is set for an {@code http}
         *                                  base URI
         */
        public EventPublisher build() {
            for (URI baseUri : nodes) {
                if (sslContext != null && !"https".equalsIgnoreCase(baseUri.getScheme())) {
                    throw new IllegalArgumentException("an sslContext is set, but baseUri is not https: " + baseUri);
                }
            }
            return new EventPublisher(this);
        }

        private static Duration requireMillis(String name, Duration duration) {
            if (duration == null || duration.compareTo(Duration.ofMillis(1)) < 0
                    || duration.compareTo(Duration.ofMillis(Integer.MAX_VALUE)) > 0) {
                throw new IllegalArgumentException(name + " must be between 1 ms and " + Integer.MAX_VALUE
                        + " ms: " + duration);
            }
            return duration;
        }
    }
}
