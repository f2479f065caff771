package eu.arrowhead.eventhandler.protocol;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import eu.arrowhead.eventhandler.api.Event;
import eu.arrowhead.eventhandler.api.PushedEvent;
import eu.arrowhead.eventhandler.api.SystemRequest;
import java.io.IOException;
import java.lang.reflect.RecordComponent;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * An event's JSON ({@link Event}), the one place that knows how its id is put in. The validator encodes an
 * event once, before the log's and the hub's locks and before it has an id, with id 0: the JSON then starts with
 * {@code {"id":0,} and the rest, its fields, does not depend on the id. The hub writes the real id in front
 * of those fields into the SSE frame ({@link #putWithId}, a copy of bytes); the log keeps the JSON with its
 * id ({@link #withId}) and turns it back into the id-0 form for a replay ({@link #fromStored}). Push
 * subscribers get the Arrowhead 4.x form, {@link PushedEvent} ({@link #pushed}).
 */
public final class EventEncoding {
    private static final String ID_FIELD = "{\"id\":";
    private static final byte[] ID = ID_FIELD.getBytes(StandardCharsets.US_ASCII);
    private static final byte[] ID_ZERO = (ID_FIELD + "0,").getBytes(StandardCharsets.US_ASCII);
    /** Where the id-0 form's fields start: at the comma after the id. */
    private static final int FIELDS = ID.length + 1;
    private static final ObjectWriter WRITER = JsonMapper.get().writerFor(Event.class);
    private static final ObjectReader READER = JsonMapper.get().readerFor(Event.class);
    private static final JsonFactory FACTORY = JsonMapper.get().getFactory();
    /** The fields of an event that its 4.x form keeps: all but the id and the source, in the same order. */
    private static final Set<String> PUSHED_FIELDS = Arrays.stream(PushedEvent.class.getRecordComponents())
            .map(RecordComponent::getName).collect(Collectors.toUnmodifiableSet());

    private EventEncoding() {
    }

    /**
     * Encodes a validated event with id 0.
     *
     * @param metaData  {@code null} for none
     * @param source    {@code null} for none
     * @param timeStamp an ISO-8601 instant
     */
    public static byte[] withIdZero(String eventType, String payload, Map<String, String> metaData,
                                    SystemRequest source, String timeStamp) {
        byte[] json;
        try {
            json = WRITER.writeValueAsBytes(new Event(0, eventType, payload, metaData, source, timeStamp));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("an event that passed validation cannot be encoded", e);
        }
        if (!Arrays.equals(json, 0, ID_ZERO.length, ID_ZERO, 0, ID_ZERO.length)) {
            throw new IllegalStateException("the event encoding no longer starts with its id");
        }
        return json;
    }

    /** The length of the id-0 {@code json} with the id written as {@code idText} ({@link #putWithId}). */
    static int lengthWithId(byte[] json, byte[] idText) {
        return ID.length + idText.length + json.length - FIELDS;
    }

    /**
     * Writes the id-0 {@code json} with the id {@code idText} (its decimal digits) into {@code into} at
     * {@code at}, which has {@link #lengthWithId} bytes of room.
     *
     * @return where it ends
     */
    static int putWithId(byte[] json, byte[] idText, byte[] into, int at) {
        System.arraycopy(ID, 0, into, at, ID.length);
        int to = at + ID.length;
        System.arraycopy(idText, 0, into, to, idText.length);
        to += idText.length;
        System.arraycopy(json, FIELDS, into, to, json.length - FIELDS);
        return to + json.length - FIELDS;
    }

    /** The id-0 {@code json} with its real id: the JSON as delivered, and as the log keeps it. */
    public static String withId(long id, byte[] json) {
        return ID_FIELD + id + new String(json, FIELDS, json.length - FIELDS, StandardCharsets.UTF_8);
    }

    /** The id-0 form of JSON the log kept with its id ({@link #withId}): what the validator encoded. */
    public static byte[] fromStored(String json) {
        byte[] fields = json.substring(json.indexOf(',') + 1).getBytes(StandardCharsets.UTF_8);
        byte[] bytes = new byte[ID_ZERO.length + fields.length];
        System.arraycopy(ID_ZERO, 0, bytes, 0, ID_ZERO.length);
        System.arraycopy(fields, 0, bytes, ID_ZERO.length, fields.length);
        return bytes;
    }

    /**
     * The metadata of an event's JSON, in either form, parsed back; empty if it has none.
     *
     * @throws IOException if it is not an event's JSON
     */
    public static Map<String, String> metaData(String json) throws IOException {
        Map<String, String> metaData = READER.<Event>readValue(json).metaData();
        return metaData == null ? Map.of() : metaData;
    }

    /**
     * The {@link PushedEvent} JSON of an event's JSON (in either form): the same bytes Jackson writes for the
     * record, copied token by token without building the event's objects.
     */
    public static byte[] pushed(byte[] json) {
        ByteArrayBuilder out = new ByteArrayBuilder(json.length);
        try (JsonParser in = FACTORY.createParser(json); JsonGenerator copy = FACTORY.createGenerator(out)) {
            in.nextToken();
            copy.writeStartObject();
            while (in.nextToken() == JsonToken.FIELD_NAME) {
                String name = in.currentName();
                in.nextToken();
                if (PUSHED_FIELDS.contains(name)) {
                    copy.writeFieldName(name);
                    copy.copyCurrentStructure(in);
                } else {
                    in.skipChildren();
                }
            }
            copy.writeEndObject();
        } catch (IOException e) {
            throw new IllegalStateException("an event the hub encoded cannot be read back", e);
        }
        return out.toByteArray();
    }
}
