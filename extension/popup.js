// fillgate's toolbar popup: the host connection, the pause switch, the
// live leases (each with an End button) and the last few requests. It asks
// the service worker for all of it; it never sees a value.
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
  const leases = (s.leases ?? []).map((l) => {
    const li = document.createElement("li");
    const head = li.appendChild(document.createElement("div"));
    head.append(`${l.service} · ${l.field}${l.account ? ` as ${l.account}` : ""}`);
    const until = new Date(l.until);
    li.appendChild(document.createElement("small")).textContent =
      `${l.agent} · ${l.origin} · until ${isNaN(until) ? "?" : until.toLocaleTimeString()}`;
    const end = li.appendChild(document.createElement("button"));
    end.textContent = "End";
    end.dataset.lease = l.id;
    end.addEventListener("click", () => ask({ type: "end_lease", id: l.id }));
    return li;
  });
  $("leases").replaceChildren(...leases);
  $("leasebox").hidden = leases.length === 0;
  $("empty").hidden = rows.length > 0;
}

// The worker answers only the toolbar popup: this page opened in a tab
// gets nothing, and says so.
const inTab = () => {
  $("conn").textContent = "Open fillgate from its toolbar button: opened in a tab, this page shows nothing and changes nothing.";
  $("conn").className = "bad";
};
const ask = (msg) => api.runtime.sendMessage(msg).then((s) => s ? render(s) : inTab(), () => render(null));

$("pause").addEventListener("change", (e) => ask({ type: "pause", paused: e.target.checked }));
ask({ type: "state" });
setInterval(() => ask({ type: "state" }), 2000);
