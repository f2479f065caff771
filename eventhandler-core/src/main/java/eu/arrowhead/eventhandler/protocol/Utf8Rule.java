package eu.arrowhead.eventhandler.protocol;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * What a JSON body's bytes must be before Jackson reads them: UTF-8 exactly as RFC 8259 sends it, well-formed
 * by the Unicode Standard's table 3-7, with no byte order mark and no NUL byte.
 *
 * <p>Jackson alone is not enough: it decodes an overlong sequence ({@code C0 AF}) as the character it spells
 * ({@code /}) and a sequence past U+10FFFF as garbage characters, and it reads a body whose first bytes hold a
 * NUL as UTF-16 or UTF-32. Any of these would let a filter in front of the server read another event than the
 * server does. A NUL byte is never part of a JSON text in UTF-8 (JSON escapes control characters in strings), so
 * refusing it is what keeps Jackson from guessing another encoding. A byte order mark is refused rather than
 * skipped: RFC 8259 forbids sending one, parsers disagree about it (some skip it, some refuse it), and a
 * publisher told at once removes it.
 */
public final class Utf8Rule {
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long ONES = 0x0101_0101_0101_0101L;
    private static final long HIGH_BITS = 0x8080_8080_8080_8080L;

    private Utf8Rule() {
    }

    /**
     * Refuses a body whose bytes are not a JSON text in UTF-8.
     *
     * @throws RequestException 400 BAD_PAYLOAD naming the first wrong byte and its offset
     */
    public static void require(byte[] body) {
        String problem = problem(body);
        if (problem != null) {
            throw RequestException.badPayload("the body is not JSON in UTF-8: " + problem);
        }
    }

    /** Why {@code body} is not a JSON text in UTF-8, or {@code null} if its bytes are. */
    static String problem(byte[] body) {
        if (body.length >= 3 && (body[0] & 0xFF) == 0xEF && (body[1] & 0xFF) == 0xBB && (body[2] & 0xFF) == 0xBF) {
            return "it starts with a byte order mark (EF BB BF); send JSON without one (RFC 8259)";
        }
        int i = 0;
        while (i < body.length) {
            i = endOfPlainAscii(body, i);
            if (i == body.length) {
                return null;
            }
            int lead = body[i] & 0xFF;
            if (lead == 0) {
                return "a NUL byte at offset " + i + ": JSON is sent in UTF-8, not UTF-16 or UTF-32, and a NUL in a"
                        + " string is written \\u0000";
            }
            if (lead < 0x80) {
                i++;
                continue;
            }
            String problem = sequenceProblem(body, i, lead);
            if (problem != null) {
                return problem + " at offset " + i;
            }
            i += lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
        }
        return null;
    }

    /**
     * The first index from {@code from} that holds a byte other than ASCII 1 to 127, eight bytes at a time: the
     * bodies are mostly ASCII, and this keeps the check at a fraction of what Jackson's parse costs (measured
     * on a loaded 2-core machine: 0.25 us for a 1 KB event, 10 us for a 64 KB one, against 4-6 and 90-180 us
     * for the parse).
     */
    private static int endOfPlainAscii(byte[] body, int from) {
        int i = from;
        while (i + Long.BYTES <= body.length) {
            long word = (long) LONGS.get(body, i);
            long zeroBytes = (word - ONES) & ~word;
            if (((word | zeroBytes) & HIGH_BITS) != 0) {
                break;
            }
            i += Long.BYTES;
        }
        while (i < body.length && body[i] > 0) {
            i++;
        }
        return i;
    }

    /** What is wrong with the multi-byte sequence that starts with {@code lead} at {@code at}, or null. */
    private static String sequenceProblem(byte[] body, int at, int lead) {
        if (lead < 0xC0) {
            return "a continuation byte 0x" + hex(lead) + " without a lead byte";
        }
        if (lead < 0xC2) {
            return "an overlong encoding (0x" + hex(lead) + " ...)";
        }
        if (lead > 0xF4) {
            return "byte 0x" + hex(lead) + ", which UTF-8 never uses";
        }
        int length = lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
        if (at + length > body.length) {
            return "a UTF-8 sequence cut short by the end of the body";
        }
        // The second byte's range depends on the lead byte (Unicode table 3-7); the rest are 80..BF.
        int second = body[at + 1] & 0xFF;
        int low = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
        int high = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
        if (second < low || second > high) {
            if (second >= 0x80 && second <= 0xBF) {
                return second < low ? "an overlong encoding (0x" + hex(lead) + " 0x" + hex(second) + " ...)"
                        : lead == 0xED ? "a UTF-16 surrogate encoded in UTF-8 (0xED 0x" + hex(second) + " ...)"
                        : "a code point above U+10FFFF (0xF4 0x" + hex(second) + " ...)";
            }
            return "a UTF-8 sequence cut short (0x" + hex(lead) + " then 0x" + hex(second) + ")";
        }
        for (int k = 2; k < length; k++) {
            int next = body[at + k] & 0xFF;
            if (next < 0x80 || next > 0xBF) {
                return "a UTF-8 sequence cut short (0x" + hex(lead) + " then 0x" + hex(next) + ")";
            }
        }
        return null;
    }

    private static String hex(int b) {
        return String.format("%02X", b);
    }
}
