package eu.arrowhead.eventhandler.security;

import eu.arrowhead.eventhandler.api.SystemRequest;
import eu.arrowhead.eventhandler.config.SecurityConfig;
import eu.arrowhead.eventhandler.protocol.RequestException;
import eu.arrowhead.eventhandler.store.AuthorizationStore;
import java.util.Optional;
import java.util.Set;
import javax.net.ssl.SSLContext;

/**
 * {@code security.authorization.enabled}: the Arrowhead Authorization system names the publishers each
 * subscriber may receive events from, on top of the request rules of the mode ({@link AccessRules} in secure
 * mode, none in insecure mode). The 4.x Event Handler asks it in both modes, so this one does too: in
 * insecure mode over plain HTTP, for the subscriber a push subscription or a stream names, since there is no
 * certificate to name it.
 *
 * <p>While it decides, an event must name its source: every subscriber hears only from the publishers it
 * names, so an event without one would be accepted and then reach no one (4.x refuses it too). A stream
 * that names no subscriber (insecure mode, no {@code subscriber} parameter) is refused for the same reason
 * rather than served everything.
 */
public final class PublisherAuthorization implements Authorizer, AutoCloseable {
    /** The query parameter that names an SSE subscriber's system; a certificate names it in secure mode. */
    public static final String SUBSCRIBER_PARAMETER = "subscriber";

    private final Authorizer requests;
    private final AuthorizationAnswers authorization;
    /** Tells the other nodes of a cluster of an update this node received; nothing on a single node. */
    private volatile Runnable forward = () -> {
    };

    private PublisherAuthorization(Authorizer requests, AuthorizationAnswers authorization) {
        this.requests = requests;
        this.authorization = authorization;
    }

    /**
     * Loads the answers {@code store} kept, connects to the Authorization system of {@code config} (waiting for
     * it at most as its start retries say) and adds its word to {@code requests}.
     *
     * @param context the Event Handler's own TLS context for an https Authorization system; {@code null} in
     *                insecure mode
     */
    public static PublisherAuthorization connect(Authorizer requests, SecurityConfig config, SSLContext context,
                                                 AuthorizationStore store) {
        return new PublisherAuthorization(requests, AuthorizationAnswers.connect(
                new AuthorizationSystem(config.authorizationUri(), context), store,
                config.authorizationStartRetries(), config.authorizationRetryInterval(),
                config.authorizationRecheckInterval()));
    }

    @Override
    public void requireIdentified(Caller caller) {
        requests.requireIdentified(caller);
    }

    @Override
    public void requirePublish(Caller caller, String sourceSystemName, String eventType) {
        requests.requirePublish(caller, sourceSystemName, eventType);
        if (sourceSystemName == null) {
            throw RequestException.badPayload("source.systemName is required: the Authorization system"
                    + " (security.authorization.enabled) decides which subscribers receive a publisher's events,"
                    + " so an event without a source would reach no one");
        }
    }

    @Override
    public void requireSubscribe(Caller caller, String subscriberSystemName, String eventType) {
        requests.requireSubscribe(caller, subscriberSystemName, eventType);
    }

    @Override
    public void requireUnsubscribe(Caller caller, String systemName) {
        requests.requireUnsubscribe(caller, systemName);
    }

    @Override
    public void requireManagement(Caller caller) {
        requests.requireManagement(caller);
    }

    @Override
    public void requireAuthUpdate(Caller caller) {
        requests.requireAuthUpdate(caller);
    }

    @Override
    public Optional<Set<String>> authorizedPublishers(String subscriberSystemName) {
        if (subscriberSystemName == null) {
            throw RequestException.invalidParameter("name the subscribing system, as in"
                    + " /eventhandler/events?eventType=temperature&" + SUBSCRIBER_PARAMETER + "=dashboard:"
                    + " the Authorization system (security.authorization.enabled) decides which publishers each"
                    + " subscriber receives events from");
        }
        return authorizedPublishers(SystemRequest.named(subscriberSystemName));
    }

    @Override
    public Optional<Set<String>> authorizedPublishers(SystemRequest subscriber) {
        return Optional.of(authorization.publishersOf(subscriber));
    }

    /** The Authorization system's update, received by this node: the other nodes of a cluster are told too. */
    @Override
    public void authorizationChanged() {
        try {
            forward.run();
        } finally {
            authorization.rulesChanged();
        }
    }

    /** Cluster mode: {@code forward} tells the other nodes of each update this node receives. */
    public void forwardUpdatesTo(Runnable forward) {
        this.forward = forward;
    }

    /** Cluster mode: another node received an update; put it in effect here, without telling anyone. */
    public void updatedElsewhere() {
        authorization.rulesChanged();
    }

    @Override
    public void onAuthorizationChange(Runnable listener) {
        authorization.onChange(listener);
    }

    @Override
    public void close() {
        authorization.close();
    }
}
