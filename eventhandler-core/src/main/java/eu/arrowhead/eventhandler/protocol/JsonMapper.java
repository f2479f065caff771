package eu.arrowhead.eventhandler.protocol;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.json.JsonMapper.Builder;
import com.fasterxml.jackson.databind.type.LogicalType;
import java.io.CharConversionException;
import java.util.Collection;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The one Jackson configuration of the server, strict on purpose: a field of the wrong type, an unknown
 * field (a typo such as {@code metadata} for {@code metaData} would otherwise be dropped without a word)
 * or trailing content is a 400 that says exactly what is wrong, never a silent coercion.
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
        Builder builder = com.fasterxml.jackson.databind.json.JsonMapper.builder()
                .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
                .disable(StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION);
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
        if (e instanceof JsonParseException parse) {
            return "malformed JSON at line " + parse.getLocation().getLineNr() + ", column "
                    + parse.getLocation().getColumnNr() + ": " + parse.getOriginalMessage();
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

    /**
     * A sentence about a body that is not text in UTF-8. Jackson guesses UTF-16 or UTF-32 from NUL bytes at the
     * start of a body and reports what it then cannot decode as a {@link CharConversionException}, an I/O
     * error rather than a {@link JsonProcessingException}; JSON between systems is UTF-8 (RFC 8259).
     */
    public static String describe(CharConversionException e) {
        return "the body is not JSON in UTF-8: " + e.getMessage();
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
