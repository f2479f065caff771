// Drives SSE clients that nobody on this project wrote, for the JUnit tests in eu.arrowhead.eventhandler.clients:
//   node clients.mjs browser   Chromium's EventSource (Debian's /usr/bin/chromium, through playwright-core)
//   node clients.mjs npm       the npm eventsource package
// The test writes commands to stdin, one JSON object a line, each with a "seq"; this script answers each with
// {"ack":seq} (plus a result, or "error") and reports what the clients see as they see it, one JSON object a line:
//   {"source":"a","kind":"open"}
//   {"source":"a","kind":"error","readyState":0}        0: reconnecting, 2: closed for good
//   {"source":"a","kind":"event","type":"t","id":"5","data":"..."}   "message" for onmessage
//   {"source":"page","kind":"console","data":"..."}   what a page logged (browser)
// It ends, closing what it opened (the browser above all), when stdin ends.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const mode = process.argv[2];
if (mode !== 'browser' && mode !== 'npm') {
  process.stderr.write('usage: node clients.mjs browser|npm\n');
  process.exit(2);
}

function emit(message) {
  process.stdout.write(JSON.stringify(message) + '\n');
}

// What an EventSource reports, attached the same way in the page and in Node (the browser gets this
// function's source text).
function attach(EventSourceClass, report, sources, { source, url, types }) {
  const es = new EventSourceClass(url);
  sources[source] = es;
  es.onopen = () => report({ source, kind: 'open' });
  es.onerror = () => report({ source, kind: 'error', readyState: es.readyState });
  const forward = (event) => report({ source, kind: 'event', type: event.type, id: event.lastEventId, data: event.data });
  es.onmessage = forward;
  for (const type of types) {
    es.addEventListener(type, forward);
  }
}

async function browserClients() {
  const { chromium } = await import('playwright-core');
  // A fresh profile per run: nothing a run leaves (cache, cookies) reaches the next one.
  const userDataDir = mkdtempSync(join(tmpdir(), 'eventhandler-chromium-'));
  // Pages for the cross-origin cases: two origins of their own (another port is another origin).
  const pageServers = [];
  for (let i = 0; i < 2; i++) {
    const server = createServer((request, response) => {
      response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      response.end('<!doctype html><title>page</title>');
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    pageServers.push(server);
  }
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: '/usr/bin/chromium', // Debian's: playwright's own browser download cannot work here
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  await context.exposeBinding('__report', (_, message) => emit(message));
  const pages = new Map();
  const pageOf = (name) => {
    const page = pages.get(name);
    if (!page) {
      throw new Error(`no page '${name}'`);
    }
    return page;
  };
  return {
    hello: { pageOrigins: pageServers.map((server) => `http://127.0.0.1:${server.address().port}`) },
    async page({ page, url }) {
      const created = await context.newPage();
      pages.set(page, created);
      created.on('console', (message) => emit({ source: page, kind: 'console', data: message.text() }));
      await created.goto(url);
    },
    async open(command) {
      await pageOf(command.page).evaluate(
        `(${attach})(EventSource, window.__report, window.__sources ??= {}, ${JSON.stringify(command)})`);
    },
    async script({ page, file }) {
      await pageOf(page).addScriptTag({ path: file });
    },
    async close({ page, source }) {
      await pageOf(page).evaluate((source) => window.__sources[source].close(), source);
    },
    async fetch({ page, url, method, headers, body }) {
      return pageOf(page).evaluate(async ({ url, method, headers, body }) => {
        try {
          const response = await fetch(url, { method, headers, body });
          return { status: response.status, body: await response.text() };
        } catch (e) {
          return { failed: String(e) };
        }
      }, { url, method, headers, body });
    },
    async reset() {
      for (const page of pages.values()) {
        await page.close();
      }
      pages.clear();
    },
    async end() {
      try {
        await context.close();
      } finally {
        pageServers.forEach((server) => server.close());
        rmSync(userDataDir, { recursive: true, force: true });
      }
    },
  };
}

async function npmClients() {
  const { EventSource } = await import('eventsource');
  const sources = {};
  const closeAll = () => {
    for (const name of Object.keys(sources)) {
      sources[name].close();
      delete sources[name];
    }
  };
  return {
    hello: {},
    async open(command) {
      attach(EventSource, emit, sources, command);
    },
    async close({ source }) {
      sources[source].close();
    },
    async reset() {
      closeAll();
    },
    async end() {
      closeAll();
    },
  };
}

const clients = mode === 'browser' ? await browserClients() : await npmClients();
emit({ ready: true, ...clients.hello });

// One command at a time, in order: a test's "open" must be done before its "close".
let queue = Promise.resolve();
const input = createInterface({ input: process.stdin });
input.on('line', (line) => {
  queue = queue.then(async () => {
    const command = JSON.parse(line);
    try {
      const run = clients[command.op];
      if (!run) {
        throw new Error(`unknown op '${command.op}' in ${mode} mode`);
      }
      emit({ ack: command.seq, result: (await run(command)) ?? null });
    } catch (e) {
      emit({ ack: command.seq, error: String(e && e.stack || e) });
    }
  });
});
input.on('close', () => {
  queue.then(() => clients.end()).finally(() => process.exit(0));
});
