// The clean room's own in-page helper, run over CDP in an isolated world of
// the room's page (never in a browser a program drives). One function
// expression, as Runtime.callFunctionOn takes it. Ops:
//   locate {kind, hint, account}
//                        find the login field of kind ("password" or
//                        "one-time-code"; for a row of code boxes, its
//                        first box), pick it by hint {id, name} when
//                        several are shown, type the account the agent's
//                        page showed into its form's empty user-name
//                        field, scroll it into view and focus it:
//                        {count, focused}
//   step {account}       a page that asks for the account first: type the
//                        account into its user-name field and go on as a
//                        person pressing Enter would: {stepped}
//   storage              the origin's web storage: {origin, local, session}
async function fillgateRoom(op, arg) {
  "use strict";
  const TEXT = new Set(["text", "tel", "number", "search", "email", ""]);
  const shown = (el) => {
    const r = el.getBoundingClientRect();
    return el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true }) && r.width > 1 && r.height > 1 && !el.disabled;
  };
  // Every input of the document and of the open shadow roots in it.
  const inputs = (root = document, out = []) => {
    for (const el of root.querySelectorAll("*")) {
      if (el instanceof HTMLInputElement) out.push(el);
      if (el.shadowRoot) inputs(el.shadowRoot, out);
    }
    return out;
  };
  const auto = (el) => (el.getAttribute("autocomplete") || "").toLowerCase().split(/\s+/);
  const isBox = (el) => el.maxLength === 1 && TEXT.has(el.type);
  // The first box of a row of 4 to 12 single-character boxes, or null.
  const rowStart = (el) => {
    if (!isBox(el)) return null;
    for (let scope = el.parentNode, up = 0; scope && up < 3; scope = scope.parentNode, up++) {
      const boxes = Array.from(scope.querySelectorAll ? scope.querySelectorAll("input") : []).filter(isBox);
      if (boxes.length >= 4 && boxes.length <= 12) return boxes[0];
    }
    return null;
  };
  const kindOf = (el) => {
    if (el.type === "password") return "password";
    if (rowStart(el) || (auto(el).includes("one-time-code") && TEXT.has(el.type))) return "one-time-code";
    return "other";
  };
  const named = (el) => /user|e-?mail|login|account|identifier/i.test(`${el.name} ${el.id}`);
  // The user-name field among candidates, as the agent's page named its
  // account (fillgate's in-page probe reads it the same way).
  const userField = (candidates) => candidates.find((el) => auto(el).some((t) => t === "username" || t === "email")) ||
    candidates.find((el) => el.type === "email") || candidates.find(named);
  const setValue = (el, v) => {
    Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set.call(el, v);
    el.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
    el.dispatchEvent(new Event("change", { bubbles: true }));
  };
  const submit = (el) => {
    const form = el.form;
    const button = form && Array.from(form.elements).find((b) =>
      (b instanceof HTMLButtonElement && b.type === "submit") || (b instanceof HTMLInputElement && (b.type === "submit" || b.type === "image")));
    const key = (t) => el.dispatchEvent(new KeyboardEvent(t, { key: "Enter", code: "Enter", keyCode: 13, which: 13, bubbles: true, cancelable: true, composed: true }));
    if (button && !button.disabled) return button.click();
    const taken = !key("keydown");
    key("keyup");
    if (form && !taken) form.requestSubmit();
  };

  if (op === "locate") {
    const seen = new Set();
    const found = inputs().filter(shown).map((el) => (kindOf(el) === "one-time-code" && rowStart(el)) || el)
      .filter((el) => kindOf(el) === arg.kind && !seen.has(el) && seen.add(el));
    const hint = arg.hint || {};
    const by = (k) => hint[k] ? found.filter((el) => el.getAttribute(k) === hint[k]) : [];
    const picks = [by("id"), by("name"), found].find((l) => l.length === 1) || [];
    if (picks.length !== 1) return { count: found.length, focused: false };
    const form = picks[0].form;
    if (arg.account && form) {
      const before = inputs().filter((el) => el.form === form && shown(el) && el.type !== "password" && TEXT.has(el.type) &&
        !el.readOnly && (el.compareDocumentPosition(picks[0]) & Node.DOCUMENT_POSITION_FOLLOWING));
      const user = userField(before.reverse());
      if (user && user.value === "") setValue(user, arg.account);
    }
    picks[0].scrollIntoView({ block: "center", inline: "center" });
    picks[0].focus({ preventScroll: true });
    return { count: found.length, focused: true };
  }
  if (op === "step") {
    const field = userField(inputs().filter((el) => shown(el) && el.type !== "password" && TEXT.has(el.type) && !el.readOnly));
    if (!field) return { stepped: false };
    field.focus();
    setValue(field, arg.account);
    submit(field);
    return { stepped: true };
  }
  if (op === "storage") {
    const all = (s) => { const out = []; for (let i = 0; i < s.length; i++) { const k = s.key(i); out.push([k, s.getItem(k)]); } return out; };
    return { origin: location.origin, local: all(localStorage), session: all(sessionStorage) };
  }
  throw new Error("fillgateRoom: unknown op");
}
