package eu.arrowhead.eventhandler.http;

import java.util.concurrent.CompletionStage;
import org.glassfish.grizzly.http.server.Request;
import org.glassfish.grizzly.http.server.Response;

/**
 * The publish endpoints as the front door calls them. A publish is answered at once when the event log has its
 * ids at once (a single node); in a cluster its answer comes once the stream has acknowledged its events, and no
 * thread waits for that meanwhile: the front door holds the response, and the connection's next request, until
 * the answer is written, so one connection's publishes keep their order.
 */
public interface PublishEndpoint {

    /** Whether a request to {@code path} is a publish. */
    boolean handles(String path);

    /**
     * Serves a publish whose body has arrived.
     *
     * @return {@code null} once the response holds the answer, always when the event log answers at once
     *         ({@link eu.arrowhead.eventhandler.topic.EventLog#appendWaits} is false); else the answer to come
     */
    LaterAnswer serve(Request request, Response response);

    /** A publish's answer that comes once the event log has its events. */
    interface LaterAnswer {

        /** Completes once the answer is known, on one of the log's threads: nothing may block there. */
        CompletionStage<?> known();

        /**
         * Writes the answer into the response. Called at most once, on a worker, after {@link #known}, and only
         * while the response is still the request's (its client has not gone). Not called once the workers have
         * stopped, past a stop's grace: the connection is then closed unanswered.
         */
        void write(Response response);
    }
}
