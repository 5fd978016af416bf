// fillgate's passkey door, run in the page's own (main) world of the top
// frame at document start: it wraps navigator.credentials.get and
// .create. Each call is handed to relay.js (the extension's isolated
// world) over a private MessageChannel and waits for its verdict: an
// answer the fillgate host made for this call, a refusal, or anything
// else, on which the ORIGINAL function runs with the original arguments,
// untouched, so the person's own passkeys answer as if fillgate were not
// there. Conditional mediation always goes to the browser. The page can
// call the wrapper, but what answers it is decided by the extension's
// service worker and the host from what the browser says of this frame,
// never from what the page wrote. (PROTOCOL.md §2, "Passkeys".)
(() => {
  "use strict";
  const proto = globalThis.CredentialsContainer?.prototype;
  if (!proto || !globalThis.PublicKeyCredential) return;
  const { get: origGet, create: origCreate } = proto;
  const WAIT = 30000; // the worker answers within 15 s
  // The port goes to relay.js in a synchronous event at document start,
  // before any script of the page runs: whichever of the two scripts
  // runs second completes the hand-over (relay.js asks with
  // "fillgate-relay"), and no page listener can exist yet to see it.
  const { port1: door, port2 } = new MessageChannel();
  const offer = () => window.dispatchEvent(new MessageEvent("fillgate-door", { ports: [port2] }));
  window.addEventListener("fillgate-relay", offer, true);
  offer();
  const waiting = new Map();
  let next = 0, ready = false; // ready: relay.js took the port
  door.onmessage = (e) => {
    if (e.data?.ready === true) {
      ready = true;
      window.removeEventListener("fillgate-relay", offer, true);
    }
    const done = waiting.get(e.data?.n);
    if (done) { waiting.delete(e.data.n); done(e.data); }
  };
  const ask = (call, signal) => new Promise((resolve) => {
    const n = ++next;
    const end = (v) => { if (waiting.delete(n)) resolve(v); };
    waiting.set(n, resolve);
    setTimeout(() => end(null), WAIT);
    signal?.addEventListener?.("abort", () => end(null), { once: true });
    door.postMessage({ n, call });
  });

  const bytes = (b) => b instanceof ArrayBuffer ? new Uint8Array(b) : ArrayBuffer.isView(b) ? new Uint8Array(b.buffer, b.byteOffset, b.byteLength) : null;
  const b64u = (b) => { const u = bytes(b); return u ? btoa(String.fromCharCode(...u)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "") : ""; };
  const unb64u = (s) => Uint8Array.from(atob(String(s).replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0)).buffer;
  const ids = (list) => Array.isArray(list) ? list.map((c) => b64u(c?.id)) : [];

  // describe is what fillgate is told of a call: copies, never the page's objects.
  function describe(ceremony, pk) {
    const d = { ceremony, challenge: b64u(pk.challenge) };
    if (ceremony === "get") {
      Object.assign(d, { rp_id: String(pk.rpId ?? ""), allow: ids(pk.allowCredentials), user_verification: String(pk.userVerification ?? "") });
    } else {
      const sel = pk.authenticatorSelection ?? {};
      Object.assign(d, {
        rp_id: String(pk.rp?.id ?? ""), user: { id: b64u(pk.user?.id), name: String(pk.user?.name ?? "") },
        algs: Array.isArray(pk.pubKeyCredParams) ? pk.pubKeyCredParams.map((p) => Number(p?.alg)) : [],
        exclude: ids(pk.excludeCredentials), user_verification: String(sel.userVerification ?? ""),
      });
    }
    return d;
  }

  // credential builds the PublicKeyCredential the page gets from the
  // host's answer (script cannot construct one: own properties over the
  // real prototypes, as password managers do).
  function credential(a) {
    const own = (proto, props) => Object.create(proto, Object.fromEntries(Object.entries(props).map(([k, v]) => [k, { value: v, enumerable: true }])));
    const raw = unb64u(a.id);
    let response;
    if (a.attestation_object) {
      const authData = unb64u(a.authenticator_data), spki = unb64u(a.public_key);
      response = own(AuthenticatorAttestationResponse.prototype, {
        clientDataJSON: unb64u(a.client_data_json), attestationObject: unb64u(a.attestation_object),
        getTransports: () => ["internal"], getAuthenticatorData: () => authData.slice(0), getPublicKey: () => spki.slice(0), getPublicKeyAlgorithm: () => -7,
      });
    } else {
      response = own(AuthenticatorAssertionResponse.prototype, {
        clientDataJSON: unb64u(a.client_data_json), authenticatorData: unb64u(a.authenticator_data),
        signature: unb64u(a.signature), userHandle: a.user_handle ? unb64u(a.user_handle) : null,
      });
    }
    return own(PublicKeyCredential.prototype, {
      id: b64u(raw), rawId: raw, type: "public-key", authenticatorAttachment: "platform", response,
      getClientExtensionResults: () => ({}),
    });
  }

  function wrap(name, orig, ceremony) {
    const wrapped = {
      async [name](options) {
        const pk = options?.publicKey;
        if (!ready || this !== navigator.credentials || !pk || options.mediation === "conditional" || options.signal?.aborted) {
          return orig.apply(this, arguments);
        }
        let call;
        try { call = describe(ceremony, pk); } catch { return orig.apply(this, arguments); }
        const v = await ask(call, options.signal);
        if (v?.answer && typeof v.answer === "object") return credential(v.answer);
        if (v?.refuse === true) throw new DOMException("The operation either timed out or was not allowed.", "NotAllowedError");
        return orig.apply(this, arguments);
      },
    }[name];
    Object.defineProperty(proto, name, { value: wrapped, writable: true, configurable: true, enumerable: true });
  }
  wrap("get", origGet, "get");
  wrap("create", origCreate, "create");
})();
