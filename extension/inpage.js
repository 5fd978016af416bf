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
// Arguments after arg are closed shadow roots the CDP caller resolved on
// the way to the focused element (the extension reaches them through its
// own APIs). See PROTOCOL.md, section 3.
async function fillgateInPage(op, arg) {
  "use strict";
  const roots = Array.prototype.slice.call(arguments, 2);
  const own = (o, k) => Object.getOwnPropertyDescriptor(o, k);
  const getter = (proto, k) => { const g = own(proto, k).get; return (o) => Reflect.apply(g, o, []); };
  const method = (proto, k) => { const f = own(proto, k).value; return (o, ...a) => Reflect.apply(f, o, a); };
  const I = HTMLInputElement.prototype, E = Element.prototype, N = Node.prototype;
  const docActive = getter(Document.prototype, "activeElement");
  const rootActive = getter(ShadowRoot.prototype, "activeElement");
  const docHits = method(Document.prototype, "elementsFromPoint");
  const rootHits = method(ShadowRoot.prototype, "elementsFromPoint");
  const execCommand = method(Document.prototype, "execCommand");
  const shadowRoot = getter(E, "shadowRoot"), hostOf = getter(ShadowRoot.prototype, "host");
  const assignedSlot = getter(E, "assignedSlot"), parentNode = getter(N, "parentNode");
  const rootNode = method(N, "getRootNode"), slotted = method(HTMLSlotElement.prototype, "assignedElements");
  const connected = getter(N, "isConnected"), contains = method(N, "contains"), childNodes = getter(N, "childNodes");
  const textOf = getter(CharacterData.prototype, "data"), createRange = method(Document.prototype, "createRange");
  const selectContents = method(Range.prototype, "selectNodeContents"), rangeRects = method(Range.prototype, "getClientRects");
  const position = method(N, "compareDocumentPosition");
  const matches = method(E, "matches"), attr = method(E, "getAttribute"), localName = getter(E, "localName");
  const rect = method(E, "getBoundingClientRect"), visible = method(E, "checkVisibility");
  const offsetWidth = getter(HTMLElement.prototype, "offsetWidth"), offsetHeight = getter(HTMLElement.prototype, "offsetHeight");
  const clientWidth = getter(E, "clientWidth"), clientHeight = getter(E, "clientHeight");
  const queryEl = method(E, "querySelectorAll"), queryFrag = method(DocumentFragment.prototype, "querySelectorAll");
  const queryDoc = method(Document.prototype, "querySelectorAll"), visibility = getter(Document.prototype, "visibilityState");
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
  const hasAttr = method(E, "hasAttribute"), closest = method(E, "closest"), textContent = getter(N, "textContent");
  const listen = method(EventTarget.prototype, "addEventListener"), unlisten = method(EventTarget.prototype, "removeEventListener");
  const evTarget = getter(Event.prototype, "target"), prevented = getter(Event.prototype, "defaultPrevented");
  const current = getter(Event.prototype, "currentTarget");
  const attrNames = method(E, "getAttributeNames"), phase = getter(Event.prototype, "eventPhase");
  const submitter = getter(SubmitEvent.prototype, "submitter"), formDataOf = getter(FormDataEvent.prototype, "formData");
  const submitterOf = (e) => e instanceof SubmitEvent ? submitter(e) : null;
  // FormData's forEach, not its iterators: through Firefox's Xray
  // wrappers (content scripts) the iterators yield nothing.
  const dataEach = method(FormData.prototype, "forEach"), dataDelete = method(FormData.prototype, "delete");
  const halt = (own(window, "stop") || own(Window.prototype, "stop") || {}).value;
  const iframeWindow = getter(HTMLIFrameElement.prototype, "contentWindow");
  const frameWindow = getter(HTMLFrameElement.prototype, "contentWindow");
  const TEXT = new Set(["text", "tel", "number", "password", "search"]);
  const KEY = "fillgate.tokens";
  // After the insert (then submit): how long a one-time-code widget may take
  // to submit by itself, and how long the page may take to navigate, drop
  // the field or change it after the submit before fillgate clears it.
  const SELF_MS = 400, WAIT_MS = 1000;

  // Shadow roots, open or closed. The extension reaches closed ones with the
  // APIs made for it, in this isolated world: chrome.dom in Chromium,
  // Element.openOrClosedShadowRoot in Firefox's content scripts. The CDP
  // path has neither; its caller passes the closed roots it resolved.
  const extDom = ((own(globalThis, "browser") || own(globalThis, "chrome") || {}).value || {}).dom;
  const ffRoot = own(E, "openOrClosedShadowRoot"), ffSlot = own(E, "openOrClosedAssignedSlot");
  const passed = new Map();
  for (const r of roots) if (r instanceof ShadowRoot) passed.set(hostOf(r), r);
  const reachesClosed = Boolean(ffRoot || (extDom && extDom.openOrClosedShadowRoot));
  const shadowOf = (el) => {
    if (!(el instanceof HTMLElement)) return null;
    if (ffRoot) return Reflect.apply(ffRoot.get, el, []);
    if (reachesClosed) return extDom.openOrClosedShadowRoot(el);
    return shadowRoot(el) || passed.get(el) || null;
  };
  // The focused element, followed through shadow roots.
  const deepActive = () => {
    let el = docActive(document);
    for (let i = 0; el && i < 64; i++) {
      const root = shadowOf(el), inner = root && rootActive(root);
      if (!inner) break;
      el = inner;
    }
    return el;
  };
  // Whether el holds the focus in a shadow root this call cannot reach: a
  // possible shadow host (a custom element or one of the tags that may have
  // one) that matches :focus, as a host does while focus is inside it. Only
  // the CDP path asks; its caller then resolves the closed root.
  const HOSTS = new Set("article aside blockquote body div footer h1 h2 h3 h4 h5 h6 header main nav p section span".split(" "));
  const closedHost = (el) => !reachesClosed && el instanceof HTMLElement && !shadowOf(el) &&
    (localName(el).includes("-") || HOSTS.has(localName(el))) && matches(el, ":focus");
  const isFrame = (el) => el instanceof HTMLIFrameElement || el instanceof HTMLFrameElement;
  // The flat-tree parent: the slot an element is assigned to (in an open or
  // a closed shadow root), its parent element, or the host of the shadow
  // root it sits in.
  const flatParent = (el) => {
    let p = assignedSlot(el) || (ffSlot ? Reflect.apply(ffSlot.get, el, []) : null);
    if (!p) {
      p = parentNode(el);
      const closed = p instanceof HTMLElement && !shadowRoot(p) && shadowOf(p);
      if (closed) p = Array.from(queryFrag(closed, "slot")).find((s) => slotted(s).includes(el)) || p;
    }
    return p instanceof ShadowRoot ? hostOf(p) : p instanceof Element ? p : null;
  };
  // el and its flat-tree ancestors, el first.
  const lineage = (el) => {
    const out = [];
    for (let e = el; e && out.length < 512; e = flatParent(e)) out.push(e);
    return out;
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
  // ---- What a person sees of an element (problem codes: PROTOCOL.md
  // section 2). Layers of checks, cheapest first: the element's state and
  // box; the styles of it and its flat-tree ancestors (opacity, masks, clip
  // paths, filters, blending, colours); hit tests at points spread over the
  // part a person reads (its content box); then, for what hit tests cannot
  // see (layers with pointer-events: none, box-shadow and outline drawn
  // over it), Chromium's IntersectionObserver v2 and a scan of what paints
  // over that box, with the CSS painting order told from styles.
  const num = (v) => parseFloat(v) || 0;
  const styles = new Map();
  const style = (e) => {
    let cs = styles.get(e);
    if (!cs) styles.set(e, (cs = getComputedStyle(e)));
    return cs;
  };
  const none = (v) => !v || v === "none";
  // A computed colour as [r, g, b, alpha], or null when it is not rgb().
  const rgba = (c) => {
    if (c === "transparent") return [0, 0, 0, 0];
    const m = c.match(/^rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)$/);
    return m ? [num(m[1]), num(m[2]), num(m[3]), m[4] === undefined ? 1 : num(m[4])] : null;
  };
  // The alpha of a computed colour (rgb(), transparent, "color(srgb 0 0 0 / 0)").
  const alpha = (c) => {
    const v = rgba(c);
    if (v) return v[3];
    const slash = c.match(/\/\s*([\d.]+)(%?)\s*\)$/);
    return slash ? num(slash[1]) / (slash[2] ? 100 : 1) : 1;
  };
  const luminance = (c) => {
    const lin = (v) => (v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    return 0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2]);
  };
  const contrast = (a, b) => {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  };
  // The top-level functions of a computed filter or shadow list: [name, argument].
  const calls = (v) => {
    const out = [];
    let depth = 0, start = 0, name = "";
    for (let i = 0; i < v.length; i++) {
      if (v[i] === "(" && depth++ === 0) {
        name = v.slice(start, i).trim();
        start = i + 1;
      } else if (v[i] === ")" && --depth === 0) {
        out.push([name, v.slice(start, i)]);
        start = i + 1;
      }
    }
    return out;
  };
  const amount = (a) => {
    const m = a.match(/^\s*([\d.]+)(%?)/);
    return m ? num(m[1]) / (m[2] ? 100 : 1) : 1;
  };
  // Whether a computed transform is more than a translation and an even
  // scale up (what IntersectionObserver v2 tolerates).
  const distorts = (t) => {
    if (none(t)) return false;
    const m = t.match(/^matrix\(([^)]*)\)$/);
    const [a, b, c, d] = m ? m[1].split(",").map(num) : [0, 1, 1, 0];
    return b !== 0 || c !== 0 || a !== d || a < 1;
  };

  // Why the styles of el and its ancestors keep it from being seen, or "";
  // effects: whether any effect that IntersectionObserver v2 counts against
  // visibility was found (opacity, filters, distorting transforms).
  const styleProblem = (el, found) => {
    let o = 1, light = 1, dark = 1;
    for (const e of lineage(el)) {
      const cs = style(e);
      o *= num(cs.opacity);
      if (!none(cs.mixBlendMode) && cs.mixBlendMode !== "normal") return "blended";
      if ([cs.maskImage, cs.webkitMaskImage, cs.webkitMaskBoxImageSource, cs.maskBorderSource].some((m) => !none(m))) return "masked";
      if (!none(cs.clipPath) || (!none(cs.clip) && cs.clip !== "auto" && /^(absolute|fixed)$/.test(cs.position))) return "clipped";
      for (const [f, a] of calls(cs.filter)) {
        if (f === "url") return "filtered";
        if (f === "blur" && num(a) > 2) return "blurred";
        if (f === "invert" && Math.abs(amount(a) - 0.5) < 0.3) return "filtered";
        if (f === "opacity") o *= amount(a);
        if (f === "brightness") light *= amount(a);
        if (f === "contrast") dark *= amount(a);
      }
      if (o < 1 || !none(cs.filter) || distorts(cs.transform) || [cs.scale, cs.rotate].some((v) => !none(v))) found.effects = true;
    }
    if (o < 0.5) return "transparent";
    return light < 0.3 || light > 3 || dark < 0.3 ? "filtered" : "";
  };

  // Whether a field shows its value: text not transparent, and not the
  // colour of what is behind it.
  const textProblem = (el) => {
    const cs = style(el), fill = cs.webkitTextFillColor || cs.color;
    if (alpha(fill) < 0.1) return "unreadable";
    const fg = rgba(fill);
    for (const e of lineage(el)) {
      const bs = style(e);
      if (!none(bs.backgroundImage)) return "";
      const bg = rgba(bs.backgroundColor);
      if (!bg) return "";
      if (bg[3] >= 0.9) return fg && contrast(fg, bg) < 1.25 ? "unreadable" : "";
    }
    return "";
  };

  // Whether el paints nothing of its own: transparent text, caret, fill,
  // background and border, and no image, shadow or outline.
  const paintsNothing = (el) => {
    const cs = style(el);
    const border = ["Top", "Right", "Bottom", "Left"].every((s) =>
      num(cs["border" + s + "Width"]) === 0 || alpha(cs["border" + s + "Color"]) < 0.1);
    return alpha(cs.color) < 0.1 && alpha(cs.webkitTextFillColor || cs.color) < 0.1 &&
      alpha(cs.backgroundColor) < 0.1 && none(cs.backgroundImage) && border &&
      none(cs.boxShadow) && (cs.outlineStyle === "none" || num(cs.outlineWidth) === 0);
  };

  // The box a person reads el in, in viewport coordinates: a frame's
  // content box, or the line a field's text is centred on in its content
  // box. rtl when text starts on the right; sx, sy: el's scale on screen.
  const coreOf = (el, r) => {
    const cs = style(el);
    const sx = offsetWidth(el) ? r.width / offsetWidth(el) : 1, sy = offsetHeight(el) ? r.height / offsetHeight(el) : 1;
    const c = {
      left: r.left + (num(cs.borderLeftWidth) + num(cs.paddingLeft)) * sx,
      right: r.right - (num(cs.borderRightWidth) + num(cs.paddingRight)) * sx,
      top: r.top + (num(cs.borderTopWidth) + num(cs.paddingTop)) * sy,
      bottom: r.bottom - (num(cs.borderBottomWidth) + num(cs.paddingBottom)) * sy,
      rtl: cs.direction === "rtl", sx, sy,
    };
    if (c.right - c.left < 2 || c.bottom - c.top < 2) Object.assign(c, { left: r.left, right: r.right, top: r.top, bottom: r.bottom });
    const line = (cs.lineHeight === "normal" ? 1.2 * num(cs.fontSize) : num(cs.lineHeight)) * sy, mid = (c.top + c.bottom) / 2;
    if (!isFrame(el) && line > 0 && line < c.bottom - c.top) Object.assign(c, { top: mid - line / 2, bottom: mid + line / 2 });
    return c;
  };
  // The end of the content box (its last fifth on the side text ends),
  // where show-password buttons and password-manager icons sit: painting
  // there is tolerated.
  const endFrom = (c) => c.rtl ? c.left + (c.right - c.left) * 0.2 : c.right - (c.right - c.left) * 0.2;
  const inEnd = (c, x) => c.rtl ? x <= endFrom(c) : x >= endFrom(c);
  const box = (r) => ({ left: r.left, right: r.right, top: r.top, bottom: r.bottom });
  const touches = (a, b) => Math.max(a.left, b.left) < Math.min(a.right, b.right) && Math.max(a.top, b.top) < Math.min(a.bottom, b.bottom);
  // Whether rectangle r paints over core c outside its end (by more than a
  // sliver of 2px).
  const meets = (r, c) => {
    const left = Math.max(r.left, c.left), right = Math.min(r.right, c.right);
    if (right - left <= 2 || Math.min(r.bottom, c.bottom) - Math.max(r.top, c.top) <= 2) return false;
    return c.rtl ? right > endFrom(c) : left < endFrom(c);
  };

  // Hit tests at 15 points of the line a field's text is on (a frame's
  // content box), in the document and in each shadow tree el sits in:
  // nothing that paints there may be above el (its own labels are not el),
  // except at the end.
  const COLS = [0.1, 0.3, 0.5, 0.7, 0.9], ROWS = [0.25, 0.5, 0.75];
  const hitProblem = (el, c) => {
    const named = labelsOf(el);
    const paintsAt = (h, target, x, y) => !contains(target, h) &&
      paintedBy(h, style(h), box(rect(h)), false, true, named).some((p) => p.left <= x && x <= p.right && p.top <= y && y <= p.bottom);
    if (style(el).pointerEvents === "none") return "unclickable";
    const levels = [];
    for (let e = el; e && levels.length < 64; ) {
      const root = rootNode(e);
      levels.unshift([root, e]);
      e = root instanceof ShadowRoot ? hostOf(root) : null;
    }
    const width = Math.min(innerWidth, clientWidth(docEl(document)) || innerWidth);
    const height = Math.min(innerHeight, clientHeight(docEl(document)) || innerHeight);
    for (const fy of ROWS) for (const fx of COLS) {
      const x = c.left + (c.right - c.left) * fx, y = c.top + (c.bottom - c.top) * fy;
      if (x < 0 || y < 0 || x >= width || y >= height) return "offscreen";
      for (const [scope, target] of levels) {
        const stack = scope instanceof ShadowRoot ? rootHits(scope, x, y) : docHits(scope, x, y);
        const i = stack.indexOf(target);
        if (i < 0) return "clipped";
        if (!inEnd(c, x) && stack.slice(0, i).some((h) => paintsAt(h, target, x, y))) return "covered";
      }
    }
    return "";
  };

  // The rectangles an element with style cs and border box b paints
  // opaquely: its fill (background, image, replaced content, backdrop
  // filter), borders, box-shadows and outline.
  const REPLACED = new Set("img video canvas iframe frame embed object svg picture".split(" "));
  const opaque = (c) => alpha(c) >= 0.5;
  const grow = (b, d) => ({ left: b.left - d, right: b.right + d, top: b.top - d, bottom: b.bottom + d });
  const ring = (outer, inner) => inner.right <= inner.left || inner.bottom <= inner.top ? [outer] : [
    { ...outer, bottom: inner.top }, { ...outer, top: inner.bottom },
    { ...outer, right: inner.left }, { ...outer, left: inner.right }];
  const paints = (cs, b, name) => {
    const out = [];
    if (opaque(cs.backgroundColor) || !none(cs.backgroundImage) || REPLACED.has(name) || !none(cs.backdropFilter)) out.push(b);
    const w = (s) => opaque(cs["border" + s + "Color"]) && cs["border" + s + "Style"] !== "none" ? num(cs["border" + s + "Width"]) : 0;
    const [bt, br, bb, bl] = ["Top", "Right", "Bottom", "Left"].map(w);
    if (bt || br || bb || bl) out.push(...ring(b, { left: b.left + bl, right: b.right - br, top: b.top + bt, bottom: b.bottom - bb }));
    if (!none(cs.boxShadow)) {
      for (const shadow of cs.boxShadow.split(/,(?![^(]*\))/)) {
        const color = (shadow.match(/(rgba?|color|hsla?|oklch|oklab|lab|lch)\([^)]*\)/) || ["rgb(0, 0, 0)"])[0];
        const [x, y, , spread] = shadow.replace(color, "").match(/-?[\d.]+px/g)?.map(num) || [];
        if (!opaque(color) || x === undefined) continue;
        const s = { left: b.left + x - (spread || 0), right: b.right + x + (spread || 0), top: b.top + (y || 0) - (spread || 0), bottom: b.bottom + (y || 0) + (spread || 0) };
        if (!/inset/.test(shadow)) out.push(s);
        else out.push(...ring(b, { left: s.left + 2 * (spread || 0), right: s.right - 2 * (spread || 0), top: s.top + 2 * (spread || 0), bottom: s.bottom - 2 * (spread || 0) }));
      }
    }
    return out.concat(outline(cs, b));
  };
  const outline = (cs, b) => {
    const w = num(cs.outlineWidth), off = num(cs.outlineOffset);
    return cs.outlineStyle !== "none" && w > 0 && opaque(cs.outlineColor) ? ring(grow(b, off + w), grow(b, off)) : [];
  };
  // The line boxes of an element's own text, when its colour shows.
  let range = null;
  const glyphs = (e, cs) => {
    const out = [];
    if (!opaque(cs.webkitTextFillColor || cs.color)) return out;
    for (const n of childNodes(e)) {
      if (!(n instanceof Text) || !/\S/.test(textOf(n))) continue;
      range = range || createRange(document);
      selectContents(range, n);
      for (const r of rangeRects(range)) out.push(box(r));
    }
    return out;
  };
  // The border box of an element's ::before or ::after, as far as styles
  // tell it: a positioned one from its containing block (scaled as that
  // block is on screen), else its owner's box.
  const pseudoBox = (e, ps, b) => {
    if (!/^(absolute|fixed)$/.test(ps.position)) return b;
    let cb = { left: 0, top: 0, right: innerWidth, bottom: innerHeight }, sx = 1, sy = 1;
    if (ps.position === "absolute") {
      const anchor = lineage(e).find((a) => style(a).position !== "static" || !none(style(a).transform));
      cb = anchor ? box(rect(anchor)) : { left: -scrollX, top: -scrollY, right: innerWidth - scrollX, bottom: innerHeight - scrollY };
      if (anchor instanceof HTMLElement && offsetWidth(anchor) && offsetHeight(anchor)) {
        [sx, sy] = [(cb.right - cb.left) / offsetWidth(anchor), (cb.bottom - cb.top) / offsetHeight(anchor)];
      }
    }
    const edge = (s) => num(ps["padding" + s]) + num(ps["border" + s + "Width"]);
    const width = /px$/.test(ps.width) ? (num(ps.width) + edge("Left") + edge("Right")) * sx : cb.right - cb.left;
    const height = /px$/.test(ps.height) ? (num(ps.height) + edge("Top") + edge("Bottom")) * sy : cb.bottom - cb.top;
    const left = ps.left !== "auto" ? cb.left + num(ps.left) * sx : ps.right !== "auto" ? cb.right - num(ps.right) * sx - width : cb.left;
    const top = ps.top !== "auto" ? cb.top + num(ps.top) * sy : ps.bottom !== "auto" ? cb.bottom - num(ps.bottom) * sy - height : cb.top;
    return { left, top, right: left + width, bottom: top + height };
  };

  // Painting order, as far as styles tell it. layer: where the branch of
  // the tree below a common ancestor paints in that ancestor's stacking
  // context: its z-index, 0 for positioned boxes and other stacking
  // contexts, FLOW for ordinary boxes (above negative z-indexes, below the rest).
  const FLOW = -0.5;
  const stacks = (cs) => num(cs.opacity) < 1 || !none(cs.transform) || !none(cs.filter) || cs.isolation === "isolate" ||
    (!none(cs.mixBlendMode) && cs.mixBlendMode !== "normal") || /fixed|sticky/.test(cs.position) || /paint|strict|content/.test(cs.contain) ||
    /transform|opacity|filter/.test(cs.willChange) || !none(cs.clipPath) || [cs.scale, cs.rotate, cs.translate, cs.backdropFilter].some((v) => !none(v));
  const layer = (branch) => {
    let k = FLOW;
    for (const x of branch) {
      const cs = style(x), z = cs.zIndex === "auto" ? null : parseInt(cs.zIndex, 10);
      const parent = flatParent(x), item = parent && /flex|grid/.test(style(parent).display);
      if (z !== null && (cs.position !== "static" || item)) return z;
      if (stacks(cs)) return k === FLOW ? 0 : k;
      if (cs.position !== "static") k = 0;
    }
    return k;
  };
  let topLayer = ":modal, :popover-open, :fullscreen";
  try { matches(docEl(document), topLayer); } catch { topLayer = ":modal"; }
  // Whether e paints above t (neither holds the other): the top layer first,
  // then the layers of their nearest common ancestor, then tree order.
  const above = (e, t) => {
    const le = lineage(e), lt = lineage(t);
    const top = (l) => l.findLast((x) => matches(x, topLayer)) || null;
    const [te, tt] = [top(le), top(lt)];
    if (te !== tt) return te !== null;
    const common = new Set(lt), i = le.findIndex((x) => common.has(x)), j = lt.indexOf(le[i]);
    if (i <= 0 || j <= 0) return true;
    const ke = layer(le.slice(0, i).reverse()), kt = layer(lt.slice(0, j).reverse());
    if (ke !== kt) return ke > kt;
    return (position(lt[j - 1], le[i - 1]) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0;
  };

  // Every element of the document and of the shadow trees this call
  // reaches.
  const everyElement = function* () {
    const scopes = [document];
    while (scopes.length) {
      const scope = scopes.pop();
      for (const e of scope instanceof ShadowRoot ? queryFrag(scope, "*") : queryDoc(scope, "*")) {
        yield e;
        const r = shadowOf(e);
        if (r) scopes.push(r);
      }
    }
  };
  const SHOWN = { opacityProperty: true, visibilityProperty: true, contentVisibilityAuto: true };
  const labelsOf = (el) => new Set(el instanceof HTMLInputElement ? labels(el) || [] : []);
  // What e (style cs, border box b) paints opaquely: its fill, borders,
  // shadows and outline, its own text when it touches el (near) and is
  // not one of el's labels (named: a floating label rests on an empty
  // field as a placeholder does), and its ::before and ::after when it is
  // positioned or near. For an ancestor of el (kin), only what paints
  // above el: its outline and positioned ::before and ::after.
  const paintedBy = (e, cs, b, kin, near, named) => {
    let over = kin ? outline(cs, b) : near ? paints(cs, b, localName(e)).concat(named.has(e) ? [] : glyphs(e, cs)) : paints(cs, b, "");
    for (const which of kin || near || cs.position !== "static" ? ["::before", "::after"] : []) {
      const ps = getComputedStyle(e, which);
      if (none(ps.content) || ps.content === "normal" || (kin && !/^(absolute|fixed)$/.test(ps.position))) continue;
      over = over.concat(paints(ps, pseudoBox(e, ps, b), /^url\(/.test(ps.content) ? "img" : ""));
    }
    return over;
  };
  // What paints opaquely over el's text line c (outside its end), whether
  // hit tests see it or not (paintedBy), and is above el. found.overlaps
  // counts whatever touches el's box, harmless or not.
  const scanProblem = (el, c, found) => {
    const r = box(rect(el)), mine = new Set(lineage(el)), named = labelsOf(el);
    for (const e of everyElement()) {
      if (e === el || contains(el, e) || (e instanceof SVGElement && !(e instanceof SVGSVGElement))) continue;
      const cs = style(e), b = box(rect(e)), kin = mine.has(e), near = !kin && touches(b, r);
      if (!kin && !near && none(cs.boxShadow) && cs.outlineStyle === "none" && cs.position === "static") continue;
      const over = paintedBy(e, cs, b, kin, near, named);
      if (!(near || over.some((p) => touches(p, r))) || !visible(e, SHOWN)) continue;
      found.overlaps++;
      if (over.some((p) => meets(p, c)) && (kin || above(e, el))) return "covered";
    }
    return "";
  };

  // Chromium's IntersectionObserver v2: whether each element is visible,
  // from the first notification; null where the browser lacks it. A shown
  // page renders a frame long before two seconds pass; if none came, every
  // element counts as not visible, and the scan must explain it.
  const observe = (els) => {
    let cancel = () => {};
    const seen = new Promise((resolve) => {
      if (!("isVisible" in IntersectionObserverEntry.prototype)) return resolve(null);
      const got = new Map();
      const io = new IntersectionObserver((entries) => {
        for (const en of entries) got.set(en.target, en.isVisible);
        if (got.size === els.length) cancel(els.map((e) => got.get(e)));
      }, { trackVisibility: true, delay: 100 });
      const timer = setTimeout(() => cancel(els.map(() => false)), 2000);
      cancel = (v) => { io.disconnect(); clearTimeout(timer); resolve(v); };
      els.forEach((e) => io.observe(e));
    });
    return { seen, cancel: () => cancel(null) };
  };

  // Whether the page is shown (not a background tab or a minimised
  // window). With wait, a tab the caller just brought to the front gets up
  // to three seconds to be shown.
  const shown = (wait) => new Promise((resolve) => {
    const done = () => {
      removeEventListener("visibilitychange", check);
      clearTimeout(timer);
      resolve(visibility(document) === "visible");
    };
    const check = () => visibility(document) === "visible" && done();
    const timer = wait ? setTimeout(done, 3000) : 0;
    addEventListener("visibilitychange", check);
    if (!wait || visibility(document) === "visible") done();
  });

  // Why el cannot take a value (or, for a frame element, why its page
  // cannot be seen), from everything but the observer and the scan; "" when
  // nothing was found.
  const quickProblem = (el, found) => {
    if (matches(el, ":disabled")) return "disabled";
    if (el instanceof HTMLInputElement && readOnly(el)) return "readonly";
    const r = rect(el);
    if (visibility(document) !== "visible") return "background";
    if (!visible(el, { visibilityProperty: true, contentVisibilityAuto: true }) || r.width === 0 || r.height === 0) return "hidden";
    if (r.width < 4 || r.height < 4) return "tiny";
    const c = coreOf(el, r);
    if (isFrame(el) ? c.sx < 0.6 || c.sy < 0.6 : num(style(el).fontSize) * c.sy < 6) return "tiny";
    if (!isFrame(el) && paintsNothing(el)) return "transparent";
    return styleProblem(el, found) || (isFrame(el) ? "" : textProblem(el)) || hitProblem(el, c);
  };
  // Why some of els cannot take a value, or "". The observer runs while
  // the other checks do; a refusal they decide does not wait for it. An
  // insert runs them again once the observer answered (the observer's
  // answer is the frame last painted; they see what the page did since).
  // Where the observer says "not visible" (or cannot say, as in Firefox),
  // the scan decides. Chromium's "not visible" with no overlap or effect
  // found to explain it is a refusal.
  const problemAll = async (els) => {
    if (!(await shown(op === "insert" || Boolean(arg && arg.shown)))) return "background";
    const io = observe(els), found = els.map(() => ({ effects: false, overlaps: 0 }));
    for (let i = 0; i < els.length; i++) {
      const p = quickProblem(els[i], found[i]);
      if (p) {
        io.cancel();
        return p;
      }
    }
    const seen = await io.seen;
    styles.clear();
    for (let i = 0; i < els.length; i++) {
      const p = op === "insert" ? quickProblem(els[i], found[i]) : "";
      if (p) return p;
      if (seen && seen[i]) continue;
      const q = scanProblem(els[i], coreOf(els[i], rect(els[i])), found[i]);
      if (q) return q;
      if (seen && !found[i].effects && !found[i].overlaps) return "covered";
    }
    return "";
  };
  const problem = (el) => problemAll([el]);
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
  // The method a submission by btn (null: the form itself) names: the
  // button's formmethod, else the form's method, as "get", "post" or
  // "dialog" (ASCII case-insensitive); "" when it names none or one HTML
  // does not know, which HTML submits with GET.
  const METHOD = /^(get|post|dialog)$/i;
  const methodOf = (form, btn) => {
    const m = (btn && hasAttr(btn, "formmethod") ? attr(btn, "formmethod") : attr(form, "method")) || "";
    return METHOD.test(m) ? m.toLowerCase() : "";
  };
  // Whether script may take a submit in the form's document: a script
  // element, or an inline event handler (onsubmit=, onclick=, ...).
  const scripted = (form) => [document, rootNode(form)].some((r) => query(r, "script").length > 0) ||
    Array.from(queryDoc(document, "*")).some((e) => attrNames(e).some((n) => n.startsWith("on")));
  // The method the probe reports (PROTOCOL.md §3, probe's form). A form
  // that names none submits with GET unless a script takes the submit
  // (most single-page apps: no method, a submit handler that cancels it
  // and logs in with fetch). In a document without script nothing can, so
  // it is "get" there, refused before anything is asked; elsewhere it is
  // "", and fillgate's own submit keeps the value out of the URL (watch).
  const reportedMethod = (form, btn, bare) => methodOf(form, btn) || (bare() ? "get" : "");
  const destination = (form, btn, bare) => ({
    action: originOf(btn && hasAttr(btn, "formaction") ? (btn instanceof HTMLButtonElement ? buttonAction : inputAction)(btn) : formAction(form)),
    target: (btn && hasAttr(btn, "formtarget") ? attr(btn, "formtarget") : targetOf(form)).slice(0, 64),
    method: reportedMethod(form, btn, bare),
  });
  // The form the field (every box of a split code) belongs to, or null.
  const formInfo = (el, fields) => {
    const form = formOf(el);
    if (!form) return null;
    const btn = defaultButton(form);
    const elsewhere = fields.some((f) => formOf(f) !== form || closest(f, "form") !== form);
    let seen;
    const bare = () => (seen ??= !scripted(form));
    return { ...destination(form, null, bare), submitter: btn ? destination(form, btn, bare) : null, elsewhere };
  };
  // The account the field's form shows (PROTOCOL.md §3, probe's account):
  // the nearest field before it in its form that holds a user name (its
  // autocomplete says username or email, or it is type=email, or its name
  // or id looks like one), else a hidden input with autocomplete=username.
  // Never the value of a password or one-time-code field; at most 256
  // bytes of printable text, else nothing.
  const USERNAME = /user|e-?mail|login|account|identifier/i;
  const accountOf = (el, fields) => {
    const form = formOf(el);
    if (!form) return "";
    const inputs = Array.from(query(rootNode(form), "input")).filter((i) => formOf(i) === form && !fields.includes(i));
    const auto = (i) => (attr(i, "autocomplete") || "").toLowerCase().split(/\s+/);
    const secret = (i) => type(i) === "password" || classify(i).kind !== "other" || auto(i).some((t) => t.endsWith("password"));
    const before = inputs.filter((i) => position(i, fields[0]) & Node.DOCUMENT_POSITION_FOLLOWING).reverse();
    const shown = before.filter((i) => (TEXT.has(type(i)) || type(i) === "email") && !secret(i));
    const named = (i) => USERNAME.test(attr(i, "name") || "") || USERNAME.test(attr(i, "id") || "");
    const found = shown.find((i) => auto(i).some((t) => t === "username" || t === "email")) ||
      shown.find((i) => type(i) === "email") || shown.find(named) ||
      inputs.find((i) => type(i) === "hidden" && auto(i).includes("username"));
    if (!found) return "";
    const v = valueOf(found).trim();
    return v && !/\p{C}/u.test(v) && new TextEncoder().encode(v).length <= 256 ? v : "";
  };
  const sameForm = (a, b) => {
    const dest = (d) => [d.action ?? "", d.target ?? "", d.method ?? ""];
    const norm = (f) => f ? JSON.stringify([...dest(f), !!f.elsewhere, f.submitter ? dest(f.submitter) : null]) : "null";
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
    // passed holds the submit events that reached their last listener:
    // ours, added again while each is on its way, where it ends (the
    // window, or the shadow root it cannot leave). Chromium builds a
    // submission's entry list once the dispatch is over (eventPhase 0),
    // Firefox while the event is still at the form.
    const passed = new WeakSet(), onPassed = (e) => passed.add(e);
    const onSubmit = (e) => {
      if (!w.submits.includes(e)) w.submits.push(e);
      const end = current(e) === document ? window : current(e);
      unlisten(end, "submit", onPassed);
      listen(end, "submit", onPassed);
      w.wake?.();
    };
    const onInvalid = (e) => { w.invalid ??= evTarget(e); };
    const onLeave = () => { w.left = true; w.clear(); w.wake?.(); };
    const onChange = () => w.wake?.();
    // A native submission of a field's form with GET (a method the form
    // does not name, or one a page handler changed) builds its entry list
    // after a submit event that passed and was not cancelled: empty it, so
    // nothing of the form goes into the URL. A FormData the page's script
    // builds (in its submit handler, or after cancelling the submit) is
    // left alone.
    const onFormData = (e) => {
      const form = evTarget(e), last = w.submits.findLast((s) => evTarget(s) === form);
      if (!(e instanceof FormDataEvent) || !fields.some((f) => formOf(f) === form)) return;
      if (!last || !(passed.has(last) || phase(last) === Event.NONE) || prevented(last)) return;
      if ((methodOf(form, submitterOf(last)) || "get") !== "get") return;
      const data = formDataOf(e), names = [];
      dataEach(data, (v, k) => names.push(k));
      for (const k of names) dataDelete(data, k);
      w.urlBlocked = true;
    };
    // mutations counts the page's DOM changes (a spinner, an error text,
    // the form going away): a reaction to an Enter-only submit.
    w.mutations = 0;
    const obs = new MutationObserver((records) => { w.mutations += records.length; onChange(); });
    // changes is mutations with the changes not yet delivered counted in.
    w.changes = () => (w.mutations += obs.takeRecords().length);
    const on = [["submit", onSubmit], ["invalid", onInvalid], ["formdata", onFormData], ["input", onChange], ["change", onChange]];
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
      for (const r of [window, ...roots]) unlisten(r, "submit", onPassed);
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
  // the form (null for none), and why only Enter was sent ("" when the
  // form was submitted): "button_disabled", or "no_submit" (no button, and
  // no implicit submission: more than one text field, no form, or the
  // page cancelled the Enter).
  const submitForm = (el, fields) => {
    const form = formOf(el), at = fields.includes(deepActive()) ? deepActive() : fields.at(-1);
    const btn = form && defaultButton(form);
    if (btn && matches(btn, ":disabled")) {
      pressEnter(at); // the page's own Enter handling may still log in
      return { form, only: "button_disabled" };
    }
    if (btn) {
      click(btn);
      return { form, only: "" };
    }
    const blocking = form ? Array.from(query(rootNode(form), "input")).filter((i) => formOf(i) === form && BLOCKING.has(type(i))).length : 2;
    if (!pressEnter(at) || blocking > 1) return { form, only: "no_submit" };
    requestSubmit(form);
    return { form, only: "" };
  };
  // nameOf names a field for the result: its label, aria-label, name or id,
  // never its value (nor any text holding the value).
  const nameOf = (el, value) => {
    const ls = el instanceof HTMLInputElement ? Array.from(labels(el) || []) : [];
    const names = [...ls.map(textContent), attr(el, "aria-label"), attr(el, "name"), attr(el, "id")];
    const name = names.map((n) => (n || "").replace(/\s+/g, " ").trim()).find((n) => n && !n.includes(value))?.slice(0, 60);
    return name || (el instanceof HTMLInputElement ? type(el) : "");
  };
  // ourSubmit submits the field's form (submitForm) and says what came of
  // it: why it stopped ({stopped, extra}), else whether a native
  // submission ran and whether it had method=dialog (it only closes its
  // dialog and sends nothing) or GET (watch emptied its entry list, unless
  // a page handler stopped the submit event on its way). When only Enter
  // was sent, the page gets 1 s to show that its own handling took it (a
  // submit event, leaving, the field going away, emptied or disabled, any
  // change to the DOM); without a sign, nothing was submitted.
  const ourSubmit = async (w, el, fields, value) => {
    const seen = w.submits.length, changes = w.changes();
    const { form: ours, only } = submitForm(el, fields);
    if (only) {
      const moved = () => w.submits.length > seen || w.gone() || w.emptied() || w.locked() || w.changes() > changes;
      await w.until(WAIT_MS, moved);
      if (!w.left && !moved()) return { stopped: only };
    }
    const ev = w.submits.slice(seen).find((e) => evTarget(e) === ours);
    if (!ev && w.invalid) return { stopped: "invalid", extra: { stoppedBy: nameOf(w.invalid, value) } };
    const native = ev !== undefined && !prevented(ev), how = native && (methodOf(evTarget(ev), submitterOf(ev)) || "get");
    return { native, dialog: how === "dialog", get: how === "get" };
  };
  // afterInsert submits and leaves nothing in the page (PROTOCOL.md §3).
  const afterInsert = async (w, el, fields, kind, matched, form, value) => {
    const stop = (stopped, extra) => ({ submitted: false, navigated: w.left, cleared: w.clear(), stopped, ...extra, remains: w.holds() });
    // A GET submission: cancel the navigation it planned (and that
    // watch emptied).
    const inURL = () => {
      if (halt) Reflect.apply(halt, window, []);
      return stop("method_get");
    };
    if (!matched) return stop("not_matched");
    // A code widget may submit by itself once its last box is filled.
    const reacted = () => w.submits.length > 0 || w.gone() || w.emptied() || w.locked();
    if (kind === "one-time-code") await w.until(SELF_MS, reacted);
    let sent = { native: false, dialog: false, get: false };
    if (!w.left && !reacted()) {
      if (!sameForm(formInfo(el, fields), form)) return stop("form_changed");
      sent = await ourSubmit(w, el, fields, value);
      if (sent.stopped) return stop(sent.stopped, sent.extra);
    }
    if (w.urlBlocked || sent.get) return inURL();
    // A native submission built its entry list inside the click: the
    // value left with it, so clear at once and wait for the navigation.
    const native = sent.native && !sent.dialog;
    if (native) w.clear();
    // Give the page its moment: a navigation, the field going away, or the
    // page changing the field (a script login that failed, or one that
    // reads the field when its dialog closes).
    await w.until(WAIT_MS, native ? () => false : () => w.gone() || w.emptied());
    if (w.urlBlocked) return inURL();
    const cleared = w.clear() || native;
    if (sent.dialog) return { submitted: false, navigated: w.left, cleared, stopped: "method_dialog", remains: w.holds() };
    return { submitted: true, navigated: w.left, cleared, remains: w.holds() };
  };

  if (op === "probe") {
    const el = deepActive(), frame = isFrame(el);
    const { kind, boxes } = classify(el);
    const field = { kind, split: boxes ? boxes.length : 0, problem: "" };
    // The field's id and name (page text, never its value): the clean room
    // finds the same field with them when it opens the page again.
    if (kind === "password" || kind === "one-time-code") {
      const at = boxes ? boxes[0] : el;
      field.hint = { id: (attr(at, "id") || "").slice(0, 128), name: (attr(at, "name") || "").slice(0, 128) };
    }
    // A focused field is judged when the probe remembers it (the inspect);
    // the insert judges it again itself. Frame elements are always judged.
    const judged = arg && arg.token && (kind === "password" || kind === "one-time-code");
    if (judged) field.problem = await problemAll(boxes || [el]);
    let childIndex = -1, childFrame = null;
    if (frame) {
      field.problem = await problem(el);
      const w = el instanceof HTMLIFrameElement ? iframeWindow(el) : frameWindow(el);
      for (let n = 0; n < window.length; n++) if (window[n] === w) childIndex = n;
      childFrame = frameIdOf(el);
    }
    if (arg && arg.token && kind !== "none") {
      const m = tokens();
      if (m.size >= 16) m.delete(m.keys().next().value);
      m.set(arg.token, { ref: new WeakRef(el), kind, split: field.split });
    }
    const login = kind === "password" || kind === "one-time-code";
    const form = login ? formInfo(el, boxes || [el]) : null;
    const account = login ? accountOf(el, boxes || [el]) : "";
    return { origin: location.origin, top: window === window.top, path: framePath(), activeIsFrame: frame, childIndex, childFrame, field, form, account, closedHost: closedHost(el) };
  }
  if (op === "activeFrame") {
    const el = deepActive();
    return isFrame(el) ? el : null;
  }
  if (op === "activeHost") {
    const el = deepActive();
    return closedHost(el) ? el : null;
  }
  // shown: how many login fields a person sees in this document now
  // (password fields; one-time-code fields or rows of code boxes), for the
  // clean room's check of the tab it handed a session to.
  if (op === "shown") {
    const seen = (el) => visible(el, { checkOpacity: true, checkVisibilityCSS: true }) && rect(el).width > 1 && rect(el).height > 1;
    let password = 0, code = 0;
    const rows = new Set();
    for (const el of queryDoc(document, "input")) {
      if (!seen(el)) continue;
      const { kind, boxes } = classify(el);
      if (kind === "password") password++;
      if (kind === "one-time-code" && !(boxes && rows.has(boxes[0]))) {
        code++;
        if (boxes) rows.add(boxes[0]);
      }
    }
    return { url: location.href, origin: location.origin, password, code };
  }
  if (op === "insert") {
    const value = arg.value;
    arg.value = null;
    // A page that starts to leave while the checks wait a frame gets
    // nothing (one kept in the back-forward cache would get the value
    // when the person goes back, long after the answer).
    let leaving = false;
    const leave = () => { leaving = true; };
    addEventListener("beforeunload", leave, true);
    addEventListener("pagehide", leave, true);
    try {
      return await insertOp(value, () => leaving);
    } finally {
      removeEventListener("beforeunload", leave, true);
      removeEventListener("pagehide", leave, true);
    }
  }
  throw new Error("fillgateInPage: unknown op");

  // insertOp checks the field again, inserts value and (then "submit")
  // submits; left reports that the page began to leave.
  async function insertOp(value, left) {
    const no = (reason) => ({ inserted: false, matched: false, reason });
    if (location.origin !== arg.origin) return no("origin_changed");
    const m = tokens(), saved = m.get(arg.token);
    m.delete(arg.token);
    const el = saved && saved.ref.deref();
    if (!el || !connected(el)) return no("element_gone");
    // The visibility checks wait a frame for the browser; the rest are
    // checked after them, so nothing the page does meanwhile goes unseen.
    const checked = classify(el).boxes || [el];
    const unusable = await problemAll(checked);
    if (!connected(el)) return no("element_gone");
    const { kind, boxes } = classify(el);
    const active = deepActive();
    if (boxes ? !boxes.includes(active) : active !== el) return no("focus_moved");
    if (kind !== arg.kind || kind !== saved.kind || (boxes ? boxes.length : 0) !== saved.split) return no("kind_changed");
    if (unusable || (boxes || [el]).some((b, i) => b !== checked[i])) return no("not_usable");
    const fields = boxes || [el];
    if (!sameForm(formInfo(el, fields), arg.form ?? null)) return no("form_changed");
    if (typeof value !== "string" || value === "") return no("insert_failed");
    const parts = boxes ? Array.from(value) : [value];
    if (parts.length !== fields.length) return no("insert_failed");
    if (left()) return no("page_left");
    // Nothing yields from here to the insert. The mark, sent in the same
    // task, tells the caller the insert happens, for an answer the page's
    // own navigation loses.
    mark();
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
  // mark tells the caller, at once, that the insert of call arg.nonce
  // happens: over CDP through the binding arg.binding (in this isolated
  // world only), in the extension by a message to its worker.
  function mark() {
    try {
      if (typeof arg.binding === "string" && typeof globalThis[arg.binding] === "function") {
        globalThis[arg.binding](String(arg.nonce));
      } else if (!arg.binding && typeof arg.nonce === "string" && globalThis.chrome?.runtime?.sendMessage) {
        globalThis.chrome.runtime.sendMessage({ type: "inserting", nonce: arg.nonce })?.catch?.(() => {});
      }
    } catch {
      // No mark: a lost answer then reads as nothing inserted.
    }
  }
}
