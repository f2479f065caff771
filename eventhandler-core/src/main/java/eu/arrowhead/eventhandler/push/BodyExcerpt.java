package eu.arrowhead.eventhandler.push;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.nio.entity.AbstractBinAsyncEntityConsumer;

/**
 * Reads a push subscriber's answer body and keeps only its first {@link #MAX_BYTES} bytes, as text with control
 * characters replaced: what a dead letter says of why it was refused, whatever the subscriber sends.
 */
final class BodyExcerpt extends AbstractBinAsyncEntityConsumer<String> {
    static final int MAX_BYTES = 256;

    private final byte[] kept = new byte[MAX_BYTES];
    private int length;

    @Override
    protected void streamStart(ContentType contentType) {
    }

    @Override
    protected int capacityIncrement() {
        return MAX_BYTES;
    }

    @Override
    protected void data(ByteBuffer src, boolean endOfStream) {
        int take = Math.min(src.remaining(), MAX_BYTES - length);
        src.get(kept, length, take);
        length += take;
        // The rest is read and let go: the connection stays usable.
        src.position(src.limit());
    }

    @Override
    protected String generateContent() {
        return text(kept, length);
    }

    @Override
    public void releaseResources() {
    }

    /** The bytes as UTF-8 (a character cut at the end is replaced), control characters as spaces, stripped. */
    static String text(byte[] bytes, int length) {
        String text = new String(bytes, 0, length, StandardCharsets.UTF_8);
        StringBuilder printable = new StringBuilder(text.length());
        text.codePoints().forEach(c -> printable.appendCodePoint(Character.isISOControl(c) ? ' ' : c));
        return printable.toString().strip();
    }
}
