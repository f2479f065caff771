package eu.arrowhead.eventhandler.push;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Event Handler's own listening endpoint, which no push subscription may name: its port, on any address
 * that reaches this machine (a wildcard, a loopback address, an address of any network interface) or under
 * a name it is configured with ({@code server.host}, {@code arrowhead.system-address}, and {@code localhost}).
 * Other ports of this machine stay allowed: a subscriber often runs beside the Event Handler on one Pi.
 */
public final class OwnEndpoint {
    private static final Logger LOG = LoggerFactory.getLogger(OwnEndpoint.class);
    /** Interfaces come and go (DHCP, VPNs): their addresses are listed again after this long. */
    private static final long INTERFACES_MAX_AGE_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final Set<String> names;
    private volatile int port;
    private volatile Set<InetAddress> interfaceAddresses = Set.of();
    private volatile long interfacesListedNanos;
    private volatile boolean listed;

    /**
     * @param port  {@code server.port}; 0 until {@link #listening} tells the one the server got
     * @param names the names and addresses it is configured with; blank ones and wildcards are skipped
     */
    public OwnEndpoint(int port, String... names) {
        this.port = port;
        Set<String> kept = new LinkedHashSet<>();
        kept.add("localhost");
        for (String name : names) {
            String trimmed = name == null ? "" : name.strip().toLowerCase(Locale.ROOT);
            if (trimmed.startsWith("[") && trimmed.endsWith("]")) {
                trimmed = trimmed.substring(1, trimmed.length() - 1);
            }
            if (!trimmed.isEmpty() && !trimmed.equals("0.0.0.0") && !trimmed.equals("::")) {
                kept.add(trimmed);
            }
        }
        this.names = Set.copyOf(kept);
    }

    /** The port the server listens on, once it does. */
    public void listening(int port) {
        this.port = port;
    }

    /** The listening port; 0 while not known yet (a server started with port 0 that is not listening yet). */
    int port() {
        return port;
    }

    /** The names it is configured with, lower case, {@code localhost} among them. */
    Set<String> names() {
        return names;
    }

    /** Whether {@code host} (lower case) is one of its names, and {@code port} its port. */
    boolean isOwnName(String host, int port) {
        return port == this.port && names.contains(host);
    }

    /**
     * Whether a connection to this address and port would reach this server: its port, on a wildcard address
     * (which connects to this machine), a loopback address, or an address of one of its interfaces.
     */
    boolean reachesItself(InetAddress address, int port) {
        if (port != this.port) {
            return false;
        }
        return address.isAnyLocalAddress() || address.isLoopbackAddress() || interfaceAddresses().contains(address);
    }

    private Set<InetAddress> interfaceAddresses() {
        long now = System.nanoTime();
        if (!listed || now - interfacesListedNanos > INTERFACES_MAX_AGE_NANOS) {
            Set<InetAddress> found = new HashSet<>();
            try {
                found = NetworkInterface.networkInterfaces().flatMap(NetworkInterface::inetAddresses)
                        .collect(Collectors.toCollection(HashSet::new));
            } catch (SocketException e) {
                LOG.warn("cannot list this machine's network interfaces ({}); only loopback and wildcard addresses"
                        + " count as the Event Handler's own", e.getMessage());
            }
            interfaceAddresses = Set.copyOf(found);
            interfacesListedNanos = now;
            listed = true;
        }
        return interfaceAddresses;
    }
}
