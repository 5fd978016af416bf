// fillgate's service worker (a background script in Firefox): keeps the
// native-messaging port to the fillgate host open and answers its requests
// as PROTOCOL.md, section 2, says. It never stores, logs or posts a
// secret value; the one variable that holds it is dropped once the insert
// returns.
"use strict";
if (typeof fillgateInPage !== "function") importScripts("inpage.js", "passkeys.js", "session.js"); // Firefox loads them via background.scripts

const api = globalThis.browser ?? globalThis.chrome;
const HOST = "dev.fillgate.host";
const VERSION = api.runtime.getManifest().version;
const BACKOFF_MIN = 1000, BACKOFF_MAX = 30000, RECENT = 10;
// The in-page insert answers within about 1.5 s (its own waits are
// bounded); past this, the document it ran in is gone without a word.
const INSERT_BOUND = 6000;

let port = null; // the open native port, or null
let host = null; // {version, pid} from the host's "host" notice
let backoff = BACKOFF_MIN, retry = 0;
let paused = false; // the pause switch: the host's record once connected, storage.local "paused" before
let pendingPause = null; // a switch the popup flipped while no host was connected, to tell it
let instance = ""; // storage.local "instance": a random id for this profile, never a secret
const recent = []; // recent outcomes for the popup, newest first; never values
let leases = []; // the host's live leases, for the popup (service, field, account, agent, origin, until); never values
const prompts = new Set(); // ids of the open prompt windows, mirrored in storage.session
const loaded = api.storage.local.get(["paused", "instance"]).then(async (v) => {
  paused = v.paused === true;
  instance = typeof v.instance === "string" ? v.instance : crypto.randomUUID();
  if (v.instance !== instance) await api.storage.local.set({ instance });
});
const leftover = closeLeftoverPrompts().catch((e) => console.warn(`fillgate: could not close old prompt windows: ${e.message}`));

// connect opens the native port unless one is open, and says hello.
async function connect() {
  clearTimeout(retry);
  await loaded;
  if (port) return;
  let p;
  try {
    p = api.runtime.connectNative(HOST);
  } catch (e) {
    return reconnectLater(e.message);
  }
  port = p;
  p.onMessage.addListener(onHostMessage);
  p.onDisconnect.addListener(() => {
    if (port === p) {
      port = null; host = null; leases = [];
      // The host that asked for these prompts is gone, and their one-shot
      // server with it: close them, so nobody types into a dead page whose
      // port another program may take over. (An older port ending after a
      // new one opened leaves the new host's prompts alone.)
      closeAllPrompts();
      passkeyHostGone();
    }
    reconnectLater(api.runtime.lastError?.message ?? p.error?.message ?? "the host closed the port");
  });
  post({ type: "hello", version: VERSION, user_agent: navigator.userAgent, paused, instance });
}

// reconnectLater logs why the port dropped (never a message's contents) and
// retries with exponential backoff.
function reconnectLater(why) {
  console.warn(`fillgate: native host ${HOST} disconnected (${why}); retrying in ${backoff / 1000}s`);
  clearTimeout(retry);
  retry = setTimeout(connect, backoff);
  backoff = Math.min(backoff * 2, BACKOFF_MAX);
}

function post(msg) {
  try {
    port?.postMessage(msg);
  } catch (e) {
    console.warn(`fillgate: could not write to the host: ${e.message}`);
  }
}

function onHostMessage(msg) {
  if (msg?.id === undefined) return notice(msg);
  answer(msg).then((reply) => post({ id: msg.id, ...reply }));
}

function notice(msg) {
  if (msg?.type === "host") {
    host = { version: String(msg.version ?? ""), pid: msg.pid };
    backoff = BACKOFF_MIN;
    // The host keeps the pause switch where no page of the extension can
    // write it; only the popup's own flip, made while no host ran, wins.
    if (pendingPause !== null) {
      post({ type: "paused", paused: pendingPause });
      setPaused(pendingPause);
      pendingPause = null;
    } else if (typeof msg.paused === "boolean") {
      setPaused(msg.paused);
    }
  } else if (msg?.type === "outcome") {
    const { time, service, origin, status } = msg;
    recent.unshift({ time, service, origin, status });
    recent.splice(RECENT);
  } else if (msg?.type === "leases" && Array.isArray(msg.leases)) {
    leases = msg.leases.map(({ id, agent, service, field, account, origin, until }) => ({ id, agent, service, field, account, origin, until }));
  }
}

const handlers = {
  inspect, peek, insert, notify, drivable, open_prompt: openPrompt, close_prompt: closePrompt, ping: async () => ({ type: "pong" }),
  passkey_arm: passkeyArm, passkey_disarm: passkeyDisarm, passkey_answer: passkeyAnswer, passkey_refuse: passkeyRefuse, passkey_pass: passkeyPass,
  tab_info: tabInfo, cookies: siteCookies, handover,
};

// answer returns the reply (without id) to one host request.
async function answer(msg) {
  if (!Object.hasOwn(handlers, msg.type)) return fail("bad_request", "unknown request type");
  try {
    return await handlers[msg.type](msg);
  } catch (e) {
    return fail("internal", String(e?.message ?? e));
  }
}

const fail = (error, detail) => ({ type: "error", error, detail });
const notInserted = (reason) => ({ type: "not_inserted", reason });
const originOf = (url) => { try { return new URL(url).origin; } catch { return ""; } };

// targetTab is the tab to inspect, {tab} or {error: reply}: the active tab
// of the last focused normal window, or the pinned tab id, which must be
// the active tab of a normal window (a pin only narrows the choice, so a
// background tab's origin and field are never read or named).
async function targetTab(id) {
  if (id == null) {
    const win = await lastNormalWindow();
    const [tab] = win ? await api.tabs.query({ active: true, windowId: win.id }) : [];
    return tab ? { tab } : { error: fail("no_tab", "no active tab") };
  }
  const tab = Number.isSafeInteger(id) ? await api.tabs.get(id).catch(() => null) : null;
  if (!tab) return { error: fail("no_tab", "no tab has the pinned id") };
  const win = await api.windows.get(tab.windowId).catch(() => null);
  if (!tab.active || win?.type !== "normal" || prompts.has(tab.windowId)) {
    return { error: fail("not_active", "the pinned tab is not the active tab of its window") };
  }
  return { tab };
}

// lastNormalWindow is the last focused normal window, or null. Firefox
// ignores windowTypes in getLastFocused and returns the window on top,
// which may be a prompt popup (its page has a focused password field on
// 127.0.0.1): then the one normal window is taken, and with several none
// is guessed.
async function lastNormalWindow() {
  const win = await api.windows.getLastFocused({ windowTypes: ["normal"] }).catch(() => null);
  if (!win || win.type === "normal") return win;
  const normal = (await api.windows.getAll({ windowTypes: ["normal"] }).catch(() => [])).filter((w) => w.type === "normal");
  return normal.length === 1 ? normal[0] : null;
}

// probeAll runs the probe in every frame of the tab; with a token, each
// frame remembers its focused element under it. Without one (the re-check
// before an insert, once the tab was brought to the front) the frames get
// a moment to be shown.
async function probeAll(tabId, token) {
  const results = await api.scripting.executeScript({
    target: { tabId, allFrames: true }, world: "ISOLATED", func: fillgateInPage, args: ["probe", token ? { token } : { shown: true }],
  });
  const byPath = new Map();
  for (const r of results) {
    const path = r.result?.path;
    if (!Array.isArray(path)) continue;
    const key = path.join(".");
    byPath.set(key, byPath.has(key) ? null : r); // two frames claiming one place: trust neither
  }
  return byPath;
}

// focusChain follows the focus from the top frame down through focused
// frame elements: the frames' probe results, top first, or null when the
// chain reaches a frame that could not be probed.
function focusChain(byPath) {
  const chain = [];
  for (let r = byPath.get(""); r; ) {
    chain.push(r);
    if (!r.result.activeIsFrame) return chain[0].frameId === 0 ? chain : null;
    r = r.result.childIndex >= 0 ? byPath.get([...r.result.path, r.result.childIndex].join(".")) : null;
  }
  return null;
}

// origins lists a chain's origins from the focused frame up to the top.
const origins = (chain) => chain.map((r) => r.result.origin).reverse();

// frameProblem is the first problem of a frame element on the way down to
// the focused frame (a hidden, tiny, transparent or covered iframe).
const frameProblem = (chain) => chain.slice(0, -1).map((r) => r.result.field.problem).find((p) => p) ?? "";

async function inspect(msg) {
  const { tab, error } = await targetTab(msg.tab);
  if (error) return error;
  const token = crypto.randomUUID();
  let byPath;
  try {
    byPath = await probeAll(tab.id, token);
  } catch (e) {
    return fail("no_access", e.message);
  }
  const chain = focusChain(byPath);
  if (!chain) return fail("no_access", "the focused frame cannot be scripted");
  const end = chain.at(-1);
  const { kind, split, problem, hint } = end.result.field;
  const field = { kind, split, problem: frameProblem(chain) || problem };
  if (hint) field.hint = hint;
  if (msg.frame != null && msg.frame !== end.frameId) Object.assign(field, { kind: "none", split: 0, problem: "", hint: undefined });
  const reply = { type: "inspected", tab: tab.id, frame: end.frameId, token, origins: origins(chain), field, paused };
  if (await watched(tab.id)) reply.watched = true;
  if (end.result.form) reply.form = end.result.form;
  if (typeof end.result.account === "string" && end.result.account && field.kind !== "none") reply.account = end.result.account;
  return reply;
}

// peek says what the active tab has focused (origin, field kind and
// problem), for routing among browsers and for `fillgate status`; it
// remembers nothing and names no other tab.
async function peek() {
  const { tab, error } = await targetTab(null);
  if (error) return error;
  const chain = focusChain(await probeAll(tab.id, null).catch(() => new Map()));
  if (!chain) return { type: "peeked", origin: originOf(tab.url), field: { kind: "none", split: 0, problem: "" } };
  const { kind, split, problem } = chain.at(-1).result.field;
  return { type: "peeked", origin: origins(chain)[0], field: { kind, split, problem: frameProblem(chain) || problem } };
}

// drivable says what the extension sees of programs that drive the
// browser: how many targets have a DevTools client attached (DevTools,
// another extension, a DevTools Protocol client), navigator.webdriver,
// and how many other extensions could drive it or script the loopback
// prompt's page at any moment (others; -1: it cannot tell). It only lists
// targets with chrome.debugger.getTargets(), never attaches to one, and
// names neither a page nor an extension. Firefox has no such API:
// debugger_api is false.
async function drivable() {
  const debuggerApi = typeof api.debugger?.getTargets === "function";
  const [targets, others] = await Promise.all([debuggerApi ? api.debugger.getTargets() : [], otherDrivers()]);
  return { type: "drivable", attached: targets.filter((t) => t.attached).length, webdriver: navigator.webdriver === true, debugger_api: debuggerApi, others };
}

// watched reports whether a DevTools client is attached to the tab: it can
// read what goes into the page's field, which the prompt tells the person.
async function watched(tabId) {
  if (typeof api.debugger?.getTargets !== "function") return false;
  const targets = await api.debugger.getTargets().catch(() => []);
  return targets.some((t) => t.tabId === tabId && t.attached);
}

// otherDrivers counts the other enabled extensions that hold the
// permission to drive the browser, or host access to http://127.0.0.1 (where the loopback
// prompt opens): either can read, type into or click the prompt's page
// whenever it likes, attaching and detaching between any two checks.
async function otherDrivers() {
  if (typeof api.management?.getAll !== "function") return -1;
  const all = await api.management.getAll().catch(() => null);
  if (!Array.isArray(all)) return -1;
  return all.filter((e) => e.enabled && e.id !== api.runtime.id && e.type !== "theme" &&
    ((e.permissions ?? []).includes("debugger") || (e.hostPermissions ?? []).some(reachesLoopback))).length;
}

// reachesLoopback reports whether a match pattern covers http://127.0.0.1.
const reachesLoopback = (p) => p === "<all_urls>" || /^(\*|http):\/\/(\*|127\.0\.0\.1)(:[0-9*]+)?\//.test(p);

// inserted is the reply to an insert that ran: what the in-page function
// said (never the value).
const inserted = (v) => {
  const r = { type: "inserted", matched: v.matched === true };
  for (const k of ["submitted", "navigated", "cleared", "remains"]) if (v[k] === true) r[k] = true;
  if (typeof v.stopped === "string" && v.stopped) r.stopped = v.stopped;
  if (typeof v.stoppedBy === "string" && v.stoppedBy) r.stopped_by = v.stoppedBy;
  return r;
};
// The frame's document went away while the insert ran (it navigated
// without a beforeunload, the frame was removed, the tab closed). The
// in-page function marks the insert, in its task, with the call's nonce
// (marks): marked, the value went with the page; not marked, the page
// left before the insert, which then never happened.
const goneMidCall = { type: "inserted", matched: true, navigated: true, unconfirmed: true };
const marks = new Map(); // nonce → marked, for the inserts under way
const gone = (nonce) => (marks.get(nonce) ? goneMidCall : notInserted("page_left"));

async function insert(msg) {
  const { tab: tabId, frame, token, origins: want, kind, form } = msg;
  const then = msg.then === "none" ? "none" : "submit";
  let value = msg.value;
  delete msg.value;
  const nonce = crypto.randomUUID();
  try {
    if (!Number.isInteger(tabId) || !Number.isInteger(frame) || typeof token !== "string" || !Array.isArray(want) || want.length === 0) {
      return fail("bad_request", "insert needs tab, frame, token and origins");
    }
    if (paused) return notInserted("paused");
    const tab = await api.tabs.get(tabId).catch(() => null);
    if (!tab) return notInserted("tab_gone");
    if (originOf(tab.url) !== want.at(-1)) return notInserted("origin_changed");
    await bringToFront(tab);
    // A field in a frame: the focus must still lead down to it through the
    // same origins, past frames that can be seen. In the top frame the
    // in-page function checks all of that itself (its origin, and that the
    // field still has the focus), so no walk through every frame is made.
    if (frame !== 0 || want.length !== 1) {
      const chain = focusChain(await probeAll(tabId, null).catch(() => new Map()));
      if (!chain) return notInserted("origin_changed");
      if (chain.at(-1).frameId !== frame) return notInserted("frame_changed");
      if (origins(chain).join(" ") !== want.join(" ")) return notInserted("origin_changed");
      if (frameProblem(chain)) return notInserted("not_usable");
    }
    // The in-page function settles before its document goes (it answers
    // at beforeunload); executeScript never settles for a document that
    // went without that, so the call is bounded here too.
    let bound;
    marks.set(nonce, false);
    const run = api.scripting.executeScript({
      target: { tabId, frameIds: [frame] }, world: "ISOLATED", func: fillgateInPage,
      args: ["insert", { token, origin: want[0], kind, form: form ?? null, then, value, nonce }],
    });
    value = null;
    let results;
    try {
      results = await Promise.race([run, new Promise((resolve) => { bound = setTimeout(() => resolve(null), INSERT_BOUND); })]);
    } catch (e) {
      // "Frame with ID 0 was removed.": the tab closed during the call.
      if (/was removed/i.test(String(e?.message))) return gone(nonce);
      throw e;
    } finally {
      clearTimeout(bound);
    }
    const v = results?.[0]?.result;
    if (v == null || typeof v !== "object") return gone(nonce);
    if (!v.inserted) return notInserted(v.reason || "insert_failed");
    return inserted(v);
  } finally {
    marks.delete(nonce);
    value = null; // drop the only reference this worker held
  }
}

// bringToFront gives the tab's window focus back from the prompt without
// touching the page's focused element.
async function bringToFront(tab) {
  try {
    await api.tabs.update(tab.id, { active: true });
    await api.windows.update(tab.windowId, { focused: true });
  } catch (e) {
    console.warn(`fillgate: could not bring the tab to the front: ${e.message}`);
  }
}

// notify shows the browser notification of a fill that runs with no
// prompt (a lease, or approval = none), as the host words it: agent,
// service and origin. The host fills only once it is shown.
async function notify(msg) {
  const title = String(msg.title ?? "").slice(0, 200), message = String(msg.message ?? "").slice(0, 1000);
  if (!title) return fail("bad_request", "notify needs a title");
  await api.notifications.create({ type: "basic", iconUrl: api.runtime.getURL("icons/icon128.png"), title, message });
  return { type: "notified" };
}

async function openPrompt(msg) {
  let url;
  try {
    url = new URL(msg.url);
  } catch {
    return fail("bad_request", "the prompt url is not a url");
  }
  if (url.protocol !== "http:" || url.hostname !== "127.0.0.1") return fail("bad_request", "the prompt must be on http://127.0.0.1");
  const asker = port;
  await leftover;
  const win = await api.windows.create({ type: "popup", url: url.href, width: 480, height: 660, focused: true });
  prompts.add(win.id);
  await savePrompts();
  if (port !== asker) await closeAllPrompts(); // the host that asked went while the window opened
  return { type: "prompt_opened", window: win.id };
}

async function closePrompt(msg) {
  if (prompts.delete(msg.window)) {
    await savePrompts();
    await api.windows.remove(msg.window).catch(() => {});
  }
  return { type: "ok" };
}

// savePrompts mirrors the open prompt windows' ids (never a URL or a
// value) in storage.session, so that a worker started again finds them.
async function savePrompts() {
  await api.storage.session.set({ prompts: [...prompts] }).catch(() => {});
}

// closeAllPrompts closes every prompt window: a prompt lives only as long
// as the host that asked for it.
async function closeAllPrompts() {
  const ids = [...prompts];
  prompts.clear();
  await savePrompts();
  await Promise.all(ids.map((id) => api.windows.remove(id).catch(() => {})));
}

// closeLeftoverPrompts closes the prompt windows an earlier run of this
// worker left open: their host, and so their prompts, are gone.
async function closeLeftoverPrompts() {
  const { prompts: ids = [] } = await api.storage.session.get("prompts").catch(() => ({}));
  if (!Array.isArray(ids) || ids.length === 0) return;
  await Promise.all(ids.filter(Number.isInteger).map((id) => api.windows.remove(id).catch(() => {})));
  await savePrompts();
}

api.windows.onRemoved.addListener((id) => {
  if (!prompts.delete(id)) return;
  savePrompts();
  post({ type: "prompt_closed", window: id });
});

// setPaused sets the pause switch and keeps it in storage for the next
// start. Nothing reads storage's changes: any page of the extension, one
// opened in a tab among them, can write there.
function setPaused(v) {
  paused = v === true;
  return api.storage.local.set({ paused });
}

// fromPopup reports whether a message comes from the toolbar popup
// itself: a page of the extension with no tab. The same page opened in a
// tab (which a program driving the browser can open, script and click)
// gets nothing: not the state (outcomes, leases, accounts), not the pause
// switch, not a lease's end.
const fromPopup = (sender) => !sender.tab && sender.url === api.runtime.getURL("popup.html");

// The popup asks for the state, flips the pause switch and ends leases.
api.runtime.onMessage.addListener((msg, sender, sendResponse) => {
  if (sender.id !== api.runtime.id) return false;
  if (msg?.type === "passkey_call") return sender.tab ? passkeyCall(msg, sender, sendResponse) : false;
  if (msg?.type === "inserting") {
    // An insert's mark, from the in-page function in a page's isolated
    // world: only a nonce this worker handed out counts.
    if (sender.tab && typeof msg.nonce === "string" && marks.has(msg.nonce)) marks.set(msg.nonce, true);
    return false;
  }
  if (!fromPopup(sender)) return false;
  const live = () => leases.filter((l) => Date.parse(l.until) > Date.now());
  const state = () => ({ connected: host !== null, host, paused, recent, leases: live(), version: VERSION });
  if (msg?.type === "state") {
    loaded.then(() => sendResponse(state()));
    return true;
  }
  if (msg?.type === "end_lease" && typeof msg.id === "string") {
    leases = leases.filter((l) => l.id !== msg.id);
    post({ type: "end_lease", lease: msg.id });
    sendResponse(state());
    return false;
  }
  if (msg?.type === "pause") {
    const v = msg.paused === true;
    if (port && host) post({ type: "paused", paused: v });
    else pendingPause = v;
    setPaused(v).then(() => sendResponse(state()));
    return true;
  }
  return false;
});

passkeyListeners();
api.runtime.onInstalled.addListener(() => connect());
api.runtime.onStartup.addListener(() => connect());
connect();
