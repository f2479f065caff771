package eu.arrowhead.eventhandler.registry;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An Arrowhead 4.x Service Registry as far as a core system sees it, on a real local port: {@code GET echo},
 * {@code POST register} (201 with the entry; 400 {@code INVALID_PARAMETER} if the provider already has the
 * service), {@code DELETE unregister} (200; 400 if there is no such entry) and {@code POST query}
 * ({@code ServiceQueryResultDTO}), with core-java-spring's field and parameter names and its validation of
 * the fields a registration must have. It records every request, and can be told to refuse or hang.
 */
final class StandInServiceRegistry implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String BASE = "/serviceregistry";
    private static final Set<String> SECURITY_TYPES = Set.of("NOT_SECURE", "CERTIFICATE", "TOKEN");

    /** A request as it arrived. */
    record Request(String method, String operation, Map<String, String> params, JsonNode body) {
    }

    /** An entry the registry holds. */
    record Entry(long id, String serviceDefinition, String systemName, String address, int port, String serviceUri,
                 String secure, List<String> interfaces, String authenticationInfo) {
    }

    private final HttpServer server;
    private final ExecutorService handlers = Executors.newCachedThreadPool();
    private final List<Request> requests = new CopyOnWriteArrayList<>();
    private final Map<Long, Entry> entries = new LinkedHashMap<>();
    private final Map<String, Deque<Integer>> registerFailures = new HashMap<>();
    private final AtomicLong ids = new AtomicLong();
    private final CountDownLatch released = new CountDownLatch(1);
    private volatile boolean hangUnregistrations;

    private StandInServiceRegistry(HttpServer server) {
        this.server = server;
        server.createContext(BASE, this::handle);
        server.setExecutor(handlers);
        server.start();
    }

    static StandInServiceRegistry start() {
        return start(0);
    }

    /** On the loopback address and the given port (0: any free one). */
    static StandInServiceRegistry start(int port) {
        try {
            return new StandInServiceRegistry(HttpServer.create(
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    URI uri() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + BASE);
    }

    List<Request> requests() {
        return List.copyOf(requests);
    }

    List<Request> requests(String operation) {
        return requests.stream().filter(r -> r.operation().equals(operation)).toList();
    }

    synchronized List<Entry> entries() {
        return List.copyOf(entries.values());
    }

    synchronized List<Entry> entriesOf(String systemName) {
        return entries.values().stream().filter(e -> e.systemName().equals(systemName)).toList();
    }

    /** Adds an entry as if some system had registered it earlier. */
    synchronized Entry add(String serviceDefinition, String systemName, String address, int port, String serviceUri) {
        Entry entry = new Entry(ids.incrementAndGet(), serviceDefinition, systemName, address, port, serviceUri,
                "NOT_SECURE", List.of("HTTP-INSECURE-JSON"), null);
        entries.put(entry.id(), entry);
        return entry;
    }

    /** Answers the next registration of this service with an error of this status, whatever it holds. */
    synchronized void refuseNextRegistration(String serviceDefinition, int status) {
        registerFailures.computeIfAbsent(serviceDefinition, d -> new ArrayDeque<>()).add(status);
    }

    /** From now on unregister requests get no answer until {@link #close}. */
    void hangUnregistrations() {
        hangUnregistrations = true;
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String operation = exchange.getRequestURI().getPath().substring(BASE.length());
            byte[] raw = exchange.getRequestBody().readAllBytes();
            JsonNode body = raw.length == 0 ? null : JSON.readTree(raw);
            Map<String, String> params = params(exchange.getRequestURI().getRawQuery());
            requests.add(new Request(exchange.getRequestMethod(), operation, params, body));
            String route = exchange.getRequestMethod() + " " + operation;
            switch (route) {
                case "GET /echo" -> reply(exchange, 200, "text/plain", "Got it!");
                case "POST /register" -> register(exchange, body);
                case "DELETE /unregister" -> unregister(exchange, params);
                case "POST /query" -> query(exchange, body);
                default -> error(exchange, 404, "NOT_FOUND", "no " + route, operation);
            }
        }
    }

    private synchronized Integer nextFailure(String definition) {
        Deque<Integer> failures = registerFailures.get(definition);
        return failures == null ? null : failures.poll();
    }

    private void register(HttpExchange exchange, JsonNode dto) throws IOException {
        String origin = BASE + "/register";
        if (!exchange.getRequestHeaders().getFirst("Content-Type").startsWith("application/json")) {
            error(exchange, 415, "BAD_PAYLOAD", "Content type must be application/json", origin);
            return;
        }
        String definition = text(dto, "serviceDefinition");
        JsonNode system = dto.path("providerSystem");
        String name = text(system, "systemName");
        String address = text(system, "address");
        int port = system.path("port").asInt(-1);
        String secure = dto.path("secure").asText("NOT_SECURE");
        String authenticationInfo = system.hasNonNull("authenticationInfo")
                ? system.get("authenticationInfo").asText() : null;
        List<String> interfaces = new ArrayList<>();
        dto.path("interfaces").forEach(i -> interfaces.add(i.asText().toUpperCase(Locale.ROOT)));
        String invalid = definition.isBlank() ? "Service definition is null or blank"
                : name.isBlank() ? "System name is null or blank"
                : address.isBlank() ? "System address is null or blank"
                : port < 1 || port > 65_535 ? "Port must be between 1 and 65535"
                : interfaces.isEmpty() ? "Interfaces list is null or empty"
                : !SECURITY_TYPES.contains(secure) ? "Security type is not valid"
                : !secure.equals("NOT_SECURE") && authenticationInfo == null
                ? "Security type is in conflict with the availability of the authentication info." : null;
        if (invalid != null) {
            error(exchange, 400, "BAD_PAYLOAD", invalid, origin);
            return;
        }
        Integer failure = nextFailure(definition);
        if (failure != null) {
            error(exchange, failure, failure == 400 ? "INVALID_PARAMETER" : "ARROWHEAD",
                    failure == 400 ? exists(definition, name, address, port) : "Database operation exception", origin);
            return;
        }
        Entry entry;
        synchronized (this) {
            boolean exists = entries.values().stream().anyMatch(e -> e.serviceDefinition().equals(definition)
                    && e.systemName().equals(name) && e.address().equals(address) && e.port() == port);
            entry = exists ? null : new Entry(ids.incrementAndGet(), definition, name, address, port,
                    text(dto, "serviceUri"), secure, interfaces, authenticationInfo);
            if (entry != null) {
                entries.put(entry.id(), entry);
            }
        }
        if (entry == null) {
            error(exchange, 400, "INVALID_PARAMETER", exists(definition, name, address, port), origin);
        } else {
            reply(exchange, 201, "application/json", JSON.writeValueAsString(describe(entry)));
        }
    }

    private static String exists(String definition, String name, String address, int port) {
        return "Service Registry entry with provider: (" + name + ", " + address + ":" + port
                + ") and service definition: " + definition + " already exists.";
    }

    private void unregister(HttpExchange exchange, Map<String, String> params) throws IOException {
        String origin = BASE + "/unregister";
        if (hangUnregistrations) {
            try {
                released.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return;
        }
        for (String required : List.of("service_definition", "system_name", "port", "service_uri")) {
            if (!params.containsKey(required)) {
                error(exchange, 400, "BAD_PAYLOAD", "Required request parameter '" + required + "' is not present",
                        origin);
                return;
            }
        }
        boolean removed;
        synchronized (this) {
            removed = entries.values().removeIf(e -> e.serviceDefinition().equals(params.get("service_definition"))
                    && e.systemName().equals(params.get("system_name"))
                    && (!params.containsKey("address") || e.address().equals(params.get("address")))
                    && String.valueOf(e.port()).equals(params.get("port"))
                    && e.serviceUri().equals(params.get("service_uri")));
        }
        if (removed) {
            reply(exchange, 200, null, "");
        } else {
            error(exchange, 400, "INVALID_PARAMETER", "Service Registry entry with provider: ("
                    + params.get("system_name") + ", " + params.get("address") + ":" + params.get("port")
                    + ") and service definition: " + params.get("service_definition") + " does not exist.", origin);
        }
    }

    private void query(HttpExchange exchange, JsonNode form) throws IOException {
        String definition = text(form, "serviceDefinitionRequirement");
        if (definition.isBlank()) {
            error(exchange, 400, "BAD_PAYLOAD", "Service definition requirement is null or blank", BASE + "/query");
            return;
        }
        ObjectNode result = JSON.createObjectNode();
        ArrayNode data = result.putArray("serviceQueryData");
        entries().stream().filter(e -> e.serviceDefinition().equalsIgnoreCase(definition))
                .forEach(e -> data.add(describe(e)));
        result.put("unfilteredHits", data.size());
        reply(exchange, 200, "application/json", JSON.writeValueAsString(result));
    }

    /** An entry as {@code ServiceRegistryResponseDTO}. */
    private static ObjectNode describe(Entry entry) {
        ObjectNode dto = JSON.createObjectNode();
        dto.put("id", entry.id());
        ObjectNode definition = dto.putObject("serviceDefinition");
        definition.put("id", entry.id());
        definition.put("serviceDefinition", entry.serviceDefinition());
        ObjectNode provider = dto.putObject("provider");
        provider.put("id", entry.id());
        provider.put("systemName", entry.systemName());
        provider.put("address", entry.address());
        provider.put("port", entry.port());
        provider.put("authenticationInfo", entry.authenticationInfo());
        dto.put("serviceUri", entry.serviceUri());
        dto.put("secure", entry.secure());
        dto.putObject("metadata");
        dto.put("version", 1);
        ArrayNode interfaces = dto.putArray("interfaces");
        entry.interfaces().forEach(name -> interfaces.addObject().put("interfaceName", name));
        dto.put("createdAt", "2026-11-21T10:00:00Z");
        dto.put("updatedAt", "2026-11-21T10:00:00Z");
        return dto;
    }

    private static String text(JsonNode node, String field) {
        return node == null ? "" : node.path(field).asText("");
    }

    private static Map<String, String> params(String rawQuery) {
        Map<String, String> params = new LinkedHashMap<>();
        if (rawQuery != null) {
            for (String pair : rawQuery.split("&")) {
                int eq = pair.indexOf('=');
                params.put(URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8),
                        eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
            }
        }
        return params;
    }

    private static void error(HttpExchange exchange, int status, String type, String message, String origin)
            throws IOException {
        ObjectNode error = JSON.createObjectNode();
        error.put("errorMessage", message);
        error.put("errorCode", status);
        error.put("exceptionType", type);
        error.put("origin", origin);
        reply(exchange, status, "application/json", JSON.writeValueAsString(error));
    }

    private static void reply(HttpExchange exchange, int status, String contentType, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        if (contentType != null) {
            exchange.getResponseHeaders().set("Content-Type", contentType);
        }
        exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
        exchange.getResponseBody().write(bytes);
    }

    @Override
    public void close() {
        released.countDown();
        server.stop(0);
        handlers.shutdownNow();
    }
}
