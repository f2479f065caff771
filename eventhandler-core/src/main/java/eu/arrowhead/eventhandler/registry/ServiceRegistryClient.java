package eu.arrowhead.eventhandler.registry;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import eu.arrowhead.eventhandler.protocol.JsonMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.stream.Collectors;
import javax.net.ssl.SSLContext;

/**
 * The four calls of an Arrowhead 4.x Service Registry that a core system makes about its own services:
 * {@code GET echo}, {@code POST query}, {@code POST register} and {@code DELETE unregister}, with the
 * request bodies and parameters of core-java-spring's {@code ServiceQueryFormDTO},
 * {@code ServiceRegistryRequestDTO} and its unregister endpoint.
 */
final class ServiceRegistryClient {
    private final HttpClient http;
    private final URI base;
    private final Duration timeout;

    /**
     * @param base       the registry's base URL, such as {@code https://sr:8443/serviceregistry}
     * @param sslContext for an https registry; {@code null} for plain http
     * @param timeout    the longest a connection attempt or a request may take
     * @param executor   runs the HTTP client's own tasks
     */
    ServiceRegistryClient(URI base, SSLContext sslContext, Duration timeout, Executor executor) {
        HttpClient.Builder builder = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(timeout)
                .executor(executor);
        if (sslContext != null) {
            builder.sslContext(sslContext);
        }
        this.http = builder.build();
        this.base = base;
        this.timeout = timeout;
    }

    /** A system as the registry stores it ({@code SystemRequestDTO}). */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record ProviderSystem(String systemName, String address, int port, String authenticationInfo) {
    }

    /** One registration ({@code ServiceRegistryRequestDTO}); no end of validity, metadata or version. */
    record ServiceRegistryRequest(String serviceDefinition, ProviderSystem providerSystem, String serviceUri,
                                  String secure, List<String> interfaces) {
    }

    /** An entry the registry holds, as much of it as unregistering it takes. */
    record Entry(String systemName, String address, int port, String serviceUri) {
    }

    /** A reply: its status and, for an error, the registry's {@code errorMessage} or the raw body. */
    record Reply(int status, String message) {
        boolean ok() {
            return status / 100 == 2;
        }
    }

    /** The registry answers its echo with 200, or this throws. */
    void echo() throws IOException, InterruptedException {
        Reply reply = send(HttpRequest.newBuilder(resolve("/echo", Map.of())).GET(), timeout);
        if (!reply.ok()) {
            throw new IOException("its echo answered " + reply.status() + ": " + reply.message());
        }
    }

    /** Every entry of one service definition, whoever provides it. */
    List<Entry> query(String serviceDefinition) throws IOException, InterruptedException {
        HttpRequest request = json(HttpRequest.newBuilder(resolve("/query", Map.of())),
                Map.of("serviceDefinitionRequirement", serviceDefinition)).build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IOException("the query of " + serviceDefinition + " answered " + response.statusCode() + ": "
                    + message(response.body()));
        }
        JsonNode data = readTree(response.body()).path("serviceQueryData");
        List<Entry> entries = new ArrayList<>();
        for (JsonNode entry : data) {
            JsonNode provider = entry.path("provider");
            entries.add(new Entry(provider.path("systemName").asText(""), provider.path("address").asText(""),
                    provider.path("port").asInt(), entry.path("serviceUri").asText("")));
        }
        return entries;
    }

    Reply register(ServiceRegistryRequest registration) throws IOException, InterruptedException {
        return send(json(HttpRequest.newBuilder(resolve("/register", Map.of())), registration), timeout);
    }

    /** Removes one entry; the registry answers 400 when it holds no such entry. */
    Reply unregister(String serviceDefinition, Entry entry, Duration within)
            throws IOException, InterruptedException {
        Map<String, String> params = new LinkedHashMap<>();
        params.put("service_definition", serviceDefinition);
        params.put("system_name", entry.systemName());
        params.put("address", entry.address());
        params.put("port", Integer.toString(entry.port()));
        params.put("service_uri", entry.serviceUri());
        return send(HttpRequest.newBuilder(resolve("/unregister", params)).DELETE(), within);
    }

    private Reply send(HttpRequest.Builder request, Duration within) throws IOException, InterruptedException {
        HttpResponse<String> response = http.send(request.timeout(within).build(),
                HttpResponse.BodyHandlers.ofString());
        return new Reply(response.statusCode(), response.statusCode() / 100 == 2 ? "" : message(response.body()));
    }

    private HttpRequest.Builder json(HttpRequest.Builder request, Object body) throws JsonProcessingException {
        return request.timeout(timeout)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(JsonMapper.get().writeValueAsBytes(body)));
    }

    private URI resolve(String operation, Map<String, String> params) {
        String query = params.entrySet().stream()
                .map(p -> p.getKey() + "=" + URLEncoder.encode(p.getValue(), StandardCharsets.UTF_8))
                .collect(Collectors.joining("&"));
        return URI.create(base + operation + (query.isEmpty() ? "" : "?" + query));
    }

    private static JsonNode readTree(String body) throws IOException {
        try {
            return JsonMapper.get().readTree(body);
        } catch (JsonProcessingException e) {
            throw new IOException("its answer is not JSON: " + JsonMapper.describe(e), e);
        }
    }

    /** Arrowhead's ErrorMessage says what went wrong in {@code errorMessage}; anything else is shown cut short. */
    private static String message(String body) {
        try {
            JsonNode error = JsonMapper.get().readTree(body);
            if (error != null && error.hasNonNull("errorMessage")) {
                return error.get("errorMessage").asText();
            }
        } catch (JsonProcessingException e) {
            // not an ErrorMessage: the body itself says more than the parse error would
        }
        String text = body == null ? "" : body.strip();
        return text.length() > 200 ? text.substring(0, 200) + "..." : text;
    }
}
