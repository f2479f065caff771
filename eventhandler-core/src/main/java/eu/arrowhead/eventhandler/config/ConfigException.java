package eu.arrowhead.eventhandler.config;

/** The configuration cannot be used; the message names the key and says what is wrong with it. */
public final class ConfigException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ConfigException(String message) {
        super(message);
    }
}
