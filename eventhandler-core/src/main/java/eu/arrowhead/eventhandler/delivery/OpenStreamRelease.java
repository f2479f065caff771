package eu.arrowhead.eventhandler.delivery;

import java.lang.reflect.Array;
import java.lang.reflect.Field;
import org.glassfish.grizzly.http.server.Request;
import org.glassfish.grizzly.http.server.Response;
import org.glassfish.grizzly.http.util.CharChunk;
import org.glassfish.grizzly.http.util.MimeHeaders;
import org.glassfish.grizzly.http.util.Parameters;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gives back what Grizzly's request and response hold for an open SSE stream but no longer need: Grizzly
 * keeps both for as long as the response is suspended, which for a stream is as long as the subscriber stays.
 *
 * <p>What it gives back (heap histograms, docs/reliability.md "Subscribers within the heap"):
 * <ul>
 * <li>the two 1 024-char buffers that {@link Parameters} decodes query parameters with (4.1 KiB), and the
 *     decoded parameters, once they have been read;</li>
 * <li>the request's and the response's header fields, once the response's headers have been written:
 *     {@link MimeHeaders} keeps every field it has held, each with two {@code DataChunk}s of four objects
 *     (about 400 bytes a field), and {@code clear()} only empties them.</li>
 * </ul>
 * Grizzly offers no way to drop either, so three private fields are reached by reflection: the two
 * buffers are reset with {@link CharChunk#reset()}, and the header array is replaced by an empty one of one
 * slot (Grizzly grows it by doubling when the pooled object serves another request). Should a Grizzly
 * version lack a field, that part is not given back and subscribers merely cost more, as the heap figures of
 * {@code scripts/bench process M} would show.
 */
final class OpenStreamRelease {
    private static final Logger LOG = LoggerFactory.getLogger(OpenStreamRelease.class);
    private static final Field DECODE_NAME = field(Parameters.class, "tmpNameC", CharChunk.class);
    private static final Field DECODE_VALUE = field(Parameters.class, "tmpValueC", CharChunk.class);
    private static final Field HEADER_FIELDS = field(MimeHeaders.class, "headers", null);

    private OpenStreamRelease() {
    }

    /** Call once the request's parameters have been read: nothing reads them again. */
    static void afterParameters(Request request) {
        Parameters parameters = request.getParameters();
        parameters.recycle();
        for (Field field : new Field[] {DECODE_NAME, DECODE_VALUE}) {
            if (field != null) {
                ((CharChunk) get(field, parameters)).reset();
            }
        }
    }

    /**
     * Call once the response's headers have been written (it is committed), under the lock that keeps the
     * response from being recycled meanwhile: from then on Grizzly reads neither the request's headers nor
     * the response's.
     */
    static void afterCommit(Response response) {
        if (HEADER_FIELDS == null || !response.isCommitted()) {
            return;
        }
        emptied(response.getRequest().getRequest().getHeaders());
        emptied(response.getResponse().getHeaders());
    }

    private static void emptied(MimeHeaders headers) {
        headers.clear();
        try {
            HEADER_FIELDS.set(headers, Array.newInstance(HEADER_FIELDS.getType().getComponentType(), 1));
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Object get(Field field, Object owner) {
        try {
            return field.get(owner);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The field, accessible, or null (logged) if this Grizzly has none of that name and type. */
    private static Field field(Class<?> owner, String name, Class<?> type) {
        try {
            Field field = owner.getDeclaredField(name);
            boolean fits = type == null ? field.getType().isArray() : field.getType() == type;
            if (!fits) {
                LOG.debug("{}.{} is not what this Grizzly version was measured with; it is not given back",
                        owner.getSimpleName(), name);
                return null;
            }
            field.setAccessible(true);
            return field;
        } catch (NoSuchFieldException | RuntimeException e) {
            LOG.debug("{}.{} cannot be given back: {}", owner.getSimpleName(), name, e.toString());
            return null;
        }
    }
}
