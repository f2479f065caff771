package eu.arrowhead.eventhandler.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** {@link Utf8Rule} against the JDK's own strict UTF-8 decoder, and at the edges of its fast path. */
class Utf8RuleTest {
    /**
     * Random bodies built mostly of bytes that start, continue or break UTF-8 sequences, each judged as the JDK's
     * decoder judges it (which refuses overlongs, surrogates and code points past U+10FFFF). NUL bytes are left
     * out: they are valid UTF-8 that the rule refuses on purpose.
     */
    @Test
    void agreesWithTheJdkDecoderOnRandomBytes() {
        SplittableRandom random = new SplittableRandom(29);
        int[] interesting = {0x22, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0,
                0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF};
        for (int round = 0; round < 50_000; round++) {
            byte[] body = new byte[1 + random.nextInt(20)];
            for (int i = 0; i < body.length; i++) {
                body[i] = (byte) (random.nextInt(4) == 0 ? 1 + random.nextInt(255) : interesting[random.nextInt(
                        interesting.length)]);
            }
            if (body.length >= 3 && (body[0] & 0xFF) == 0xEF && (body[1] & 0xFF) == 0xBB && (body[2] & 0xFF) == 0xBF) {
                continue;
            }
            assertEquals(jdkAccepts(body), Utf8Rule.problem(body) == null, HexFormat.of().formatHex(body));
        }
    }

    /** A wrong byte at each position of a long ASCII run is found, wherever the eight-byte steps fall. */
    @Test
    void findsAWrongByteAtEveryOffsetOfTheAsciiFastPath() {
        for (int length = 1; length < 40; length++) {
            for (int at = 0; at < length; at++) {
                for (int wrong : new int[] {0x00, 0x80, 0xC0, 0xFF}) {
                    byte[] body = "x".repeat(length).getBytes(StandardCharsets.US_ASCII);
                    body[at] = (byte) wrong;
                    String problem = Utf8Rule.problem(body);
                    assertEquals(true, problem != null && problem.contains("offset " + at), length + "/" + at
                            + "/" + wrong + ": " + problem);
                }
            }
            assertNull(Utf8Rule.problem("y".repeat(length).getBytes(StandardCharsets.US_ASCII)));
        }
    }

    private static boolean jdkAccepts(byte[] body) {
        try {
            StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(body));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }
}
