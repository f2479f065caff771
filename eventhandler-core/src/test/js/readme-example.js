// The README's browser example, run by BrowserEventSourceTest in a page of the server's own origin.
// README:begin browser
const events = new EventSource('/eventhandler/events?eventType=temperature');
events.addEventListener('temperature', (message) => {
  const event = JSON.parse(message.data); // {id, eventType, payload, metaData, source, timeStamp}
  console.log(`${event.eventType} from ${event.source.systemName}: ${event.payload}`);
});
// README:end browser
