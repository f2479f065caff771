package eu.arrowhead.eventhandler.bench;

import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Many subscribers read by one selector thread: a thread per subscriber would add thousands of threads and
 * their stacks to the very process whose threads and memory scenario M measures, and their scheduling to
 * the latencies scenario F measures.
 */
final class SubscriberFleet implements PublishLoop.Subscription {
    private static final long JOIN_MILLIS = 5_000;

    private final SseEndpoint endpoint;
    private final Selector selector;
    private final Thread thread;
    private final Queue<Member> joining = new ConcurrentLinkedQueue<>();
    private final List<Member> members = new ArrayList<>();
    private final AtomicInteger opened = new AtomicInteger();
    private final ByteBuffer buffer = ByteBuffer.allocate(16_384);
    private volatile boolean closing;
    private volatile String failure;

    private SubscriberFleet(SseEndpoint endpoint, Selector selector) {
        this.endpoint = endpoint;
        this.selector = selector;
        this.thread = new Thread(this::run, "bench-subscriber-fleet");
        thread.setDaemon(true);
    }

    /** Starts the fleet's thread, with no subscribers yet. */
    static SubscriberFleet start(SseEndpoint endpoint) {
        try {
            SubscriberFleet fleet = new SubscriberFleet(endpoint, Selector.open());
            fleet.thread.start();
            return fleet;
        } catch (IOException e) {
            throw new BenchException("cannot open a selector: " + e, e);
        }
    }

    /**
     * Subscribes once per listener and returns once every stream's opening comment has arrived.
     *
     * @param listeners each told of its subscriber's event frames, on the fleet's thread; an exception it
     *                  throws ends that stream and is reported by {@link #checkAlive}
     */
    void open(List<? extends Consumer<SseFrame>> listeners, Deadline deadline) {
        Progress progress = new Progress("subscribers opened", listeners.size());
        for (Consumer<SseFrame> listener : listeners) {
            deadline.check();
            checkAlive();
            Member member = new Member(connect(deadline), listener);
            members.add(member);
            joining.add(member);
            selector.wakeup();
            progress.update(opened.get());
        }
        deadline.require(() -> opened.get() == members.size(), () -> {
            checkAlive();
            progress.update(opened.get());
        });
    }

    /** Fails if a stream has ended or broken. */
    @Override
    public void checkAlive() {
        String problem = failure;
        if (problem != null) {
            throw new BenchException("a subscriber's stream failed: " + problem);
        }
    }

    private SocketChannel connect(Deadline deadline) {
        SocketChannel channel = null;
        try {
            channel = SocketChannel.open();
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            channel.socket().connect(endpoint.address(), deadline.remainingMillis());
            ByteBuffer request = ByteBuffer.wrap(endpoint.request());
            while (request.hasRemaining()) {
                channel.write(request);
            }
            channel.configureBlocking(false);
            return channel;
        } catch (IOException e) {
            closeQuietly(channel);
            throw new BenchException("cannot open subscriber " + (members.size() + 1) + " at " + endpoint.base()
                    + ": " + e, e);
        }
    }

    private void run() {
        try {
            while (!closing) {
                selector.select(1_000);
                // Channels register here: register() from another thread would block while select() runs.
                for (Member member; (member = joining.poll()) != null; ) {
                    member.channel.register(selector, SelectionKey.OP_READ, member);
                }
                for (SelectionKey key : selector.selectedKeys()) {
                    ((Member) key.attachment()).read(key);
                }
                selector.selectedKeys().clear();
            }
        } catch (IOException | RuntimeException e) {
            if (!closing) {
                failure = "the fleet's selector failed: " + e;
            }
        }
    }

    /** Closes every connection and waits for the thread, so that all it recorded is visible to the caller. */
    @Override
    public void close() {
        closing = true;
        selector.wakeup();
        try {
            thread.join(JOIN_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        members.forEach(member -> closeQuietly(member.channel));
        try {
            selector.close();
        } catch (IOException ignored) {
            // its channels are closed already
        }
        if (thread.isAlive()) {
            throw new BenchException("the subscriber fleet's thread did not stop within " + JOIN_MILLIS + " ms");
        }
    }

    private static void closeQuietly(SocketChannel channel) {
        try {
            if (channel != null) {
                channel.close();
            }
        } catch (IOException ignored) {
            // nothing more to release
        }
    }

    /** One subscriber: its connection and what it has received, touched only by the fleet's thread. */
    private final class Member {
        private final SocketChannel channel;
        private final HttpStreamDecoder decoder = new HttpStreamDecoder(new SseParser(this::frame));
        private final Consumer<SseFrame> listener;
        private boolean streamOpen;

        Member(SocketChannel channel, Consumer<SseFrame> listener) {
            this.channel = channel;
            this.listener = listener;
        }

        void read(SelectionKey key) {
            try {
                buffer.clear();
                int n = channel.read(buffer);
                if (n < 0) {
                    fail(key, "the server closed a subscriber's connection");
                } else {
                    decoder.feed(buffer.array(), 0, n);
                }
            } catch (IOException e) {
                fail(key, e.toString());
            } catch (RuntimeException e) {
                fail(key, e.getMessage());
            }
        }

        private void frame(SseFrame frame) {
            if (frame.isComment()) {
                if (!streamOpen) {
                    streamOpen = true;
                    opened.incrementAndGet();
                }
            } else {
                listener.accept(frame);
            }
        }

        private void fail(SelectionKey key, String problem) {
            key.cancel();
            closeQuietly(channel);
            if (failure == null) {
                failure = problem;
            }
        }
    }
}
