// web-ext lint on the extension as it ships (the folder storepack writes),
// strict: any error fails, and so does any warning or notice not listed
// below with the reason it is kept. A new warning needs a fix or a line
// here that a reviewer can weigh.
//
//   node tests/release/lint.mjs DIR
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// Warnings kept on purpose, by addons-linter code, with why.
const explained = {
  // Firefox has no chrome.debugger; Chromium-family browsers need the
  // permission for chrome.debugger.getTargets(), how the extension tells
  // whether a program drives the browser (extension/README.md, "Why the
  // debugger permission"). Firefox ignores it; sw.js feature-tests the API.
  MANIFEST_PERMISSIONS: (m) => /"debugger"/.test(m.message),
  // One manifest.json serves both families: Chromium runs
  // background.service_worker, Firefox (no extension service workers)
  // background.scripts and ignores the other (extension/README.md).
  BACKGROUND_SERVICE_WORKER_IGNORED: () => true,
  // data_collection_permissions (fillgate collects and transmits nothing:
  // "none") is what AMO requires of new add-ons since 2025-11-03. Firefox
  // reads it from 140 (Android 142); 128 to 139, which the manifest still
  // allows, ignore the key, and need no consent for nothing collected.
  KEY_FIREFOX_UNSUPPORTED_BY_MIN_VERSION: (m) => /data_collection_permissions/.test(m.description),
  // Firefox for Android has no native messaging, so fillgate is not
  // offered there (docs/release.md: mark the AMO listing desktop-only).
  KEY_FIREFOX_ANDROID_UNSUPPORTED_BY_MIN_VERSION: (m) => /data_collection_permissions/.test(m.description),
};

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node tests/release/lint.mjs DIR");
  process.exit(2);
}
const webExt = join(dirname(fileURLToPath(import.meta.url)), "node_modules", ".bin", "web-ext");
let out;
try {
  out = execFileSync(webExt, ["lint", "--source-dir", dir, "--output", "json", "--no-config-discovery"], { encoding: "utf8" });
} catch (e) {
  out = e.stdout; // exits non-zero on errors; the report says which
}
let report;
try {
  report = JSON.parse(out);
} catch {
  console.error("web-ext lint gave no JSON report:\n" + out);
  process.exit(1);
}
const bad = [];
for (const kind of ["errors", "warnings", "notices"]) {
  for (const m of report[kind]) {
    const ok = kind !== "errors" && explained[m.code]?.(m);
    console.log(`${ok ? "kept" : "FAIL"}  ${kind.slice(0, -1)}  ${m.code}: ${m.message}${m.file ? " (" + m.file + ")" : ""}`);
    if (!ok) bad.push(m);
  }
}
console.log(`web-ext lint: ${report.summary.errors} errors, ${report.summary.warnings} warnings (all explained in tests/release/lint.mjs unless marked FAIL), ${report.summary.notices} notices`);
if (bad.length) {
  console.error(`web-ext lint: ${bad.length} finding(s) neither fixed nor explained`);
  process.exit(1);
}
