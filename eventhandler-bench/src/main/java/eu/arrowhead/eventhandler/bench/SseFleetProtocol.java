package eu.arrowhead.eventhandler.bench;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.function.Consumer;

/**
 * Our SSE subscription, for a {@link SubscriberFleet}: live once the stream's opening arrives; a refusal
 * ends the member as a failure; the server's other frames are not events.
 */
final class SseFleetProtocol implements FleetProtocol {
    private final SseEndpoint endpoint;
    private final List<? extends Consumer<SseFrame>> listeners;

    /** @param listeners member i's event frames go to listener i, on the fleet's thread */
    SseFleetProtocol(SseEndpoint endpoint, List<? extends Consumer<SseFrame>> listeners) {
        this.endpoint = endpoint;
        this.listeners = listeners;
    }

    @Override
    public InetSocketAddress address() {
        return endpoint.address();
    }

    @Override
    public byte[] request(int member) {
        return endpoint.request();
    }

    @Override
    public Stream stream(int member) {
        Consumer<SseFrame> listener = listeners.get(member);
        return new Stream() {
            private final HttpStreamDecoder decoder = new HttpStreamDecoder(new SseParser(this::frame));
            private boolean live;

            private void frame(SseFrame frame) {
                if (frame.isRefusal()) {
                    throw new BenchException("the server refused the stream: " + frame.data());
                }
                if (frame.opensStream()) {
                    live = true;
                }
                if (frame.isEvent()) {
                    listener.accept(frame);
                }
            }

            @Override
            public void feed(byte[] bytes, int offset, int length) {
                decoder.feed(bytes, offset, length);
            }

            @Override
            public boolean live() {
                return live;
            }
        };
    }
}
