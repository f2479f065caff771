package eu.arrowhead.eventhandler.protocol;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.json.JsonMapper.Builder;
import com.fasterxml.jackson.databind.type.LogicalType;
import java.util.Collection;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The one Jackson configuration of the server, strict on purpose: a field of the wrong type, an unknown
 * field (a typo such as {@code metadata} for {@code metaData} would otherwise be dropped without a word),
 * a key twice in one object (the last would win, while a filter in front that reads the first sees another
 * event) or trailing content is a 400 that says exactly what is wrong, never a silent coercion. What bytes a
 * body may be is {@link Utf8Rule}'s part, checked before this mapper reads it.
 */
public final class JsonMapper {
    private static final ObjectMapper MAPPER = build();

    private JsonMapper() {
    }

    /** The shared, thread-safe mapper. */
    public static ObjectMapper get() {
        return MAPPER;
    }

    private static ObjectMapper build() {
        // On the factory, not only the mapper: Jersey's JSON provider makes its parsers from the factory, and an
        // ObjectReader leaves the features of a parser it is handed as they are. Duplicate detection costs a
        // publish of 1 KB about 0.8 us on top of a 4-6 us parse, nothing measurable at 64 KB (issue 29).
        JsonFactory factory = JsonFactory.builder()
                .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                .disable(StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION)
                // A character outside the BMP (an emoji) goes out as the 4 UTF-8 bytes it came in as, not as two
                // escaped surrogates: what a subscriber gets is what the publisher sent.
                .enable(JsonWriteFeature.COMBINE_UNICODE_SURROGATES_IN_UTF8)
                .build();
        Builder builder = com.fasterxml.jackson.databind.json.JsonMapper.builder(factory)
                .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES);
        ObjectMapper mapper = builder.build();
        for (CoercionInputShape shape : new CoercionInputShape[] {
                CoercionInputShape.Integer, CoercionInputShape.Float, CoercionInputShape.Boolean}) {
            mapper.coercionConfigFor(LogicalType.Textual).setCoercion(shape, CoercionAction.Fail);
        }
        mapper.coercionConfigFor(LogicalType.Integer).setCoercion(CoercionInputShape.String, CoercionAction.Fail);
        mapper.coercionConfigFor(LogicalType.Integer).setCoercion(CoercionInputShape.Float, CoercionAction.Fail);
        return mapper;
    }

    /** A sentence for a person about what is wrong with the JSON; no stack trace, no internals. */
    public static String describe(JsonProcessingException e) {
        // A parse error inside a nested value (a map, a record) comes wrapped in a mapping error.
        if (e instanceof JsonMappingException && e.getCause() instanceof JsonParseException parse) {
            return describe(parse);
        }
        if (e instanceof JsonParseException parse) {
            String where = " at line " + parse.getLocation().getLineNr() + ", column "
                    + parse.getLocation().getColumnNr();
            String message = parse.getOriginalMessage();
            if (message != null && message.startsWith("Duplicate field")) {
                return "d" + message.substring(1) + where + ": a key may appear only once in an object";
            }
            return "malformed JSON" + where + ": " + message;
        }
        if (e instanceof UnrecognizedPropertyException unknown) {
            Collection<Object> known = unknown.getKnownPropertyIds();
            return "unknown field '" + path(unknown) + "'"
                    + (known == null ? "" : "; the known fields are " + known.stream().map(String::valueOf)
                    .sorted().collect(Collectors.joining(", ")));
        }
        if (e instanceof MismatchedInputException mismatch) {
            String where = path(mismatch);
            String expected = expected(mismatch.getTargetType());
            if (mismatch.getOriginalMessage() != null && mismatch.getOriginalMessage().startsWith("Trailing token")) {
                return "unexpected content after the JSON value";
            }
            return where.isEmpty() ? "the body must be " + expected : "field '" + where + "' must be " + expected;
        }
        return "invalid JSON: " + e.getOriginalMessage();
    }

    private static String path(JsonMappingException e) {
        StringBuilder out = new StringBuilder();
        for (JsonMappingException.Reference ref : e.getPath()) {
            if (ref.getFieldName() != null) {
                if (out.length() > 0) {
                    out.append('.');
                }
                out.append(ref.getFieldName());
            } else if (ref.getIndex() >= 0) {
                out.append('[').append(ref.getIndex()).append(']');
            }
        }
        return out.toString();
    }

    private static String expected(Class<?> type) {
        if (type == null) {
            return "of another type";
        }
        if (type == String.class) {
            return "a string";
        }
        if (type == Integer.class || type == int.class || type == Long.class || type == long.class) {
            return "a whole number";
        }
        if (type.isArray() || Collection.class.isAssignableFrom(type)) {
            return "a JSON array";
        }
        if (Map.class.isAssignableFrom(type)) {
            return "a JSON object of string values";
        }
        return "a JSON object";
    }
}
