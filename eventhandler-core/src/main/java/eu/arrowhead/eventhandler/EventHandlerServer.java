package eu.arrowhead.eventhandler;

import eu.arrowhead.eventhandler.config.EventHandlerConfig;
import eu.arrowhead.eventhandler.delivery.EventStreamHandler;
import eu.arrowhead.eventhandler.delivery.PublisherWrites;
import eu.arrowhead.eventhandler.delivery.StreamAuthorization;
import eu.arrowhead.eventhandler.delivery.StreamSupervisor;
import eu.arrowhead.eventhandler.diagnostics.NamedThreads;
import eu.arrowhead.eventhandler.http.AdmissionControl;
import eu.arrowhead.eventhandler.http.CorsPolicy;
import eu.arrowhead.eventhandler.http.EchoResource;
import eu.arrowhead.eventhandler.http.ErrorResponses;
import eu.arrowhead.eventhandler.http.GrizzlyTuning;
import eu.arrowhead.eventhandler.http.WaitingConnections;
import eu.arrowhead.eventhandler.http.LeftClients;
import eu.arrowhead.eventhandler.http.RequestBodies;
import eu.arrowhead.eventhandler.http.SharedJsonMapper;
import eu.arrowhead.eventhandler.http.Utf8Bodies;
import eu.arrowhead.eventhandler.metrics.BrokerMetrics;
import eu.arrowhead.eventhandler.metrics.HealthResource;
import eu.arrowhead.eventhandler.metrics.MetricsResource;
import eu.arrowhead.eventhandler.node.ClusterBackend;
import eu.arrowhead.eventhandler.node.DatabaseTaskPools;
import eu.arrowhead.eventhandler.node.LocalBackend;
import eu.arrowhead.eventhandler.node.NodeBackend;
import eu.arrowhead.eventhandler.node.StartedParts;
import eu.arrowhead.eventhandler.publish.EventValidator;
import eu.arrowhead.eventhandler.publish.PublishHandler;
import eu.arrowhead.eventhandler.push.OwnEndpoint;
import eu.arrowhead.eventhandler.push.PushSender;
import eu.arrowhead.eventhandler.push.PushSubscriptions;
import eu.arrowhead.eventhandler.push.DeadLettersResource;
import eu.arrowhead.eventhandler.push.SubscriptionsResource;
import eu.arrowhead.eventhandler.push.TargetPolicy;
import eu.arrowhead.eventhandler.registry.ServiceRegistration;
import eu.arrowhead.eventhandler.security.AccessRules;
import eu.arrowhead.eventhandler.security.Authorizer;
import eu.arrowhead.eventhandler.security.ManagementAccess;
import eu.arrowhead.eventhandler.security.PublisherAuthorization;
import eu.arrowhead.eventhandler.security.TlsMaterial;
import eu.arrowhead.eventhandler.store.EventStore;
import eu.arrowhead.eventhandler.store.EventsResource;
import eu.arrowhead.eventhandler.topic.Hub;
import eu.arrowhead.eventhandler.topic.TopicsResource;
import java.io.IOException;
import java.net.URI;
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
import java.util.function.Consumer;
import org.glassfish.grizzly.http.server.HttpServer;
import org.glassfish.grizzly.http.server.NetworkListener;
import org.glassfish.jersey.grizzly2.httpserver.GrizzlyHttpContainer;
import org.glassfish.jersey.jackson.JacksonFeature;
import org.glassfish.jersey.server.ContainerFactory;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.server.ServerProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * The Event Handler server: one {@link NodeBackend} (a single node's database, or a node of a cluster) with the
 * hub, the streams, push and the front door on it. Start one with {@link #start}, stop it with {@link #close}.
 *
 * <p>Each part is added to {@link StartedParts} as it starts. A start that fails stops what had started, the last
 * first, and a stop is the same unwinding: the Service Registry is told first, then the streams and requests in
 * flight drain, then the front door, the threads and the push sender stop, and the backend closes last.
 *
 * <p>Threads, all bounded by configuration and independent of the number of clients: Grizzly selectors
 * ({@code server.selector-threads}) parse requests and run the SSE handler; workers
 * ({@code server.worker-threads}) run publish and management requests; writers
 * ({@code subscriber.writer-threads}) write to SSE subscribers; one supervisor thread sends heartbeats and
 * removes idle topics. With the event store on: one writer, {@value #JOURNAL_READERS} readers for resuming
 * subscribers, one retention thread, HikariCP's housekeeper, and one thread for the push subscriptions' cursors in
 * the log ({@code eh-push-log}). With Service Registry registration on: one
 * registration thread and one for its HTTP client. In cluster mode the readers read the stream, and there are no
 * writer and no HikariCP; there is one cluster thread ({@code eh-cluster}), one for the push subscriptions' dead
 * letters ({@code eh-dead-letters}, from the first one set aside or redelivered) and the NATS client's own (its
 * connection, and a dispatcher each for the stream's feed, the push subscriptions' cursors and the watch of
 * their bucket).
 */
public final class EventHandlerServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(EventHandlerServer.class);
    private static final int JOURNAL_READERS = 2;
    /** Resuming subscribers waiting for a journal reader; more are refused for now. */
    private static final int JOURNAL_READ_QUEUE = 1024;
    private static final Duration DATABASE_TASK_GRACE = Duration.ofSeconds(5);

    private final EventHandlerConfig config;
    private final NetworkListener listener;
    private final Hub hub;
    private final NodeBackend backend;
    private final StreamSupervisor supervisor;
    private final PushSender pushSender;
    private final AdmissionControl front;
    private final DatabaseTaskPools databaseTasks;
    private final StartedParts parts;
    private final AtomicInteger closed = new AtomicInteger();
    private volatile boolean clean;

    private EventHandlerServer(EventHandlerConfig config, NetworkListener listener, Hub hub, NodeBackend backend,
                               StreamSupervisor supervisor, PushSender pushSender, AdmissionControl front,
                               DatabaseTaskPools databaseTasks, StartedParts parts) {
        this.config = config;
        this.listener = listener;
        this.hub = hub;
        this.backend = backend;
        this.supervisor = supervisor;
        this.pushSender = pushSender;
        this.front = front;
        this.databaseTasks = databaseTasks;
        this.parts = parts;
    }

    /**
     * Starts a server; it listens when this returns.
     *
     * @throws IOException if it cannot listen or its event store cannot be opened
     */
    public static EventHandlerServer start(EventHandlerConfig config) throws IOException {
        return start(config, part -> {
        });
    }

    /**
     * As {@link #start(EventHandlerConfig)}, telling {@code afterEachPart} the name of each part once it has
     * started; it may throw, as the next step would (the tests fail a start after each part this way).
     */
    static EventHandlerServer start(EventHandlerConfig config, Consumer<String> afterEachPart) throws IOException {
        routeJulToSlf4j();
        // Secure mode's material first: a wrong password or a bad ACL stops the server before it opens anything.
        TlsMaterial tls = config.security().sslEnabled() ? TlsMaterial.load(config.security()) : null;
        Authorizer rules = tls == null ? Authorizer.INSECURE : AccessRules.from(config.security());
        StartedParts parts = new StartedParts(afterEachPart);
        try {
            return start(config, tls, rules, parts);
        } catch (IOException | RuntimeException e) {
            parts.close();
            throw e;
        }
    }

    private static EventHandlerServer start(EventHandlerConfig config, TlsMaterial tls, Authorizer rules,
                                            StartedParts parts) throws IOException {
        NodeBackend backend = config.cluster().enabled() ? ClusterBackend.join(config) : LocalBackend.open(config);
        parts.add("event log", backend::close);
        Authorizer authorizer = rules;
        if (config.security().authorizationEnabled()) {
            // As the 4.x Event Handler, in either mode: over plain HTTP in insecure mode. After the backend, which
            // keeps its last answers: existing subscribers are served even if it cannot be reached now.
            PublisherAuthorization publishers = PublisherAuthorization.connect(rules, config.security(),
                    tls == null ? null : tls.context(), backend.authorizationAnswers());
            parts.add("Authorization system client", publishers::close);
            // Stops first: no other node's update may reach the client while it closes.
            parts.add("authorization updates from other nodes", backend.shareAuthorizationUpdates(publishers)::run);
            authorizer = publishers;
        }
        Hub hub = new Hub(config.maxTopics(), config.replayWindowEvents(), config.replayWindowBytes(),
                config.replayTotalBytes(), backend.log());
        BrokerMetrics metrics = new BrokerMetrics();
        StreamSupervisor supervisor = new StreamSupervisor(hub, config.subscriberLimits(), config.heartbeat(),
                config.subscriberWriteTimeout(), metrics::disconnected);
        metrics.observe(hub, supervisor);
        metrics.observe(backend);

        // Added after the backend and the Authorization system's client, so that they end before either stops.
        // Deletes can take a while; on their own thread they never hold up heartbeats.
        DatabaseTaskPools databaseTasks = new DatabaseTaskPools(DATABASE_TASK_GRACE);
        ScheduledExecutorService retention = databaseTasks.add(
                Executors.newSingleThreadScheduledExecutor(NamedThreads.of("eh-store-retention")));
        parts.add("event store retention", databaseTasks.stop("event store retention", retention));
        ExecutorService journalReaders = databaseTasks.add(new ThreadPoolExecutor(JOURNAL_READERS, JOURNAL_READERS,
                0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(JOURNAL_READ_QUEUE),
                NamedThreads.of("eh-store-reader")));
        parts.add("event store readers", databaseTasks.stop("event store readers", journalReaders));

        OwnEndpoint ownEndpoint = new OwnEndpoint(config.serverPort(), config.serverHost(),
                config.serviceRegistry().systemAddress());
        PushSender pushSender = new PushSender(config.push(), tls == null ? null : tls.context(),
                new TargetPolicy(config.push(), ownEndpoint));
        parts.add("push sender", pushSender::close);
        PushSubscriptions pushSubscriptions = backend.pushSubscriptions(hub, authorizer, pushSender, config.push());
        metrics.observe(pushSubscriptions, pushSender);

        // The writers' and the workers' queues are bounded by construction: a subscriber has at most one drain task
        // queued at a time, and AdmissionControl admits at most workers + worker-queue requests.
        ExecutorService writers = fixedPool(config.writerThreads(), "eh-writer");
        parts.add("writers", writers::shutdownNow);
        ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(NamedThreads.of("eh-supervisor"));
        parts.add("supervisor", ticker::shutdownNow);
        ExecutorService workers = databaseTasks.add(fixedPool(config.workerThreads(), "eh-worker"));
        AdmissionControl front = frontDoor(config, tls != null, hub, backend, authorizer, supervisor,
                pushSubscriptions, metrics, writers, journalReaders, workers);
        metrics.observe(front);

        WaitingConnections waiting = new WaitingConnections(config.maxSilentConnections(), config.maxIncompleteHeads());
        metrics.observe(waiting);
        HttpServer http = GrizzlyTuning.server(config, tls == null ? null : tls.listenerConfig(), front,
                metrics.connectionProbe(), waiting);
        parts.add("HTTP server", http::shutdownNow);
        // Added after Grizzly, so that they end before it stops: Jersey's container, once shut down, answers a
        // request still running with a 500.
        parts.add("workers", databaseTasks.stop("workers", workers));
        // The log hands its events to the hub before the first request can publish one.
        backend.start(hub, supervisor);
        try {
            http.start();
        } catch (IOException e) {
            throw new IOException("cannot listen on " + config.serverHost() + ":" + config.serverPort() + ": "
                    + e.getMessage(), e);
        }
        NetworkListener listener = GrizzlyTuning.listener(http);
        // server.port 0: the port is known only now; no subscription could name it before.
        ownEndpoint.listening(listener.getPort());
        EventHandlerServer server = new EventHandlerServer(config, listener, hub, backend, supervisor,
                pushSender, front, databaseTasks, parts);
        parts.add("open streams and requests", server::drain);

        ticker.scheduleAtFixedRate(guarded(supervisor::tick), 1, 1, TimeUnit.SECONDS);
        long sweep = Math.max(1, Math.min(60, config.topicIdle().toSeconds() / 4));
        ticker.scheduleAtFixedRate(guarded(() -> hub.removeIdleTopics(config.topicIdle())), sweep, sweep,
                TimeUnit.SECONDS);
        if (backend.store() != null) {
            for (EventStore.PeriodicTask task : backend.store().periodicTasks()) {
                retention.scheduleWithFixedDelay(guarded(task.step()), task.firstAfter().toMillis(),
                        task.every().toMillis(), TimeUnit.MILLISECONDS);
            }
        }
        // Advertised only once it listens, on the port it really listens on; stopped advertising first.
        Optional<ServiceRegistration> registration = ServiceRegistration.start(config.serviceRegistry(),
                config.serverHost(), listener.getPort(), tls != null, tls == null ? null : tls.context(),
                tls == null ? null : tls.publicKey());
        registration.ifPresent(r -> parts.add("Service Registry registration", r::close));
        registration.ifPresent(metrics::observe);
        return server;
    }

    /** What answers requests: the publish and stream handlers on the selectors, Jersey's resources on workers. */
    private static AdmissionControl frontDoor(EventHandlerConfig config, boolean secure, Hub hub,
                                              NodeBackend backend, Authorizer authorizer, StreamSupervisor supervisor,
                                              PushSubscriptions pushSubscriptions, BrokerMetrics metrics,
                                              ExecutorService writers, ExecutorService journalReaders,
                                              ExecutorService workers) {
        EventValidator validator = new EventValidator(config.maxPayloadBytes(), config.timestampTolerance());
        PublisherWrites publisher = new PublisherWrites(backend.log(), config.subscriberWriteMode(),
                config.subscriberWriteTimeout().toNanos());
        PublishHandler publishes = new PublishHandler(publisher, backend.log(), validator, authorizer,
                config.maxBatchEvents(), metrics::publishHandled);
        ResourceConfig resources = new ResourceConfig()
                .register(new EchoResource())
                .register(new HealthResource(backend))
                .register(new EventsResource(backend.store(), config.storeQueryMaxEvents()))
                .register(new TopicsResource(hub))
                .register(new SubscriptionsResource(pushSubscriptions, authorizer))
                .register(new DeadLettersResource(pushSubscriptions, backend.deadLetterLists()))
                .register(new MetricsResource(metrics))
                .register(JacksonFeature.withoutExceptionMappers())
                .register(new SharedJsonMapper())
                .register(new Utf8Bodies())
                .property(ServerProperties.WADL_FEATURE_DISABLE, true);
        if (secure) {
            resources.register(new ManagementAccess(authorizer));
        }
        ErrorResponses.mappers().forEach(resources::register);
        GrizzlyHttpContainer jersey = ContainerFactory.createContainer(GrizzlyHttpContainer.class, resources);
        EventStreamHandler streams = new EventStreamHandler(hub, authorizer,
                new StreamAuthorization(authorizer, supervisor), supervisor, writers,
                config.subscriberSendBufferBytes(), backend.log(), journalReaders,
                config.storeReplayQueuePerClient(), config.storeReplayEventsPerSecond(),
                config.storeReplayPageEvents(), config.sseRetry());
        // A publish that cannot block runs on the selector.
        boolean publishesOnSelector = !backend.log().appendWaits()
                && config.subscriberWriteMode() == EventHandlerConfig.WriteMode.QUEUED;
        RequestBodies bodies = new RequestBodies(config.bodyTimeout(), config.heap().requestBodies(),
                new RequestBodies.Limit(config.maxRequestBytes(), "publish.max-request-bytes"),
                new RequestBodies.Limit(config.maxBodyBytes(), "server.max-body-bytes"));
        metrics.observe(bodies);
        return new AdmissionControl(streams, EventStreamHandler.PATH, publishes, publishesOnSelector, jersey, workers,
                config.workerThreads() + config.workerQueue(), new CorsPolicy(config.corsOrigins()), bodies);
    }

    /** The port the server listens on (the real one when {@code server.port} was 0). */
    public int port() {
        return listener.getPort();
    }

    /** {@code http://host:port} (https in secure mode) for clients on this machine. */
    public URI baseUri() {
        String host = config.serverHost().equals("0.0.0.0") ? "127.0.0.1" : config.serverHost();
        return URI.create((config.security().sslEnabled() ? "https" : "http") + "://" + host + ":" + port());
    }

    /**
     * Stops gracefully: stops accepting connections, refuses new publishes (503) and subscriptions (the refusal
     * stream) on open ones, writes what the event store holds, lets each subscriber receive what its queue holds and
     * ends its stream, finishes requests in flight, then stops every part in the reverse order of their start, all
     * within {@code server.shutdown-grace-seconds}. The store records a clean stop only if it wrote everything.
     *
     * @return whether everything ended cleanly within the grace period
     */
    public boolean shutdown() {
        if (closed.getAndIncrement() > 0) {
            return true;
        }
        parts.close();
        return clean;
    }

    /**
     * The stop's graceful part, once the Service Registry no longer advertises the node: everything the node
     * accepted is delivered or answered within the grace period, and nothing new is taken.
     */
    private void drain() {
        long deadline = System.nanoTime() + config.shutdownGrace().toNanos();
        try {
            hub.close();
            // New clients are refused at once; the connections already open go on while streams drain.
            listener.getTransport().unbindAll();
            // First the log: in sync mode its commits deliver events, which the streams then drain.
            boolean stored = backend.drain(config.shutdownGrace());
            clean = stored & supervisor.shutdown(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))
                    & pushSender.awaitIdle(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))
                    & front.awaitIdle(Math.max(0, deadline - System.nanoTime()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.error("graceful shutdown failed; stopping at once", e);
        } finally {
            // All take no more work first; each is then waited for against the one deadline as it stops.
            databaseTasks.takeNoMore(deadline);
        }
    }

    @Override
    public void close() {
        shutdown();
    }

    /** Grizzly and Jersey log through java.util.logging; send it to the same place as ours, without what clients cause. */
    private static synchronized void routeJulToSlf4j() {
        if (!SLF4JBridgeHandler.isInstalled()) {
            SLF4JBridgeHandler.removeHandlersForRootLogger();
            SLF4JBridgeHandler.install();
        }
        LeftClients.quietJerseysWriteFailures();
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
