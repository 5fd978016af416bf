// fillgate's toolbar popup: the host connection, the pause switch and the
// last few requests. It asks the service worker for all of it; it never
// sees a value.
"use strict";
const api = globalThis.browser ?? globalThis.chrome;
const $ = (id) => document.getElementById(id);

function render(s) {
  if (!s) return;
  $("conn").textContent = s.connected
    ? `Connected to the fillgate host ${s.host.version}.`
    : "Not connected: run “fillgate install”, then restart the browser.";
  $("conn").className = s.connected ? "ok" : "bad";
  $("pause").checked = s.paused;
  const rows = s.recent.map((h) => {
    const li = document.createElement("li");
    const time = new Date(h.time);
    const head = li.appendChild(document.createElement("div"));
    head.append(h.service, " ");
    head.appendChild(document.createElement("span")).textContent = h.status;
    li.appendChild(document.createElement("small")).textContent =
      `${h.origin || "?"} · ${isNaN(time) ? "" : time.toLocaleTimeString()}`;
    li.className = h.status === "ok" ? "ok" : "";
    return li;
  });
  $("recent").replaceChildren(...rows);
  $("empty").hidden = rows.length > 0;
}

const ask = (msg) => api.runtime.sendMessage(msg).then(render, () => render(null));

$("pause").addEventListener("change", (e) => ask({ type: "pause", paused: e.target.checked }));
ask({ type: "state" });
setInterval(() => ask({ type: "state" }), 2000);
