package eu.arrowhead.eventhandler.http;

import eu.arrowhead.eventhandler.protocol.ErrorBodies;
import java.io.IOException;
import java.util.Iterator;
import org.glassfish.grizzly.Buffer;
import org.glassfish.grizzly.filterchain.FilterChainContext;
import org.glassfish.grizzly.filterchain.NextAction;
import org.glassfish.grizzly.http.ContentEncoding;
import org.glassfish.grizzly.http.HttpBrokenContent;
import org.glassfish.grizzly.http.HttpCodecFilter;
import org.glassfish.grizzly.http.HttpContent;
import org.glassfish.grizzly.http.HttpHeader;
import org.glassfish.grizzly.http.HttpPacketParsing;
import org.glassfish.grizzly.http.HttpRequestPacket;
import org.glassfish.grizzly.http.HttpResponsePacket;
import org.glassfish.grizzly.http.HttpServerFilter;
import org.glassfish.grizzly.http.Method;
import org.glassfish.grizzly.http.Protocol;
import org.glassfish.grizzly.http.server.AddOn;
import org.glassfish.grizzly.http.server.NetworkListener;
import org.glassfish.grizzly.http.util.Header;
import org.glassfish.grizzly.http.util.HttpStatus;
import org.glassfish.grizzly.http.util.MimeHeaders;
import org.glassfish.grizzly.memory.Buffers;
import org.glassfish.grizzly.memory.MemoryManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Grizzly's HTTP/1.1 codec, stricter about how a request's body is framed and quieter about a broken one.
 *
 * <ul>
 *   <li>A request with both {@code Transfer-Encoding} and {@code Content-Length}, in either order, is refused
 *       with 400 and its connection closed, as is any transfer coding but a single {@code chunked}. Grizzly
 *       would frame the body by its chunks, so a proxy in front that went by the length would see another
 *       request in the same bytes (request smuggling). Only the codec can tell: when the length comes first,
 *       Grizzly drops that header before any handler runs.</li>
 *   <li>A body that breaks its framing (a chunk size that is not hex) costs one DEBUG line. Grizzly answers
 *       it 400 and closes the connection, then passes the broken body on, where the server filter throws
 *       its error again and the filter chain logs the stack trace at WARN: any client could fill the log.</li>
 *   <li>What the codec answers by itself (those, and a malformed request line or header) is an ErrorMessage
 *       like every other error, not an empty body.</li>
 * </ul>
 */
public final class StrictHttpCodec extends HttpServerFilter {
    private static final Logger LOG = LoggerFactory.getLogger(StrictHttpCodec.class);
    private static final String PROBLEM = StrictHttpCodec.class.getName() + ".problem";

    private static final String CHECKED_UP_TO = StrictHttpCodec.class.getName() + ".checkedUpTo";
    /** Headers whose second copy would otherwise be ignored: the first would win without a word. */
    private static final String[] SINGLE_HEADERS = {"Host", "Content-Length", "Content-Type", "Last-Event-ID",
            "Idempotency-Key", "Expect"};

    private final int maxHeaderBytes;
    private final int headerLimit;

    /** Grizzly's codec with the listener's settings, as Grizzly's HttpServer makes it, and {@code grizzlys}'s. */
    @SuppressWarnings("deprecation")
    private StrictHttpCodec(NetworkListener listener, HttpServerFilter grizzlys) {
        super(listener.isChunkingEnabled(), listener.getMaxHttpHeaderSize() == -1 ? DEFAULT_MAX_HTTP_PACKET_HEADER_SIZE
                : listener.getMaxHttpHeaderSize(), null, listener.getKeepAlive(), null,
                listener.getMaxRequestHeaders(), listener.getMaxResponseHeaders());
        this.maxHeaderBytes = listener.getMaxHttpHeaderSize();
        this.headerLimit = listener.getMaxHttpHeaderSize() == -1 ? DEFAULT_MAX_HTTP_PACKET_HEADER_SIZE
                : listener.getMaxHttpHeaderSize();
        for (ContentEncoding encoding : grizzlys.getContentEncodings()) {
            addContentEncoding(encoding);
        }
        setAllowPayloadForUndefinedHttpMethods(grizzlys.isAllowPayloadForUndefinedHttpMethods());
        setMaxPayloadRemainderToSkip(grizzlys.getMaxPayloadRemainderToSkip());
        setRemoveHandledContentEncodingHeaders(grizzlys.isRemoveHandledContentEncodingHeaders());
        getMonitoringConfig().addProbes(grizzlys.getMonitoringConfig().getProbes());
    }

    /** The add-on that puts this codec in the place of Grizzly's own. */
    public static AddOn addOn() {
        return (listener, builder) -> {
            int index = builder.indexOfType(HttpServerFilter.class);
            builder.set(index, new StrictHttpCodec(listener, (HttpServerFilter) builder.get(index)));
        };
    }

    /**
     * Checks the header's bytes ({@link HeaderSyntax}) before Grizzly parses them; Grizzly calls this each time
     * more of an incomplete header arrives. A violation is answered 400 by {@link #onHttpHeaderError}.
     */
    @Override
    protected boolean decodeHttpPacket(FilterChainContext ctx, HttpPacketParsing packet, Buffer input) {
        HttpCodecFilter.HeaderParsingState parsing = packet.getHeaderParsingState();
        HttpRequestPacket request = (HttpRequestPacket) packet;
        int start = parsing.packetLimit - headerLimit;
        // Only a header that came in parts has been checked in part, and only then is there a place to look up.
        Object checked = parsing.state == 0 && parsing.subState == 0 && parsing.offset == start ? null
                : request.getAttribute(CHECKED_UP_TO);
        try {
            int resumeAt = HeaderSyntax.check(input, start, checked == null ? -1 : (Integer) checked,
                    Math.min(input.limit(), parsing.packetLimit));
            if (resumeAt >= 0) {
                request.setAttribute(CHECKED_UP_TO, resumeAt);
            }
        } catch (HeaderSyntax.Violation e) {
            request.setAttribute(PROBLEM, e.getMessage());
            if (e.status() != 400) {
                HttpStatus.getHttpStatus(e.status()).setValues(request.getResponse());
            }
            throw e;
        }
        return super.decodeHttpPacket(ctx, packet, input);
    }

    /**
     * Checks the trailer fields of a chunked body, the header fields' grammar again: Grizzly parses them with
     * this method, and would wait for a colon that never comes as it would in the header. A violation breaks
     * the body: 400, connection closed ({@link #onHttpContentError}).
     */
    @Override
    protected boolean parseHeadersFromBuffer(HttpHeader header, MimeHeaders headers,
                                             HttpCodecFilter.HeaderParsingState parsing, Buffer input) {
        if (((HttpPacketParsing) header).isHeaderParsed()) {
            int start = parsing.packetLimit - headerLimit;
            HeaderSyntax.check(input, start, start, Math.min(input.limit(), parsing.packetLimit));
        }
        return super.parseHeadersFromBuffer(header, headers, parsing, input);
    }

    @Override
    protected boolean onHttpHeaderParsed(HttpHeader header, Buffer buffer, FilterChainContext ctx) {
        HttpRequestPacket request = (HttpRequestPacket) header;
        String problem = repeatedHeader(header.getHeaders());
        if (problem == null) {
            problem = framingProblem(header);
        }
        if (problem == null && unknownExpectation(header.getHeaders())) {
            // RFC 9110 10.1.1: a server that does not meet an expectation may answer 417.
            request.setAttribute(PROBLEM, "the server meets no expectation but 100-continue; Expect: '"
                    + header.getHeaders().getHeader(Header.Expect) + "'");
            HttpStatus.EXPECTATION_FAILED_417.setValues(request.getResponse());
            return true;
        }
        if (problem == null) {
            return super.onHttpHeaderParsed(header, buffer, ctx);
        }
        // Refused as a malformed header: Grizzly answers 400 and closes the connection.
        request.setAttribute(PROBLEM, problem);
        HttpStatus.BAD_REQUEST_400.setValues(request.getResponse());
        return true;
    }

    /** One pass over the headers, counting those that may be given once (Grizzly would use the first). */
    private static String repeatedHeader(MimeHeaders headers) {
        int[] counts = null;
        for (int i = 0; i < headers.size(); i++) {
            for (int j = 0; j < SINGLE_HEADERS.length; j++) {
                if (headers.getName(i).equalsIgnoreCase(SINGLE_HEADERS[j])) {
                    if (counts == null) {
                        counts = new int[SINGLE_HEADERS.length];
                    }
                    if (++counts[j] == 2) {
                        return "the request has more than one " + SINGLE_HEADERS[j] + " header";
                    }
                }
            }
        }
        return null;
    }

    private static boolean unknownExpectation(MimeHeaders headers) {
        String expect = headers.getHeader(Header.Expect);
        return expect != null && !expect.trim().equalsIgnoreCase("100-continue");
    }

    private static String framingProblem(HttpHeader header) {
        MimeHeaders headers = header.getHeaders();
        Iterator<String> codings = headers.values(Header.TransferEncoding).iterator();
        if (!codings.hasNext()) {
            return null;
        }
        String coding = codings.next().trim();
        if (codings.hasNext() || !coding.equalsIgnoreCase("chunked")) {
            return "a request body's Transfer-Encoding may only be chunked, given once, not '" + coding
                    + (codings.hasNext() ? ", ..." : "") + "'";
        }
        // Counted while parsing; a Content-Length after the Transfer-Encoding is not counted but kept.
        boolean length = ((HttpPacketParsing) header).getHeaderParsingState().contentLengthHeadersCount > 0
                || headers.getHeader(Header.ContentLength) != null;
        return length ? "the request has both Transfer-Encoding: chunked and Content-Length; send one" : null;
    }

    @Override
    protected void onHttpHeaderError(HttpHeader header, FilterChainContext ctx, Throwable t) throws IOException {
        HttpRequestPacket request = (HttpRequestPacket) header;
        if (request.getAttribute(PROBLEM) == null) {
            request.setAttribute(PROBLEM, t.getMessage() != null && t.getMessage().endsWith("is too large")
                    ? "the request line and headers are larger than " + maxHeaderBytes + " bytes (server.max-header-bytes)"
                    : "the request line or a header is not valid HTTP/1.1");
        }
        // Grizzly answers a request whose version it has not parsed as HTTP/0.9: a status line and body, no
        // headers; and fails on one whose method it has not parsed (a NullPointerException logged at WARN).
        request.setProtocol(Protocol.HTTP_1_1);
        if (request.getMethodDC().isNull()) {
            request.setMethod(Method.GET);
        }
        LOG.debug("answered {} to {}: {}", request.getResponse().getStatus() >= 400 ? request.getResponse().getStatus()
                : 400, ctx.getConnection().getPeerAddress(), request.getAttribute(PROBLEM));
        super.onHttpHeaderError(header, ctx, t);
    }

    @Override
    protected void onHttpContentError(HttpHeader header, FilterChainContext ctx, Throwable t) throws IOException {
        HttpRequestPacket request = (HttpRequestPacket) header;
        request.setAttribute(PROBLEM, "the request body is malformed: " + t.getMessage());
        LOG.debug("answered 400 to {}: {}", ctx.getConnection().getPeerAddress(), request.getAttribute(PROBLEM));
        super.onHttpContentError(header, ctx, t);
    }

    /**
     * Parses nothing read on a connection already closed (by WaitingConnections on the other selector thread, or a
     * write timeout): parsed, it made a request and a 16 KiB head buffer held until the selector's next select, and a
     * whole head would have been served on a closed connection. Then stops the broken body that Grizzly passes on
     * after answering it (see above); its connection is closing.
     */
    @Override
    public NextAction handleRead(FilterChainContext ctx) throws IOException {
        if (!ctx.getConnection().isOpen()) {
            return ctx.getStopAction();
        }
        NextAction next = super.handleRead(ctx);
        return ctx.getMessage() instanceof HttpBrokenContent ? ctx.getStopAction() : next;
    }

    @Override
    protected HttpContent customizeErrorResponse(HttpResponsePacket response) {
        HttpRequestPacket request = response.getRequest();
        Object problem = request == null ? null : request.getAttribute(PROBLEM);
        int status = response.getStatus();
        String message = problem != null ? problem.toString() : "the request is not valid HTTP/1.1 ("
                + status + " " + response.getReasonPhrase() + ")";
        String origin = request == null ? null : request.getRequestURI();
        byte[] body = ErrorBodies.json(status, ErrorBodies.typeOf(status), message,
                origin == null || origin.isEmpty() ? null : origin);
        // As a header, not only the content type: a request refused before its method was parsed gets no
        // Content-Type from the content type alone.
        response.setHeader(Header.ContentType, "application/json");
        response.setContentLength(body.length);
        return HttpContent.builder(response).content(Buffers.wrap(MemoryManager.DEFAULT_MEMORY_MANAGER, body))
                .last(true).build();
    }
}
