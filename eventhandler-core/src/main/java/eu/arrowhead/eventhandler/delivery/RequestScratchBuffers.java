package eu.arrowhead.eventhandler.delivery;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import org.glassfish.grizzly.http.server.Request;
import org.glassfish.grizzly.http.util.CharChunk;
import org.glassfish.grizzly.http.util.Parameters;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gives back the scratch buffers that Grizzly allocates with every {@link Request} and keeps for as long as
 * the request lives, which for an SSE stream is as long as the subscriber stays.
 *
 * <p>The two 1 024-char buffers that {@link Parameters} decodes query parameters with were 4.1 KiB of the
 * 17.2 KiB an idle subscriber cost (heap histogram, docs/reliability.md). Grizzly offers no way to release
 * them, so they are reached by reflection and reset with {@link CharChunk#reset()}, after which Grizzly
 * allocates one again if the (pooled) request object decodes parameters later. Should a Grizzly version
 * lack the fields, nothing is released and subscribers merely cost more, as the heap test would show.
 */
final class RequestScratchBuffers {
    private static final Logger LOG = LoggerFactory.getLogger(RequestScratchBuffers.class);
    private static final List<Field> DECODE_BUFFERS = decodeBuffers();

    private RequestScratchBuffers() {
    }

    /** Call once the request's parameters have been read. */
    static void release(Request request) {
        Parameters parameters = request.getParameters();
        try {
            for (Field field : DECODE_BUFFERS) {
                ((CharChunk) field.get(parameters)).reset();
            }
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    private static List<Field> decodeBuffers() {
        List<Field> fields = new ArrayList<>(2);
        try {
            for (String name : new String[] {"tmpNameC", "tmpValueC"}) {
                Field field = Parameters.class.getDeclaredField(name);
                if (field.getType() == CharChunk.class) {
                    field.setAccessible(true);
                    fields.add(field);
                }
            }
        } catch (NoSuchFieldException | RuntimeException e) {
            LOG.debug("Grizzly's parameter decoding buffers cannot be released: {}", e.toString());
            return List.of();
        }
        return List.copyOf(fields);
    }
}
