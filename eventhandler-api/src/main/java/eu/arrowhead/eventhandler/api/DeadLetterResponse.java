package eu.arrowhead.eventhandler.api;

/**
 * An event a push subscriber refused for good, set aside on its subscription's dead-letter list so that the
 * events behind it were delivered.
 *
 * @param eventId   the event's id in the log
 * @param eventType the event's type
 * @param status    the HTTP status of the subscriber's last answer, or 0 if the last try got none
 * @param answer    the first bytes of that answer's body, or the error of the last try
 * @param setAsideAt when it was set aside, an ISO-8601 instant
 */
public record DeadLetterResponse(long eventId, String eventType, int status, String answer, String setAsideAt) {
}
