// The agent-tools driver: fillgate's Go tests start MCP servers through it
// and call their tools with the official MCP TypeScript SDK client, as an
// agent would. It speaks JSON lines on stdio (see driver.go for the Go
// side):
//
//   → {"id":1,"op":"start","server":"pw","command":"node","args":[…],"env":{…},"cwd":"…","stderr":"/path"}
//   ← {"id":1,"ok":true,"info":{"name":…,"version":…},"pid":…}
//   → {"id":2,"op":"list","server":"pw"}                 ← {"id":2,"ok":true,"tools":[…]}
//   → {"id":3,"op":"call","server":"pw","tool":"…","arguments":{…},
//      "timeout":ms?,"resetTimeoutOnProgress":bool?,"progress":bool?}
//   ← {"event":"progress","call":3,"progress":…,"total":…,"message":…,"ms":…}   (zero or more)
//   ← {"id":3,"ok":true,"result":{…},"ms":…} or {"id":3,"ok":false,"error":{…},"ms":…}
//   → {"id":4,"op":"cancel","call":3}                    ← {"id":4,"ok":true}
//   → {"id":5,"op":"close","server":"pw"}                ← {"id":5,"ok":true,"cancelled":[…],"lateResponses":[…],"lateProgress":[…]}
//   ← {"event":"error","server":"pw","message":"…"}      (the SDK client's onerror)
//
// "cancelled" lists the JSON-RPC ids the client cancelled (an abort or a
// timeout); "lateResponses" and "lateProgress" the ids among them that the
// server still answered or reported progress for. Every server this driver
// starts dies with it: on end of input, on a signal, and on exit.
import readline from "node:readline";
import fs from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const servers = new Map(); // name → {client, transport, tap}
const calls = new Map(); // driver call id → AbortController

const send = (msg) => process.stdout.write(JSON.stringify(msg) + "\n");
const errorOf = (e) => ({ name: e?.name ?? "Error", message: String(e?.message ?? e), code: e?.code ?? null });

// tap watches the raw JSON-RPC traffic of one server: which requests the
// client cancelled, and whether the server still answered them.
function tap(transport) {
  const t = { cancelled: new Set(), lateResponses: new Set(), lateProgress: new Set() };
  const send = transport.send.bind(transport);
  transport.send = (msg, opts) => {
    if (msg?.method === "notifications/cancelled") t.cancelled.add(msg.params?.requestId);
    return send(msg, opts);
  };
  const wrap = () => {
    const onmessage = transport.onmessage;
    transport.onmessage = (msg, extra) => {
      if (msg?.id !== undefined && msg.method === undefined && t.cancelled.has(msg.id)) t.lateResponses.add(msg.id);
      if (msg?.method === "notifications/progress" && t.cancelled.has(msg.params?.progressToken)) t.lateProgress.add(msg.params.progressToken);
      onmessage?.(msg, extra);
    };
  };
  return { t, wrap };
}

async function start(m) {
  if (servers.has(m.server)) throw new Error(`server ${m.server} already started`);
  const transport = new StdioClientTransport({ command: m.command, args: m.args ?? [], env: m.env ?? {}, cwd: m.cwd, stderr: "pipe" });
  if (m.stderr) transport.stderr.pipe(fs.createWriteStream(m.stderr, { flags: "a", mode: 0o600 }));
  else transport.stderr.resume();
  const { t, wrap } = tap(transport);
  const client = new Client({ name: "fillgate-agenttools", version: "1" }, { capabilities: {} });
  client.onerror = (e) => send({ event: "error", server: m.server, message: String(e?.message ?? e) });
  const s = { client, transport, tap: t };
  servers.set(m.server, s);
  await client.connect(transport);
  wrap(); // connect installed the client's handler; watch behind it
  return { info: client.getServerVersion() ?? null, pid: transport.pid };
}

function server(name) {
  const s = servers.get(name);
  if (!s) throw new Error(`no server ${name}`);
  return s;
}

async function list(m) {
  const { tools } = await server(m.server).client.listTools();
  return { tools };
}

async function call(m) {
  const s = server(m.server);
  const abort = new AbortController();
  calls.set(m.id, abort);
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  const opts = { signal: abort.signal };
  if (m.timeout != null) opts.timeout = m.timeout;
  if (m.resetTimeoutOnProgress) opts.resetTimeoutOnProgress = true;
  if (m.progress) opts.onprogress = (p) => send({ event: "progress", call: m.id, progress: p.progress, total: p.total ?? null, message: p.message ?? null, ms: ms() });
  try {
    const result = await s.client.callTool({ name: m.tool, arguments: m.arguments ?? {} }, undefined, opts);
    return { result, ms: ms() };
  } catch (e) {
    e.ms = ms();
    throw e;
  } finally {
    calls.delete(m.id);
  }
}

async function cancel(m) {
  const abort = calls.get(m.call);
  if (!abort) throw new Error(`no running call ${m.call}`);
  abort.abort(new Error("cancelled by the test"));
  return {};
}

async function close(m) {
  const s = server(m.server);
  servers.delete(m.server);
  await s.client.close(); // ends the server's stdin and waits for it to exit (SIGTERM, then SIGKILL, 2 s apart)
  const ids = (set) => Array.from(set);
  return { cancelled: ids(s.tap.cancelled), lateResponses: ids(s.tap.lateResponses), lateProgress: ids(s.tap.lateProgress) };
}

const ops = { start, list, call, cancel, close };

async function handle(line) {
  let m;
  try {
    m = JSON.parse(line);
  } catch {
    return send({ event: "error", message: "the driver got a line that is not JSON" });
  }
  if (!Object.hasOwn(ops, m.op)) return send({ id: m.id, ok: false, error: { name: "Error", message: `unknown op ${m.op}` } });
  try {
    send({ id: m.id, ok: true, ...(await ops[m.op](m)) });
  } catch (e) {
    send({ id: m.id, ok: false, error: errorOf(e), ms: e?.ms ?? null });
  }
}

// killAll ends every server at once (the driver is going away).
function killAll() {
  for (const s of servers.values()) {
    const pid = s.transport.pid;
    if (pid) try { process.kill(pid, "SIGKILL"); } catch { /* gone */ }
  }
  servers.clear();
}

process.on("exit", killAll);
for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(sig, () => process.exit(1));
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => { handle(line); });
rl.on("close", async () => {
  await Promise.allSettled(Array.from(servers.values(), (s) => s.client.close()));
  process.exit(0);
});
