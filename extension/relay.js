// fillgate's passkey relay, run in the extension's isolated world of the
// top frame at document start: it takes the private MessageChannel port
// that door.js (the page's main world) hands it in a synchronous event
// before any script of the page runs (the first port only), and hands
// each WebAuthn call on that port to the service worker, which knows
// from the browser which tab, frame and origin it came from. The verdict
// goes back on the same port, which the page's other scripts cannot read.
"use strict";
(() => {
  const api = globalThis.browser ?? globalThis.chrome;
  let port = null;
  const take = (e) => {
    if (port || !(e.ports?.[0] instanceof MessagePort)) return;
    port = e.ports[0];
    window.removeEventListener("fillgate-door", take, true);
    port.onmessage = async (m) => {
      const n = m.data?.n;
      if (!Number.isSafeInteger(n)) return;
      const verdict = await api.runtime.sendMessage({ type: "passkey_call", call: m.data.call }).catch(() => null);
      port.postMessage({ n, answer: verdict?.answer ?? null, refuse: verdict?.refuse === true });
    };
    port.postMessage({ ready: true });
  };
  window.addEventListener("fillgate-door", take, true);
  window.dispatchEvent(new Event("fillgate-relay")); // door.js ran first: it offers the port again
})();
