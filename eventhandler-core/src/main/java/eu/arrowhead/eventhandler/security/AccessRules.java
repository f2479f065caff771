package eu.arrowhead.eventhandler.security;

import eu.arrowhead.eventhandler.config.SecurityConfig;
import eu.arrowhead.eventhandler.protocol.RequestException;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The secure mode's {@link Authorizer}: the caller's identity (its certificate's CN, see
 * {@link ClientCertificates}) must be the system it acts for, the ACL of {@code security.acl-file} must
 * allow the event type (without one, every trusted system may publish and subscribe to any type),
 * management is for {@value #SYSOP} only and authorization updates for {@value #AUTHORIZATION} only. Which
 * publishers a subscriber may receive from is the Authorization system's word, added on top of these rules
 * by {@link PublisherAuthorization} in either mode.
 *
 * <p>A caller without an identity (a certificate without a CN) gets 401, any other refusal 403, both
 * with the reason.
 */
public final class AccessRules implements Authorizer {
    /** The identity allowed to use the management endpoints. */
    public static final String SYSOP = "sysop";
    /** The identity allowed to send authorization updates: the Arrowhead Authorization system. */
    public static final String AUTHORIZATION = "authorization";

    private final AccessList acl;

    /** @param acl the ACL, or {@code null} to allow every event type to every trusted system */
    public AccessRules(AccessList acl) {
        this.acl = acl;
    }

    /**
     * The rules {@code config} asks for: reads the ACL file, if there is one.
     *
     * @throws eu.arrowhead.eventhandler.config.ConfigException for an ACL file that is missing or wrong
     */
    public static AccessRules from(SecurityConfig config) {
        return new AccessRules(config.aclFile().isBlank() ? null : AccessList.read(Path.of(config.aclFile())));
    }

    @Override
    public void requireIdentified(Caller caller) {
        identity(caller);
    }

    @Override
    public void requirePublish(Caller caller, String sourceSystemName, String eventType) {
        String identity = identity(caller);
        if (sourceSystemName == null) {
            throw RequestException.forbidden("in secure mode an event names its source: source.systemName must"
                    + " be '" + identity + "', the system your certificate names");
        }
        requireSelf(identity, sourceSystemName, "source.systemName");
        if (acl != null && !acl.mayPublish(identity, eventType.toLowerCase(Locale.ROOT))) {
            throw RequestException.forbidden("system '" + identity + "' may not publish events of type '"
                    + eventType + "' (security.acl-file)");
        }
    }

    @Override
    public void requireSubscribe(Caller caller, String subscriberSystemName, String eventType) {
        String identity = identity(caller);
        requireSelf(identity, subscriberSystemName, "the subscriber's systemName");
        if (acl != null && !acl.maySubscribe(identity, eventType.toLowerCase(Locale.ROOT))) {
            throw RequestException.forbidden("system '" + identity + "' may not subscribe to events of type '"
                    + eventType + "' (security.acl-file)");
        }
    }

    @Override
    public void requireUnsubscribe(Caller caller, String systemName) {
        requireSelf(identity(caller), systemName, "system_name");
    }

    @Override
    public void requireManagement(Caller caller) {
        requireIdentity(caller, SYSOP, "the management endpoints");
    }

    @Override
    public void requireAuthUpdate(Caller caller) {
        requireIdentity(caller, AUTHORIZATION, "authorization updates");
    }

    private static String identity(Caller caller) {
        if (caller.anonymous()) {
            throw RequestException.unauthorized("no identity: secure mode needs a client certificate whose CN"
                    + " names the system, as in CN=publisher.testcloud.aitia.arrowhead.eu");
        }
        return caller.systemName();
    }

    private static void requireSelf(String identity, String claimed, String field) {
        if (claimed == null || !identity.equals(claimed.toLowerCase(Locale.ROOT))) {
            throw RequestException.forbidden(field + " is '" + claimed + "' but the client certificate names '"
                    + identity + "'; a system may act only for itself");
        }
    }

    private static void requireIdentity(Caller caller, String allowed, String what) {
        String identity = identity(caller);
        if (!identity.equals(allowed)) {
            throw RequestException.forbidden(what + " are for '" + allowed + "' only, not for '" + identity + "'");
        }
    }
}
