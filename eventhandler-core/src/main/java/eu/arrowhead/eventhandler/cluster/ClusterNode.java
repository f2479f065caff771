package eu.arrowhead.eventhandler.cluster;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import eu.arrowhead.eventhandler.config.ClusterConfig;
import eu.arrowhead.eventhandler.config.PushConfig;
import eu.arrowhead.eventhandler.delivery.DisconnectReason;
import eu.arrowhead.eventhandler.delivery.StreamSupervisor;
import eu.arrowhead.eventhandler.diagnostics.NamedThreads;
import eu.arrowhead.eventhandler.push.DeadLetterLists;
import eu.arrowhead.eventhandler.push.PushDelivery;
import eu.arrowhead.eventhandler.push.PushSender;
import eu.arrowhead.eventhandler.push.PushSubscriptions;
import eu.arrowhead.eventhandler.security.PublisherAuthorization;
import eu.arrowhead.eventhandler.store.EventStore;
import eu.arrowhead.eventhandler.topic.EventLog;
import eu.arrowhead.eventhandler.topic.Hub;
import io.nats.client.Dispatcher;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.JetStreamOptions;
import io.nats.client.KeyValue;
import io.nats.client.StreamContext;
import io.nats.client.api.ClusterInfo;
import io.nats.client.api.Replica;
import io.nats.client.api.StreamInfo;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This Event Handler as a node of a cluster (cluster mode): its connection to NATS, the shared stream as its
 * event store, the stream's publish and its feed into the hub, and what it does when it is cut off. The server
 * {@linkplain #join joins} before it builds the hub, and {@linkplain #start starts} the node once the hub and the
 * streams' supervisor exist.
 */
public final class ClusterNode implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterNode.class);
    private static final Duration TICK = Duration.ofMillis(200);
    /** How long joining may wait for JetStream to set up the stream and the subscriptions' bucket. */
    private static final Duration SETUP_PATIENCE = Duration.ofSeconds(60);
    /** JetStream's error code while it has no leader. */
    private static final int TEMPORARILY_UNAVAILABLE = 10008;
    /**
     * JetStream's "no suitable peers for placement": fewer servers than {@code cluster.replicas}, or servers started
     * together that have not all joined JetStream's meta group yet (seen once in CI, two seconds after the three
     * servers answered). Waited for this long before it is taken for the first.
     */
    private static final int NO_PLACEMENT = 10005;
    private static final Duration PLACEMENT_PATIENCE = Duration.ofSeconds(10);

    private final ClusterConfig config;
    private final ClusterConnection connection;
    private final JetStreamManagement management;
    /** Asks for the stream's state in {@link #view()} (metrics, health): a quick try, as the watches ask. */
    private final JetStreamManagement viewManagement;
    private final StreamMessages messages;
    private final StreamEventStore store;
    private final SharedSubscriptions subscriptions;
    private final KeyValue letterBucket;
    private final StreamReader reader;
    private final StreamEventLog log;
    private volatile SharedDeadLetters deadLetters;
    private volatile Hub hub;
    private volatile StreamFeed feed;
    /** Set when the node is connected again: its feed's consumer may have gone with the server it lived on. */
    private volatile boolean feedNeedsRestart;
    /** Set when the node is connected again: its push cursors' pulls may have gone the same way. */
    private volatile boolean pullsNeedRestart;
    /** Failed tries to read the stream again since it last succeeded; the node's thread only. */
    private int feedRestartTries;
    /** Whether the restart under way reads another scope for the node's subscribers. Ticker thread. */
    private boolean feedRestartForScope;
    /** Volatile: a request's thread asks it to look ({@link #lookNow}). */
    private volatile FeedWatch feedWatch;
    private ReadNarrowing narrowing;
    private final AtomicBoolean extraTickQueued = new AtomicBoolean();
    private volatile CursorWatch cursorWatch;
    private final FreezeWatch freezeWatch = new FreezeWatch();
    private final ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(
            NamedThreads.of("eh-cluster"));
    /**
     * Ticks the freeze watch, and nothing else: the node's own thread waits on NATS, up to half a second a
     * question, several in a tick during an election, and a tick that late looked like a freeze of the process.
     */
    private final ScheduledExecutorService freezeClock = Executors.newSingleThreadScheduledExecutor(
            NamedThreads.daemons("eh-freeze-watch"));

    private ClusterNode(ClusterConfig config, ClusterConnection connection, JetStreamManagement management,
                        JetStreamManagement viewManagement, StreamMessages messages, StreamEventStore store,
                        SharedSubscriptions subscriptions, KeyValue letterBucket, StreamReader reader,
                        StreamEventLog log) {
        this.config = config;
        this.connection = connection;
        this.management = management;
        this.viewManagement = viewManagement;
        freezeClock.scheduleWithFixedDelay(freezeWatch::ticked, TICK.toMillis(), TICK.toMillis(),
                TimeUnit.MILLISECONDS);
        this.messages = messages;
        this.store = store;
        this.subscriptions = subscriptions;
        this.letterBucket = letterBucket;
        this.reader = reader;
        this.log = log;
    }

    /**
     * Connects to NATS and makes sure the stream exists.
     *
     * @throws IOException if no NATS server answers or the stream cannot be set up
     */
    public static ClusterNode join(ClusterConfig config, String nodeName) throws IOException {
        ClusterConnection connection = ClusterConnection.connect(config, nodeName);
        try {
            StreamMessages messages = new StreamMessages(config.subjectPrefix());
            JetStreamManagement management = connection.management(config.timeout());
            requireJetStream(connection, management);
            NodeNameClaim.take(connection.nats(), config.stream(), nodeName);
            long deadline = System.nanoTime() + SETUP_PATIENCE.toNanos();
            StreamInfo info = patiently("set up the cluster's stream " + config.stream(), deadline,
                    () -> StreamSetup.ensure(management, config, messages));
            StreamReader reader = new StreamReader(connection, config.stream(), messages, config.timeout());
            SharedSubscriptions subscriptions = patiently("open the cluster's push subscriptions", deadline,
                    () -> SharedSubscriptions.open(connection.nats(), config.stream(), config.replicas(),
                            config.timeout()));
            KeyValue letters = patiently("open the cluster's push dead letters", deadline,
                    () -> SharedBucket.open(connection.nats(), DeadLetterBucket.name(config.stream()),
                            config.replicas(), config.timeout(), "push dead letters"));
            StreamEventStore store = new StreamEventStore(connection, reader, subscriptions);
            StreamPublisher publisher = new StreamPublisher(connection, messages, config.stream(), config.timeout(),
                    config.duplicateWindow(), config.maxPendingAcks());
            StreamEventLog log = new StreamEventLog(connection, publisher, reader,
                    info.getStreamState().getLastSequence());
            return new ClusterNode(config, connection, management, connection.management(quickTimeout(config)),
                    messages, store, subscriptions, letters, reader, log);
        } catch (IOException | RuntimeException e) {
            connection.close();
            throw e;
        }
    }

    /**
     * Refuses at once a NATS server without JetStream, which answers none of JetStream's requests: without this
     * check, joining would wait its whole patience for answers that cannot come. A server without JetStream of its
     * own may still reach a cluster's JetStream through its routes, so only a server that says it has none and
     * through which no JetStream answers at all (no responders, or no answer in time) is refused.
     */
    private static void requireJetStream(ClusterConnection connection, JetStreamManagement management)
            throws SetupRefused {
        if (connection.nats().getServerInfo().isJetStreamAvailable()) {
            return;
        }
        try {
            management.getAccountStatistics();
        } catch (JetStreamApiException answered) {
            // JetStream answered, if only "temporarily unavailable" in an election: it is there, and joining waits.
        } catch (IOException e) {
            throw new SetupRefused("the NATS server " + connection.connectedServer() + " has JetStream off, and no"
                    + " JetStream answers through it (" + e.getMessage() + "); cluster mode keeps its events in a"
                    + " JetStream stream: start nats-server with -js, or with a jetstream block in its configuration");
        }
    }

    /** One step of joining, which may fail for a while. */
    private interface SetupStep<T> {
        T run() throws IOException;
    }

    /**
     * Runs a step of joining until it succeeds or the deadline passes. JetStream answers slowly or not at all
     * while its servers elect a leader or create a replicated stream, which is when several nodes of a cluster
     * start together: measured at over 5 s when three nodes created a 3-replica stream at once.
     */
    private static <T> T patiently(String what, long deadline, SetupStep<T> step) throws IOException {
        long placementDeadline = System.nanoTime() + PLACEMENT_PATIENCE.toNanos();
        for (int attempt = 1; ; attempt++) {
            try {
                return step.run();
            } catch (SetupRefused e) {
                throw e;
            } catch (IOException e) {
                if (e.getCause() instanceof JetStreamApiException answer
                        && answer.getApiErrorCode() != TEMPORARILY_UNAVAILABLE
                        && (answer.getApiErrorCode() != NO_PLACEMENT || System.nanoTime() - placementDeadline > 0)) {
                    throw e; // a definite answer, such as more replicas than servers: waiting changes nothing
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new IOException("could not " + what + " within " + SETUP_PATIENCE.toSeconds() + " s: "
                            + e.getMessage(), e);
                }
                LOG.warn("could not {} yet (attempt {}: {}); trying again", what, attempt, e.getMessage());
                try {
                    TimeUnit.SECONDS.sleep(1);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while waiting to " + what, interrupted);
                }
            }
        }
    }

    /** The stream as this node's event log: where its publishes go, and what resumes read. */
    public EventLog log() {
        return log;
    }

    /** The stream for {@code mgmt/events}, and the push subscriptions' bucket. */
    public EventStore store() {
        return store;
    }

    /** How push subscriptions are delivered in the cluster: each by its cursor in the stream ({@link PushCursor}). */
    public PushDelivery.Factory pushDeliveries(PushSender sender, PushConfig push) throws IOException {
        StreamContext stream;
        try {
            stream = connection.nats().getStreamContext(config.stream(),
                    JetStreamOptions.builder().requestTimeout(config.timeout()).build());
        } catch (JetStreamApiException e) {
            throw new IOException("the cluster's stream cannot be read: " + e.getMessage(), e);
        }
        Dispatcher dispatcher = connection.nats().createDispatcher();
        ConfirmedAck acks = new ConfirmedAck(connection.nats(), PushCursor.ackWait(push));
        CursorWatch watch = new CursorWatch(connection.management(quickTimeout(config)), config.stream());
        SharedDeadLetters shared = new SharedDeadLetters(letterBucket, management, reader, sender, push);
        shared.watchPauses(config.timeout());
        shared.sweep(subscriptions::ids);
        deadLetters = shared;
        cursorWatch = watch;
        return (id, rules) -> {
            PushCursor cursor = new PushCursor(id, stream, dispatcher, messages, sender, push, shared, rules,
                    freezeWatch, acks);
            shared.register(id, cursor);
            watch.add(cursor);
            return cursor;
        };
    }

    /** The push subscriptions' dead letters, once {@link #pushDeliveries} made the cursors that set them aside. */
    public DeadLetterLists deadLetters() {
        return deadLetters;
    }

    /** Puts the other nodes' push subscription changes in effect on this node from now on. */
    public void watchSubscriptions(PushSubscriptions pushSubscriptions) throws IOException {
        subscriptions.watch(pushSubscriptions);
    }

    /**
     * Shares the authorization updates any node receives with every node ({@link SharedAuthorizationUpdates}).
     *
     * @return stops taking the other nodes' updates
     */
    public Runnable shareAuthorizationUpdates(PublisherAuthorization publishers) {
        return SharedAuthorizationUpdates.share(connection.nats(), config.stream(), connection.nodeName(),
                publishers);
    }

    /**
     * Starts feeding the hub from the stream, after the stream's last id when the node joined, and lets outages
     * refuse publishes and streams (at once) and end open streams (after {@code cluster.outage-grace-millis}).
     */
    public void start(Hub hub, StreamSupervisor supervisor) throws IOException {
        this.hub = hub;
        connection.listen(new ClusterConnection.Listener() {
            @Override
            public void cutOff(String why) {
                hub.refuseFor(why + "; use another node");
            }

            @Override
            public void cutOffTooLong() {
                supervisor.endAll(DisconnectReason.CUT_OFF);
            }

            @Override
            public void restored() {
                feedNeedsRestart = true;
                pullsNeedRestart = true;
                hub.refuseFor(null);
            }
        });
        feed = StreamFeed.start(connection.nats(), connection.jetStream(config.timeout()), config.stream(), messages,
                hub);
        feedWatch = new FeedWatch(connection.management(quickTimeout(config)), config.stream(), feed);
        narrowing = new ReadNarrowing(hub);
        hub.whenFeedShouldLook(this::lookNow);
        ticker.scheduleWithFixedDelay(this::tick, TICK.toMillis(), TICK.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * How long one try of a restart, or one question of a watch, waits for JetStream: a tenth of
     * {@code cluster.timeout-seconds}, at least half a second. A try is short because a failed one fails by
     * waiting, not by slowness: a new consumer needs JetStream's meta leader, and while a frozen server still
     * counts as alive (about 12 s in ClusterPartitionIT) the meta leader may place the consumer there, where
     * nothing answers. Tries that were answered took 2-7 ms; three unanswered tries in a row were seen. Tries
     * that each waited the whole timeout held a node's feed 10.5 s, and tries doubling up to half of it 6 s.
     */
    private static Duration quickTimeout(ClusterConfig config) {
        Duration tenth = config.timeout().dividedBy(10); // the timeout is at least 1 s (validated)
        Duration floor = Duration.ofMillis(500);
        return tenth.compareTo(floor) < 0 ? floor : tenth;
    }

    /**
     * Hands the hub events the feed held behind messages that reached no consumer ({@link StreamFeed#handOverHeld}),
     * ends the streams of an outage that lasts ({@link ClusterConnection#checkOutage}), restarts the feed once
     * the node is connected again, the stream's leader has moved or the feed has stalled ({@link FeedWatch}), and
     * pulls again from the push
     * cursors then or when one has stalled ({@link CursorWatch}). Runs on the node's own thread, five
     * times a second, since it may wait for NATS.
     */
    private void tick() {
        try {
            feed.handOverHeld();
        } catch (RuntimeException e) {
            LOG.warn("node {} could not hand its hub the events its feed held: {}", connection.nodeName(),
                    e.toString());
        }
        try {
            connection.checkOutage();
            if (!connection.isUp()) {
                return;
            }
            String restartReason = feedNeedsRestart ? null : feedWatch.restartReason();
            if (restartReason != null) {
                LOG.info("node {} reads the cluster's stream again: {}", connection.nodeName(), restartReason);
                feedNeedsRestart = true;
            }
            if (!feedNeedsRestart && (narrowing.narrowIfSettled(System.nanoTime()) || !feed.readsHubScope())) {
                // Its subscribers want other event types: said in the restart's line.
                feedNeedsRestart = true;
                feedRestartForScope = true;
            }
            CursorWatch cursors = cursorWatch;
            if (cursors != null) {
                if (pullsNeedRestart) {
                    pullsNeedRestart = false;
                    cursors.pullAllAgain();
                }
                cursors.check(Math.max(hub.lastId(), feedWatch.streamLastId()));
            }
            if (feedNeedsRestart) {
                restartFeed();
            }
        } catch (RuntimeException e) {
            LOG.warn("node {} could not check its feed and push cursors: {}; trying again", connection.nodeName(),
                    e.toString());
        }
    }

    /**
     * One try to read the stream again; the next tick tries again should it fail. The first failure of a restart
     * is a warning, the tries after it (up to five a second through an election) are debug lines: the line on
     * success counts them.
     */
    private void restartFeed() {
        // Cleared first: a reconnect told during the try asks for another.
        feedNeedsRestart = false;
        feedRestartTries++;
        long began = System.nanoTime();
        long after;
        try {
            after = feed.restart(connection.jetStream(quickTimeout(config)));
        } catch (IOException | RuntimeException e) {
            feedNeedsRestart = true;
            if (feedRestartTries == 1) {
                LOG.warn("node {} cannot read the cluster's stream again yet: {}; trying again",
                        connection.nodeName(), e.getMessage());
            } else {
                LOG.debug("node {} cannot read the cluster's stream again yet (try {}): {}", connection.nodeName(),
                        feedRestartTries, e.getMessage());
            }
            return;
        }
        if (feedRestartForScope) {
            // At most a widening and a narrowing per ReadNarrowing.SETTLED, however subscribers come and go.
            LOG.info("node {} reads {} of the cluster's stream, for its subscribers, after id {} (try {}, {} ms)",
                    connection.nodeName(), feed.reading().subject(), after, feedRestartTries,
                    (System.nanoTime() - began) / 1_000_000);
        } else {
            LOG.info("node {} reads the cluster's stream again after id {} (try {}, {} ms)", connection.nodeName(),
                    after, feedRestartTries, (System.nanoTime() - began) / 1_000_000);
        }
        feedRestartTries = 0;
        feedRestartForScope = false;
    }

    /**
     * Asked by the hub, on a request's thread: a subscriber widened what the feed must read, or a resume waits for
     * an id a narrower feed has not reached. The watch asks the stream at its next look, which runs now.
     */
    private void lookNow() {
        feedWatch.lookNow();
        // One extra tick waiting at most: a flood of such requests queues nothing.
        if (!extraTickQueued.compareAndSet(false, true)) {
            return;
        }
        try {
            ticker.execute(this::extraTick);
        } catch (RejectedExecutionException e) {
            extraTickQueued.set(false); // the node is closing
        }
    }

    private void extraTick() {
        extraTickQueued.set(false);
        tick();
    }

    /**
     * The node's view of the cluster, for {@code mgmt/health} and the metrics.
     *
     * @param node            this node's name
     * @param status          UP, or CUT_OFF while it has no NATS server
     * @param natsServer      the NATS server it is connected to
     * @param cutOffSince     since when it is cut off
     * @param cutOffReason    why
     * @param stream          the stream's name
     * @param streamLastId    the stream's last sequence, as its leader says; absent when it cannot be asked
     * @param streamFirstId   the first sequence the stream still holds
     * @param deliveredId     the last id this node delivered to its subscribers
     * @param streamLeader    the NATS server that leads the stream
     * @param replicas        the stream's other copies: server name, whether current, how far behind
     * @param unreadable      messages on the stream's subjects that were not events, skipped
     * @param pendingAcks     acknowledgements this node awaits from the stream, each sending of an event one
     * @param reads           the event types this node reads from the stream: {@code "all"}, or the one its
     *                        subscribers want
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record View(String node, String status, String natsServer, String cutOffSince, String cutOffReason,
                       String stream, Long streamLastId, Long streamFirstId, long deliveredId, String streamLeader,
                       List<String> replicas, long unreadable, int pendingAcks, String reads) {

        /** Whether the node has NATS. */
        @JsonIgnore
        public boolean isUp() {
            return "UP".equals(status);
        }
    }

    public View view() {
        boolean up = connection.isUp();
        Long last = null;
        Long first = null;
        String leader = null;
        List<String> replicas = new ArrayList<>();
        if (up) {
            try {
                StreamInfo info = viewManagement.getStreamInfo(config.stream());
                last = info.getStreamState().getLastSequence();
                first = info.getStreamState().getFirstSequence();
                ClusterInfo cluster = info.getClusterInfo();
                if (cluster != null) {
                    leader = cluster.getLeader();
                    for (Replica replica : cluster.getReplicas() == null ? List.<Replica>of() : cluster.getReplicas()) {
                        replicas.add(replica.getName() + (replica.isOffline() ? ": offline"
                                : replica.isCurrent() ? ": current" : ": " + replica.getLag() + " behind"));
                    }
                }
            } catch (IOException | JetStreamApiException e) {
                leader = null;
            }
        }
        Hub fed = hub;
        StreamFeed reading = feed;
        // Read once, after the questions above: a view that says cut off names since when and why.
        ClusterConnection.CutOff cutOff = connection.cutOff();
        return new View(connection.nodeName(), cutOff == null ? "UP" : "CUT_OFF", connection.connectedServer(),
                cutOff == null ? null : cutOff.since().toString(), cutOff == null ? null : cutOff.why(),
                config.stream(), last, first, fed == null ? 0 : fed.lastId(), leader, replicas,
                reading == null ? 0 : reading.unreadable(), log.pendingAcks(),
                reading == null ? null : reads(reading.reading()));
    }

    private static String reads(StreamFeed.Reading reading) {
        return reading == null || !reading.filtered() ? "all" : reading.scope().topicKeys().iterator().next();
    }

    @Override
    public void close() {
        ticker.shutdownNow();
        freezeClock.shutdownNow();
        log.close();
        SharedDeadLetters letters = deadLetters;
        if (letters != null) {
            letters.close();
        }
        StreamFeed reading = feed;
        if (reading != null) {
            reading.close();
        }
        connection.close();
    }
}
