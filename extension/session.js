// The service worker's side of fillgate's clean room (PROTOCOL.md §2, clean
// room). In a browser a program drives, the host logs in in a browser of
// its own; this file tells it what it needs of the tab (its URL, the
// browser's user agent and languages, the tab's cookies of a site) and
// hands the tab the session the login left: cookies set with their exact
// shape, the final origin's web storage, a navigation to where the login
// ended. None of it is a value: a session is what the site gave back for
// one.
"use strict";

// storeOf is the tab and the id of its cookie store, or null.
async function storeOf(tabId) {
  const tab = Number.isSafeInteger(tabId) ? await api.tabs.get(tabId).catch(() => null) : null;
  if (!tab) return null;
  if (tab.cookieStoreId) return { tab, store: tab.cookieStoreId }; // Firefox
  const stores = await api.cookies.getAllCookieStores();
  const s = stores.find((st) => st.tabIds.includes(tabId));
  return s ? { tab, store: s.id } : null;
}

const SAME_SITE_IN = { no_restriction: "None", lax: "Lax", strict: "Strict" };
const SAME_SITE_OUT = { None: "no_restriction", Lax: "lax", Strict: "strict" };

// wireCookie is a chrome.cookies cookie in the host's shape.
const wireCookie = (c) => {
  const out = {
    name: c.name, value: c.value, domain: c.domain.replace(/^\./, ""), host_only: c.hostOnly === true,
    path: c.path, secure: c.secure === true, http_only: c.httpOnly === true,
  };
  if (SAME_SITE_IN[c.sameSite]) out.same_site = SAME_SITE_IN[c.sameSite];
  if (!c.session && typeof c.expirationDate === "number") out.expires = c.expirationDate;
  if (c.partitionKey?.topLevelSite) out.partition = { top_level_site: c.partitionKey.topLevelSite, cross_site_ancestor: c.partitionKey.hasCrossSiteAncestor === true };
  return out;
};

// cookieURL is a URL a wire cookie applies to: https for a Secure one,
// except a partitioned cookie of its own top-level site, whose URL must
// be of that site (its scheme included: a Secure cookie of
// http://127.0.0.1).
const cookieURL = (c) => {
  let scheme = c.secure ? "https" : "http";
  let top = null;
  try {
    if (c.partition && !c.partition.cross_site_ancestor) top = new URL(c.partition.top_level_site);
  } catch { /* no site: keep the scheme the Secure flag says */ }
  if (top && (top.hostname === c.domain || c.domain.endsWith(`.${top.hostname}`))) scheme = top.protocol.slice(0, -1);
  return `${scheme}://${c.domain.includes(":") ? `[${c.domain}]` : c.domain}${c.path.startsWith("/") ? c.path : `/${c.path}`}`;
};

const partitionOf = (c) => c.partition ? { topLevelSite: c.partition.top_level_site, hasCrossSiteAncestor: c.partition.cross_site_ancestor === true } : undefined;

// chromeCookie is a wire cookie as chrome.cookies.set takes it: a
// host-only cookie with no domain (one given a domain is a domain
// cookie), SameSite as the site set it, no expiry for a session cookie.
const chromeCookie = (c, storeId) => {
  const out = {
    url: cookieURL(c), name: c.name, value: c.value, path: c.path, secure: c.secure === true, httpOnly: c.http_only === true,
    sameSite: SAME_SITE_OUT[c.same_site] ?? "unspecified", storeId,
  };
  if (!c.host_only) out.domain = `.${c.domain}`;
  if (c.expires) out.expirationDate = c.expires;
  const p = partitionOf(c);
  if (p) out.partitionKey = p;
  return out;
};

async function tabInfo(msg) {
  const found = await storeOf(msg.tab);
  if (!found) return fail("no_tab", "the tab is gone");
  return { type: "tab_info", url: found.tab.url ?? "", user_agent: navigator.userAgent, languages: [...(navigator.languages ?? [])].slice(0, 8) };
}

// siteCookies: the tab's cookies sent within msg.site (the site and every
// name under it), partitioned ones included.
async function siteCookies(msg) {
  const found = await storeOf(msg.tab);
  if (!found) return fail("no_tab", "the tab is gone");
  const site = String(msg.site ?? "");
  if (!site) return fail("bad_request", "cookies needs a site");
  const query = { domain: site, storeId: found.store };
  const lists = await Promise.all([
    api.cookies.getAll(query),
    api.cookies.getAll({ ...query, partitionKey: {} }).catch(() => []),
  ]);
  const seen = new Set(), cookies = [];
  for (const c of lists.flat()) {
    const key = JSON.stringify([c.name, c.domain, c.path, c.partitionKey?.topLevelSite ?? ""]);
    if (seen.has(key)) continue;
    seen.add(key);
    cookies.push(wireCookie(c));
  }
  return { type: "cookies", cookies };
}

// writeStorage writes st into the tab's top frame's storage, when the tab
// is on st.origin; false otherwise.
async function writeStorage(tabId, st) {
  const [r] = await api.scripting.executeScript({
    target: { tabId, frameIds: [0] }, world: "ISOLATED",
    func: (s) => {
      if (location.origin !== s.origin) return false;
      for (const [k, v] of s.local ?? []) localStorage.setItem(k, v);
      for (const [k, v] of s.session ?? []) sessionStorage.setItem(k, v);
      return true;
    },
    args: [st],
  });
  return r?.result === true;
}

// HANDOVER_LOAD bounds the tab's load after a handover.
const HANDOVER_LOAD = 20000;

// navigateTab sends the tab to url and waits until it has loaded.
async function navigateTab(tabId, url) {
  const done = new Promise((resolve) => {
    const timer = setTimeout(finish, HANDOVER_LOAD);
    function finish() {
      clearTimeout(timer);
      api.tabs.onUpdated.removeListener(onUpdated);
      resolve();
    }
    function onUpdated(id, change) {
      if (id === tabId && change.status === "complete") finish();
    }
    api.tabs.onUpdated.addListener(onUpdated);
  });
  await api.tabs.update(tabId, { url });
  await done;
}

// handover gives the tab the session of a login in the clean room:
// cookies, then the final origin's storage (written before the page
// loads when the tab is already on that origin, else once it loaded
// there, and then the page loads again), then the page where the login
// ended. It says what the tab shows then.
async function handover(msg) {
  const found = await storeOf(msg.tab);
  if (!found) return fail("no_tab", "the tab is gone");
  let url;
  try {
    url = new URL(msg.url);
  } catch {
    return fail("bad_request", "handover needs the url where the login ended");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return fail("bad_request", "handover goes to http(s) pages only");
  const { tab, store } = found;
  for (const c of msg.cookies?.set ?? []) {
    let why = "";
    const set = await api.cookies.set(chromeCookie(c, store)).catch((e) => { why = String(e?.message ?? e); return null; });
    if (set == null) {
      return fail("cookie_refused", `the browser refused the cookie ${String(c.name).slice(0, 64)} of ${c.domain} the login set${why ? ` (${why.slice(0, 200)})` : ""}`);
    }
  }
  for (const c of msg.cookies?.removed ?? []) {
    await api.cookies.remove({ url: cookieURL(c), name: c.name, storeId: store, partitionKey: partitionOf(c) }).catch(() => null);
  }
  const st = msg.storage ?? {};
  const storage = (st.local?.length ?? 0) + (st.session?.length ?? 0) > 0;
  const early = storage && originOf(tab.url) === st.origin && await writeStorage(tab.id, st).catch(() => false);
  await navigateTab(tab.id, url.href);
  if (storage && !early && await writeStorage(tab.id, st).catch(() => false)) await navigateTab(tab.id, url.href);
  const [shown] = await api.scripting.executeScript({
    target: { tabId: tab.id, frameIds: [0] }, world: "ISOLATED", func: fillgateInPage, args: ["shown"],
  }).catch(() => [null]);
  const s = shown?.result ?? {};
  const now = await api.tabs.get(tab.id).catch(() => null);
  return { type: "handed_over", url: s.url ?? now?.url ?? "", origin: s.origin ?? originOf(now?.url ?? ""), password: s.password | 0, code: s.code | 0 };
}
