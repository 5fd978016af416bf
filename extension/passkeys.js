// fillgate's passkey arms, loaded by the service worker (sw.js): the
// host arms one tab for one WebAuthn call (passkey_arm), relay.js hands
// the page's call over (passkey_call, from runtime.onMessage), and the
// host's verdict goes back to the page: passkey_answer, passkey_refuse or
// passkey_pass (PROTOCOL.md §2, "Passkeys"). Arms live in this worker's
// memory only: one per tab, for one call, until the deadline, the tab's
// next document or the host's disarm, whichever comes first. Who called
// is what the browser says of the sender (tab, frame, origin), never what
// the page wrote; only the top frame is ever answered.
"use strict";

const passkeyArms = new Map(); // tab id → {request, ceremony, origin, deadline, timer}
const passkeyCalls = new Map(); // request id → {respond, timer}: a page's call waiting for the host
// How long a call the host was told of waits for its verdict: the host
// answers at once (approval came before the arm), or lets it pass.
const PASSKEY_VERDICT_WAIT = 15000;
const B64U = /^[A-Za-z0-9_-]*$/;
const b64uField = (v, max) => typeof v === "string" && v.length <= max && B64U.test(v) ? v : "";
const textField = (v, max) => typeof v === "string" ? v.slice(0, max) : "";

async function passkeyArm(msg) {
  const { request, ceremony, origin } = msg;
  const deadline = Date.parse(msg.deadline);
  if (typeof request !== "string" || !request || request.length > 64 || (ceremony !== "get" && ceremony !== "create") || typeof origin !== "string") {
    return fail("bad_request", "passkey_arm needs request, ceremony get or create, and origin");
  }
  if (!(deadline > Date.now())) return fail("bad_request", "passkey_arm needs a deadline in the future");
  if (msg.frame != null && msg.frame !== 0) return fail("bad_request", "only a tab's top frame is armed");
  if (paused) return fail("paused", "fills are paused in the extension");
  const { tab, error } = await targetTab(msg.tab);
  if (error) return error;
  if (originOf(tab.url) !== origin) return fail("origin_changed", "the tab shows another origin than the one to arm");
  const old = passkeyArms.get(tab.id);
  if (old && old.request !== request) return fail("busy", "the tab is armed for another request");
  passkeyDisarmTab(tab.id);
  const timer = setTimeout(() => passkeyDisarmTab(tab.id, "expired"), deadline - Date.now());
  passkeyArms.set(tab.id, { request, ceremony, origin, deadline, timer });
  return { type: "armed", tab: tab.id, frame: 0 };
}

// passkeyDisarmTab drops the tab's arm; with a reason, the host hears
// passkey_aborted (the deadline passed, the tab left the document, closed).
function passkeyDisarmTab(tabId, reason) {
  const arm = passkeyArms.get(tabId);
  if (!arm) return;
  passkeyArms.delete(tabId);
  clearTimeout(arm.timer);
  if (reason) post({ type: "passkey_aborted", request: arm.request, reason });
}

async function passkeyDisarm(msg) {
  for (const [tabId, arm] of passkeyArms) if (arm.request === msg.request) passkeyDisarmTab(tabId);
  passkeySettle(msg.request, {});
  return { type: "ok" };
}

// passkeyCall takes a page's call from relay.js. An arm of the sender's
// tab, for that ceremony, from its top frame, on the armed origin, before
// the deadline: the arm is used up and the host is told (passkey_called);
// the page waits for the verdict. Anything else falls through at once.
function passkeyCall(msg, sender, respond) {
  const tabId = sender.tab?.id, arm = passkeyArms.get(tabId), c = msg?.call ?? {};
  const origin = typeof sender.origin === "string" ? sender.origin : originOf(sender.url);
  if (!arm || sender.frameId !== 0 || c.ceremony !== arm.ceremony || origin !== arm.origin || Date.now() >= arm.deadline) {
    respond({});
    return false;
  }
  passkeyDisarmTab(tabId);
  const called = {
    type: "passkey_called", request: arm.request, ceremony: arm.ceremony, tab: tabId, frame: sender.frameId, origin,
    document: textField(sender.documentId, 64), rp_id: textField(c.rp_id, 253), challenge: b64uField(c.challenge, 2048),
    user_verification: ["required", "preferred", "discouraged"].includes(c.user_verification) ? c.user_verification : "",
  };
  const ids = (list) => Array.isArray(list) ? list.slice(0, 64).map((id) => b64uField(id, 1400)) : [];
  if (arm.ceremony === "get") {
    called.allow = ids(c.allow);
  } else {
    called.user = { id: b64uField(c.user?.id, 128), name: textField(c.user?.name, 256) };
    called.algs = Array.isArray(c.algs) ? c.algs.slice(0, 16).filter(Number.isSafeInteger) : [];
    called.exclude = ids(c.exclude);
  }
  const timer = setTimeout(() => passkeySettle(arm.request, {}), PASSKEY_VERDICT_WAIT);
  passkeyCalls.set(arm.request, { respond, timer });
  post(called);
  return true;
}

// passkeySettle hands the page its verdict, once.
function passkeySettle(request, verdict) {
  const call = passkeyCalls.get(request);
  if (!call) return false;
  passkeyCalls.delete(request);
  clearTimeout(call.timer);
  call.respond(verdict);
  return true;
}

async function passkeyAnswer(msg) {
  const r = msg.response ?? {};
  const names = ["id", "client_data_json", "authenticator_data", "signature", "user_handle", "attestation_object", "public_key"];
  const answer = {};
  for (const k of names) if (r[k] != null) answer[k] = b64uField(r[k], 65536);
  if (!answer.id || !answer.client_data_json || !answer.authenticator_data || !(answer.signature || answer.attestation_object && answer.public_key)) {
    return fail("bad_request", "passkey_answer needs a whole response");
  }
  return passkeySettle(msg.request, { answer }) ? { type: "ok" } : fail("no_call", "no page call waits under that request");
}

const passkeyRefuse = async (msg) => passkeySettle(msg.request, { refuse: true }) ? { type: "ok" } : fail("no_call", "no page call waits under that request");
const passkeyPass = async (msg) => passkeySettle(msg.request, {}) ? { type: "ok" } : fail("no_call", "no page call waits under that request");

// passkeyListeners disarms a tab that loads another document or closes,
// and lets every waiting call fall through when the host goes.
function passkeyListeners() {
  api.tabs.onUpdated.addListener((tabId, change) => { if (change.status === "loading") passkeyDisarmTab(tabId, "navigated"); });
  api.tabs.onRemoved.addListener((tabId) => passkeyDisarmTab(tabId, "tab_gone"));
}

// passkeyHostGone drops every arm and lets every waiting call fall through.
function passkeyHostGone() {
  for (const tabId of [...passkeyArms.keys()]) passkeyDisarmTab(tabId);
  for (const request of [...passkeyCalls.keys()]) passkeySettle(request, {});
}
