package eu.arrowhead.eventhandler.testing;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/** The answer of a stand-in server (JDK {@code HttpServer}): a status and a JSON body, then the exchange ends. */
public final class JsonAnswer {
    private JsonAnswer() {
    }

    public static void send(HttpExchange exchange, int status, String json) throws IOException {
        byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
        exchange.close();
    }
}
