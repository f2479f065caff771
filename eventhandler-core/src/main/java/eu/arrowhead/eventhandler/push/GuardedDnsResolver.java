package eu.arrowhead.eventhandler.push;

import eu.arrowhead.eventhandler.diagnostics.LogThrottle;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.hc.client5.http.DnsResolver;
import org.apache.hc.client5.http.SystemDefaultDnsResolver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The push client's name resolution, which keeps only the addresses {@link TargetPolicy} allows: the check at
 * subscribe time holds on every connection too, whatever the name resolves to by then (DNS rebinding, a name
 * that did not resolve at subscribe, a subscription loaded from the store). HttpClient connects only to what
 * this returns, IP addresses in URLs included (it asks the resolver for them too). When nothing is left the
 * connection fails like an unknown host: the POST is a failed attempt, retried and dropped as any other.
 */
final class GuardedDnsResolver implements DnsResolver {
    private static final Logger LOG = LoggerFactory.getLogger(GuardedDnsResolver.class);

    private final TargetPolicy policy;
    private final LogThrottle refusals = new LogThrottle(Duration.ofSeconds(60));

    GuardedDnsResolver(TargetPolicy policy) {
        this.policy = policy;
    }

    @Override
    public InetAddress[] resolve(String host) throws UnknownHostException {
        List<InetSocketAddress> kept = resolve(host, -1);
        return kept.stream().map(InetSocketAddress::getAddress).toArray(InetAddress[]::new);
    }

    @Override
    public List<InetSocketAddress> resolve(String host, int port) throws UnknownHostException {
        InetAddress[] all = SystemDefaultDnsResolver.INSTANCE.resolve(host);
        List<InetSocketAddress> kept = new ArrayList<>(all.length);
        String rule = null;
        for (InetAddress address : all) {
            String refusal = policy.refusal(address, port);
            if (refusal == null) {
                kept.add(new InetSocketAddress(address, Math.max(port, 0)));
            } else if (rule == null) {
                rule = refusal;
            }
        }
        if (kept.isEmpty()) {
            String why = "a push to " + host + ":" + port + " is refused: " + rule;
            long held = refusals.pass();
            if (held >= 0) {
                LOG.warn("{} ({} more such refusals in the last {} s were not logged)", why, held,
                        refusals.intervalSeconds());
            }
            throw new UnknownHostException(why);
        }
        if (rule != null) {
            LOG.debug("{} resolves to addresses that are refused ({}); connecting to the others: {}", host, rule, kept);
        }
        return kept;
    }

    @Override
    public String resolveCanonicalHostname(String host) throws UnknownHostException {
        return SystemDefaultDnsResolver.INSTANCE.resolveCanonicalHostname(host);
    }
}
