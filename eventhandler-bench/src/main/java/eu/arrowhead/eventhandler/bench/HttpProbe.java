package eu.arrowhead.eventhandler.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;

/**
 * One request at a time, timed, whose failure is a result rather than an exception: to ask a server that
 * may be overloaded, hung or gone whether it answers and how fast (the JDK's client; no connection is
 * reused between probes that matter).
 */
final class HttpProbe {
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
    /** HTTP/1.1 only: the JDK client would otherwise offer an h2c upgrade. */
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(CONNECT_TIMEOUT).build();

    private HttpProbe() {
    }

    /**
     * What a request got.
     *
     * @param status  the HTTP status, or 0 when no answer came
     * @param body    the answer's body, or why none came
     * @param nanos   from sending the request to the end of the answer or the failure
     */
    record Answer(int status, String body, long nanos) {

        boolean answered() {
            return status != 0;
        }

        /** Status and body, shortened, for a report. */
        String summary() {
            return Reliability.shorten((answered() ? status + " " : "no answer: ") + body);
        }
    }

    static Answer get(URI uri, Duration timeout) {
        return send(HttpRequest.newBuilder(uri).timeout(timeout).GET().build());
    }

    static Answer postJson(URI uri, byte[] body, Duration timeout) {
        return send(HttpRequest.newBuilder(uri).timeout(timeout).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build());
    }

    private static Answer send(HttpRequest request) {
        long start = System.nanoTime();
        try {
            HttpResponse<String> response = CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
            return new Answer(response.statusCode(), response.body(), System.nanoTime() - start);
        } catch (HttpTimeoutException e) {
            return new Answer(0, "none within " + request.timeout().map(Duration::toSeconds).orElse(0L) + " s",
                    System.nanoTime() - start);
        } catch (IOException e) {
            return new Answer(0, e.toString(), System.nanoTime() - start);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchException("interrupted while waiting for " + request.uri(), e);
        }
    }
}
