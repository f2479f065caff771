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

/**
 * Many subscribers read by one selector thread: a thread per subscriber would add a thousand threads and
 * their stacks to the very process whose threads and memory the idle scenario measures.
 */
final class SubscriberFleet implements AutoCloseable {
    private static final long JOIN_MILLIS = 5_000;

    private final SseEndpoint endpoint;
    private final Selector selector;
    private final Thread thread;
    private final Queue<Member> joining = new ConcurrentLinkedQueue<>();
    private final List<Member> members = new ArrayList<>();
    private final AtomicInteger opened = new AtomicInteger();
    private final AtomicInteger received = new AtomicInteger();
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

    /** Subscribes {@code count} more times and returns once every stream's opening comment has arrived. */
    void open(int count, Deadline deadline) {
        Progress progress = new Progress("subscribers opened", count);
        for (int i = 0; i < count; i++) {
            deadline.check();
            checkAlive();
            Member member = new Member(connect(deadline));
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

    /** Subscribers that have received at least one event. */
    int received() {
        return received.get();
    }

    /** Fails if a stream has ended or broken. */
    void checkAlive() {
        String problem = failure;
        if (problem != null) {
            throw new BenchException("a subscriber's stream failed: " + problem);
        }
    }

    /** Events received beyond the first, summed over all subscribers; read it after {@link #close}. */
    int duplicates() {
        return members.stream().mapToInt(member -> Math.max(0, member.events - 1)).sum();
    }

    /** When each subscriber that received an event got its first one; read it after {@link #close}. */
    long[] firstEventNanos() {
        return members.stream().filter(member -> member.events > 0).mapToLong(member -> member.firstEventNanos)
                .toArray();
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
        private boolean streamOpen;
        private int events;
        private long firstEventNanos;

        Member(SocketChannel channel) {
            this.channel = channel;
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
            } else if (events++ == 0) {
                firstEventNanos = frame.receivedNanos();
                received.incrementAndGet();
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
