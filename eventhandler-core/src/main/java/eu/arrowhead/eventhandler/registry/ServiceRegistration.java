package eu.arrowhead.eventhandler.registry;

import eu.arrowhead.eventhandler.config.ServiceRegistryConfig;
import eu.arrowhead.eventhandler.diagnostics.NamedThreads;
import eu.arrowhead.eventhandler.registry.ServiceRegistryClient.Entry;
import eu.arrowhead.eventhandler.registry.ServiceRegistryClient.ProviderSystem;
import eu.arrowhead.eventhandler.registry.ServiceRegistryClient.Reply;
import eu.arrowhead.eventhandler.registry.ServiceRegistryClient.ServiceRegistryRequest;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.security.PublicKey;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the Event Handler's four {@link CoreService}s registered in the Arrowhead Service Registry the way
 * a 4.x core system does: for each service, look up the entries already there under this system's name
 * (left over from a run that did not stop cleanly, or from another address), unregister them, then
 * register the service; unregister everything at shutdown.
 *
 * <p>All of it happens on one background thread ({@code eh-registry}), so the server starts and serves
 * events whether or not the registry is up: while it cannot be reached, or refuses, the whole round is tried
 * again every {@code arrowhead.service-registry.retry-seconds}. Unregistering at shutdown is bounded by
 * {@code arrowhead.service-registry.timeout-seconds}, so a registry that is down cannot hold up the stop.
 */
public final class ServiceRegistration implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ServiceRegistration.class);
    private static final String WILDCARD_IPV4 = "0.0.0.0";
    private static final String WILDCARD_IPV6 = "::";

    private final ServiceRegistryConfig config;
    private final ServiceRegistryClient registry;
    private final ProviderSystem provider;
    private final boolean secure;
    private final ScheduledExecutorService thread;
    private final ExecutorService httpThreads;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile boolean registered;
    /** Set once a register request may have reached the registry: from then on there is something to remove. */
    private volatile boolean sentRegistration;
    /** Touched by the eh-registry thread only. */
    private String lastFailure;

    private ServiceRegistration(ServiceRegistryConfig config, ProviderSystem provider, boolean secure,
                                SSLContext sslContext) {
        this.config = config;
        this.provider = provider;
        this.secure = secure;
        this.thread = Executors.newSingleThreadScheduledExecutor(NamedThreads.daemons("eh-registry"));
        this.httpThreads = Executors.newFixedThreadPool(1, NamedThreads.daemons("eh-registry-http"));
        this.registry = new ServiceRegistryClient(config.uri(), sslContext, config.timeout(), httpThreads);
    }

    /**
     * Starts registering in the background if {@code arrowhead.service-registry.enabled}; returns at once.
     *
     * @param serverHost the address the server listens on ({@code server.host})
     * @param port       the port it really listens on
     * @param secure     whether the server runs in secure mode: then the services are registered as
     *                   {@code HTTP-SECURE-JSON} with security {@code CERTIFICATE}
     * @param sslContext the client side of mutual TLS for an https registry; {@code null} for http
     * @param publicKey  the server certificate's public key, registered as the system's authentication
     *                   info; {@code null} in insecure mode
     * @return the registration, or empty when registration is disabled
     */
    public static Optional<ServiceRegistration> start(ServiceRegistryConfig config, String serverHost, int port,
                                                      boolean secure, SSLContext sslContext, PublicKey publicKey) {
        if (!config.enabled()) {
            return Optional.empty();
        }
        String authenticationInfo = publicKey == null ? null
                : Base64.getEncoder().encodeToString(publicKey.getEncoded());
        ProviderSystem provider = new ProviderSystem(config.systemName(),
                advertisedAddress(config.systemAddress(), serverHost), port, authenticationInfo);
        ServiceRegistration registration = new ServiceRegistration(config, provider, secure, sslContext);
        LOG.info("registering in the Service Registry at {} as {} at {}:{}", config.uri(), provider.systemName(),
                provider.address(), port);
        registration.thread.execute(registration::attempt);
        return Optional.of(registration);
    }

    /** Whether all four services are registered now. */
    public boolean registered() {
        return registered;
    }

    /**
     * The address other systems are told to reach this one at: {@code arrowhead.system-address} if set, else
     * {@code server.host}, else (a wildcard host) the first IPv4 address of a network interface that is up
     * and not a loopback, else the loopback address.
     */
    static String advertisedAddress(String configured, String serverHost) {
        if (!configured.isBlank()) {
            return configured.strip();
        }
        if (!serverHost.equals(WILDCARD_IPV4) && !serverHost.equals(WILDCARD_IPV6)) {
            return serverHost;
        }
        try {
            Optional<String> found = NetworkInterface.networkInterfaces()
                    .filter(ServiceRegistration::usable)
                    .flatMap(NetworkInterface::inetAddresses)
                    .filter(address -> address instanceof Inet4Address && !address.isLoopbackAddress()
                            && !address.isLinkLocalAddress())
                    .map(InetAddress::getHostAddress)
                    .findFirst();
            if (found.isPresent()) {
                return found.get();
            }
        } catch (SocketException e) {
            LOG.warn("cannot list this machine's network interfaces: {}", e.getMessage());
        }
        String loopback = InetAddress.getLoopbackAddress().getHostAddress();
        LOG.warn("no network address found to register; registering {} (set arrowhead.system-address)", loopback);
        return loopback;
    }

    private static boolean usable(NetworkInterface network) {
        try {
            return network.isUp() && !network.isLoopback() && !network.isVirtual();
        } catch (SocketException e) {
            return false;
        }
    }

    private void attempt() {
        try {
            registerAll();
            registered = true;
            lastFailure = null;
            LOG.info("registered {} in the Service Registry at {}",
                    Arrays.stream(CoreService.values()).map(CoreService::definition).toList(), config.uri());
        } catch (IOException | RuntimeException e) {
            if (closed.get()) {
                return;
            }
            String failure = describe(e);
            // Once per kind of failure, not every retry-seconds for as long as the registry is down.
            if (!failure.equals(lastFailure)) {
                LOG.warn("cannot register in the Service Registry at {}: {}; retrying every {} s", config.uri(),
                        failure, config.retryInterval().toSeconds());
            } else {
                LOG.debug("still cannot register in the Service Registry: {}", failure);
            }
            lastFailure = failure;
            thread.schedule(this::attempt, config.retryInterval().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void registerAll() throws IOException, InterruptedException {
        registry.echo();
        for (CoreService service : CoreService.values()) {
            for (Entry stale : registry.query(service.definition())) {
                if (stale.systemName().equalsIgnoreCase(provider.systemName())) {
                    Reply removed = registry.unregister(service.definition(), stale, config.timeout());
                    // 400: gone since the query, which is what we wanted.
                    if (!removed.ok() && removed.status() != 400) {
                        throw new IOException("unregistering the stale " + service.definition() + " at "
                                + stale.address() + ":" + stale.port() + " answered " + removed.status() + ": "
                                + removed.message());
                    }
                }
            }
            sentRegistration = true;
            ServiceRegistryRequest request = request(service);
            Reply reply = registry.register(request);
            if (reply.status() == 400) {
                // What 4.x does when the registry says the entry exists although the query did not show it
                // (it was registered in between, or under an address spelled differently): replace it.
                registry.unregister(service.definition(), own(service), config.timeout());
                reply = registry.register(request);
            }
            if (!reply.ok()) {
                throw new IOException("registering " + service.definition() + " answered " + reply.status() + ": "
                        + reply.message());
            }
        }
    }

    private ServiceRegistryRequest request(CoreService service) {
        return new ServiceRegistryRequest(service.definition(), provider, service.uri(),
                secure ? "CERTIFICATE" : "NOT_SECURE", List.of(secure ? "HTTP-SECURE-JSON" : "HTTP-INSECURE-JSON"));
    }

    private Entry own(CoreService service) {
        return new Entry(provider.systemName(), provider.address(), provider.port(), service.uri());
    }

    /**
     * Stops registering and unregisters the services, giving up after
     * {@code arrowhead.service-registry.timeout-seconds} in total.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        long deadline = System.nanoTime() + config.timeout().toNanos();
        thread.shutdownNow();
        try {
            thread.awaitTermination(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            registered = false;
            if (sentRegistration) {
                unregisterAll(deadline);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            httpThreads.shutdownNow();
        }
    }

    private void unregisterAll(long deadline) throws InterruptedException {
        int removed = 0;
        for (CoreService service : CoreService.values()) {
            try {
                Reply reply = unregister(service, deadline);
                if (reply.ok()) {
                    removed++;
                } else if (reply.status() != 400) {
                    LOG.warn("unregistering {} answered {}: {}", service.definition(), reply.status(),
                            reply.message());
                }
            } catch (IOException e) {
                LOG.warn("cannot unregister from the Service Registry at {}: {}; its entries stay until the next"
                        + " start replaces them", config.uri(), describe(e));
                return;
            }
        }
        LOG.info("unregistered {} service(s) from the Service Registry at {}", removed, config.uri());
    }

    private Reply unregister(CoreService service, long deadline) throws IOException, InterruptedException {
        IOException failure = null;
        // Twice: a kept-alive connection the registry closed while idle fails the first request sent on it.
        for (int tries = 0; tries < 2; tries++) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new IOException("no answer within " + config.timeout().toSeconds() + " s", failure);
            }
            try {
                return registry.unregister(service.definition(), own(service), Duration.ofNanos(left));
            } catch (IOException e) {
                failure = e;
            }
        }
        throw failure;
    }

    /** A refused connection has no message, only its type. */
    private static String describe(Exception e) {
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
}
