package eu.arrowhead.eventhandler.security;

import eu.arrowhead.eventhandler.api.SystemRequest;
import eu.arrowhead.eventhandler.protocol.RequestException;
import java.util.Optional;
import java.util.Set;

/**
 * The access rules every endpoint applies. In insecure mode every request is allowed; in secure mode the
 * caller's identity must match the system it acts for, the ACL must allow the event type, management is
 * for {@code sysop} only and authorization updates for {@code authorization} only. Each check throws a
 * {@link RequestException} (401 or 403, 400 for a request that lacks what a rule needs) with the reason.
 * In either mode the Arrowhead Authorization system may restrict which publishers each subscriber hears
 * from ({@link PublisherAuthorization}).
 */
public interface Authorizer {

    /** Allows every request and restricts no subscriber: the insecure mode without the Authorization system. */
    Authorizer INSECURE = new Authorizer() {
    };

    /**
     * A request only a known system may make, checked before anything else is done for it (in secure mode a
     * caller without a client certificate gets 401 before the server spends work or says anything else).
     */
    default void requireIdentified(Caller caller) {
    }

    /** {@code POST /eventhandler/publish}: the caller publishes an event of this type as {@code source}. */
    default void requirePublish(Caller caller, String sourceSystemName, String eventType) {
    }

    /** {@code POST /eventhandler/subscribe} and SSE: the caller subscribes as {@code subscriberSystemName}. */
    default void requireSubscribe(Caller caller, String subscriberSystemName, String eventType) {
    }

    /** {@code DELETE /eventhandler/unsubscribe}: the caller removes a subscription of {@code systemName}. */
    default void requireUnsubscribe(Caller caller, String systemName) {
    }

    /** {@code /eventhandler/mgmt/*}. */
    default void requireManagement(Caller caller) {
    }

    /** {@code POST /eventhandler/publish/authupdate}. */
    default void requireAuthUpdate(Caller caller) {
    }

    /**
     * The publishers a subscriber may receive events from (system names, lower case); empty when it may
     * receive from any. Recomputed after an authorization update for the subscriber.
     *
     * @param subscriberSystemName the subscriber's name, or {@code null} for a stream that names none
     *                             (insecure mode), which an authorizer that restricts publishers refuses
     * @throws eu.arrowhead.eventhandler.protocol.UnavailableException when the authorizer cannot say now (the
     *                             Authorization system is down and has not answered for this subscriber before)
     */
    default Optional<Set<String>> authorizedPublishers(String subscriberSystemName) {
        return Optional.empty();
    }

    /**
     * As {@link #authorizedPublishers(String)}, for a subscriber known with its address and port: the
     * Arrowhead 4.x Authorization system identifies a consumer by name, address and port, so push
     * subscriptions (which carry all three) should use this one.
     */
    default Optional<Set<String>> authorizedPublishers(SystemRequest subscriber) {
        return authorizedPublishers(subscriber.systemName());
    }

    /**
     * The Authorization system announced a change of rights ({@code SUBSCRIBER_AUTH_UPDATE}): what was known
     * of every subscriber's publishers is forgotten, and the listeners ({@link #onAuthorizationChange}) put
     * what it says now in effect before this returns. The update names the subscriber by its Service Registry
     * id, which the Event Handler cannot map to a name, so nothing less than everything can be forgotten.
     */
    default void authorizationChanged() {
    }

    /**
     * Calls {@code listener} whenever {@code authorizedPublishers} may answer differently: after an
     * authorization update, when a periodic recheck finds a changed answer, and when the Authorization system
     * answers again after an outage. The listener asks again for the subscribers it serves.
     */
    default void onAuthorizationChange(Runnable listener) {
    }
}
