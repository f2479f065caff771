package eu.arrowhead.eventhandler.push;

import eu.arrowhead.eventhandler.config.AddressRange;
import eu.arrowhead.eventhandler.config.PushConfig;
import eu.arrowhead.eventhandler.protocol.RequestException;
import java.net.InetAddress;
import java.util.List;

/**
 * Which addresses events may be POSTed to, so that the Event Handler is no open relay: never to itself
 * ({@link OwnEndpoint}), where a pushed event would be a valid publish and be pushed again without end; and
 * never to an address in {@code push.denied-targets} unless {@code push.allowed-targets} allows it (allowed
 * wins: the lists carve holes in a broad deny, and deny-all plus a few allowed blocks makes an allow-list).
 *
 * <p>Checked twice. At subscribe ({@link #screen}): on the address, or on every address its name resolves
 * to, within {@code push.connect-timeout-seconds}; a refusal is a 400 that names the rule. On every connection
 * ({@link GuardedDnsResolver}): on the addresses the name resolves to then, which closes DNS rebinding and a
 * name that did not resolve at subscribe. A loop through another Event Handler, or through a proxy in front
 * of this one, is ended by the header every push carries ({@link eu.arrowhead.eventhandler.push.PushLoopGuard}).
 */
public final class TargetPolicy implements AutoCloseable {
    private final List<AddressRange> allowed;
    private final List<AddressRange> denied;
    private final OwnEndpoint own;
    private final NameLookup lookup;

    public TargetPolicy(PushConfig config, OwnEndpoint own) {
        this.allowed = config.allowedTargets();
        this.denied = config.deniedTargets();
        this.own = own;
        this.lookup = new NameLookup(config.connectTimeout());
    }

    /**
     * Subscribe time: the target's address, or each address its name resolves to, must be allowed.
     *
     * @throws RequestException 400 naming the rule that refuses it
     */
    void screen(NotifyTarget target) {
        if (own.isOwnName(target.host(), target.port())) {
            throw refused(target, selfRule(target.host(), target.port()));
        }
        List<InetAddress> addresses = target.literal().map(List::of).orElseGet(() -> lookup.resolve(target.host()));
        check(target, addresses);
        if (target.port() == own.port()) {
            // arrowhead.system-address may be an address of a router that forwards to this machine (NAT):
            // not an address of its interfaces, yet the same server. Only looked up for a target on our port.
            for (String name : own.names()) {
                List<InetAddress> ours = lookup.resolve(name).stream().map(AddressRange::plain).toList();
                for (InetAddress address : addresses) {
                    if (ours.contains(AddressRange.plain(address))) {
                        throw refused(target, selfRule(address.getHostAddress() + " (the address of " + name + ")",
                                target.port()));
                    }
                }
            }
        }
    }

    /**
     * A subscription read back from the store: an IP address is checked, a name is not looked up (a name
     * server that is down at start must not cost subscriptions); the checks on every connection still apply.
     *
     * @throws RequestException naming the rule that refuses it
     */
    void screenStored(NotifyTarget target) {
        if (own.isOwnName(target.host(), target.port())) {
            throw refused(target, selfRule(target.host(), target.port()));
        }
        target.literal().ifPresent(address -> check(target, List.of(address)));
    }

    private void check(NotifyTarget target, List<InetAddress> addresses) {
        for (InetAddress address : addresses) {
            String rule = refusal(address, target.port());
            if (rule != null) {
                throw refused(target, target.literal().isPresent() ? rule
                        : "it resolves to " + address.getHostAddress() + ", and " + rule);
            }
        }
    }

    /**
     * Why a connection to this address and port is refused, naming the rule; {@code null} if it is allowed.
     *
     * @param port the port; the self check is skipped for -1 (not known)
     */
    String refusal(InetAddress given, int port) {
        InetAddress address = AddressRange.plain(given);
        if (own.reachesItself(address, port)) {
            return selfRule(address.getHostAddress(), port);
        }
        AddressRange deny = first(denied, address);
        if (deny != null && first(allowed, address) == null) {
            return "push.denied-targets " + deny + " refuses " + address.getHostAddress()
                    + " (and push.allowed-targets does not allow it)";
        }
        return null;
    }

    private static String selfRule(String host, int port) {
        return "port " + port + " of " + host + " is the Event Handler itself: a pushed event would be published"
                + " again and pushed again without end (other ports of this machine are allowed)";
    }

    private static AddressRange first(List<AddressRange> ranges, InetAddress address) {
        for (AddressRange range : ranges) {
            if (range.contains(address)) {
                return range;
            }
        }
        return null;
    }

    private static RequestException refused(NotifyTarget target, String rule) {
        return RequestException.badPayload("subscriberSystem.address '" + target.host() + "' with port "
                + target.port() + " is refused: " + rule);
    }

    @Override
    public void close() {
        lookup.close();
    }
}
