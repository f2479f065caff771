package eu.arrowhead.eventhandler;

import com.fasterxml.jackson.databind.ObjectMapper;
import eu.arrowhead.eventhandler.cluster.ClusterNode;
import eu.arrowhead.eventhandler.config.EventHandlerConfig;
import eu.arrowhead.eventhandler.delivery.EventStreamHandler;
import eu.arrowhead.eventhandler.delivery.PublisherWrites;
import eu.arrowhead.eventhandler.delivery.StreamAuthorization;
import eu.arrowhead.eventhandler.delivery.StreamSupervisor;
import eu.arrowhead.eventhandler.http.AdmissionControl;
import eu.arrowhead.eventhandler.http.CorsPolicy;
import eu.arrowhead.eventhandler.http.EchoResource;
import eu.arrowhead.eventhandler.http.ErrorResponses;
import eu.arrowhead.eventhandler.http.HealthResource;
import eu.arrowhead.eventhandler.http.IgnoredUpgrades;
import eu.arrowhead.eventhandler.http.JsonErrorPages;
import eu.arrowhead.eventhandler.http.JsonMapper;
import eu.arrowhead.eventhandler.http.RequestBodies;
import eu.arrowhead.eventhandler.http.StrictHttpCodec;
import eu.arrowhead.eventhandler.metrics.BrokerMetrics;
import eu.arrowhead.eventhandler.metrics.MetricsResource;
import eu.arrowhead.eventhandler.publish.EventValidator;
import eu.arrowhead.eventhandler.publish.IdempotencyKeys;
import eu.arrowhead.eventhandler.publish.PublishHandler;
import eu.arrowhead.eventhandler.push.LogCursors;
import eu.arrowhead.eventhandler.push.OwnEndpoint;
import eu.arrowhead.eventhandler.push.PushSender;
import eu.arrowhead.eventhandler.push.PushSubscriptions;
import eu.arrowhead.eventhandler.push.SubscriptionsResource;
import eu.arrowhead.eventhandler.push.TargetPolicy;
import eu.arrowhead.eventhandler.registry.ServiceRegistration;
import eu.arrowhead.eventhandler.security.AccessRules;
import eu.arrowhead.eventhandler.security.Authorizer;
import eu.arrowhead.eventhandler.security.ManagementAccess;
import eu.arrowhead.eventhandler.security.PublisherAuthorization;
import eu.arrowhead.eventhandler.store.AuthorizationStore;
import eu.arrowhead.eventhandler.security.TlsMaterial;
import eu.arrowhead.eventhandler.store.DatabaseEventStore;
import eu.arrowhead.eventhandler.store.EventStore;
import eu.arrowhead.eventhandler.store.EventsResource;
import eu.arrowhead.eventhandler.store.SubscriptionStore;
import eu.arrowhead.eventhandler.topic.EventJournal;
import eu.arrowhead.eventhandler.topic.Hub;
import eu.arrowhead.eventhandler.topic.TopicsResource;
import jakarta.ws.rs.ext.ContextResolver;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.glassfish.grizzly.http.server.HttpHandlerRegistration;
import org.glassfish.grizzly.http.server.HttpServer;
import org.glassfish.grizzly.http.server.NetworkListener;
import org.glassfish.grizzly.nio.transport.TCPNIOTransport;
import org.glassfish.grizzly.strategies.SameThreadIOStrategy;
import org.glassfish.grizzly.threadpool.ThreadPoolConfig;
import org.glassfish.jersey.grizzly2.httpserver.GrizzlyHttpContainer;
import org.glassfish.jersey.jackson.JacksonFeature;
import org.glassfish.jersey.server.ContainerFactory;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.server.ServerProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * The Event Handler server, wired together: start one with {@link #start}, stop it with {@link #close}.
 *
 * <p>Threads, all bounded by configuration and independent of the number of clients: Grizzly selectors
 * ({@code server.selector-threads}) parse requests and run the SSE handler; workers
 * ({@code server.worker-threads}) run publish and management requests; writers
 * ({@code subscriber.writer-threads}) write to SSE subscribers; one supervisor thread sends heartbeats and
 * removes idle topics. With the event store on: one writer, {@value #JOURNAL_READERS} readers for resuming
 * subscribers, one retention thread, HikariCP's housekeeper, and one thread for the push subscriptions' cursors in
 * the log ({@code eh-push-log}). With Service Registry registration on: one
 * registration thread and one for its HTTP client. In cluster mode the readers read the stream, and there are no
 * writer and no HikariCP; there is one cluster thread ({@code eh-cluster}) and the NATS client's own (its
 * connection, and a dispatcher each for the stream's feed, the push subscriptions' cursors and the watch of
 * their bucket).
 */
public final class EventHandlerServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(EventHandlerServer.class);
    private static final String LISTENER = "eventhandler";
    private static final int JOURNAL_READERS = 2;
    /** Resuming subscribers waiting for a journal reader; more are refused for now. */
    private static final int JOURNAL_READ_QUEUE = 1024;
    private static final int DATABASE_TASK_GRACE_SECONDS = 5;

    private final EventHandlerConfig config;
    private final HttpServer http;
    private final AdmissionControl front;
    private final Hub hub;
    private final StreamSupervisor supervisor;
    private final EventStore store;
    private final ClusterNode cluster;
    private final PushSender pushSender;
    /** Single-node mode with an event store: the push subscriptions' cursors in the log; else null. */
    private final LogCursors pushCursors;
    private final ExecutorService workers;
    private final ExecutorService writers;
    private final ExecutorService journalReaders;
    private final ScheduledExecutorService ticker;
    private final ScheduledExecutorService retention;
    private final Optional<ServiceRegistration> registration;
    private final PublisherAuthorization publisherAuthorization;
    private final AtomicInteger closed = new AtomicInteger();

    private EventHandlerServer(EventHandlerConfig config, HttpServer http, AdmissionControl front, Hub hub,
                               StreamSupervisor supervisor, EventStore store, ClusterNode cluster,
                               PushSender pushSender, LogCursors pushCursors,
                               ExecutorService workers, ExecutorService writers, ExecutorService journalReaders,
                               ScheduledExecutorService ticker, ScheduledExecutorService retention,
                               Optional<ServiceRegistration> registration,
                               PublisherAuthorization publisherAuthorization) {
        this.config = config;
        this.http = http;
        this.front = front;
        this.hub = hub;
        this.supervisor = supervisor;
        this.store = store;
        this.cluster = cluster;
        this.pushSender = pushSender;
        this.pushCursors = pushCursors;
        this.workers = workers;
        this.writers = writers;
        this.journalReaders = journalReaders;
        this.ticker = ticker;
        this.retention = retention;
        this.registration = registration;
        this.publisherAuthorization = publisherAuthorization;
    }

    /**
     * Starts a server; it listens when this returns.
     *
     * @throws IOException if it cannot listen or its event store cannot be opened
     */
    public static EventHandlerServer start(EventHandlerConfig config) throws IOException {
        routeJulToSlf4j();
        // Secure mode's material first: a wrong password or a bad ACL stops the server before it opens anything.
        TlsMaterial tls = config.security().sslEnabled() ? TlsMaterial.load(config.security()) : null;
        Authorizer rules = tls == null ? Authorizer.INSECURE : AccessRules.from(config.security());
        EventStore store = null;
        ClusterNode cluster = null;
        PublisherAuthorization publishers = null;
        try {
            if (config.cluster().enabled()) {
                cluster = ClusterNode.join(config.cluster(), nodeName(config));
                store = cluster.store();
            } else {
                store = openStore(config);
            }
            // As the 4.x Event Handler, in either mode: over plain HTTP in insecure mode. After the store, which
            // keeps its last answers: existing subscribers are served even if it cannot be reached now.
            if (config.security().authorizationEnabled()) {
                AuthorizationStore answers = store == null ? AuthorizationStore.NONE : store.authorizationAnswers();
                publishers = PublisherAuthorization.connect(rules, config.security(),
                        tls == null ? null : tls.context(), answers);
            }
            return start(config, store, cluster, tls, rules, publishers);
        } catch (IOException | RuntimeException e) {
            if (publishers != null) {
                publishers.close();
            }
            if (store != null) {
                store.close();
            }
            if (cluster != null) {
                cluster.close();
            }
            throw e;
        }
    }

    /** {@code cluster.node-name}, or the host name and process id. */
    private static String nodeName(EventHandlerConfig config) {
        if (!config.cluster().nodeName().isEmpty()) {
            return config.cluster().nodeName();
        }
        String host;
        try {
            host = java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.net.UnknownHostException e) {
            host = "localhost";
        }
        return host + "-" + ProcessHandle.current().pid();
    }

    /** The one place that names a journal backend: everything else holds the {@link EventStore}. */
    private static EventStore openStore(EventHandlerConfig config) throws IOException {
        if (config.storeMode() == EventHandlerConfig.StoreMode.OFF) {
            return null;
        }
        try {
            return DatabaseEventStore.open(config);
        } catch (SQLException e) {
            throw new IOException("the event store at " + config.storeUrl() + " cannot be opened: "
                    + e.getMessage() + " (start the database, fix store.url, or set store.mode=off)", e);
        }
    }

    private static EventHandlerServer start(EventHandlerConfig config, EventStore store, ClusterNode cluster,
                                            TlsMaterial tls, Authorizer rules, PublisherAuthorization publishers)
            throws IOException {
        Authorizer authorizer = publishers == null ? rules : publishers;
        EventJournal journal = store == null ? EventJournal.NONE : store;
        Hub hub = new Hub(config.maxTopics(), config.replayWindowEvents(), config.replayWindowBytes(),
                config.replayTotalBytes(), journal);
        BrokerMetrics metrics = new BrokerMetrics();
        StreamSupervisor supervisor = new StreamSupervisor(hub, config.subscriberLimits(), config.heartbeat(),
                config.subscriberWriteTimeout(), metrics::disconnected);
        metrics.observe(hub, supervisor);
        StreamAuthorization streamAuthorization = new StreamAuthorization(authorizer, supervisor);
        if (cluster != null) {
            metrics.observe(cluster);
        } else if (store != null) {
            metrics.observe(store);
        }

        // Both pools' queues are bounded by construction: AdmissionControl admits at most
        // workers + worker-queue requests, and a subscriber has at most one drain task queued at a time.
        ExecutorService workers = fixedPool(config.workerThreads(), "eh-worker");
        ExecutorService writers = fixedPool(config.writerThreads(), "eh-writer");
        ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(NamedThreads.of("eh-supervisor"));
        ExecutorService journalReaders = new ThreadPoolExecutor(JOURNAL_READERS, JOURNAL_READERS, 0,
                TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(JOURNAL_READ_QUEUE), NamedThreads.of("eh-store-reader"));
        // Deletes can take a while; on their own thread they never hold up heartbeats.
        ScheduledExecutorService retention = Executors.newSingleThreadScheduledExecutor(NamedThreads.of("eh-store-retention"));

        OwnEndpoint ownEndpoint = new OwnEndpoint(config.serverPort(), config.serverHost(),
                config.serviceRegistry().systemAddress());
        PushSender pushSender = new PushSender(config.push(), tls == null ? null : tls.context(),
                new TargetPolicy(config.push(), ownEndpoint));
        PushSubscriptions pushSubscriptions;
        LogCursors pushCursors = null;
        try {
            if (cluster != null) {
                pushSubscriptions = new PushSubscriptions(store, authorizer, pushSender, config.push(),
                        cluster.pushDeliveries(pushSender, config.push()));
            } else if (store != null) {
                pushCursors = LogCursors.open(hub, store, pushSender, config.push(), config.storeReplayPageEvents());
                pushSubscriptions = pushCursors.subscriptions(authorizer);
            } else {
                pushSubscriptions = new PushSubscriptions(hub, SubscriptionStore.NONE, authorizer, pushSender,
                        config.push());
            }
            if (cluster != null) {
                // Watched before they are loaded, so that no other node's change falls between.
                cluster.watchSubscriptions(pushSubscriptions);
                if (publishers != null) {
                    cluster.shareAuthorizationUpdates(publishers);
                }
            }
            pushSubscriptions.load();
        } catch (IOException | RuntimeException e) {
            pushSender.close();
            if (pushCursors != null) {
                pushCursors.close();
            }
            throw e;
        }
        metrics.observe(pushSubscriptions, pushSender);
        if (pushCursors != null) {
            metrics.observe(pushCursors);
        }

        EventValidator validator = new EventValidator(config.maxPayloadBytes(), config.timestampTolerance());
        PublisherWrites publisher = new PublisherWrites(hub, config.subscriberWriteMode(),
                config.subscriberWriteTimeout().toNanos());
        IdempotencyKeys idempotencyKeys = new IdempotencyKeys(config.idempotencyWindow(),
                config.idempotencyMaxKeys(), System::nanoTime);
        metrics.observe(idempotencyKeys);
        PublishHandler publishes = new PublishHandler(publisher, journal,
                validator, authorizer, config.maxBatchEvents(), config.storeSyncTimeout(),
                metrics::publishHandled, idempotencyKeys, cluster == null ? null : cluster.stream());
        ResourceConfig resources = new ResourceConfig()
                .register(new EchoResource())
                .register(new HealthResource(store, cluster))
                .register(new EventsResource(store, config.storeQueryMaxEvents()))
                .register(new TopicsResource(hub))
                .register(new SubscriptionsResource(pushSubscriptions, authorizer))
                .register(new MetricsResource(metrics))
                .register(JacksonFeature.withoutExceptionMappers())
                .register((ContextResolver<ObjectMapper>) type -> JsonMapper.get())
                .property(ServerProperties.WADL_FEATURE_DISABLE, true);
        if (tls != null) {
            resources.register(new ManagementAccess(authorizer));
        }
        ErrorResponses.mappers().forEach(resources::register);
        GrizzlyHttpContainer jersey = ContainerFactory.createContainer(GrizzlyHttpContainer.class, resources);
        EventStreamHandler streams = new EventStreamHandler(hub, authorizer, streamAuthorization, supervisor, writers,
                config.subscriberSendBufferBytes(), journal, journalReaders, config.storeReplayQueuePerClient(),
                config.storeReplayEventsPerSecond(),
                config.storeReplayPageEvents(), config.sseRetry());
        // In cluster mode a publish waits for the stream's acknowledgement.
        boolean publishesOnSelector = config.storeMode() != EventHandlerConfig.StoreMode.SYNC
                && config.subscriberWriteMode() == EventHandlerConfig.WriteMode.QUEUED && cluster == null;
        RequestBodies bodies = new RequestBodies(config.bodyTimeout(), config.heap().requestBodies(),
                new RequestBodies.Limit(config.maxRequestBytes(), "publish.max-request-bytes"),
                new RequestBodies.Limit(config.maxBodyBytes(), "server.max-body-bytes"));
        AdmissionControl front = new AdmissionControl(streams, EventStreamHandler.PATH, publishes,
                PublishHandler::handles, publishesOnSelector, jersey, workers,
                config.workerThreads() + config.workerQueue(), new CorsPolicy(config.corsOrigins()), bodies);

        HttpServer http = new HttpServer();
        NetworkListener listener = new NetworkListener(LISTENER, config.serverHost(), config.serverPort());
        // Grizzly closes a kept-alive connection after 256 requests by default; that would undo the
        // publisher's connection reuse, so there is no cap, only the idle timeout.
        listener.getKeepAlive().setMaxRequestsCount(-1);
        listener.getKeepAlive().setIdleTimeoutInSeconds((int) config.idleTimeout().toSeconds());
        listener.setMaxHttpHeaderSize(config.maxHeaderBytes());
        listener.registerAddOn(new IgnoredUpgrades());
        listener.registerAddOn(StrictHttpCodec.addOn());
        if (tls != null) {
            listener.setSecure(true);
            listener.setSSLEngineConfig(tls.listenerConfig());
        }
        TCPNIOTransport transport = listener.getTransport();
        transport.setSelectorRunnersCount(config.selectorThreads());
        // Selectors parse requests; AdmissionControl hands them to our bounded workers. Setting the
        // strategy again drops the worker pool Grizzly would otherwise create on its own.
        transport.setIOStrategy(SameThreadIOStrategy.getInstance());
        transport.setWriteTimeout(config.writeTimeout().toSeconds(), TimeUnit.SECONDS);
        transport.getConnectionMonitoringConfig().addProbes(metrics.connectionProbe());
        transport.setKernelThreadPoolConfig(ThreadPoolConfig.defaultConfig().copy()
                .setPoolName("eh-selector").setCorePoolSize(config.selectorThreads())
                .setMaxPoolSize(config.selectorThreads()));
        http.addListener(listener);
        http.getServerConfiguration().addHttpHandler(front, HttpHandlerRegistration.ROOT);
        http.getServerConfiguration().setJmxEnabled(false);
        http.getServerConfiguration().setHttpServerName("EventHandler");
        http.getServerConfiguration().setHttpServerVersion("");
        http.getServerConfiguration().setDefaultErrorPageGenerator(new JsonErrorPages());
        // Grizzly decodes query strings as ISO-8859-1 unless told otherwise; URLs are UTF-8.
        http.getServerConfiguration().setDefaultQueryEncoding(StandardCharsets.UTF_8);
        // Grizzly's graceful shutdown counts requests in flight, but a suspended response whose client went
        // away is never counted out, so it would always wait the whole grace period. Our shutdown drains
        // streams and waits for admitted requests itself.
        http.getServerConfiguration().setGracefulShutdownSupported(false);
        try {
            try {
                http.start();
            } catch (IOException e) {
                throw new IOException("cannot listen on " + config.serverHost() + ":" + config.serverPort() + ": "
                        + e.getMessage(), e);
            }
            // server.port 0: the port is known only now; no subscription could name it before.
            ownEndpoint.listening(http.getListener(LISTENER).getPort());
            if (cluster != null) {
                cluster.start(hub, supervisor);
            }
        } catch (IOException | RuntimeException e) {
            http.shutdownNow();
            workers.shutdownNow();
            writers.shutdownNow();
            journalReaders.shutdownNow();
            ticker.shutdownNow();
            retention.shutdownNow();
            pushSender.close();
            if (pushCursors != null) {
                pushCursors.close();
            }
            throw e;
        }

        ticker.scheduleAtFixedRate(guarded(supervisor::tick), 1, 1, TimeUnit.SECONDS);
        long sweep = Math.max(1, Math.min(60, config.topicIdle().toSeconds() / 4));
        ticker.scheduleAtFixedRate(guarded(() -> hub.removeIdleTopics(config.topicIdle())), sweep, sweep,
                TimeUnit.SECONDS);
        if (store != null) {
            for (EventStore.PeriodicTask task : store.periodicTasks()) {
                retention.scheduleWithFixedDelay(guarded(task.step()), task.firstAfter().toMillis(),
                        task.every().toMillis(), TimeUnit.MILLISECONDS);
            }
        }
        // Advertised only once it listens, on the port it really listens on.
        Optional<ServiceRegistration> registration = ServiceRegistration.start(config.serviceRegistry(),
                config.serverHost(), listener.getPort(), tls != null, tls == null ? null : tls.context(),
                tls == null ? null : tls.publicKey());
        registration.ifPresent(metrics::observe);
        return new EventHandlerServer(config, http, front, hub, supervisor, store, cluster, pushSender, pushCursors,
                workers, writers, journalReaders, ticker, retention, registration, publishers);
    }

    /** The port the server listens on (the real one when {@code server.port} was 0). */
    public int port() {
        return http.getListener(LISTENER).getPort();
    }

    /** {@code http://host:port} (https in secure mode) for clients on this machine. */
    public URI baseUri() {
        String host = config.serverHost().equals("0.0.0.0") ? "127.0.0.1" : config.serverHost();
        return URI.create((config.security().sslEnabled() ? "https" : "http") + "://" + host + ":" + port());
    }

    /**
     * Stops gracefully: stops accepting connections, refuses new publishes (503) and subscriptions (the
     * refusal stream) on open ones, writes what the event store holds, lets each subscriber receive what its queue holds and ends
     * its stream, finishes requests in flight, then closes everything, all within
     * {@code server.shutdown-grace-seconds}. The store records a clean stop only if it wrote everything.
     *
     * @return whether everything ended cleanly within the grace period
     */
    public boolean shutdown() {
        if (closed.getAndIncrement() > 0) {
            return true;
        }
        // Stop advertising first, while everything still works: systems that look the Event Handler up in
        // the meantime must not find one that is going away. Bounded by its own timeout, before the grace period.
        registration.ifPresent(r -> stopQuietly("Service Registry registration", r::close));
        long deadline = System.nanoTime() + config.shutdownGrace().toNanos();
        boolean clean = false;
        try {
            hub.close();
            // New clients are refused at once; the connections already open go on while streams drain.
            http.getListener(LISTENER).getTransport().unbindAll();
            // First the store: in sync mode its commits deliver events, which the streams then drain.
            boolean stored = store == null || store.drain(config.shutdownGrace());
            if (pushCursors != null) {
                // Their subscribers get the rest after the next start: only the POSTs under way are waited for.
                pushCursors.stop();
            }
            clean = stored & supervisor.shutdown(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))
                    & pushSender.awaitIdle(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))
                    & front.awaitIdle(Math.max(0, deadline - System.nanoTime()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.error("graceful shutdown failed; stopping at once", e);
        } finally {
            // Each step on its own: one that fails must not leave the others' threads running. No thread that may
            // be inside the database is interrupted (workers run mgmt/events, readers replays, retention deletes):
            // together they get DATABASE_TASK_GRACE_SECONDS after the grace to end, and are left to end after it.
            long databaseDeadline = Math.max(deadline, System.nanoTime())
                    + TimeUnit.SECONDS.toNanos(DATABASE_TASK_GRACE_SECONDS);
            // All three take no more work first, then each is waited for against the one deadline.
            stopQuietly("workers", () -> takeNoMore(workers));
            stopQuietly("event store readers", () -> takeNoMore(journalReaders));
            stopQuietly("event store retention", () -> takeNoMore(retention));
            stopQuietly("workers", () -> awaitEnd("workers", workers, databaseDeadline));
            // After the workers: Jersey's container, once shut down, answers a request still running with a 500.
            stopQuietly("HTTP server", http::shutdownNow);
            stopQuietly("supervisor", ticker::shutdownNow);
            stopQuietly("writers", writers::shutdownNow);
            stopQuietly("push sender", pushSender::close);
            if (pushCursors != null) {
                // Before the store, which keeps where each cursor is.
                stopQuietly("push cursors", pushCursors::close);
            }
            stopQuietly("event store readers", () -> awaitEnd("event store readers", journalReaders, databaseDeadline));
            stopQuietly("event store retention", () -> awaitEnd("event store retention", retention, databaseDeadline));
            // Before the store, whose last writes may be its answers.
            if (publisherAuthorization != null) {
                stopQuietly("Authorization system client", publisherAuthorization::close);
            }
            if (store != null) {
                stopQuietly("event store", store::close);
            }
            if (cluster != null) {
                stopQuietly("cluster connection", cluster::close);
            }
        }
        return clean;
    }

    /** The pool starts nothing more: queued tasks that have not started go. Running ones are not interrupted. */
    private static void takeNoMore(ExecutorService pool) {
        pool.shutdown();
        if (pool instanceof ThreadPoolExecutor executor) {
            executor.getQueue().clear();
        }
    }

    /** Lets running tasks end until the deadline; never interrupts them (they may be inside the database). */
    private static void awaitEnd(String what, ExecutorService pool, long deadlineNanos) {
        try {
            if (!pool.awaitTermination(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                LOG.warn("the {} did not end within the stop's bound; left to end on their own", what);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void stopQuietly(String what, Runnable stop) {
        try {
            stop.run();
        } catch (RuntimeException e) {
            LOG.warn("stopping the {} failed: {}", what, e.toString());
        }
    }

    @Override
    public void close() {
        shutdown();
    }

    /** Grizzly and Jersey log through java.util.logging; send it to the same place as ours. */
    private static synchronized void routeJulToSlf4j() {
        if (!SLF4JBridgeHandler.isInstalled()) {
            SLF4JBridgeHandler.removeHandlersForRootLogger();
            SLF4JBridgeHandler.install();
        }
    }

    private static Runnable guarded(Runnable task) {
        return () -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                LOG.error("periodic task failed; it will run again", e);
            }
        };
    }

    private static ExecutorService fixedPool(int threads, String name) {
        return new ThreadPoolExecutor(threads, threads, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(),
                NamedThreads.of(name));
    }
}
