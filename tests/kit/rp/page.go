package rp

// page is the site's login page. "Add a passkey" registers a credential
// for the account in the user field; "Sign in with a passkey" logs in to
// that account (listing its credentials), or with the field empty, with
// any discoverable credential. The page turns the JSON options into what
// navigator.credentials wants and the credential back into JSON itself,
// reading only the standard members of the response (no toJSON), so a
// credential that an extension's wrapper returns is sent as the
// browser's would be. #status says what happened: "passkey added",
// "welcome NAME", or "error: ..." with the site's or the browser's
// reason.
//
// The page's query asks for more: ?uv=required (or preferred,
// discouraged) is the user verification both ceremonies ask the site for;
// ?calls=2 has "Sign in with a passkey" call get() twice at once with the
// same options (the second gives up after 3 s: an AbortError), log in
// with the first answer and show what the second got in #second
// ("credential ID", or the error's name and message).
// #framed shows what a frame of another origin posted to the page (see
// framePage).
const page = `<!doctype html>
<html><head><meta charset="utf-8"><title>fillgate test passkey site</title>
<style>body { margin: 20px; font: 16px sans-serif; } input, button { height: 28px; margin: 4px; }</style>
</head><body>
<label>Account <input id=user autocomplete="username webauthn" value=ada></label>
<p><button id=add type=button>Add a passkey</button>
<button id=signin type=button>Sign in with a passkey</button></p>
<p id=status></p>
<p id=second></p>
<p id=framed></p>
<script>
const query = new URLSearchParams(location.search);
const uv = query.get("uv") || undefined;
addEventListener("message", (e) => {
  if (e.origin !== location.origin) document.getElementById("framed").textContent = String(e.data);
});
const b64u = {
  decode: (s) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((s.length + 3) % 4)), (c) => c.charCodeAt(0)),
  encode: (b) => btoa(String.fromCharCode(...new Uint8Array(b))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""),
};
const show = (text) => { document.getElementById("status").textContent = text; };
async function post(path, body) {
  const r = await fetch(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const j = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(j.error || "HTTP " + r.status);
  return j;
}
const decodeIds = (list) => { for (const c of list || []) c.id = b64u.decode(c.id); };
const credentialJSON = (cred, response) => ({
  id: cred.id,
  rawId: b64u.encode(cred.rawId),
  type: cred.type,
  authenticatorAttachment: cred.authenticatorAttachment || undefined,
  clientExtensionResults: cred.getClientExtensionResults ? cred.getClientExtensionResults() : {},
  response,
});
document.getElementById("add").addEventListener("click", async () => {
  try {
    const { publicKey } = await post("/register/begin", { user: document.getElementById("user").value, uv });
    publicKey.challenge = b64u.decode(publicKey.challenge);
    publicKey.user.id = b64u.decode(publicKey.user.id);
    decodeIds(publicKey.excludeCredentials);
    const cred = await navigator.credentials.create({ publicKey });
    const r = cred.response;
    await post("/register/finish", credentialJSON(cred, {
      clientDataJSON: b64u.encode(r.clientDataJSON),
      attestationObject: b64u.encode(r.attestationObject),
      transports: r.getTransports ? r.getTransports() : [],
    }));
    show("passkey added");
  } catch (e) { show("error: " + (e && e.message || e)); }
});
document.getElementById("signin").addEventListener("click", async () => {
  try {
    const { publicKey } = await post("/login/begin", { user: document.getElementById("user").value, uv });
    publicKey.challenge = b64u.decode(publicKey.challenge);
    decodeIds(publicKey.allowCredentials);
    const calls = [navigator.credentials.get({ publicKey })];
    if (query.get("calls") === "2") {
      const giveUp = new AbortController();
      setTimeout(() => giveUp.abort(), 3000);
      calls.push(navigator.credentials.get({ publicKey, signal: giveUp.signal }));
      calls[1].then((c) => "credential " + c.id, (e) => e.name + ": " + e.message)
        .then((s) => { document.getElementById("second").textContent = s; });
    }
    const cred = await calls[0];
    const r = cred.response;
    const j = await post("/login/finish", credentialJSON(cred, {
      clientDataJSON: b64u.encode(r.clientDataJSON),
      authenticatorData: b64u.encode(r.authenticatorData),
      signature: b64u.encode(r.signature),
      userHandle: r.userHandle ? b64u.encode(r.userHandle) : undefined,
    }));
    show("welcome " + j.user);
  } catch (e) { show("error: " + (e && e.message || e)); }
});
</script>
</body></html>`

// framePage is a page for a frame of the site on another origin: when
// its parent posts it "get", it calls navigator.credentials.get for the
// relying party "localhost", giving up after 3 s (an AbortError), and
// posts to its parent what that got: "credential ID", or the error's
// name and message.
const framePage = `<!doctype html>
<html><head><meta charset="utf-8"><title>fillgate test passkey frame</title></head><body>
<script>
addEventListener("message", (e) => {
  if (e.source !== parent || e.data !== "get") return;
  const giveUp = new AbortController();
  setTimeout(() => giveUp.abort(), 3000);
  navigator.credentials.get({ publicKey: { challenge: crypto.getRandomValues(new Uint8Array(32)), rpId: "localhost" }, signal: giveUp.signal })
    .then((c) => "credential " + c.id, (e) => e.name + ": " + e.message)
    .then((s) => parent.postMessage(s, "*"));
});
</script>
</body></html>`
