/**
 * The JSON model of the Event Handler's HTTP API, shared by the server and the client libraries.
 *
 * <p>Field names follow Arrowhead 4.x ({@code core-java-spring}) verbatim, so that existing Arrowhead
 * systems can talk to this Event Handler unchanged. Every type is an immutable record; {@code null}
 * fields are left out of the JSON.
 */
package eu.arrowhead.eventhandler.api;
