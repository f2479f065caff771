package eu.arrowhead.eventhandler.bench;

import java.util.LinkedHashMap;
import java.util.Map;

/** The {@code --key=value} options that every command of the bench takes after its first argument. */
final class CommandLine {

    private CommandLine() {
    }

    /** The options from {@code args[1]} on, by key, in their order. */
    static Map<String, String> options(String[] args) {
        Map<String, String> options = new LinkedHashMap<>();
        for (int i = 1; i < args.length; i++) {
            String arg = args[i];
            int eq = arg.indexOf('=');
            if (!arg.startsWith("--") || eq < 3) {
                throw new IllegalArgumentException("'" + arg + "' is not of the form --key=value");
            }
            options.put(arg.substring(2, eq), arg.substring(eq + 1));
        }
        return options;
    }

    static long positive(String option, String value) {
        return number(option, value, 1);
    }

    static long notNegative(String option, String value) {
        return number(option, value, 0);
    }

    private static long number(String option, String value, int min) {
        try {
            long number = Long.parseLong(value);
            if (number >= min && number <= Integer.MAX_VALUE) {
                return number;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("--" + option + " takes a whole number from " + min + ", not '" + value
                + "'");
    }
}
