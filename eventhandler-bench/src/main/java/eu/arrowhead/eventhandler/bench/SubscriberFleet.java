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
import java.util.function.BiConsumer;

/**
 * Many subscribers read by one selector thread: a thread per subscriber would add thousands of threads and
 * their stacks to the very process whose threads and memory scenario M measures, and their scheduling to
 * the latencies scenario F measures.
 */
final class SubscriberFleet implements PublishLoop.Subscription {
    private static final long JOIN_MILLIS = 5_000;

    private final FleetProtocol protocol;
    private final Selector selector;
    private final Thread thread;
    private final Queue<Member> joining = new ConcurrentLinkedQueue<>();
    private final List<Member> members = new ArrayList<>();
    private final AtomicInteger opened = new AtomicInteger();
    private final ByteBuffer buffer = ByteBuffer.allocate(16_384);
    private volatile boolean closing;
    private volatile String failure;

    private SubscriberFleet(FleetProtocol protocol, Selector selector) {
        this.protocol = protocol;
        this.selector = selector;
        this.thread = new Thread(this::run, "bench-subscriber-fleet");
        thread.setDaemon(true);
    }

    /** Starts the fleet's thread, with no subscribers yet. */
    static SubscriberFleet start(FleetProtocol protocol) {
        try {
            SubscriberFleet fleet = new SubscriberFleet(protocol, Selector.open());
            fleet.thread.start();
            return fleet;
        } catch (IOException e) {
            throw new BenchException("cannot open a selector: " + e, e);
        }
    }

    /**
     * Opens {@code count} subscribers, members 0 to count - 1 of the protocol, and returns once every one is
     * live. What a member receives goes where its protocol says, on the fleet's thread; an exception there
     * ends that member and is reported by {@link #checkAlive}.
     */
    static SubscriberFleet open(FleetProtocol protocol, int count, Deadline deadline) {
        SubscriberFleet fleet = start(protocol);
        try {
            fleet.open(count, deadline);
        } catch (RuntimeException e) {
            fleet.close();
            throw e;
        }
        return fleet;
    }

    /** Opens {@code count} more subscribers and returns once every one is live. */
    void open(int count, Deadline deadline) {
        Progress progress = new Progress("subscribers opened", count);
        for (int i = 0; i < count; i++) {
            deadline.check();
            checkAlive();
            join(connect(members.size(), deadline.remainingMillis()));
            progress.update(opened.get());
        }
        deadline.require(() -> opened.get() == members.size(), () -> {
            checkAlive();
            progress.update(opened.get());
        });
    }

    /**
     * Connects up to {@code count} more members without waiting for any to be live, each connection given at
     * most {@code connectMillis}; stops early at the deadline. A connection that cannot be made is counted,
     * not a failure: for a census of what the server does with many connections, whose protocol decides
     * what an answer or a closed connection means.
     *
     * @param eachAttempt told after each attempt, with the attempts and the connections made so far
     * @return the connections made
     */
    int connectUpTo(int count, Deadline deadline, int connectMillis, BiConsumer<Integer, Integer> eachAttempt) {
        int connected = 0;
        for (int i = 0; i < count && !deadline.passed(); i++) {
            try {
                join(connect(members.size(), Math.min(connectMillis, deadline.remainingMillis())));
                connected++;
            } catch (BenchException e) {
                // counted: the caller reports the attempts that did not connect
            }
            eachAttempt.accept(i + 1, connected);
        }
        return connected;
    }

    private void join(SocketChannel channel) {
        int index = members.size();
        Member member = new Member(channel, protocol.stream(index));
        members.add(member);
        joining.add(member);
        selector.wakeup();
    }

    /** Fails if a stream has ended or broken. */
    @Override
    public void checkAlive() {
        String problem = failure;
        if (problem != null) {
            throw new BenchException("a subscriber's stream failed: " + problem);
        }
    }

    private SocketChannel connect(int member, int timeoutMillis) {
        SocketChannel channel = null;
        try {
            channel = SocketChannel.open();
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            channel.socket().connect(protocol.address(), timeoutMillis);
            ByteBuffer request = ByteBuffer.wrap(protocol.request(member));
            while (request.hasRemaining()) {
                channel.write(request);
            }
            channel.configureBlocking(false);
            return channel;
        } catch (IOException e) {
            closeQuietly(channel);
            throw new BenchException("cannot open subscriber " + (member + 1) + " at " + protocol.address()
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
        private final FleetProtocol.Stream stream;
        private boolean live;

        Member(SocketChannel channel, FleetProtocol.Stream stream) {
            this.channel = channel;
            this.stream = stream;
        }

        void read(SelectionKey key) {
            try {
                buffer.clear();
                int n = channel.read(buffer);
                if (n < 0) {
                    end(key, "the server closed a subscriber's connection");
                } else {
                    stream.feed(buffer.array(), 0, n);
                    if (!live && stream.live()) {
                        live = true;
                        opened.incrementAndGet();
                    }
                }
            } catch (IOException e) {
                end(key, e.toString());
            } catch (RuntimeException e) {
                fail(key, e.getMessage());
            }
        }

        /** The connection is over: its protocol decides whether that is a failure. */
        private void end(SelectionKey key, String how) {
            key.cancel();
            closeQuietly(channel);
            try {
                stream.closed(how);
            } catch (RuntimeException e) {
                fail(key, e.getMessage());
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
