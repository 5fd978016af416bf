// fillgate's in-page function: finds, checks and fills the focused field.
//
// The whole file is one async function expression, so it works both as a
// classic script (it defines the global fillgateInPage) and as the
// functionDeclaration of CDP Runtime.callFunctionOn (with awaitPromise);
// chrome.scripting.executeScript awaits the promise it returns. It runs in an isolated
// world (the extension's, or one made by Page.createIsolatedWorld), where page
// scripts cannot see its arguments or replace the built-ins it uses. It reads
// DOM state only through this world's own prototype getters, so neither page
// scripts nor named elements that shadow document properties can fool it.
// See host/PROTOCOL.md, section 3.
async function fillgateInPage(op, arg) {
  "use strict";
  const own = (o, k) => Object.getOwnPropertyDescriptor(o, k);
  const getter = (proto, k) => { const g = own(proto, k).get; return (o) => Reflect.apply(g, o, []); };
  const method = (proto, k) => { const f = own(proto, k).value; return (o, ...a) => Reflect.apply(f, o, a); };
  const I = HTMLInputElement.prototype, E = Element.prototype, N = Node.prototype;
  const docActive = getter(Document.prototype, "activeElement");
  const rootActive = getter(ShadowRoot.prototype, "activeElement");
  const docHit = method(Document.prototype, "elementFromPoint");
  const rootHit = method(ShadowRoot.prototype, "elementFromPoint");
  const execCommand = method(Document.prototype, "execCommand");
  const shadowRoot = getter(E, "shadowRoot"), hostOf = getter(ShadowRoot.prototype, "host");
  const assignedSlot = getter(E, "assignedSlot"), parentNode = getter(N, "parentNode");
  const connected = getter(N, "isConnected"), contains = method(N, "contains");
  const matches = method(E, "matches"), attr = method(E, "getAttribute");
  const rect = method(E, "getBoundingClientRect"), visible = method(E, "checkVisibility");
  const queryEl = method(E, "querySelectorAll"), queryFrag = method(DocumentFragment.prototype, "querySelectorAll");
  const body = getter(Document.prototype, "body"), docEl = getter(Document.prototype, "documentElement");
  const focus = method(HTMLElement.prototype, "focus");
  const type = getter(I, "type"), maxLength = getter(I, "maxLength"), readOnly = getter(I, "readOnly");
  const labels = getter(I, "labels"), select = method(I, "select");
  const valueOf = getter(I, "value"), setValue = own(I, "value").set;
  const dispatch = method(EventTarget.prototype, "dispatchEvent");
  const F = HTMLFormElement.prototype, B = HTMLButtonElement.prototype;
  const formOf = getter(I, "form"), buttonForm = getter(B, "form"), buttonType = getter(B, "type");
  const formAction = getter(F, "action"), buttonAction = getter(B, "formAction"), inputAction = getter(I, "formAction");
  const requestSubmit = method(F, "requestSubmit"), click = method(HTMLElement.prototype, "click");
  const hasAttr = method(E, "hasAttribute"), closest = method(E, "closest"), rootNode = method(N, "getRootNode");
  const queryDoc = method(Document.prototype, "querySelectorAll"), textOf = getter(N, "textContent");
  const listen = method(EventTarget.prototype, "addEventListener"), unlisten = method(EventTarget.prototype, "removeEventListener");
  const evTarget = getter(Event.prototype, "target"), prevented = getter(Event.prototype, "defaultPrevented");
  const iframeWindow = getter(HTMLIFrameElement.prototype, "contentWindow");
  const frameWindow = getter(HTMLFrameElement.prototype, "contentWindow");
  const TEXT = new Set(["text", "tel", "number", "password", "search"]);
  const KEY = "fillgate.tokens";
  // After the insert (then submit): how long a one-time-code widget may take
  // to submit by itself, and how long the page may take to navigate, drop
  // the field or change it after the submit before fillgate clears it.
  const SELF_MS = 400, WAIT_MS = 1000;

  // The focused element, followed through open shadow roots.
  const deepActive = () => {
    let el = docActive(document);
    for (let i = 0; el && i < 64; i++) {
      const root = shadowRoot(el), inner = root && rootActive(root);
      if (!inner) break;
      el = inner;
    }
    return el;
  };
  const isFrame = (el) => el instanceof HTMLIFrameElement || el instanceof HTMLFrameElement;
  // The flat-tree parent: the slot an element is assigned to, its parent
  // element, or the host of the shadow root it sits in.
  const flatParent = (el) => {
    const p = assignedSlot(el) || parentNode(el);
    return p instanceof ShadowRoot ? hostOf(p) : p instanceof Element ? p : null;
  };
  // The row of 4 to 12 single-character boxes that el belongs to: the first
  // of its three nearest ancestors holding such a row, boxes in document
  // order; null if none.
  const boxesOf = (el) => {
    const isBox = (b) => b instanceof HTMLInputElement && maxLength(b) === 1 && TEXT.has(type(b));
    if (!isBox(el)) return null;
    let scope = parentNode(el);
    for (let up = 0; up < 3 && (scope instanceof Element || scope instanceof ShadowRoot); up++) {
      const all = scope instanceof Element ? queryEl(scope, "input") : queryFrag(scope, "input");
      const boxes = Array.from(all).filter(isBox);
      if (boxes.length >= 4 && boxes.length <= 12) return boxes;
      scope = parentNode(scope);
    }
    return null;
  };
  // What el is: {kind, boxes}, boxes set for a split one-time code.
  const classify = (el) => {
    if (!el || el === body(document) || el === docEl(document) || isFrame(el)) return { kind: "none", boxes: null };
    if (!(el instanceof HTMLInputElement)) return { kind: "other", boxes: null };
    const boxes = boxesOf(el);
    if (boxes) return { kind: "one-time-code", boxes };
    const tokens = (attr(el, "autocomplete") || "").toLowerCase().split(/\s+/);
    if (tokens.includes("one-time-code") && TEXT.has(type(el))) return { kind: "one-time-code", boxes: null };
    return { kind: type(el) === "password" ? "password" : "other", boxes: null };
  };
  // Effective opacity along the flat-tree ancestors, opacity() filters
  // included.
  const opacity = (el) => {
    let o = 1;
    for (let e = el; e && o >= 0.1; e = flatParent(e)) {
      const cs = getComputedStyle(e);
      o *= parseFloat(cs.opacity);
      for (const m of cs.filter.matchAll(/opacity\(([\d.]+)(%?)\)/g)) o *= parseFloat(m[1]) / (m[2] ? 100 : 1);
    }
    return o;
  };
  // The alpha of a computed colour ("rgba(0, 0, 0, 0)", "transparent",
  // "color(srgb 0 0 0 / 0)").
  const alpha = (c) => {
    if (c === "transparent") return 0;
    const slash = c.match(/\/\s*([\d.]+)(%?)\s*\)$/);
    if (slash) return parseFloat(slash[1]) / (slash[2] ? 100 : 1);
    const rgba = c.match(/^rgba\((?:[^,]+,){3}\s*([\d.]+)\)$/);
    return rgba ? parseFloat(rgba[1]) : 1;
  };
  // Whether el paints nothing of its own: transparent text, caret, fill,
  // background and border, and no image, shadow or outline.
  const paintsNothing = (el) => {
    const cs = getComputedStyle(el);
    const border = ["Top", "Right", "Bottom", "Left"].every((s) =>
      parseFloat(cs["border" + s + "Width"]) === 0 || alpha(cs["border" + s + "Color"]) < 0.1);
    return alpha(cs.color) < 0.1 && alpha(cs.webkitTextFillColor || cs.color) < 0.1 &&
      alpha(cs.backgroundColor) < 0.1 && cs.backgroundImage === "none" && border &&
      cs.boxShadow === "none" && (cs.outlineStyle === "none" || parseFloat(cs.outlineWidth) === 0);
  };
  // Whether the element hit at (x, y), followed into open shadow roots, is
  // something other than el, its descendants or its labels.
  const covered = (el, x, y) => {
    let hit = docHit(document, x, y);
    for (let i = 0; hit && i < 64; i++) {
      const root = shadowRoot(hit), inner = root && rootHit(root, x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    if (!hit) return true;
    if (hit === el || contains(el, hit)) return false;
    const its = el instanceof HTMLInputElement ? Array.from(labels(el) || []) : [];
    return !its.some((l) => contains(l, hit));
  };
  // Why el cannot take a value, or "" when it can.
  const problem = (el) => {
    if (matches(el, ":disabled")) return "disabled";
    if (el instanceof HTMLInputElement && readOnly(el)) return "readonly";
    const r = rect(el);
    if (!visible(el, { visibilityProperty: true, contentVisibilityAuto: true }) || r.width === 0 || r.height === 0) return "hidden";
    if (r.width < 4 || r.height < 4) return "tiny";
    if (opacity(el) < 0.1 || paintsNothing(el)) return "transparent";
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) return "offscreen";
    return covered(el, x, y) ? "covered" : "";
  };
  const problemAll = (els) => els.map(problem).find((p) => p) || "";
  // This frame's position in the frame tree: the index in its parent's
  // frames at each level, top first; null if it cannot be told.
  const framePath = () => {
    const path = [];
    for (let w = window, i = 0; w !== w.top && i < 32; i++) {
      const p = w.parent;
      let n = 0;
      while (n < p.length && p[n] !== w) n++;
      if (n === p.length) return null;
      path.unshift(n);
      w = p;
    }
    return path;
  };
  const frameIdOf = (el) => {
    const ns = own(globalThis, "browser") || own(globalThis, "chrome");
    try { return ns ? ns.value.runtime.getFrameId(el) : null; } catch { return null; }
  };
  const tokens = () => {
    const d = own(globalThis, KEY);
    if (d && d.value instanceof Map) return d.value;
    const m = new Map();
    Object.defineProperty(globalThis, KEY, { value: m });
    return m;
  };
  const event = (el, name) => dispatch(el, new Event(name, { bubbles: true }));
  // Types text into the focused input as a user would, falling back to the
  // native setter when the page rejected it. Reports whether the input's
  // value has the expected length afterwards.
  const typeInto = (el, text) => {
    try { select(el); } catch { /* inputs without a selection API */ }
    execCommand(document, "insertText", false, text);
    if (valueOf(el).length !== text.length) {
      Reflect.apply(setValue, el, [text]);
      event(el, "input");
      event(el, "change");
    }
    return valueOf(el).length === text.length;
  };

  // Where a submission sends the value (PROTOCOL.md §3, probe's form).
  const originOf = (url) => {
    try {
      const u = new URL(url);
      return u.protocol === "https:" || u.protocol === "http:" ? u.origin : "null";
    } catch { return "null"; }
  };
  const query = (root, sel) => root instanceof Document ? queryDoc(root, sel) : queryFrag(root, sel);
  const isSubmit = (b) => b instanceof HTMLButtonElement ? buttonType(b) === "submit" :
    b instanceof HTMLInputElement && (type(b) === "submit" || type(b) === "image");
  const ownerOf = (c) => c instanceof HTMLButtonElement ? buttonForm(c) : formOf(c);
  // The form's default button: its first submit button in tree order.
  const defaultButton = (form) => Array.from(query(rootNode(form), "button, input")).find((b) => isSubmit(b) && ownerOf(b) === form) || null;
  // An element's target: its own attribute, else the document's <base target>.
  const targetOf = (el) => {
    if (hasAttr(el, "target")) return attr(el, "target");
    const base = Array.from(queryDoc(document, "base[target]"))[0];
    return base ? attr(base, "target") : "";
  };
  const destination = (form, btn) => ({
    action: originOf(btn && hasAttr(btn, "formaction") ? (btn instanceof HTMLButtonElement ? buttonAction : inputAction)(btn) : formAction(form)),
    target: (btn && hasAttr(btn, "formtarget") ? attr(btn, "formtarget") : targetOf(form)).slice(0, 64),
  });
  // The form the field (every box of a split code) belongs to, or null.
  const formInfo = (el, fields) => {
    const form = formOf(el);
    if (!form) return null;
    const btn = defaultButton(form);
    const elsewhere = fields.some((f) => formOf(f) !== form || closest(f, "form") !== form);
    return { ...destination(form, null), submitter: btn ? destination(form, btn) : null, elsewhere };
  };
  const sameForm = (a, b) => {
    const norm = (f) => f ? JSON.stringify([f.action ?? "", f.target ?? "", !!f.elsewhere,
      f.submitter ? [f.submitter.action ?? "", f.submitter.target ?? ""] : null]) : "null";
    return norm(a) === norm(b);
  };

  // watch follows, from just before the insert until the call ends, what the
  // page does with the fields: submit and invalid events, the page starting
  // to leave (then it clears the fields at once), DOM changes.
  const watch = (fields) => {
    const w = { submits: [], invalid: null, left: false, wake: null };
    const roots = [document, ...new Set(fields.map((f) => rootNode(f)).filter((r) => r !== document))];
    // Whatever a field fillgate filled holds now came from the insert.
    const held = (f) => connected(f) && valueOf(f) !== "";
    w.holds = () => fields.some(held);
    w.gone = () => fields.some((f) => !connected(f));
    w.emptied = () => fields.some((f) => connected(f) && valueOf(f) === "");
    w.locked = () => fields.some((f) => matches(f, ":disabled") || readOnly(f));
    // clear empties every field that still holds something, with the
    // events frameworks listen to (the native setter bypasses a controlled
    // input's value tracker, so the component sees the change).
    w.clear = () => {
      let any = false;
      fields.forEach((f) => {
        if (!held(f)) return;
        Reflect.apply(setValue, f, [""]);
        event(f, "input");
        event(f, "change");
        any = true;
      });
      return any;
    };
    const onSubmit = (e) => { if (!w.submits.includes(e)) w.submits.push(e); w.wake?.(); };
    const onInvalid = (e) => { w.invalid ??= evTarget(e); };
    const onLeave = () => { w.left = true; w.clear(); w.wake?.(); };
    const onChange = () => w.wake?.();
    const obs = new MutationObserver(onChange);
    const on = [["submit", onSubmit], ["invalid", onInvalid], ["input", onChange], ["change", onChange]];
    for (const r of roots) {
      for (const [t, f] of on) listen(r, t, f, true);
      obs.observe(r, { subtree: true, childList: true, attributes: true, characterData: true });
    }
    listen(window, "beforeunload", onLeave, true);
    listen(window, "pagehide", onLeave, true);
    // until resolves once cond() holds, the page starts to leave, or ms
    // pass (on a timer the page cannot cancel, unlike setTimeout's ids).
    w.until = (ms, cond) => new Promise((resolve) => {
      const timeout = AbortSignal.timeout(ms);
      const done = () => { unlisten(timeout, "abort", done); w.wake = null; resolve(); };
      listen(timeout, "abort", done);
      w.wake = () => { if (w.left || cond()) done(); };
      w.wake();
    });
    w.stop = () => {
      obs.disconnect();
      for (const r of roots) for (const [t, f] of on) unlisten(r, t, f, true);
      unlisten(window, "beforeunload", onLeave, true);
      unlisten(window, "pagehide", onLeave, true);
    };
    return w;
  };
  const key = (el, t) => dispatch(el, new KeyboardEvent(t, { key: "Enter", code: "Enter", keyCode: 13, which: 13,
    charCode: t === "keypress" ? 13 : 0, bubbles: true, cancelable: true, composed: true }));
  // pressEnter sends Enter to el as synthetic key events, for the page's
  // own handling; true when the page did not cancel it.
  const pressEnter = (el) => {
    const ok = key(el, "keydown") && key(el, "keypress");
    key(el, "keyup");
    return ok;
  };
  const BLOCKING = new Set(["text", "search", "url", "tel", "email", "password", "date", "month", "week", "time", "datetime-local", "number"]);
  // submitForm submits the field's form as a person pressing Enter in it
  // would: a click at the form's default button (which honours formaction,
  // formtarget, formnovalidate and the form's validation, and runs the
  // page's click handlers), or, without one, Enter for the page's own
  // handling and then the browser's implicit submission when the form has
  // at most one text field. A field in no form gets Enter only. It returns
  // the form, or "button_disabled".
  const submitForm = (el, fields) => {
    const form = formOf(el), at = fields.includes(deepActive()) ? deepActive() : fields.at(-1);
    const btn = form && defaultButton(form);
    if (btn && matches(btn, ":disabled")) {
      pressEnter(at); // the page's own Enter handling may still log in
      return "button_disabled";
    }
    if (btn) {
      click(btn);
      return form;
    }
    const blocking = form ? Array.from(query(rootNode(form), "input")).filter((i) => formOf(i) === form && BLOCKING.has(type(i))).length : 2;
    if (pressEnter(at) && blocking <= 1) requestSubmit(form);
    return form;
  };
  // nameOf names a field for the result: its label, aria-label, name or id,
  // never its value (nor any text holding the value).
  const nameOf = (el, value) => {
    const ls = el instanceof HTMLInputElement ? Array.from(labels(el) || []) : [];
    const names = [...ls.map(textOf), attr(el, "aria-label"), attr(el, "name"), attr(el, "id")];
    const name = names.map((n) => (n || "").replace(/\s+/g, " ").trim()).find((n) => n && !n.includes(value))?.slice(0, 60);
    return name || (el instanceof HTMLInputElement ? type(el) : "");
  };
  // afterInsert submits and leaves nothing in the page (PROTOCOL.md §3).
  const afterInsert = async (w, el, fields, kind, matched, form, value) => {
    const stop = (stopped, extra) => ({ submitted: false, navigated: w.left, cleared: w.clear(), stopped, ...extra, remains: w.holds() });
    if (!matched) return stop("not_matched");
    // A code widget may submit by itself once its last box is filled.
    const reacted = () => w.submits.length > 0 || w.gone() || w.emptied() || w.locked();
    if (kind === "one-time-code") await w.until(SELF_MS, reacted);
    const byPage = w.left || reacted();
    let native = false;
    if (!byPage) {
      if (!sameForm(formInfo(el, fields), form)) return stop("form_changed");
      const seen = w.submits.length;
      const ours = submitForm(el, fields);
      if (ours === "button_disabled") {
        const moved = () => w.submits.length > seen || w.gone() || w.emptied();
        await w.until(WAIT_MS, moved);
        if (!w.left && !moved()) return stop("button_disabled");
      }
      const ev = w.submits.slice(seen).find((e) => evTarget(e) === ours);
      if (!ev && w.invalid) return stop("invalid", { stoppedBy: nameOf(w.invalid, value) });
      // A native submission built its entry list inside the click: the
      // value left with it, so clear at once and wait for the navigation.
      native = ev !== undefined && !prevented(ev);
      if (native) w.clear();
    }
    // Give the page its moment: a navigation, the field going away, or the
    // page changing the field (a script login that failed).
    await w.until(WAIT_MS, native ? () => false : () => w.gone() || w.emptied());
    const cleared = w.clear() || native;
    return { submitted: true, navigated: w.left, cleared, remains: w.holds() };
  };

  if (op === "probe") {
    const el = deepActive(), frame = isFrame(el);
    const { kind, boxes } = classify(el);
    const field = { kind, split: boxes ? boxes.length : 0, problem: "" };
    if (kind !== "none") field.problem = problemAll(boxes || [el]);
    let childIndex = -1, childFrame = null;
    if (frame) {
      field.problem = problem(el);
      const w = el instanceof HTMLIFrameElement ? iframeWindow(el) : frameWindow(el);
      for (let n = 0; n < window.length; n++) if (window[n] === w) childIndex = n;
      childFrame = frameIdOf(el);
    }
    if (arg && arg.token && kind !== "none") {
      const m = tokens();
      if (m.size >= 16) m.delete(m.keys().next().value);
      m.set(arg.token, { ref: new WeakRef(el), kind, split: field.split });
    }
    const form = kind === "password" || kind === "one-time-code" ? formInfo(el, boxes || [el]) : null;
    return { origin: location.origin, top: window === window.top, path: framePath(), activeIsFrame: frame, childIndex, childFrame, field, form };
  }
  if (op === "activeFrame") {
    const el = deepActive();
    return isFrame(el) ? el : null;
  }
  if (op === "insert") {
    const no = (reason) => ({ inserted: false, matched: false, reason });
    const value = arg.value;
    arg.value = null;
    if (location.origin !== arg.origin) return no("origin_changed");
    const m = tokens(), saved = m.get(arg.token);
    m.delete(arg.token);
    const el = saved && saved.ref.deref();
    if (!el || !connected(el)) return no("element_gone");
    const { kind, boxes } = classify(el);
    const active = deepActive();
    if (boxes ? !boxes.includes(active) : active !== el) return no("focus_moved");
    if (kind !== arg.kind || kind !== saved.kind || (boxes ? boxes.length : 0) !== saved.split) return no("kind_changed");
    if (problemAll(boxes || [el])) return no("not_usable");
    const fields = boxes || [el];
    if (!sameForm(formInfo(el, fields), arg.form ?? null)) return no("form_changed");
    if (typeof value !== "string" || value === "") return no("insert_failed");
    const parts = boxes ? Array.from(value) : [value];
    if (parts.length !== fields.length) return no("insert_failed");
    // Nothing yields between the checks and the submit: a context that ends
    // during the call ended after the insert.
    const then = arg.then === "none" ? "none" : "submit";
    const w = then === "submit" ? watch(fields) : null;
    let matched = true;
    fields.forEach((f, i) => {
      if (boxes) focus(f);
      matched = typeInto(f, parts[i]) && matched;
    });
    parts.fill("");
    if (!w) return { inserted: true, matched, reason: "", remains: true };
    try {
      return { inserted: true, matched, reason: "", ...await afterInsert(w, el, fields, kind, matched, arg.form ?? null, value) };
    } finally {
      w.stop();
    }
  }
  throw new Error("fillgateInPage: unknown op");
}
