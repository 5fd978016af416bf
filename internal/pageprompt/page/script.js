"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const box = $("answer"), field = $("value"), send = $("send"), cancel = $("cancel");
  const form = $("cancelform"), hint = $("hint"), empty = $("empty");
  const approveButton = $("approve"), askField = $("ask"), askEmpty = $("askempty"), remember = $("remember");
  const picks = Array.from(document.querySelectorAll("input[name=account]"));
  const csrf = form.elements.csrf.value, path = box.dataset.path;
  const url = new URL(path, location.href).href;
  const closesIn = box.dataset.closesIn === "" ? Infinity : Number(box.dataset.closesIn);
  const closesAt = box.dataset.closesAt === "" ? Infinity : Number(box.dataset.closesAt);
  const t0 = performance.now();
  const enc = new TextEncoder(), watch = new AbortController();
  let state = "open";
  const MASK = "\u2022".repeat(8);
  const PAD = 4096;

  const secretField = (el) => {
    let typed = [];
    const shown = () => {
      el.value = typed.length ? MASK : "";
      el.setSelectionRange(el.value.length, el.value.length);
      el.classList.remove("typed");
      void el.offsetWidth;
      el.classList.add("typed");
    };
    const forget = () => { typed.fill(""); typed = []; };
    const all = () => el.value !== "" && el.selectionStart === 0 && el.selectionEnd === el.value.length;
    el.addEventListener("beforeinput", (e) => {
      if (e.inputType === "insertCompositionText" && e.isTrusted) return;
      e.preventDefault();
      if (state !== "open" || !e.isTrusted) return;
      const text = e.dataTransfer ? e.dataTransfer.getData("text/plain") : e.data;
      if (e.inputType.startsWith("insert")) {
        if (all()) forget();
        if (text) typed.push(...text.replace(/[\r\n]+$/, ""));
      } else if (e.inputType === "deleteContentBackward" && !all()) {
        typed.pop();
      } else {
        forget();
      }
      empty.hidden = true;
      if (askEmpty) askEmpty.hidden = true;
      shown();
    });
    el.addEventListener("compositionend", (e) => {
      if (state === "open" && e.isTrusted && e.data) typed.push(...e.data);
      shown();
    });
    el.addEventListener("input", (e) => { if (!e.isComposing) shown(); });
    return {
      size: () => typed.length,
      take: () => { const v = typed.join(""); forget(); el.value = ""; return v; },
      clear: () => { forget(); el.value = ""; },
    };
  };
  const typed = secretField(field), asked = askField ? secretField(askField) : null;
  const forgetAll = () => { typed.clear(); if (asked) asked.clear(); };
  const disableAll = () => {
    for (const el of [field, send, cancel, approveButton, askField, remember, ...picks]) if (el) el.disabled = true;
  };
  const picked = () => picks.find((r) => r.checked)?.value;

  const expired = () => performance.now() - t0 >= closesIn || Date.now() >= closesAt;
  const b64 = (bytes) => btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(""));
  const b64url = (bytes) => b64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  const unb64url = (s) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
  const concat = (...parts) => {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    parts.reduce((at, p) => (out.set(p, at), at + p.length), 0);
    return out;
  };

  function finish(which) {
    if (state !== "open" && state !== "busy") return;
    state = which;
    forgetAll();
    disableAll();
    watch.abort();
    box.hidden = form.hidden = empty.hidden = true;
    for (const el of document.querySelectorAll("[data-when]")) el.hidden = el.dataset.when !== which;
    document.body.dataset.state = which;
  }

  const post = (action, extra, signal) => fetch(url, {
    method: "POST", body: new URLSearchParams({ csrf, action, ...extra }),
    credentials: "same-origin", cache: "no-store", redirect: "error", signal,
  });

  async function seal(action, payload) {
    const subtle = crypto.subtle, info = enc.encode("fillgate-prompt-v1 " + path + " " + action);
    const hostRaw = unb64url(box.dataset.key);
    const host = await subtle.importKey("raw", hostRaw, { name: "X25519" }, false, []);
    const mine = await subtle.generateKey({ name: "X25519" }, false, ["deriveBits"]);
    const mineRaw = new Uint8Array(await subtle.exportKey("raw", mine.publicKey));
    const shared = await subtle.deriveBits({ name: "X25519", public: host }, mine.privateKey, 256);
    const hkdf = await subtle.importKey("raw", shared, "HKDF", false, ["deriveKey"]);
    const key = await subtle.deriveKey({ name: "HKDF", hash: "SHA-256", salt: concat(hostRaw, mineRaw), info },
      hkdf, { name: "AES-GCM", length: 256 }, false, ["encrypt"]);
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const json = enc.encode(JSON.stringify(payload));
    const plain = new Uint8Array(Math.max(1, Math.ceil(json.length / PAD)) * PAD).fill(32);
    plain.set(json);
    json.fill(0);
    const sealed = await subtle.encrypt({ name: "AES-GCM", iv, additionalData: info }, key, plain);
    plain.fill(0);
    return b64url(concat(mineRaw, iv, new Uint8Array(sealed)));
  }

  const outcome = (res, ok) => res.ok ? ok : res.status === 410 ? "closed" : "failed";

  async function answer(action, payload, done) {
    state = "busy";
    const account = picked();
    if (account !== undefined) payload.account = account;
    forgetAll();
    disableAll();
    try {
      const sealed = await seal(action, payload);
      finish(outcome(await post(action, { answer: sealed }), done));
    } catch {
      finish("failed");
    }
  }

  function submit() {
    if (state !== "open") return;
    if (expired()) return finish("expired");
    if (typed.size() === 0) {
      empty.hidden = false;
      return field.focus();
    }
    const payload = { value: b64(enc.encode(typed.take())) };
    if (remember && remember.checked) payload.remember = true;
    answer("submit", payload, "sent");
  }

  function approve() {
    if (state !== "open") return;
    if (expired()) return finish("expired");
    if (asked && asked.size() === 0) {
      askEmpty.hidden = false;
      return askField.focus();
    }
    answer("approve", asked ? { ask: b64(enc.encode(asked.take())) } : {}, "approved");
  }

  async function cancelNow() {
    if (state !== "open") return;
    state = "busy";
    forgetAll();
    try {
      finish(outcome(await post("cancel", {}), "cancelled"));
    } catch {
      finish("closed");
    }
  }

  (async () => {
    try {
      const res = await post("watch", {}, watch.signal);
      if (res.ok && res.body) for (const r = res.body.getReader(); !(await r.read()).done; );
    } catch {}
    if (state === "open") finish(expired() ? "expired" : "closed");
  })();

  // afterFirstPaint calls then once the browser has shown the page: until
  // its first paint Chromium drops the keys the page is sent, so the title
  // that tells a person (or a test) the prompt is ready waits for it.
  // A paint that came before is delivered too (buffered).
  function afterFirstPaint(then) {
    if (!PerformanceObserver.supportedEntryTypes?.includes("paint")) return requestAnimationFrame(() => setTimeout(then));
    const seen = new PerformanceObserver((list) => {
      if (list.getEntriesByName("first-contentful-paint").length > 0) { seen.disconnect(); then(); }
    });
    seen.observe({ type: "paint", buffered: true });
  }

  const onEnter = (el, act) => el && el.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.isComposing) { e.preventDefault(); if (e.isTrusted) act(); }
  });
  onEnter(field, submit);
  onEnter(askField, approve);
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape") { e.preventDefault(); cancelNow(); }
  });
  const trusted = (act) => (e) => { if (e.isTrusted) act(); };
  send.addEventListener("click", trusted(submit));
  if (approveButton) approveButton.addEventListener("click", trusted(approve));
  form.addEventListener("submit", (e) => { e.preventDefault(); cancelNow(); });
  addEventListener("pagehide", forgetAll);
  document.addEventListener("visibilitychange", () => { if (state === "open" && expired()) finish("expired"); });
  if (closesIn !== Infinity) setTimeout(() => { if (state === "open") finish("expired"); }, Math.max(0, Math.min(closesIn, closesAt - Date.now())));

  if (!window.isSecureContext || !crypto.subtle) return finish("failed");
  box.hidden = send.hidden = hint.hidden = false;
  afterFirstPaint(() => { document.title = box.dataset.title; });
  if (expired()) finish("expired");
  else (askField || approveButton || field).focus();
})();
