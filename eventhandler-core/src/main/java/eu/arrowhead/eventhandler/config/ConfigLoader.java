package eu.arrowhead.eventhandler.config;

import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * Merges the configuration sources into one map of raw values, strongest last: the defaults packed in the
 * jar (which also define the set of known keys), a properties file, {@code EH_*} environment variables and
 * {@code --key=value} arguments. Any key that is not known is refused here, naming its source.
 */
public final class ConfigLoader {
    static final String DEFAULTS_RESOURCE = "/eu/arrowhead/eventhandler/config/eventhandler.properties";
    private static final String ENV_PREFIX = "EH_";
    private static final String CONFIG_ARG = "config";
    private static final String CONFIG_ENV = "EH_CONFIG";
    /** Keys that earlier versions knew, with what replaced them: refused with that instead of "unknown". */
    private static final Map<String, String> RETIRED = Map.of(
            "subscriber.queue-capacity", "subscriber.queue-max-bytes, which bounds a subscriber's queue in"
                    + " bytes rather than events (0 derives it from the heap)");

    private ConfigLoader() {
    }

    /** Loads the configuration of a server started with these arguments and environment. */
    public static EventHandlerConfig load(String[] args, Map<String, String> env) {
        return EventHandlerConfig.from(merge(args, env));
    }

    /**
     * Loads the configuration of a migration of a single node's log into a cluster's stream: the same sources,
     * whose {@code store.*} keys name the log and {@code cluster.*} keys the stream
     * ({@link EventHandlerConfig#forMigration}).
     */
    public static EventHandlerConfig loadForMigration(String[] args, Map<String, String> env) {
        return EventHandlerConfig.forMigration(merge(args, env));
    }

    private static Map<String, String> merge(String[] args, Map<String, String> env) {
        Map<String, String> arguments = parseArguments(args);
        Map<String, String> values = defaults();

        String file = arguments.remove(CONFIG_ARG);
        if (file == null) {
            file = env.get(CONFIG_ENV);
        }
        if (file != null) {
            overlay(values, readFile(Path.of(file)), "config file " + file);
        }
        Map<String, String> fromEnv = new LinkedHashMap<>();
        env.forEach((name, value) -> {
            if (name.startsWith(ENV_PREFIX) && !name.equals(CONFIG_ENV)) {
                fromEnv.put(keyOfEnvironmentVariable(name, values), value);
            }
        });
        overlay(values, fromEnv, "environment");
        overlay(values, arguments, "command line");
        return values;
    }

    /** The packed defaults, overridden by {@code overrides}: how tests and embedders configure a server. */
    public static EventHandlerConfig withOverrides(Map<String, String> overrides) {
        Map<String, String> values = defaults();
        overlay(values, overrides, "overrides");
        return EventHandlerConfig.from(values);
    }

    /** The environment variable that sets {@code key}: {@code server.port} is {@code EH_SERVER_PORT}. */
    public static String environmentVariable(String key) {
        return ENV_PREFIX + key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
    }

    static Map<String, String> defaults() {
        try (InputStream in = ConfigLoader.class.getResourceAsStream(DEFAULTS_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("the jar lacks " + DEFAULTS_RESOURCE);
            }
            return toMap(load(new java.io.InputStreamReader(in, StandardCharsets.UTF_8)));
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + DEFAULTS_RESOURCE, e);
        }
    }

    private static Map<String, String> readFile(Path path) {
        if (!Files.isReadable(path)) {
            throw new ConfigException("config file " + path + " does not exist or cannot be read");
        }
        try (Reader reader = Files.newBufferedReader(path, StandardCharsets.UTF_8)) {
            return toMap(load(reader));
        } catch (IOException | IllegalArgumentException e) {
            throw new ConfigException("config file " + path + " cannot be read: " + e.getMessage());
        }
    }

    private static Properties load(Reader reader) throws IOException {
        Properties properties = new Properties();
        properties.load(reader);
        return properties;
    }

    private static Map<String, String> toMap(Properties properties) {
        Map<String, String> map = new LinkedHashMap<>();
        properties.stringPropertyNames().stream().sorted()
                .forEach(key -> map.put(key, properties.getProperty(key).trim()));
        return map;
    }

    private static Map<String, String> parseArguments(String[] args) {
        Map<String, String> map = new LinkedHashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (!arg.startsWith("--") || eq < 3) {
                throw new ConfigException("argument '" + arg + "' is not of the form --key=value");
            }
            map.put(arg.substring(2, eq), arg.substring(eq + 1).trim());
        }
        return map;
    }

    private static String keyOfEnvironmentVariable(String name, Map<String, String> known) {
        for (String key : RETIRED.keySet()) {
            if (environmentVariable(key).equals(name)) {
                return key;
            }
        }
        for (String key : known.keySet()) {
            if (environmentVariable(key).equals(name)) {
                return key;
            }
        }
        throw new ConfigException("environment variable " + name + " names no configuration key"
                + " (EH_* variables are reserved for the Event Handler's configuration)");
    }

    private static void overlay(Map<String, String> values, Map<String, String> overrides, String source) {
        overrides.forEach((key, value) -> {
            if (RETIRED.containsKey(key)) {
                throw new ConfigException("configuration key '" + key + "' in " + source + " is no longer"
                        + " used; it was replaced by " + RETIRED.get(key));
            }
            if (!values.containsKey(key)) {
                throw new ConfigException("unknown configuration key '" + key + "' in " + source
                        + "; every key is listed in config/eventhandler.properties");
            }
            values.put(key, value);
        });
    }
}
