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
  const iframeWindow = getter(HTMLIFrameElement.prototype, "contentWindow");
  const frameWindow = getter(HTMLFrameElement.prototype, "contentWindow");
  const TEXT = new Set(["text", "tel", "number", "password", "search"]);
  const KEY = "fillgate.tokens";

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
    return { origin: location.origin, top: window === window.top, path: framePath(), activeIsFrame: frame, childIndex, childFrame, field };
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
    if (typeof value !== "string" || value === "") return no("insert_failed");
    if (!boxes) return { inserted: true, matched: typeInto(el, value), reason: "" };
    const chars = Array.from(value);
    if (chars.length !== boxes.length) return no("insert_failed");
    let matched = true;
    boxes.forEach((b, i) => {
      focus(b);
      matched = typeInto(b, chars[i]) && matched;
    });
    return { inserted: true, matched, reason: "" };
  }
  throw new Error("fillgateInPage: unknown op");
}
