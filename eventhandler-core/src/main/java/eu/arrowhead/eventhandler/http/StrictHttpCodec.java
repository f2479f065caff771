package eu.arrowhead.eventhandler.http;

import eu.arrowhead.eventhandler.protocol.ErrorBodies;
import java.io.IOException;
import java.util.Iterator;
import org.glassfish.grizzly.Buffer;
import org.glassfish.grizzly.filterchain.FilterChainContext;
import org.glassfish.grizzly.filterchain.NextAction;
import org.glassfish.grizzly.http.ContentEncoding;
import org.glassfish.grizzly.http.HttpBrokenContent;
import org.glassfish.grizzly.http.HttpContent;
import org.glassfish.grizzly.http.HttpHeader;
import org.glassfish.grizzly.http.HttpPacketParsing;
import org.glassfish.grizzly.http.HttpRequestPacket;
import org.glassfish.grizzly.http.HttpResponsePacket;
import org.glassfish.grizzly.http.HttpServerFilter;
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

    private final int maxHeaderBytes;

    /** Grizzly's codec with the listener's settings, as Grizzly's HttpServer makes it, and {@code grizzlys}'s. */
    @SuppressWarnings("deprecation")
    private StrictHttpCodec(NetworkListener listener, HttpServerFilter grizzlys) {
        super(listener.isChunkingEnabled(), listener.getMaxHttpHeaderSize() == -1 ? DEFAULT_MAX_HTTP_PACKET_HEADER_SIZE
                : listener.getMaxHttpHeaderSize(), null, listener.getKeepAlive(), null,
                listener.getMaxRequestHeaders(), listener.getMaxResponseHeaders());
        this.maxHeaderBytes = listener.getMaxHttpHeaderSize();
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

    @Override
    protected boolean onHttpHeaderParsed(HttpHeader header, Buffer buffer, FilterChainContext ctx) {
        String problem = framingProblem(header);
        if (problem == null) {
            return super.onHttpHeaderParsed(header, buffer, ctx);
        }
        // Refused as a malformed header: Grizzly answers 400 and closes the connection.
        HttpRequestPacket request = (HttpRequestPacket) header;
        request.setAttribute(PROBLEM, problem);
        HttpStatus.BAD_REQUEST_400.setValues(request.getResponse());
        return true;
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
        LOG.debug("answered 400 to {}: {}", ctx.getConnection().getPeerAddress(), request.getAttribute(PROBLEM));
        super.onHttpHeaderError(header, ctx, t);
    }

    @Override
    protected void onHttpContentError(HttpHeader header, FilterChainContext ctx, Throwable t) throws IOException {
        HttpRequestPacket request = (HttpRequestPacket) header;
        request.setAttribute(PROBLEM, "the request body is malformed: " + t.getMessage());
        LOG.debug("answered 400 to {}: {}", ctx.getConnection().getPeerAddress(), request.getAttribute(PROBLEM));
        super.onHttpContentError(header, ctx, t);
    }

    /** Stops the broken body that Grizzly passes on after answering it (see above); its connection is closing. */
    @Override
    public NextAction handleRead(FilterChainContext ctx) throws IOException {
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
        response.setContentType("application/json");
        response.setContentLength(body.length);
        return HttpContent.builder(response).content(Buffers.wrap(MemoryManager.DEFAULT_MEMORY_MANAGER, body))
                .last(true).build();
    }
}
