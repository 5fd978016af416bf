// wire.js loads the extension's service worker in Node with a stub of the
// browser's extension API, and reports, as one JSON object on stdout, how
// it takes the native-messaging vectors (../../testdata/wire/) it is given
// on stdin: which request types it dispatches, what the host's notices do
// to its state, and the notices it sends itself (hello at connect, paused
// and end_lease from the popup, prompt_closed when a prompt window goes).
// extension/wire_test.go runs it. It is a test's harness, not part of the
// extension (embed.go does not take testdata/).
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");

const vectors = JSON.parse(fs.readFileSync(0, "utf8"));
const sent = [];
let hostListener = null;
const listeners = {};

// stub is any part of the API nobody stubbed: each property is another
// stub, each call resolves to undefined, and addListener records the
// listener under the stub's path.
function stub(name) {
  return new Proxy(function () {}, {
    get(_, prop) {
      if (prop === "then") return undefined;
      if (prop === "addListener") return (f) => { listeners[name] = f; };
      return stub(`${name}.${String(prop)}`);
    },
    apply() { return Promise.resolve(undefined); },
  });
}
const chrome = new Proxy({}, {
  get(_, area) {
    if (area === "runtime") {
      return new Proxy({}, {
        get(_, p) {
          switch (p) {
            case "id": return "ext";
            case "getManifest": return () => ({ version: "0.1.0" });
            case "getURL": return (f) => `chrome-extension://ext/${f}`;
            case "connectNative": return () => ({
              postMessage: (m) => sent.push(JSON.parse(JSON.stringify(m))),
              onMessage: { addListener: (f) => { hostListener = f; } },
              onDisconnect: { addListener: () => {} },
            });
          }
          return stub(`runtime.${String(p)}`);
        },
      });
    }
    if (area === "storage") {
      const store = { get: async () => ({}), set: async () => {}, remove: async () => {} };
      return { local: store, session: store };
    }
    return stub(String(area));
  },
});

const context = vm.createContext({
  chrome, console, setTimeout, clearTimeout, setInterval, clearInterval, URL, crypto: globalThis.crypto,
  navigator: { userAgent: "Mozilla/5.0 (X11; Linux x86_64)", webdriver: false },
});
context.globalThis = context;
const dir = path.join(__dirname, "..");
for (const f of ["inpage.js", "passkeys.js", "session.js", "sw.js"]) {
  vm.runInContext(fs.readFileSync(path.join(dir, f), "utf8"), context, { filename: f });
}
const run = (code) => vm.runInContext(code, context);
const tick = () => new Promise((r) => setTimeout(r, 20));

(async () => {
  await tick(); // connect() waits for storage, then says hello
  const out = { dispatched: {}, unknown: null, state: {}, sent: [] };
  for (const v of vectors) {
    if (v.from === "host" && v.kind === "request") {
      out.dispatched[v.message.type] = run(`Object.hasOwn(handlers, ${JSON.stringify(v.message.type)})`);
    }
  }
  out.unknown = await run(`answer({ type: "no_such_request" })`);
  for (const v of vectors) {
    if (v.from === "host" && v.kind === "notice") hostListener(v.message);
  }
  out.state = JSON.parse(run(`JSON.stringify({ host, recent, leases, paused })`));
  // The popup flips the pause switch and ends a lease; the same page in a
  // tab gets nothing sent; a prompt window the extension opened closes.
  const onMessage = listeners["runtime.onMessage"];
  const popup = { id: "ext", url: "chrome-extension://ext/popup.html" };
  const inTab = { ...popup, tab: { id: 3 } };
  onMessage({ type: "pause", paused: true }, inTab, () => {});
  onMessage({ type: "end_lease", id: "l-7f3a" }, inTab, () => {});
  onMessage({ type: "pause", paused: true }, popup, () => {});
  onMessage({ type: "end_lease", id: "l-7f3a" }, popup, () => {});
  run(`prompts.add(7)`);
  listeners["windows.onRemoved"](7);
  await tick();
  out.sent = sent.slice();
  process.stdout.write(JSON.stringify(out));
})().catch((e) => { process.stderr.write(String(e?.stack ?? e)); process.exit(1); });
