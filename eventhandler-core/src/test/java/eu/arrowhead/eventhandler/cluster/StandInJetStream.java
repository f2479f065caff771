package eu.arrowhead.eventhandler.cluster;

import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.JetStream;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.MessageHandler;
import io.nats.client.PushSubscribeOptions;
import io.nats.client.impl.Headers;
import io.nats.client.impl.NatsJetStreamMetaData;
import io.nats.client.impl.NatsMessage;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The part of the NATS client a {@link StreamFeed} uses, without a server: a connection that makes one dispatcher, and
 * a JetStream context whose push subscriptions (the feed's ordered consumers) are kept, so that the test delivers the
 * stream's messages to whichever consumer it chooses, when it chooses. Anything else the feed would call fails.
 */
final class StandInJetStream {
    private final List<Consumer> consumers = new ArrayList<>();
    private boolean dispatcherActive = true;
    private Failure failure;
    private Hook hook;
    private long queued;
    final Dispatcher dispatcher = proxy(Dispatcher.class, (self, method, args) -> switch (method.getName()) {
        case "unsubscribe" -> {
            unsubscribed(args[0]);
            yield self;
        }
        case "isActive" -> dispatcherActive();
        case "getPendingMessageCount" -> queued();
        default -> unexpected(self, method.getName(), args);
    });
    final Connection connection = proxy(Connection.class, (self, method, args) -> switch (method.getName()) {
        case "createDispatcher" -> dispatcher;
        case "closeDispatcher" -> {
            closeDispatcher();
            yield null;
        }
        default -> unexpected(self, method.getName(), args);
    });
    final JetStream jetStream = proxy(JetStream.class, (self, method, args) -> {
        if (method.getName().equals("subscribe") && args.length == 5 && args[1] == dispatcher) {
            Failure failure = takeFailure();
            if (failure == Failure.UNANSWERED) {
                throw new IOException("Timeout or no response waiting for NATS JetStream server");
            }
            JetStreamSubscription subscription = subscribed((String) args[0], (MessageHandler) args[2],
                    (PushSubscribeOptions) args[4]);
            if (failure == Failure.AFTER_REGISTERING) {
                throw new IllegalStateException("Connection is Closed");
            }
            Hook hook = takeHook();
            if (hook != null) {
                hook.whileMaking(consumers().get(consumers().size() - 1));
            }
            return subscription;
        }
        return unexpected(self, method.getName(), args);
    });

    /** One consumer the feed made: the handler its messages go to, and what it asked for. */
    static final class Consumer {
        final String subject;
        final MessageHandler handler;
        final PushSubscribeOptions options;
        final JetStreamSubscription subscription;
        boolean unsubscribed;

        Consumer(String subject, MessageHandler handler, PushSubscribeOptions options,
                 JetStreamSubscription subscription) {
            this.subject = subject;
            this.handler = handler;
            this.options = options;
            this.subscription = subscription;
        }

        /** The message hands itself to this consumer's handler, as the dispatcher's thread would. */
        void deliver(Message message) throws InterruptedException {
            handler.onMessage(message);
        }

        long startSequence() {
            return options.getConsumerConfiguration().getStartSequence();
        }
    }

    /** How the next subscribe fails. */
    private enum Failure { UNANSWERED, AFTER_REGISTERING }

    /** Runs while a subscribe is being made, after its consumer may deliver and before the subscribe returns. */
    @FunctionalInterface
    interface Hook {
        void whileMaking(Consumer made) throws InterruptedException;
    }

    /** The next subscribe goes unanswered, as one whose consumer JetStream placed on a frozen server: none is made. */
    synchronized void leaveNextSubscribeUnanswered() {
        failure = Failure.UNANSWERED;
    }

    /** The next subscribe registers its handler, then fails as jnats does on a closed connection. */
    synchronized void failNextSubscribeAfterRegistering() {
        failure = Failure.AFTER_REGISTERING;
    }

    /** The next subscribe runs {@code hook} before it returns. */
    synchronized void onNextSubscribe(Hook hook) {
        this.hook = hook;
    }

    private synchronized Failure takeFailure() {
        Failure next = failure;
        failure = null;
        return next;
    }

    private synchronized Hook takeHook() {
        Hook next = hook;
        hook = null;
        return next;
    }

    /** How many messages the dispatcher says are queued behind the one it hands over; 0 until set. */
    synchronized void queued(long count) {
        queued = count;
    }

    private synchronized long queued() {
        return queued;
    }

    synchronized List<Consumer> consumers() {
        return List.copyOf(consumers);
    }

    synchronized boolean dispatcherActive() {
        return dispatcherActive;
    }

    private synchronized void closeDispatcher() {
        dispatcherActive = false;
    }

    private synchronized JetStreamSubscription subscribed(String subject, MessageHandler handler,
                                                          PushSubscribeOptions options) {
        JetStreamSubscription subscription = proxy(JetStreamSubscription.class,
                (self, method, args) -> unexpected(self, method.getName(), args));
        consumers.add(new Consumer(subject, handler, options, subscription));
        return subscription;
    }

    private synchronized void unsubscribed(Object subscription) {
        consumers.stream().filter(consumer -> consumer.subscription == subscription).forEach(consumer ->
                consumer.unsubscribed = true);
    }

    /**
     * A message of the stream at {@code sequence}, as JetStream delivers it (its metadata in the reply subject). With
     * {@code holding}, reading its data waits: {@code holding} opens once a handler is at it, and it goes on once
     * {@code letGo} opens.
     */
    static Message message(long sequence, Message written, CountDownLatch holding, CountDownLatch letGo) {
        return new StreamMessage(written.getSubject(), "$JS.ACK.events.feed.1." + sequence + "." + sequence
                + ".1714564800000000000.0", written.getHeaders(), written.getData(), holding, letGo);
    }

    static Message message(long sequence, Message written) {
        return message(sequence, written, null, null);
    }

    /** A message in the stream's subjects that the Event Handler did not write: no headers of its own. */
    static Message foreign(long sequence) {
        return message(sequence, new NatsMessage("eh.events.a", null, new Headers(), "hello".getBytes()));
    }

    private static final class StreamMessage extends NatsMessage {
        private final CountDownLatch holding;
        private final CountDownLatch letGo;

        StreamMessage(String subject, String replyTo, Headers headers, byte[] data, CountDownLatch holding,
                      CountDownLatch letGo) {
            super(subject, replyTo, headers, data);
            this.holding = holding;
            this.letGo = letGo;
        }

        @Override
        public boolean isJetStream() {
            return true;
        }

        @Override
        public NatsJetStreamMetaData metaData() {
            return new NatsJetStreamMetaData(this);
        }

        @Override
        public byte[] getData() {
            if (holding != null) {
                holding.countDown();
                try {
                    if (!letGo.await(30, TimeUnit.SECONDS)) {
                        throw new AssertionError("a held message was never let go");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AssertionError(e);
                }
            }
            return super.getData();
        }
    }

    private static Object unexpected(Object self, String method, Object[] args) {
        return switch (method) {
            case "equals" -> self == args[0];
            case "hashCode" -> System.identityHashCode(self);
            case "toString" -> "stand-in " + self.getClass().getInterfaces()[0].getSimpleName();
            default -> throw new UnsupportedOperationException("StreamFeed is not expected to call " + method);
        };
    }

    private static <T> T proxy(Class<T> type, InvocationHandler handler) {
        return type.cast(Proxy.newProxyInstance(StandInJetStream.class.getClassLoader(), new Class<?>[] {type},
                handler));
    }
}
