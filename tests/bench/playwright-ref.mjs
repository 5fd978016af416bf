// The reference of fillgate's benchmark: what an agent's usual tool takes
// to type into a field of a browser it reaches over CDP. Each iteration is
// a fresh Playwright connectOverCDP to the endpoint, finding the tab whose
// URL holds the mark, keyboard.insertText into its focused field, and
// closing the connection (which leaves the browser and its tabs alone).
//
//   node playwright-ref.mjs <endpoint> <url mark> <iterations> <text>
//
// It prints one JSON line: {"ms": [per-iteration milliseconds]}. The text
// is a made-up sample the benchmark makes, not a secret.
import { chromium } from "playwright-core";

const [endpoint, mark, n, text] = process.argv.slice(2);
const ms = [];
for (let i = 0; i < Number(n); i++) {
  const t0 = performance.now();
  const browser = await chromium.connectOverCDP(endpoint);
  const page = browser.contexts().flatMap((c) => c.pages()).find((p) => p.url().includes(mark));
  if (!page) throw new Error("no tab with the mark");
  await page.keyboard.insertText(text);
  ms.push(performance.now() - t0);
  await page.evaluate(() => { document.activeElement.value = ""; });
  await browser.close();
}
console.log(JSON.stringify({ ms }));
