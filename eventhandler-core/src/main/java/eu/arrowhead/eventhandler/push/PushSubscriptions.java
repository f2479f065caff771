package eu.arrowhead.eventhandler.push;

import com.fasterxml.jackson.core.JsonProcessingException;
import eu.arrowhead.eventhandler.api.SubscriptionListResponse;
import eu.arrowhead.eventhandler.api.SubscriptionRequest;
import eu.arrowhead.eventhandler.api.SubscriptionResponse;
import eu.arrowhead.eventhandler.config.PushConfig;
import eu.arrowhead.eventhandler.protocol.JsonMapper;
import eu.arrowhead.eventhandler.protocol.RequestException;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import eu.arrowhead.eventhandler.security.Authorizer;
import eu.arrowhead.eventhandler.store.SubscriptionStore;
import eu.arrowhead.eventhandler.topic.Hub;
import eu.arrowhead.eventhandler.topic.SubscriberFilter;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every push subscription: delivered by its {@link PushDelivery}, kept in the {@link SubscriptionStore}, and listed
 * for management. One subscription per (event type, subscriber system name), both case-insensitive: subscribing
 * again replaces the rules and keeps the id and where its delivery is.
 *
 * <p>Changes are serialized by one lock, taken only by management requests, never per event; the hub's lock
 * is taken inside it, never the other way round.
 */
public final class PushSubscriptions {
    private static final Logger LOG = LoggerFactory.getLogger(PushSubscriptions.class);
    /** The event type of Arrowhead's authorization updates. */
    public static final String AUTH_UPDATE_EVENT_TYPE = "SUBSCRIBER_AUTH_UPDATE";

    private final PushDelivery.Factory deliveries;
    private final SubscriptionStore store;
    private final Authorizer authorizer;
    private final PushSender sender;
    private final PushConfig config;
    private final PushBudget budget;
    private final Object lock = new Object();
    /** How many authorization changes have begun: a subscribe that saw it move decides again ({@link #catchUp}). */
    private final AtomicLong authorizationChanges = new AtomicLong();
    private final Map<String, Entry> byKey = new HashMap<>();
    private final TreeMap<Long, Entry> byId = new TreeMap<>();
    private long lastId;

    /** A live subscription: its rules, what delivers them, and its heap charge. */
    private static final class Entry {
        PushSubscription subscription;
        Set<String> sources;
        long heapCost;
        final PushDelivery subscriber;

        Entry(PushSubscription subscription, Set<String> sources, long heapCost, PushDelivery subscriber) {
            this.subscription = subscription;
            this.sources = sources;
            this.heapCost = heapCost;
            this.subscriber = subscriber;
        }

        SubscriptionResponse response() {
            return subscription.toResponse(sources, subscriber.pausedBecause());
        }
    }

    /** Without an event log: each is a subscriber of the hub with a bounded queue ({@link PushSubscriber}). */
    public PushSubscriptions(Hub hub, SubscriptionStore store, Authorizer authorizer, PushSender sender,
                             PushConfig config) {
        this(store, authorizer, sender, config,
                budget -> (id, rules) -> new PushSubscriber(hub, sender, config.queueCapacity(), budget, rules));
    }

    /** Cluster mode: the store is shared by the nodes and each subscription is delivered by {@code deliveries}. */
    public PushSubscriptions(SubscriptionStore store, Authorizer authorizer, PushSender sender, PushConfig config,
                             PushDelivery.Factory deliveries) {
        this(store, authorizer, sender, config, budget -> deliveries);
    }

    /** With the factory of deliveries made for the heap budget their queues share ({@link LogCursors}). */
    PushSubscriptions(SubscriptionStore store, Authorizer authorizer, PushSender sender, PushConfig config,
                      Function<PushBudget, PushDelivery.Factory> deliveries) {
        this.store = store;
        this.authorizer = authorizer;
        this.sender = sender;
        this.config = config;
        this.budget = new PushBudget(config.totalMaxBytes());
        this.deliveries = deliveries.apply(budget);
        authorizer.onAuthorizationChange(this::recomputeSources);
    }

    /** Registers every stored subscription for delivery; a stored one that no longer validates is skipped. */
    public int load() {
        synchronized (lock) {
            store.loadSubscriptions().forEach(this::register);
            LOG.info("{} push subscriptions loaded", byId.size());
            if (budget.subscriptionsOverBudget()) {
                LOG.warn("the stored push subscriptions take {} bytes of heap, more than half of push.total-max-bytes"
                        + " ({}): all are kept, new ones are refused until some are removed", budget.subscriptionBytes(),
                        config.totalMaxBytes());
            }
            return byId.size();
        }
    }

    /**
     * Cluster mode: a subscription was saved in the shared store, by another node or by this one (then it is
     * known already and nothing changes). This node registers it, or puts its changes in effect.
     */
    public void storedElsewhere(SubscriptionStore.StoredSubscription stored) {
        synchronized (lock) {
            Entry known = byId.get(stored.id());
            if (known == null) {
                register(stored);
                return;
            }
            if (known.subscription.updatedAt().toEpochMilli() >= stored.updatedMillis()) {
                return;
            }
            try {
                PushSubscription changed = fromStore(stored);
                long cost = PushBudget.cost(changed.request(), stored.json().getBytes(StandardCharsets.UTF_8).length);
                budget.resizeSubscription(known.heapCost, cost);
                known.heapCost = cost;
                if (!known.subscription.topicKey().equals(changed.topicKey())) {
                    known.subscriber.follow(changed.topicKey());
                    known.subscriber.unfollow(known.subscription.topicKey());
                }
                changeTo(known, changed, changed.effectiveSources(authorizedOrNone(changed)));
            } catch (JsonProcessingException | RequestException | UnavailableException e) {
                LOG.warn("push subscription {} changed in the shared store cannot be put in effect here: {}",
                        stored.id(), e.getMessage());
            }
        }
    }

    /** Cluster mode: a subscription was deleted from the shared store; this node stops delivering it. */
    public void deletedElsewhere(long id) {
        synchronized (lock) {
            Entry entry = byId.get(id);
            if (entry != null) {
                forget(entry);
            }
        }
    }

    /** Registers a stored subscription; one that no longer validates is skipped. Under the lock. */
    private void register(SubscriptionStore.StoredSubscription stored) {
        lastId = Math.max(lastId, stored.id());
        if (byId.containsKey(stored.id())) {
            return;
        }
        try {
            PushSubscription subscription = fromStore(stored);
            Set<String> sources = subscription.effectiveSources(authorizedOrNone(subscription));
            PushDelivery subscriber = deliveries.create(subscription.id(), rules(subscription, sources));
            subscriber.follow(subscription.topicKey());
            long cost = PushBudget.cost(subscription.request(), stored.json().getBytes(StandardCharsets.UTF_8).length);
            budget.chargeSubscription(cost);
            put(new Entry(subscription, sources, cost, subscriber));
        } catch (JsonProcessingException | RequestException | UnavailableException e) {
            LOG.warn("push subscription {} in the store cannot be registered and is skipped: {}", stored.id(),
                    e.getMessage());
        }
    }

    /**
     * A stored subscription, checked again: one saved before a rule was added, or while the push.*-targets
     * were different, that breaks it now is not delivered (the caller logs it and skips it).
     */
    private PushSubscription fromStore(SubscriptionStore.StoredSubscription stored)
            throws JsonProcessingException {
        SubscriptionRequest request = JsonMapper.get().readValue(stored.json(), SubscriptionRequest.class);
        PushSubscription subscription = PushSubscription.validate(request, stored.id(),
                Instant.ofEpochMilli(stored.createdMillis()), Instant.ofEpochMilli(stored.updatedMillis()));
        sender.targets().screenStored(subscription.notifyTarget());
        return subscription;
    }

    /** The id of a new subscription: after every id this node knows, and, in a cluster, every node gave. */
    private long nextId() {
        try {
            return store.nextSubscriptionId(lastId);
        } catch (RuntimeException e) {
            throw unavailable(e);
        }
    }

    /**
     * {@code POST /eventhandler/subscribe}: creates the subscription, or replaces the rules of the one with
     * the same event type and subscriber.
     */
    public SubscriptionResponse subscribe(SubscriptionRequest request) {
        long changesBefore = authorizationChanges.get();
        SubscriptionResponse response = subscribeChecked(request);
        catchUp(changesBefore);
        return response;
    }

    private SubscriptionResponse subscribeChecked(SubscriptionRequest request) {
        Instant now = now();
        PushSubscription checked = PushSubscription.validate(request, 0, now, now);
        // Outside the lock: a name lookup may take up to push.connect-timeout-seconds.
        sender.targets().screen(checked.notifyTarget());
        Set<String> sources = checked.effectiveSources(authorized(checked));
        synchronized (lock) {
            Entry existing = byKey.get(key(checked));
            if (existing != null) {
                PushSubscription kept = existing.subscription;
                return replace(existing, PushSubscription.validate(request, kept.id(), kept.createdAt(), now), sources);
            }
            if (byId.size() >= config.maxSubscriptions()) {
                throw new UnavailableException("the Event Handler already holds its maximum of "
                        + config.maxSubscriptions() + " push subscriptions (push.max-subscriptions)");
            }
            PushSubscription subscription = PushSubscription.validate(request, nextId(), now, now);
            String json = json(subscription);
            long cost = PushBudget.cost(subscription.request(), json.getBytes(StandardCharsets.UTF_8).length);
            if (!budget.reserveSubscription(cost)) {
                throw budgetFull();
            }
            PushDelivery subscriber = deliveries.create(subscription.id(), rules(subscription, sources));
            try {
                subscriber.follow(subscription.topicKey());
                try {
                    save(subscription, json);
                } catch (RuntimeException e) {
                    subscriber.unfollow(subscription.topicKey());
                    throw e;
                }
            } catch (RuntimeException e) {
                // Never a subscription: whatever was queued for it meanwhile, and its charge, go back.
                subscriber.close();
                budget.releaseSubscription(cost);
                throw e;
            }
            lastId = subscription.id();
            Entry entry = new Entry(subscription, sources, cost, subscriber);
            put(entry);
            return entry.response();
        }
    }

    /**
     * {@code DELETE /eventhandler/unsubscribe}: removes the subscription if there is one; an address or port
     * given must match the subscriber's.
     *
     * @return whether a subscription was removed
     */
    public boolean unsubscribe(String eventType, String systemName, String address, Integer port) {
        String key = key(eventType.toLowerCase(Locale.ROOT), systemName.toLowerCase(Locale.ROOT));
        synchronized (lock) {
            Entry entry = byKey.get(key);
            if (entry == null) {
                return false;
            }
            var subscriber = entry.subscription.request().subscriberSystem();
            if ((address != null && !address.equalsIgnoreCase(subscriber.address()))
                    || (port != null && !port.equals(subscriber.port()))) {
                return false;
            }
            remove(entry);
            return true;
        }
    }

    /** The subscription with this id. */
    public Optional<SubscriptionResponse> get(long id) {
        synchronized (lock) {
            return Optional.ofNullable(byId.get(id)).map(Entry::response);
        }
    }

    /**
     * A page of subscriptions, as {@code GET mgmt/subscriptions} lists them.
     *
     * @param page      the page, from 0; {@code null} with {@code size} null for all
     * @param size      subscriptions per page
     * @param ascending the order
     * @param sortField {@code id}, {@code createdAt} or {@code updatedAt}
     */
    public SubscriptionListResponse list(Integer page, Integer size, boolean ascending, String sortField) {
        Comparator<PushSubscription> order = switch (sortField) {
            case "id" -> Comparator.comparingLong(PushSubscription::id);
            case "createdAt" -> Comparator.comparing(PushSubscription::createdAt)
                    .thenComparingLong(PushSubscription::id);
            case "updatedAt" -> Comparator.comparing(PushSubscription::updatedAt)
                    .thenComparingLong(PushSubscription::id);
            default -> throw new IllegalArgumentException(sortField);
        };
        Comparator<Entry> entries = Comparator.comparing(entry -> entry.subscription, order);
        synchronized (lock) {
            List<Entry> sorted = new ArrayList<>(byId.values());
            sorted.sort(ascending ? entries : entries.reversed());
            int from = page == null ? 0 : (int) Math.min(sorted.size(), (long) page * size);
            int to = page == null ? sorted.size() : (int) Math.min(sorted.size(), (long) from + size);
            return new SubscriptionListResponse(sorted.subList(from, to).stream().map(Entry::response).toList(),
                    sorted.size());
        }
    }

    /**
     * {@code PUT mgmt/subscriptions/{id}}: replaces a subscription's rules, event type and subscriber.
     *
     * @return empty if there is no subscription with this id
     */
    public Optional<SubscriptionResponse> update(long id, SubscriptionRequest request) {
        long changesBefore = authorizationChanges.get();
        Optional<SubscriptionResponse> response = updateChecked(id, request);
        catchUp(changesBefore);
        return response;
    }

    private Optional<SubscriptionResponse> updateChecked(long id, SubscriptionRequest request) {
        Instant now = now();
        PushSubscription checked = PushSubscription.validate(request, id, now, now);
        sender.targets().screen(checked.notifyTarget());
        Set<String> sources = checked.effectiveSources(authorized(checked));
        synchronized (lock) {
            Entry entry = byId.get(id);
            if (entry == null) {
                return Optional.empty();
            }
            Entry other = byKey.get(key(checked));
            if (other != null && other != entry) {
                throw RequestException.badPayload("subscription " + other.subscription.id() + " already subscribes "
                        + checked.subscriberKey() + " to " + request.eventType());
            }
            PushSubscription changed = PushSubscription.validate(request, id, entry.subscription.createdAt(), now);
            return Optional.of(replace(entry, changed, sources));
        }
    }

    /**
     * {@code DELETE mgmt/subscriptions/{id}}.
     *
     * @return whether there was such a subscription
     */
    public boolean delete(long id) {
        synchronized (lock) {
            Entry entry = byId.get(id);
            if (entry == null) {
                return false;
            }
            remove(entry);
            return true;
        }
    }

    /**
     * The authorizer's answers changed (an authorization update, a recheck, the Authorization system back after
     * an outage): asks it about each subscription's subscriber and puts the sources it allows in effect. An
     * update names the subscriber by its Service Registry id, which this Event Handler does not hold, so every
     * subscription is recomputed; updates are rare and the answers are per subscriber.
     */
    private void recomputeSources() {
        authorizationChanges.incrementAndGet();
        List<Entry> entries;
        synchronized (lock) {
            entries = new ArrayList<>(byId.values());
        }
        Map<String, Optional<Set<String>>> bySubscriber = new HashMap<>();
        for (Entry entry : entries) {
            bySubscriber.computeIfAbsent(entry.subscription.subscriberKey(), key -> authorizedOrNone(entry.subscription));
        }
        synchronized (lock) {
            for (Entry entry : entries) {
                if (byId.get(entry.subscription.id()) != entry) {
                    continue;
                }
                Optional<Set<String>> authorized = bySubscriber.get(entry.subscription.subscriberKey());
                if (authorized != null) {
                    entry.sources = entry.subscription.effectiveSources(authorized);
                    entry.subscriber.rules(rules(entry.subscription, entry.sources));
                }
            }
        }
    }

    /**
     * A subscription's sources are decided before it is put in effect under the lock; an authorization change in
     * between may have recomputed every subscription without it, or before its old answer was written back. Rare
     * (an update while a subscriber subscribes), so everything is recomputed then.
     */
    private void catchUp(long changesBefore) {
        if (authorizationChanges.get() != changesBefore) {
            recomputeSources();
        }
    }

    /** How many subscriptions there are. */
    public int count() {
        synchronized (lock) {
            return byId.size();
        }
    }

    /** Bytes of events waiting in every subscriber's queue, as {@link PushBudget} counts them. */
    public long queuedBytes() {
        return budget.queuedBytes();
    }

    /** Subscriptions whose cursor waits for heap room for its next event ({@link PushBudget#takeFirst}). */
    public int waitingForRoom() {
        return budget.waiting();
    }

    /** Bytes of heap the subscriptions are charged, as {@link PushBudget} estimates them. */
    public long subscriptionBytes() {
        return budget.subscriptionBytes();
    }

    /** Events waiting in every subscriber's queue. */
    public long queued() {
        List<Entry> entries;
        synchronized (lock) {
            entries = new ArrayList<>(byId.values());
        }
        return entries.stream().mapToLong(entry -> entry.subscriber.queued()).sum();
    }

    private SubscriptionResponse replace(Entry entry, PushSubscription changed, Set<String> sources) {
        PushSubscription old = entry.subscription;
        boolean moved = !old.topicKey().equals(changed.topicKey());
        String json = json(changed);
        long cost = PushBudget.cost(changed.request(), json.getBytes(StandardCharsets.UTF_8).length);
        if (!budget.tryResizeSubscription(entry.heapCost, cost)) {
            throw budgetFull();
        }
        try {
            if (moved) {
                entry.subscriber.move(old.topicKey(), changed.topicKey(), () -> save(changed, json));
            } else {
                save(changed, json);
            }
        } catch (RuntimeException e) {
            budget.resizeSubscription(cost, entry.heapCost);
            throw e;
        }
        entry.heapCost = cost;
        changeTo(entry, changed, sources);
        return entry.response();
    }

    private void changeTo(Entry entry, PushSubscription changed, Set<String> sources) {
        byKey.remove(key(entry.subscription));
        entry.subscription = changed;
        entry.sources = sources;
        entry.subscriber.rules(rules(changed, sources));
        byKey.put(key(changed), entry);
    }

    private void remove(Entry entry) {
        try {
            store.deleteSubscription(entry.subscription.id());
        } catch (RuntimeException e) {
            throw unavailable(e);
        }
        forget(entry);
    }

    private void forget(Entry entry) {
        PushSubscription subscription = entry.subscription;
        entry.subscriber.unfollow(subscription.topicKey());
        entry.subscriber.close();
        budget.releaseSubscription(entry.heapCost);
        byKey.remove(key(subscription));
        byId.remove(subscription.id());
    }

    private UnavailableException budgetFull() {
        return new UnavailableException("the push subscriptions hold their share of the heap (half of"
                + " push.total-max-bytes, " + config.totalMaxBytes() + " bytes); remove some or try again later");
    }

    private void put(Entry entry) {
        byKey.put(key(entry.subscription), entry);
        byId.put(entry.subscription.id(), entry);
    }

    /** The request as the store keeps it; its size is also what the subscription is charged by. */
    private static String json(PushSubscription subscription) {
        try {
            return JsonMapper.get().writeValueAsString(subscription.request());
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a validated subscription cannot be encoded", e);
        }
    }

    private void save(PushSubscription subscription, String json) {
        try {
            store.saveSubscription(new SubscriptionStore.StoredSubscription(subscription.id(),
                    subscription.topicKey(), subscription.subscriberKey(), subscription.createdAt().toEpochMilli(),
                    subscription.updatedAt().toEpochMilli(), json));
        } catch (RuntimeException e) {
            throw unavailable(e);
        }
    }

    /** Now, to the millisecond: what the store keeps, so that a subscription reads the same after a restart. */
    private static Instant now() {
        return Instant.now().truncatedTo(ChronoUnit.MILLIS);
    }

    private static UnavailableException unavailable(RuntimeException e) {
        LOG.warn("the event store cannot keep a push subscription change: {}", e.toString());
        return new UnavailableException("the event store cannot be written now; try again");
    }

    /** @throws UnavailableException when the authorizer cannot say now: a new subscription is refused (503) */
    private Optional<Set<String>> authorized(PushSubscription subscription) {
        return authorizer.authorizedPublishers(subscription.request().subscriberSystem());
    }

    /**
     * For a subscription that exists already: one whose subscriber the authorizer cannot say anything about now
     * gets no source until it can (fail closed); the authorizer's next change notice puts its sources in effect.
     */
    private Optional<Set<String>> authorizedOrNone(PushSubscription subscription) {
        try {
            return authorized(subscription);
        } catch (UnavailableException e) {
            return Optional.of(Set.of());
        } catch (RuntimeException e) {
            LOG.error("deciding the publishers of subscriber {} failed; its subscriptions get none",
                    subscription.subscriberKey(), e);
            return Optional.of(Set.of());
        }
    }

    private PushRules rules(PushSubscription subscription, Set<String> sources) {
        Map<String, String> metaData = subscription.matchMetaData() ? subscription.request().filterMetaData() : Map.of();
        return new PushRules(new SubscriberFilter(sources, metaData), subscription.startMillis(),
                subscription.endMillis(), subscription.target(sender.https()));
    }

    private static String key(PushSubscription subscription) {
        return key(subscription.topicKey(), subscription.subscriberKey());
    }

    private static String key(String topicKey, String subscriberKey) {
        return topicKey + '\n' + subscriberKey;
    }
}
