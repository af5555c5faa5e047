// The original's rows: pi-agent-core 1.6 under node, the same workloads and script as
// _common.py, with an in-process streamFn at the model boundary (events pushed on pi-ai's
// own event stream, one setImmediate per network chunk). A run's stream is consumed by a
// listener (agent.subscribe); cancelling a run is agent.abort().
//
// usage: PI_TS_DIR=<dir with node_modules> node pi_node.mjs WORKLOAD [--scale=F]
// prints one JSON line like run.py's.
import { pathToFileURL } from "node:url";
import { join } from "node:path";
import { readFileSync } from "node:fs";

const t0 = performance.now();
const PI_TS_DIR = process.env.PI_TS_DIR ?? process.cwd();
const mod = (p) => import(pathToFileURL(join(PI_TS_DIR, "node_modules", p)).href);
const { Agent } = await mod("@earendil-works/pi-agent-core/dist/index.js");
const { createAssistantMessageEventStream } = await mod("@earendil-works/pi-ai/dist/index.js");
const importMs = performance.now() - t0;
const VERSION = JSON.parse(readFileSync(join(PI_TS_DIR, "node_modules/@earendil-works/pi-agent-core/package.json"), "utf8")).version;

const args = process.argv.slice(2);
const workload = args.find((a) => !a.startsWith("--")) ?? "stream";
const scale = Number((args.find((a) => a.startsWith("--scale=")) ?? "--scale=1").split("=")[1]);
const sized = (f) => {
  const size = (n) => Math.max(1, Math.floor(n * f));
  // the sizes of _common.Sizes
  return { stream: size(100_000), turns: size(200), concurrent: size(1_000), cancelled: size(1_000),
    cancel_deltas: size(1_000), idle: size(1_000) };
};
const DELTA = "abcdefgh";
const FINAL = "done";
const reply = (deltas, tool, text = DELTA) => ({ deltas, tool, text });
const scripts = (sizes) => ({
  stream: [reply(sizes.stream, false)],
  turns: [...Array.from({ length: sizes.turns }, () => reply(0, true)), reply(1, false, FINAL)],
  concurrent: [reply(0, true), reply(1, false, FINAL)],
  cancelled: [reply(sizes.cancel_deltas, true), reply(1, false, FINAL)],
});
let SIZES = sized(scale);
let SCRIPTS = scripts(SIZES);

const freshProbe = () => ({ provider_calls: 0, model_ended: 0, deltas_produced: 0, deltas_consumed: 0,
  tool_calls: 0, runs: 0, deltas_after_cancel: 0 });
let probe = freshProbe();
const pause = () => new Promise((r) => setImmediate(r));
const ZERO_USAGE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const MODEL = { id: "scripted", name: "scripted", api: "scripted", provider: "scripted", baseUrl: "",
  reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 1_000_000, maxTokens: 100_000 };

// The stream function of one run: call k answers with replies[k] (the last repeats).
function scriptModel(replies) {
  const state = { calls: 0, cancelled: false };
  state.fn = (model, context, options) => {
    const k = state.calls++;
    const spec = replies[Math.min(k, replies.length - 1)];
    probe.provider_calls++;
    const stream = createAssistantMessageEventStream();
    const signal = options?.signal;
    const output = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id,
      usage: ZERO_USAGE, stopReason: spec.tool ? "toolUse" : "stop", timestamp: Date.now() };
    const aborted = () => {
      const err = { ...output, stopReason: "aborted", errorMessage: "Request was aborted" };
      stream.push({ type: "error", reason: "aborted", error: err });
      stream.end(err);
    };
    (async () => {
      try {
        await pause();
        if (signal?.aborted) return aborted();
        stream.push({ type: "start", partial: output });
        if (spec.deltas > 0) {
          const block = { type: "text", text: "" };
          output.content.push(block);
          const ci = output.content.length - 1;
          stream.push({ type: "text_start", contentIndex: ci, partial: output });
          for (let i = 0; i < spec.deltas; i++) {
            await pause();
            if (signal?.aborted) return aborted();
            block.text += spec.text;
            probe.deltas_produced++;
            if (state.cancelled) probe.deltas_after_cancel++;
            stream.push({ type: "text_delta", contentIndex: ci, delta: spec.text, partial: output });
          }
          stream.push({ type: "text_end", contentIndex: ci, content: block.text, partial: output });
        }
        if (spec.tool) {
          const json = `{"i":${k}}`;
          const tc = { type: "toolCall", id: `call_${k}`, name: "echo", arguments: JSON.parse(json) };
          output.content.push(tc);
          const ci = output.content.length - 1;
          stream.push({ type: "toolcall_start", contentIndex: ci, partial: output });
          stream.push({ type: "toolcall_delta", contentIndex: ci, delta: json, partial: output });
          stream.push({ type: "toolcall_end", contentIndex: ci, toolCall: tc, partial: output });
        }
        stream.push({ type: "done", reason: output.stopReason, message: output });
        stream.end(output);
      } finally {
        probe.model_ended++;
      }
    })();
    return stream;
  };
  return state;
}

const echoTool = {
  name: "echo", label: "echo", description: "returns ok",
  parameters: { type: "object", properties: { i: { type: "integer" } }, required: ["i"] },
  execute: async () => { probe.tool_calls++; return { content: [{ type: "text", text: "ok" }], details: {} }; },
};

function newAgent(replies) {
  const model = scriptModel(replies);
  const agent = new Agent({ initialState: { model: MODEL, tools: [echoTool] }, streamFn: model.fn,
    toolExecution: "parallel" });
  return [agent, model];
}
const countDeltas = (e) => {
  if (e.type === "message_update" && e.assistantMessageEvent.type === "text_delta") probe.deltas_consumed++;
};
const lastText = (agent) => agent.state.messages.at(-1).content.filter((b) => b.type === "text").map((b) => b.text).join("");

const workloads = {
  async stream() {
    const [agent] = newAgent(SCRIPTS.stream);
    agent.subscribe(countDeltas);
    await agent.prompt("go");
    probe.runs++;
    return { final_text_len: lastText(agent).length };
  },
  async turns() {
    const [agent] = newAgent(SCRIPTS.turns);
    agent.subscribe(countDeltas);
    await agent.prompt("go");
    probe.runs++;
    return { final_text: lastText(agent) };
  },
  async concurrent() {
    await Promise.all(Array.from({ length: SIZES.concurrent }, async () => {
      const [agent] = newAgent(SCRIPTS.concurrent);
      agent.subscribe(countDeltas);
      await agent.prompt("go");
      if (lastText(agent) === FINAL) probe.runs++;
    }));
    return {};
  },
  async cancelled() {
    await Promise.all(Array.from({ length: SIZES.cancelled }, async () => {
      const [agent, model] = newAgent(SCRIPTS.cancelled);
      agent.subscribe((e) => {
        if (e.type === "message_update" && e.assistantMessageEvent.type === "text_delta") {
          probe.deltas_consumed++;
          if (!model.cancelled) { model.cancelled = true; agent.abort(); }
        }
      });
      await agent.prompt("go");
      if (agent.state.messages.at(-1).stopReason === "aborted") probe.runs++;
    }));
    return { model_ended_when_settled: probe.model_ended };
  },
};

const statusKb = (key) => Number(readFileSync("/proc/self/status", "utf8").split("\n").find((l) => l.startsWith(key)).split(/\s+/)[1]);
let line = { impl: "pi-node", workload, version: VERSION, node: process.version };
if (workload === "import") {
  line = { ...line, wall_s: +(importMs / 1e3).toFixed(5), ms_import: +importMs.toFixed(1) };
} else if (workload === "idle") {
  const idleModel = scriptModel([]);
  const make = () => new Agent({ initialState: { model: MODEL, tools: [echoTool] }, streamFn: idleModel.fn });
  for (let i = 0; i < 10; i++) make();  // warm-up
  globalThis.gc?.();
  const rss0 = statusKb("VmRSS:");
  const heap0 = process.memoryUsage().heapUsed;
  const start = performance.now();
  const agents = Array.from({ length: SIZES.idle }, make);
  const construct = (performance.now() - start) / 1e3;
  globalThis.gc?.();
  const heap = process.memoryUsage().heapUsed - heap0;
  const rss = statusKb("VmRSS:") - rss0;
  line = { ...line, wall_s: +construct.toFixed(5), agents: agents.length,
    us_construct: +(construct / SIZES.idle * 1e6).toFixed(2),
    kb_per_agent: +(heap / SIZES.idle / 1024).toFixed(2),
    kb_rss_per_agent: +(rss / SIZES.idle).toFixed(2) };
} else {
  // a small run first, as run.py does: what is built once is not per-run cost
  const measured = [SIZES, SCRIPTS];
  SIZES = sized(scale * 0.01);
  SCRIPTS = scripts(SIZES);
  await workloads[workload]();
  [SIZES, SCRIPTS] = measured;
  probe = freshProbe();
  const cpu = process.cpuUsage();
  const start = performance.now();
  const extra = await workloads[workload]();
  const wall = (performance.now() - start) / 1e3;
  const used = process.cpuUsage(cpu);
  line = { ...line, wall_s: +wall.toFixed(5), cpu_s: +((used.user + used.system) / 1e6).toFixed(4), ...extra, ...probe };
}
line.peak_rss_mb = +(process.resourceUsage().maxRSS / 1024).toFixed(1);
console.log(JSON.stringify(line));
