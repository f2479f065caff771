package eu.arrowhead.eventhandler.security;

import eu.arrowhead.eventhandler.config.ConfigException;
import eu.arrowhead.eventhandler.protocol.EventTypeRule;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The access control list of {@code security.acl-file}: which systems may publish and subscribe to which
 * event types. One rule per line:
 *
 * <pre>
 * publish   SYSTEM EVENT_TYPE [EVENT_TYPE...]
 * subscribe SYSTEM EVENT_TYPE [EVENT_TYPE...]
 * </pre>
 *
 * {@code *} as the system means every system, as an event type every event type. System names and event
 * types are case-insensitive; {@code #} starts a comment; blank lines are ignored. Whatever no rule allows
 * is denied. {@code config/acl.example} shows it with examples.
 */
public final class AccessList {
    static final String ANY = "*";

    /** Per action, system name (or {@code *}) to the topic keys (or {@code *}) it may use. */
    private final Map<String, Set<String>> publish;
    private final Map<String, Set<String>> subscribe;

    private AccessList(Map<String, Set<String>> publish, Map<String, Set<String>> subscribe) {
        this.publish = publish;
        this.subscribe = subscribe;
    }

    /**
     * Reads an ACL file.
     *
     * @throws ConfigException naming the file and, for a bad rule, its line
     */
    public static AccessList read(Path file) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new ConfigException("security.acl-file: the ACL file " + file + " does not exist");
        } catch (IOException e) {
            throw new ConfigException("security.acl-file: the ACL file " + file + " cannot be read: " + e);
        }
        return parse(lines, file.toString());
    }

    /** Parses the lines of an ACL; {@code name} names it in error messages. */
    public static AccessList parse(List<String> lines, String name) {
        Map<String, Set<String>> publish = new HashMap<>();
        Map<String, Set<String>> subscribe = new HashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            int hash = line.indexOf('#');
            String[] words = (hash < 0 ? line : line.substring(0, hash)).trim().split("\\s+");
            if (words.length == 1 && words[0].isEmpty()) {
                continue;
            }
            String where = name + " line " + (i + 1) + ": ";
            String action = words[0].toLowerCase(Locale.ROOT);
            Map<String, Set<String>> rules = switch (action) {
                case "publish" -> publish;
                case "subscribe" -> subscribe;
                default -> throw new ConfigException(where + "a rule starts with publish or subscribe, not '"
                        + words[0] + "'");
            };
            if (words.length < 3) {
                throw new ConfigException(where + "a rule is '" + action + " SYSTEM EVENT_TYPE...'"
                        + " (* for any system or event type)");
            }
            Set<String> types = rules.computeIfAbsent(words[1].toLowerCase(Locale.ROOT), system -> new HashSet<>());
            for (int w = 2; w < words.length; w++) {
                String problem = words[w].equals(ANY) ? null : EventTypeRule.problem(words[w]);
                if (problem != null) {
                    throw new ConfigException(where + problem);
                }
                types.add(words[w].toLowerCase(Locale.ROOT));
            }
        }
        return new AccessList(publish, subscribe);
    }

    /** Whether {@code system} (lower case) may publish events of the topic {@code topicKey} (lower case). */
    public boolean mayPublish(String system, String topicKey) {
        return allows(publish, system, topicKey);
    }

    /** Whether {@code system} (lower case) may subscribe to the topic {@code topicKey} (lower case). */
    public boolean maySubscribe(String system, String topicKey) {
        return allows(subscribe, system, topicKey);
    }

    private static boolean allows(Map<String, Set<String>> rules, String system, String topicKey) {
        return allows(rules.get(system), topicKey) || allows(rules.get(ANY), topicKey);
    }

    private static boolean allows(Set<String> types, String topicKey) {
        return types != null && (types.contains(topicKey) || types.contains(ANY));
    }
}
