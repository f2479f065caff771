package eu.arrowhead.eventhandler.subscriber;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import eu.arrowhead.eventhandler.api.ErrorMessage;
import eu.arrowhead.eventhandler.api.Event;
import eu.arrowhead.eventhandler.api.ReplayGap;
import eu.arrowhead.eventhandler.api.PageEnd;
import eu.arrowhead.eventhandler.api.StreamOpening;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.StringJoiner;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import javax.net.ssl.SSLContext;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.client5.http.ssl.ClientTlsStrategyBuilder;
import org.apache.hc.client5.http.utils.DateUtils;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.HttpHeaders;
import org.apache.hc.core5.io.CloseMode;
import org.apache.hc.core5.io.Closer;
import org.apache.hc.core5.io.ModalCloseable;
import org.apache.hc.core5.util.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The body of a subscription's thread: connect, read the stream and hand its events to the listener,
 * and on any failure wait and connect again, resuming after the last event delivered, until
 * {@link #close()} or a permanent refusal.
 *
 * <p>{@code lastId} is what makes delivery exactly once and in order: it goes out as
 * {@code Last-Event-ID} on every connection, and an event with an id not above it is skipped. A new stream
 * opens with the server's {@code eventhandler.open} notice, whose id moves {@code lastId} to where the stream
 * starts, so that a connection lost before the first event still resumes without loss.
 *
 * <p>A server that cannot serve the stream now answers with a 200 stream that holds only an
 * {@code eventhandler.unavailable} notice (an Arrowhead ErrorMessage) and {@code retry:}, because a standard
 * EventSource gives up on any other status; an older server answers 503. Both become a
 * {@link SubscriptionRefusedException} with status 503, after which the loop connects again.
 *
 * <p>{@link #close()} may come from any thread at any moment: it sets a flag checked before every
 * listener call, wakes the backoff wait and cancels the request in flight, which closes its socket and so
 * ends a connect or a blocked read at once.
 */
final class SubscriptionLoop implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(EventSubscriber.class);
    private static final ObjectMapper JSON = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    /** Built once: {@code readValue(json, Event.class)} resolved the type again for every event. */
    private static final ObjectReader EVENTS = JSON.readerFor(Event.class);
    private static final String EVENT_STREAM = "text/event-stream";
    /** Event types with this prefix are the server's own notices. */
    private static final String NOTICE_PREFIX = "eventhandler.";
    private static final int MAX_ERROR_BODY_BYTES = 64 * 1024;
    /** Longest piece of a server's answer quoted in a message or log. */
    private static final int MAX_QUOTED_CHARS = 500;
    /** A longer Retry-After is taken as this. */
    private static final long MAX_RETRY_AFTER_SECONDS = 3600;
    private static final long NO_ID = -1;
    /**
     * Failing to reconnect is a warning after this many failures in a row (about 3 s with the default
     * backoff), and again every 4 times as many; single failures are logged at INFO and DEBUG only.
     */
    private static final int FAILURES_BEFORE_WARNING = 5;

    /** The events URI of every node; {@link #node} is the one connected to, or tried next. */
    private final List<URI> uris;
    private final EventListener listener;
    private final SubscriptionListener subscriptionListener;
    /** Without a subscription listener nobody hears about listener errors, so they are logged as warnings. */
    private final boolean logListenerErrors;
    private final Backoff backoff;
    private final CloseableHttpClient client;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final CountDownLatch closing = new CountDownLatch(1);
    private volatile HttpGet request;
    private volatile boolean connected;
    private volatile long lastId;
    private volatile int node;

    SubscriptionLoop(EventSubscriber.Builder settings) {
        List<URI> all = new ArrayList<>(settings.nodes.size());
        for (URI baseUri : settings.nodes) {
            all.add(eventsUri(baseUri, settings.eventTypes, settings.sources, settings.metaData,
                    settings.subscriberSystem));
        }
        this.uris = List.copyOf(all);
        this.listener = settings.listener;
        this.logListenerErrors = settings.subscriptionListener == null;
        this.subscriptionListener = logListenerErrors ? new SubscriptionListener() { } : settings.subscriptionListener;
        this.backoff = new Backoff(settings.minBackoff, settings.maxBackoff, settings.jitter,
                () -> ThreadLocalRandom.current().nextDouble());
        this.lastId = settings.startAfterId.orElse(NO_ID);
        this.client = httpClient(settings.connectTimeout, settings.readTimeout, settings.sslContext);
    }

    /**
     * {@code baseUri/eventhandler/events?eventType=...&source=...&meta.KEY=VALUE&subscriber=NAME}, every part
     * URL-encoded.
     *
     * @param subscriberSystem {@code null} for none
     */
    static URI eventsUri(URI baseUri, List<String> eventTypes, List<String> sources, Map<String, String> metaData,
                         String subscriberSystem) {
        StringJoiner query = new StringJoiner("&");
        eventTypes.forEach(type -> query.add("eventType=" + encode(type)));
        sources.forEach(source -> query.add("source=" + encode(source)));
        metaData.forEach((key, value) -> query.add("meta." + encode(key) + "=" + encode(value)));
        if (subscriberSystem != null) {
            query.add("subscriber=" + encode(subscriberSystem));
        }
        String base = baseUri.toString();
        return URI.create(base + (base.endsWith("/") ? "" : "/") + "eventhandler/events?" + query);
    }

    private static String encode(String text) {
        // URLEncoder writes form encoding; a '+' would be read back as a space by some servers.
        return URLEncoder.encode(text, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** Our own client with one connection, no retries of its own, and the read timeout on every read. */
    private static CloseableHttpClient httpClient(Duration connectTimeout, Duration readTimeout,
                                                  SSLContext sslContext) {
        Timeout read = Timeout.of(readTimeout);
        PoolingHttpClientConnectionManagerBuilder connections = PoolingHttpClientConnectionManagerBuilder.create()
                .setMaxConnTotal(1)
                .setMaxConnPerRoute(1)
                .setDefaultConnectionConfig(ConnectionConfig.custom()
                        .setConnectTimeout(Timeout.of(connectTimeout))
                        .setSocketTimeout(read)
                        .build());
        if (sslContext != null) {
            connections.setTlsSocketStrategy(ClientTlsStrategyBuilder.create()
                    .setSslContext(sslContext)
                    .buildClassic());
        }
        return HttpClients.custom()
                .setConnectionManager(connections.build())
                .setDefaultRequestConfig(RequestConfig.custom()
                        .setConnectionRequestTimeout(Timeout.of(connectTimeout))
                        .setResponseTimeout(read)
                        .build())
                .disableAutomaticRetries()
                .disableContentCompression()
                .disableCookieManagement()
                .setUserAgent("eventhandler-subscriber-client")
                .build();
    }

    /** The events URI of the node connected to, or tried next. */
    URI uri() {
        return uris.get(node);
    }

    OptionalLong lastEventId() {
        long id = lastId;
        return id == NO_ID ? OptionalLong.empty() : OptionalLong.of(id);
    }

    boolean isConnected() {
        return connected && !closed.get();
    }

    /**
     * Ends the subscription from any thread; no listener is called after this but {@code onStopped}.
     *
     * @return false if it had been called before
     */
    boolean close() {
        if (!closed.compareAndSet(false, true)) {
            return false;
        }
        closing.countDown();
        HttpGet current = request;
        if (current != null) {
            try {
                current.cancel();
            } catch (IllegalStateException e) {
                // The request ended on the loop's thread at the same moment and released its connection: HttpClient
                // then finds no leased entry to discard ("Pool entry is not present"). Nothing is left to cancel.
                LOG.debug("the request to {} had ended when the subscription was closed", uri());
            }
        }
        return true;
    }

    @Override
    public void run() {
        Throwable stopCause = null;
        try {
            stopCause = reconnectUntilStopped();
        } catch (RuntimeException | Error e) {
            LOG.error("the subscription to {} failed", uri(), e);
            stopCause = e;
        } finally {
            connected = false;
            client.close(CloseMode.IMMEDIATE);
            Throwable cause = stopCause;
            safely("onStopped", l -> l.onStopped(cause));
        }
    }

    /** @return null after close(), or the permanent refusal that ended the subscription */
    private Throwable reconnectUntilStopped() {
        int failures = 0;
        while (!closed.get()) {
            IOException cause;
            try {
                stream();
                cause = new EOFException("the server ended the stream");
            } catch (IOException e) {
                cause = e;
            }
            if (closed.get()) {
                return null;
            }
            if (cause instanceof SubscriptionRefusedException refused && isPermanent(refused.statusCode())) {
                LOG.error("{} refused the subscription for good: {}", uri(), refused.getMessage());
                return refused;
            }
            if (connected) {
                connected = false;
                backoff.reset();
                failures = 0;
            }
            failures++;
            Duration delay = backoff.next();
            if (uris.size() > 1 && failures < uris.size()) {
                // Another node at once, while some node has not failed since the stream was lost.
                delay = Duration.ZERO;
            } else if (cause instanceof SubscriptionRefusedException refused
                    && refused.retryAfter().compareTo(delay) > 0) {
                delay = refused.retryAfter();
            }
            logDisconnect(failures, cause, delay);
            node = (node + 1) % uris.size();
            IOException reported = cause;
            Duration reconnectIn = delay;
            report("onDisconnected", l -> l.onDisconnected(reported, reconnectIn));
            try {
                closing.await(delay.toNanos(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                LOG.info("the subscription thread was interrupted; ending the subscription to {}", uri());
                close();
            }
        }
        return null;
    }

    private static boolean isPermanent(int status) {
        return status >= 400 && status < 500 && status != 408 && status != 429;
    }

    private void logDisconnect(int failures, IOException cause, Duration delay) {
        if (failures == 1) {
            LOG.info("disconnected from {} ({}); reconnecting in {} ms", uri(), cause.toString(), delay.toMillis());
        } else if (failures == FAILURES_BEFORE_WARNING || failures % (4 * FAILURES_BEFORE_WARNING) == 0) {
            LOG.warn("{} failures in a row to reach {}, the last: {}; trying again in {} ms",
                    failures, uri(), cause.toString(), delay.toMillis());
        } else {
            LOG.debug("reconnecting to {} failed ({}); trying again in {} ms", uri(), cause.toString(), delay.toMillis());
        }
    }

    /** One connection: returns when the server ends the stream, throws when it fails. */
    private void stream() throws IOException {
        HttpGet get = new HttpGet(uri());
        get.setHeader(HttpHeaders.ACCEPT, EVENT_STREAM);
        long after = lastId;
        if (after != NO_ID) {
            get.setHeader("Last-Event-ID", Long.toString(after));
        }
        request = get;
        if (closed.get()) {
            return; // close() may have looked at the previous request
        }
        ClassicHttpResponse response = client.executeOpen(null, get, null);
        try {
            InputStream body = eventStream(response);
            SseParser parser = new SseParser(body);
            for (SseParser.Frame frame = parser.next(); frame != null && !closed.get(); frame = parser.next()) {
                if (ErrorMessage.UNAVAILABLE_EVENT_TYPE.equals(frame.event()) && frame.data() != null) {
                    throw refusalNotice(frame.data(), parser.retryMillis(), response);
                }
                if (!connected) {
                    connected = true;
                    LOG.info("subscribed to {}{}", uri(), after == NO_ID ? "" : ", resuming after event " + after);
                    report("onConnected", SubscriptionListener::onConnected);
                }
                if (!frame.isComment()) {
                    dispatch(frame);
                }
            }
        } finally {
            // Never close the body stream: that would read an endless stream to its end.
            if (response instanceof ModalCloseable closeable) {
                closeable.close(CloseMode.IMMEDIATE);
            } else {
                Closer.closeQuietly(response);
            }
        }
    }

    /** The body of a 200 event stream; any other answer is thrown as a refusal. */
    private static InputStream eventStream(ClassicHttpResponse response) throws IOException {
        HttpEntity entity = response.getEntity();
        if (response.getCode() != 200) {
            throw refusal(response, entity);
        }
        ContentType type = entity == null ? null : ContentType.parseLenient(entity.getContentType());
        if (type == null || !EVENT_STREAM.equalsIgnoreCase(type.getMimeType())) {
            throw new IOException("the server answered 200 but not with an event stream (Content-Type: "
                    + (entity == null ? "none, no body" : entity.getContentType()) + ")");
        }
        return entity.getContent();
    }

    private static SubscriptionRefusedException refusal(ClassicHttpResponse response, HttpEntity entity) {
        String body = "";
        if (entity != null) {
            try {
                body = new String(entity.getContent().readNBytes(MAX_ERROR_BODY_BYTES), StandardCharsets.UTF_8);
            } catch (IOException e) {
                // the status says enough
            }
        }
        ErrorMessage error = read(body, ErrorMessage.class);
        if (error != null && error.errorMessage() == null) {
            error = null;
        }
        String message = error != null ? error.errorMessage()
                : body.isBlank() ? response.getReasonPhrase() : abbreviate(body.strip());
        return new SubscriptionRefusedException(response.getCode(), message, error, retryAfter(response));
    }

    /**
     * The server's notice that it cannot serve the stream now, as the 503 an older server would have sent.
     * The stream's {@code retry} says how long to wait, else {@code Retry-After}.
     */
    private static SubscriptionRefusedException refusalNotice(String data, long retryMillis,
                                                              ClassicHttpResponse response) {
        ErrorMessage error = read(data, ErrorMessage.class);
        if (error != null && error.errorMessage() == null) {
            error = null;
        }
        String message = error != null ? error.errorMessage() : abbreviate(data);
        Duration wait = retryMillis < 0 ? retryAfter(response)
                : Duration.ofMillis(Math.min(retryMillis, TimeUnit.SECONDS.toMillis(MAX_RETRY_AFTER_SECONDS)));
        return new SubscriptionRefusedException(503, message, error, wait);
    }

    /** Retry-After in seconds or as an HTTP date; zero when missing or unreadable. */
    private static Duration retryAfter(ClassicHttpResponse response) {
        Header header = response.getFirstHeader(HttpHeaders.RETRY_AFTER);
        if (header == null) {
            return Duration.ZERO;
        }
        String value = header.getValue().trim();
        long seconds;
        try {
            seconds = Long.parseLong(value);
        } catch (NumberFormatException notSeconds) {
            Instant at = DateUtils.parseStandardDate(value);
            seconds = at == null ? 0 : Duration.between(Instant.now(), at).toSeconds();
        }
        return Duration.ofSeconds(Math.max(0, Math.min(MAX_RETRY_AFTER_SECONDS, seconds)));
    }

    private void dispatch(SseParser.Frame frame) {
        String type = frame.event();
        if (frame.data() == null || type.equals(StreamOpening.EVENT_TYPE) || type.equals(PageEnd.EVENT_TYPE)) {
            // The server tells us where this stream stands, so that a resume starts there: a new stream's
            // opening, the end of a page of the log, or (a server before them) a frame with only an id.
            skipTo(frame.id());
        } else if (type.equals(ReplayGap.EVENT_TYPE)) {
            replayGap(frame.data());
        } else if (type.regionMatches(true, 0, NOTICE_PREFIX, 0, NOTICE_PREFIX.length())) {
            LOG.debug("ignoring server notice {} that this client does not know", type);
        } else {
            Event event = read(frame.data(), EVENTS);
            if (event == null) {
                LOG.warn("skipping event {} from {}: its data is not an event: {}",
                        frame.id(), uri(), abbreviate(frame.data()));
                skipTo(frame.id());
            } else {
                deliver(event);
            }
        }
    }

    private void replayGap(String data) {
        ReplayGap gap = read(data, ReplayGap.class);
        if (gap == null) {
            LOG.warn("ignoring a replay-gap notice from {} that this client cannot read: {}", uri(), abbreviate(data));
            return;
        }
        if (gap.sequenceRestarted()) {
            LOG.warn("{} started its event sequence again (restarted without an event store); events after {}"
                    + " may be missing, and ids start again after {}",
                    uri(), gap.requestedAfterId(), gap.resumedAfterId());
            lastId = gap.resumedAfterId();
        } else {
            LOG.warn("{} no longer holds the events after {} up to {}; at most {} of them may be missing",
                    uri(), gap.requestedAfterId(), gap.resumedAfterId(), gap.maxMissingEvents().getAsLong());
        }
        report("onReplayGap", l -> l.onReplayGap(gap));
    }

    /** The JSON as a {@code type}, or null if it is not one. */
    private static <T> T read(String json, Class<T> type) {
        return read(json, JSON.readerFor(type));
    }

    /** The JSON as what {@code reader} reads, or null if it is not one. */
    private static <T> T read(String json, ObjectReader reader) {
        try {
            return reader.readValue(json);
        } catch (JsonProcessingException e) {
            return null;
        }
    }

    private static String abbreviate(String text) {
        return text.length() <= MAX_QUOTED_CHARS ? text : text.substring(0, MAX_QUOTED_CHARS) + "...";
    }

    private void deliver(Event event) {
        long last = lastId;
        if (last != NO_ID && event.id() <= last) {
            LOG.debug("skipping event {}: already delivered", event.id());
            return;
        }
        if (closed.get()) {
            return;
        }
        LOG.debug("delivering event {} ({})", event.id(), event.eventType());
        try {
            listener.onEvent(event);
        } catch (Throwable error) {
            rethrowIfFatal(error);
            if (logListenerErrors) {
                LOG.warn("the event listener failed on event {}; going on with the next", event.id(), error);
            }
            report("onListenerError", l -> l.onListenerError(event, error));
        }
        lastId = event.id();
    }

    /**
     * Moves the resume point forward to {@code id} without delivering anything: past an event we cannot
     * read, so that a resume does not bring it back, or to where the server says the stream stands.
     */
    private void skipTo(String id) {
        try {
            long value = Long.parseLong(id);
            if (value > lastId) {
                lastId = value;
            }
        } catch (NumberFormatException e) {
            // no id, or not one of ours: nothing to skip to
        }
    }

    /** Calls the subscription listener unless the subscription was closed. */
    private void report(String method, Consumer<SubscriptionListener> call) {
        if (!closed.get()) {
            safely(method, call);
        }
    }

    private void safely(String method, Consumer<SubscriptionListener> call) {
        try {
            call.accept(subscriptionListener);
        } catch (Throwable e) {
            rethrowIfFatal(e);
            LOG.warn("SubscriptionListener.{} threw; ignored", method, e);
        }
    }

    private static void rethrowIfFatal(Throwable e) {
        if (e instanceof VirtualMachineError fatal) {
            throw fatal;
        }
    }
}
