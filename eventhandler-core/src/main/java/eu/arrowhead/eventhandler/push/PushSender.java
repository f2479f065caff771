package eu.arrowhead.eventhandler.push;

import eu.arrowhead.eventhandler.config.PushConfig;
import eu.arrowhead.eventhandler.diagnostics.LogThrottle;
import eu.arrowhead.eventhandler.diagnostics.NamedThreads;
import eu.arrowhead.eventhandler.topic.PublishedEvent;
import java.net.URI;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import javax.net.ssl.SSLContext;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.async.CloseableHttpAsyncClient;
import org.apache.hc.client5.http.impl.async.HttpAsyncClients;
import org.apache.hc.client5.http.impl.nio.PoolingAsyncClientConnectionManager;
import org.apache.hc.client5.http.impl.nio.PoolingAsyncClientConnectionManagerBuilder;
import org.apache.hc.client5.http.ssl.ClientTlsStrategyBuilder;
import org.apache.hc.client5.http.ssl.NoopHostnameVerifier;
import org.apache.hc.core5.concurrent.FutureCallback;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.Message;
import org.apache.hc.core5.http.nio.entity.AsyncEntityProducers;
import org.apache.hc.core5.http.nio.support.AsyncRequestBuilder;
import org.apache.hc.core5.http.nio.support.BasicResponseConsumer;
import org.apache.hc.core5.io.CloseMode;
import org.apache.hc.core5.pool.PoolStats;
import org.apache.hc.core5.reactor.IOReactorConfig;
import org.apache.hc.core5.util.TimeValue;
import org.apache.hc.core5.util.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * POSTs events to push subscribers over one shared, pooled, kept-alive Apache HttpClient 5 async client.
 * Requests are non-blocking: a subscriber that is down or slow holds one connection and no thread, so it
 * delays nobody else. Each subscriber has at most one POST in flight (its order is kept); a failed POST is
 * retried after a backoff, scheduled rather than slept: from a cursor in the event log for as long as it takes,
 * from a queue in memory ({@code store.mode=off}) up to {@code push.max-retries} times. A cursor's event that its
 * subscriber refuses for good ({@link FailedPost#permanent}) is tried {@code push.poison-retries} more times and then
 * set aside ({@link PushQueue#setAside}), so that it cannot hold the events behind it.
 *
 * <p>It connects only to addresses the {@link TargetPolicy} allows ({@link GuardedDnsResolver}), and every POST
 * carries {@link PushLoopGuard#HEADER}, which every Event Handler refuses: no push can loop.
 *
 * <p>Threads, whatever the number of subscribers: {@code push.sender-threads} I/O threads of the client, and
 * as many dispatch threads that start requests, encode bodies and run retries when they are due.
 */
public final class PushSender implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PushSender.class);
    private static final TimeValue SHUTDOWN_WAIT = TimeValue.ofSeconds(2);

    private final CloseableHttpAsyncClient client;
    private final PoolingAsyncClientConnectionManager connections;
    private final ScheduledThreadPoolExecutor dispatch;
    private final int maxRetries;
    private final PushConfig config;
    private final boolean https;
    private final TargetPolicy targets;
    private final LongAdder delivered = new LongAdder();
    private final LongAdder failedAttempts = new LongAdder();
    private final LongAdder droppedQueueFull = new LongAdder();
    private final LongAdder droppedRetriesExhausted = new LongAdder();
    /** Subscribers with a body being sent or waiting for a retry; guarded by this for the idle wait. */
    private final AtomicInteger busy = new AtomicInteger();
    private final LogThrottle failingLines = new LogThrottle(Duration.ofSeconds(1));
    private final LogThrottle recoveredLines = new LogThrottle(Duration.ofSeconds(1));
    /** POSTs under way, cancelled at the stop so that the client's I/O threads end before it is closed. */
    private final Set<Future<?>> inFlight = ConcurrentHashMap.newKeySet();
    /** The last event offered and its body, shared by every push subscriber of it; hub lock only. */
    private PublishedEvent lastEvent;
    private PushBody lastBody;

    /**
     * @param sslContext the Event Handler's identity and trust in secure mode, where notify URLs are https;
     *                   {@code null} for plain http
     * @param targets    the addresses events may go to; closed with this sender
     */
    public PushSender(PushConfig config, SSLContext sslContext, TargetPolicy targets) {
        // Each subscription has at most one POST in flight; those to one subscriber share its connections.
        int maxConnections = config.maxSubscriptions();
        this.maxRetries = config.maxRetries();
        this.config = config;
        this.https = sslContext != null;
        this.targets = targets;
        PoolingAsyncClientConnectionManagerBuilder pool = PoolingAsyncClientConnectionManagerBuilder.create()
                .setMaxConnTotal(maxConnections)
                .setMaxConnPerRoute(config.connectionsPerTarget())
                .setDnsResolver(new GuardedDnsResolver(targets))
                .setDefaultConnectionConfig(ConnectionConfig.custom()
                        .setConnectTimeout(Timeout.of(config.connectTimeout()))
                        .setSocketTimeout(Timeout.of(config.responseTimeout()))
                        .setTimeToLive(TimeValue.ofMinutes(10))
                        .build());
        if (sslContext != null) {
            // Arrowhead certificates name systems, not hosts: trust comes from the local cloud's CA.
            pool.setTlsStrategy(ClientTlsStrategyBuilder.create().setSslContext(sslContext)
                    .setHostnameVerifier(NoopHostnameVerifier.INSTANCE).buildAsync());
        }
        this.connections = pool.build();
        this.client = HttpAsyncClients.custom()
                .setConnectionManager(connections)
                .setIOReactorConfig(IOReactorConfig.custom().setIoThreadCount(config.senderThreads()).build())
                .setThreadFactory(NamedThreads.daemons("eh-push-io"))
                .setDefaultRequestConfig(RequestConfig.custom()
                        .setConnectionRequestTimeout(Timeout.of(config.responseTimeout()))
                        .setResponseTimeout(Timeout.of(config.responseTimeout()))
                        .build())
                .disableAutomaticRetries()
                .disableRedirectHandling()
                .disableCookieManagement()
                // HttpClient ties a connection whose TLS session carries a client certificate to that principal,
                // and leases it only to requests that present the same: none of ours does, so every POST opened
                // a new mutual-TLS connection (thousands open per subscriber). Ours is the one identity there is.
                .disableConnectionState()
                .evictIdleConnections(TimeValue.ofSeconds(60))
                .build();
        this.dispatch = new ScheduledThreadPoolExecutor(config.senderThreads(),
                NamedThreads.daemons("eh-push"));
        this.dispatch.setRemoveOnCancelPolicy(true);
        client.start();
    }

    /** The addresses events may go to. */
    TargetPolicy targets() {
        return targets;
    }

    /** Whether notify URLs are https. */
    boolean https() {
        return https;
    }

    /** The body of an event, shared with the other subscribers it is offered to; called under the hub's lock. */
    PushBody bodyFor(PublishedEvent event) {
        if (event != lastEvent) {
            lastEvent = event;
            lastBody = new PushBody(event);
        }
        return lastBody;
    }

    /** Starts sending a queue; it calls this when it has something to send and nothing under way. */
    void start(PushQueue queue) {
        busy.incrementAndGet();
        continueWith(queue);
    }

    /** Sends the queue's next event on a dispatch thread; once closed (shutdown), stops it instead. */
    private void continueWith(PushQueue queue) {
        try {
            dispatch.execute(() -> sendNext(queue));
        } catch (RejectedExecutionException e) {
            queue.stop();
            idle();
        }
    }

    private void sendNext(PushQueue queue) {
        PushBody body = queue.next();
        if (body == null) {
            idle();
            return;
        }
        send(queue, body, 0, 0);
    }

    /** One subscriber has nothing left to send. */
    private void idle() {
        if (busy.decrementAndGet() == 0) {
            synchronized (busy) {
                busy.notifyAll();
            }
        }
    }

    /** @param refusals how many tries in a row, up to this one, the subscriber refused the body for good */
    private void send(PushQueue subscriber, PushBody body, int retry, int refusals) {
        if (subscriber.closed() || !subscriber.rules().filter().allowsSource(body.sourceKey())) {
            // Unsubscribed or deleted while this event waited, or its publisher is no longer authorized for this
            // subscriber (an authorization update while it was queued): nobody may have it any more.
            sendNext(subscriber);
            return;
        }
        byte[] json;
        try {
            json = body.json();
        } catch (RuntimeException e) {
            LOG.error("a pushed event cannot be encoded; it is dropped", e);
            droppedRetriesExhausted.increment();
            sendNext(subscriber);
            return;
        }
        post(subscriber.target(), json, why -> {
            if (why == null) {
                int failures = subscriber.succeeded();
                long held;
                if (failures > 0 && (held = recoveredLines.pass()) >= 0) {
                    LOG.info("push to {} works again after {} failed POSTs ({} others recovered since the last such"
                            + " line)", subscriber.target(), failures, held);
                }
                continueWith(subscriber);
            } else {
                failed(subscriber, body, retry, why.permanent() ? refusals + 1 : 0, why);
            }
        });
    }

    /**
     * POSTs an event's 4.x JSON once, without retries: cluster mode retries through the stream instead.
     *
     * @param done told {@code null} once the subscriber answered 2xx, else why the POST failed; on an I/O thread
     */
    public void postOnce(URI target, byte[] json, Consumer<FailedPost> done) {
        post(target, json, why -> {
            if (why != null) {
                failedAttempts.increment();
            }
            done.accept(why);
        });
    }

    /**
     * One POST, cut off at {@code push.response-timeout-seconds} from its start: HttpClient's own response
     * timeout is a wait for the next bytes, which a subscriber trickling its answer never lets expire.
     */
    private void post(URI target, byte[] json, Consumer<FailedPost> done) {
        var request = AsyncRequestBuilder.post(target)
                .addHeader(PushLoopGuard.HEADER, "1")
                .setEntity(AsyncEntityProducers.create(json, ContentType.APPLICATION_JSON))
                .build();
        AtomicReference<Future<?>> exchange = new AtomicReference<>();
        AtomicBoolean timedOut = new AtomicBoolean();
        ScheduledFuture<?> deadline;
        try {
            deadline = dispatch.schedule(() -> cutOff(exchange.get(), timedOut), config.responseTimeout().toMillis(),
                    TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            done.accept(FailedPost.noAnswer("the Event Handler is stopping"));
            return;
        }
        try {
            exchange.set(client.execute(request, new BasicResponseConsumer<>(new BodyExcerpt()),
                    new FutureCallback<Message<HttpResponse, String>>() {
                        @Override
                        public void completed(Message<HttpResponse, String> response) {
                            ended(exchange.get(), deadline);
                            int status = response.getHead().getCode();
                            if (status >= 200 && status < 300) {
                                delivered.increment();
                                done.accept(null);
                            } else {
                                done.accept(new FailedPost(status, response.getBody() == null ? ""
                                        : response.getBody()));
                            }
                        }

                        @Override
                        public void failed(Exception e) {
                            ended(exchange.get(), deadline);
                            done.accept(FailedPost.noAnswer(e.toString()));
                        }

                        @Override
                        public void cancelled() {
                            ended(exchange.get(), deadline);
                            done.accept(FailedPost.noAnswer(timedOut.get()
                                    ? "no whole answer within push.response-timeout-seconds ("
                                    + config.responseTimeout().toSeconds() + " s)"
                                    : "cancelled: the Event Handler is stopping"));
                        }
                    }));
            inFlight.add(exchange.get());
            if (exchange.get().isDone()) {
                // Ended before it was added: its callback found nothing to remove.
                inFlight.remove(exchange.get());
            }
        } catch (RuntimeException e) {
            deadline.cancel(false);
            done.accept(FailedPost.noAnswer(e.toString()));
        }
    }

    private void ended(Future<?> exchange, ScheduledFuture<?> deadline) {
        deadline.cancel(false);
        if (exchange != null) {
            inFlight.remove(exchange);
        }
    }

    /** The deadline of a POST passed: ends it (its callback is told), and the connection with it. */
    private static void cutOff(Future<?> exchange, AtomicBoolean timedOut) {
        timedOut.set(true);
        if (exchange != null) {
            exchange.cancel(true);
        }
    }

    private void failed(PushQueue subscriber, PushBody body, int retry, int refusals, FailedPost why) {
        failedAttempts.increment();
        if (subscriber.durable() && refusals > config.poisonRetries() && !subscriber.closed()) {
            // The log would hold it, and every event behind it, for as long as the subscriber refuses it.
            subscriber.setAside(body, why);
            continueWith(subscriber);
            return;
        }
        long held;
        if (subscriber.failedOnce() && !dispatch.isShutdown() && (held = failingLines.pass()) >= 0) {
            // One line when a subscriber starts failing and one when it works again: a subscriber that is down
            // for hours must not fill the log. The failures between are counted (eventhandler_push_failed_attempts),
            // and a client that subscribes dead targets in a loop gets one line a second.
            LOG.warn("push to {} failed ({}); retrying {}, and saying no more until it works again ({} other"
                    + " subscribers started failing since the last such line)", subscriber.target(), why,
                    subscriber.durable() ? "for as long as the event log holds the event (one refused for good, with"
                            + " a 4xx other than 408 and 429, tried push.poison-retries (" + config.poisonRetries()
                            + ") more times, then set aside)"
                            : "up to push.max-retries (" + maxRetries + ") times per event", held);
        }
        if (subscriber.durable() ? !subscriber.closed() : retry < maxRetries) {
            LOG.debug("POST to {} failed ({}); retry {}", subscriber.target(), why, retry + 1);
            if (retryLater(subscriber, body, retry, refusals)) {
                return;
            }
        }
        if (!subscriber.durable()) {
            LOG.debug("POST to {} failed ({}); the event is dropped after {} retries", subscriber.target(), why,
                    retry);
            droppedRetriesExhausted.increment();
        }
        continueWith(subscriber);
    }

    /**
     * Schedules the next try of a failed POST. A cursor waits as idle: its events stay in the log, so the stop
     * need not wait for a subscriber that is down; a queue in memory is lost at the stop, which waits for it.
     *
     * @return false if the sender is shutting down
     */
    private boolean retryLater(PushQueue subscriber, PushBody body, int retry, int refusals) {
        boolean waitsIdle = subscriber.durable();
        try {
            dispatch.schedule(() -> {
                if (waitsIdle) {
                    busy.incrementAndGet();
                }
                send(subscriber, body, retry + 1, refusals);
            }, config.backoff(retry).toMillis(), TimeUnit.MILLISECONDS);
        } catch (RuntimeException e) {
            return false;
        }
        if (waitsIdle) {
            idle();
        }
        return true;
    }

    void countDropped() {
        droppedQueueFull.increment();
    }

    /**
     * Waits until no subscriber has anything left to send (a cursor: no POST under way), or the timeout passes.
     *
     * @return whether everything was sent (or given up) in time
     */
    public boolean awaitIdle(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (busy) {
            while (busy.get() > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(busy, left);
            }
        }
        return true;
    }

    /** Connections open to push subscribers, in use or kept alive: at most push.connections-per-target to each. */
    public int openConnections() {
        PoolStats stats = connections.getTotalStats();
        return stats.getLeased() + stats.getAvailable();
    }

    /** Events POSTed with a 2xx answer. */
    public long delivered() {
        return delivered.sum();
    }

    /** POSTs that failed (each retry counts). */
    public long failedAttempts() {
        return failedAttempts.sum();
    }

    /** Events dropped because a subscriber's queue was full. */
    public long droppedQueueFull() {
        return droppedQueueFull.sum();
    }

    /** Events given up after their last retry failed. */
    public long droppedRetriesExhausted() {
        return droppedRetriesExhausted.sum();
    }

    @Override
    public void close() {
        dispatch.shutdownNow();
        // A graceful close would wait up to its own 5 s for subscribers that still hang; the grace period
        // for them has passed by now (see awaitIdle). Their POSTs are cancelled and every pooled connection is
        // closed, so that the I/O threads end within the wait (at once, unless the machine is very busy): closing
        // the client under a thread still ending makes HttpClient log a ClosedSelectorException's stack trace.
        inFlight.forEach(exchange -> exchange.cancel(true));
        connections.close(CloseMode.IMMEDIATE);
        client.initiateShutdown();
        try {
            client.awaitShutdown(SHUTDOWN_WAIT);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        client.close(CloseMode.IMMEDIATE);
        targets.close();
    }
}
