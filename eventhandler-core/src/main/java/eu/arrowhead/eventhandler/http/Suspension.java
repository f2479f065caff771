package eu.arrowhead.eventhandler.http;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.glassfish.grizzly.CompletionHandler;
import org.glassfish.grizzly.http.server.Response;
import org.glassfish.grizzly.http.server.TimeoutHandler;

/**
 * A response suspended while its request waits for its body or runs on a worker, and whether it has ended
 * since: resumed by its handler (Jersey resumes a response it has written), or cancelled by its connection
 * closing. Once ended, the response must not be touched again: Grizzly may already have recycled it for
 * another request.
 */
final class Suspension implements CompletionHandler<Response> {
    private final AtomicBoolean ended = new AtomicBoolean();
    private final Runnable onCancelled;
    private volatile Runnable heldTooLong;

    /** @param onCancelled told when the connection closes before the response has ended */
    Suspension(Runnable onCancelled) {
        this.onCancelled = onCancelled;
    }

    /** Suspends {@code response} for as long as it takes. */
    static Suspension of(Response response) {
        Suspension suspension = new Suspension(() -> { });
        suspension.suspend(response, -1, null);
        return suspension;
    }

    /**
     * Suspends {@code response}.
     *
     * @param timeoutMillis the longest it may stay suspended before {@code timeout} is told, or -1 for no limit
     */
    void suspend(Response response, long timeoutMillis, TimeoutHandler timeout) {
        response.suspend(timeoutMillis, TimeUnit.MILLISECONDS, this, timeout);
    }

    /** Finishes the response, unless it has ended already. */
    void resume(Response response) {
        if (!ended()) {
            response.resume();
        }
    }

    boolean ended() {
        return ended.get();
    }

    /**
     * Holds the suspended response for a new purpose (its body, which it was suspended for, has arrived): its
     * timeout starts again at {@code millis}, and when it is told, {@link #closeIfHeldTooLong} runs
     * {@code tooLong}.
     */
    void holdAtMost(Response response, long millis, Runnable tooLong) {
        heldTooLong = tooLong;
        response.getSuspendContext().setTimeout(millis, TimeUnit.MILLISECONDS);
    }

    /** Told by the response's timeout handler once the body it was suspended for has arrived. */
    void closeIfHeldTooLong() {
        Runnable tooLong = heldTooLong;
        if (tooLong != null && !ended()) {
            tooLong.run();
        }
    }

    @Override
    public void completed(Response result) {
        ended.set(true);
    }

    @Override
    public void cancelled() {
        if (ended.compareAndSet(false, true)) {
            onCancelled.run();
        }
    }

    @Override
    public void failed(Throwable throwable) {
        cancelled();
    }

    @Override
    public void updated(Response result) {
        // not used by responses
    }
}
