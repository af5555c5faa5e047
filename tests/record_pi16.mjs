// Records what the original TypeScript runtime writes, as fixtures for pi_trio's tests.
//
//   npm install --prefix <dir> @earendil-works/pi-agent-core@1.6.0 @earendil-works/pi-ai@1.6.0
//   node tests/record_pi16.mjs <dir> [out]          # out: tests/fixtures/pi16
//
//   npm install --prefix <dir> @mariozechner/pi-agent-core@0.73.1 @mariozechner/pi-ai@0.73.1
//   node tests/record_pi16.mjs <dir> [out]          # out: tests/fixtures/pi073
//
// Every agent scenario runs on the faux provider (or, for the provider scenarios, the
// original's openai-completions provider against a local HTTP server) and writes
// <scenario>.transcript.json (JSON.stringify of agent.state.messages, byte for byte),
// <scenario>.events.jsonl (JSON.stringify of every event a listener saw, in order) and
// <scenario>.json (the scenario's other observations). index.json lists the scenarios.
// The clock is virtual (Date.now and performance.now advance by 1 ms per read) and token
// chunks have a fixed size, so recording twice gives the same files.

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, outArgument] = process.argv.slice(2);
if (!packageDir) {
	console.error("usage: node tests/record_pi16.mjs <dir with node_modules/@earendil-works> [out]");
	process.exit(2);
}
const modules = join(resolve(packageDir), "node_modules");
const scopes = [
	["@earendil-works", "1.6"],
	["@mariozechner", "0.73"],
];
const found = scopes.find(([scope]) => {
	try {
		readFileSync(join(modules, scope, "pi-ai", "package.json"));
		return true;
	} catch {
		return false;
	}
});
if (!found) {
	console.error(`no @earendil-works/pi-ai or @mariozechner/pi-ai under ${modules}`);
	process.exit(2);
}
const [scope, line] = found;
const packageFile = (name, ...path) => join(modules, scope, name, ...path);
const version = (name) => JSON.parse(readFileSync(packageFile(name, "package.json"), "utf8")).version;
const load = (name, ...path) => import(pathToFileURL(packageFile(name, ...path)).href);
const ai = await load("pi-ai", "dist", "index.js");
const core = await load("pi-agent-core", "dist", "index.js");
const completions =
	line === "1.6"
		? await load("pi-ai", "dist", "api", "openai-completions.js")
		: await load("pi-ai", "dist", "providers", "openai-completions.js");
const out = resolve(outArgument ?? join("tests", "fixtures", line === "1.6" ? "pi16" : "pi073"));
mkdirSync(out, { recursive: true });

// ------------------------------------------------------------------ virtual clock

const EPOCH = 1767225600000; // 2026-01-01T00:00:00Z
let clock = EPOCH;
Date.now = () => ++clock;
Object.defineProperty(performance, "now", { value: () => ++clock - EPOCH, configurable: true });

// ------------------------------------------------------------------ helpers

// Scripted responses are built when the request arrives, so their timestamps (and the
// durationMs the event stream adds) are those of a real response.
const later = (build) => () => build();


function faux(responses, extra = {}) {
	const options = { api: "faux", tokenSize: { min: 3, max: 3 }, ...extra };
	if (line === "1.6") {
		const handle = ai.fauxProvider(options);
		handle.setResponses(responses.map(later));
		const streamFn = (model, context, streamOptions) =>
			handle.provider.streamSimple(model, context, streamOptions);
		return { model: handle.getModel(), streamFn, handle };
	}
	const registration = ai.registerFauxProvider(options);
	registration.setResponses(responses.map(later));
	const streamFn = (model, context, streamOptions) => ai.streamSimple(model, context, streamOptions);
	return { model: registration.getModel(), streamFn, handle: registration };
}

const numbers = {
	type: "object",
	properties: { a: { type: "number" }, b: { type: "number" } },
	required: ["a", "b"],
};

function tool(name, description, execute, parameters = numbers) {
	return { name, label: name, description, parameters, execute };
}

const add = tool("add", "Add two numbers", async (_id, { a, b }) => ({
	content: [{ type: "text", text: String(a + b) }],
	details: { sum: a + b },
}));
const mul = tool("mul", "Multiply two numbers", async (_id, { a, b }) => ({
	content: [{ type: "text", text: String(a * b) }],
	details: { product: a * b },
}));

function newAgent(setup, state = {}, options = {}) {
	return new core.Agent({
		initialState: { model: setup.model, ...state },
		streamFn: setup.streamFn,
		...options,
	});
}

function record(agent) {
	const events = [];
	agent.subscribe((event) => {
		events.push(JSON.stringify(event));
	});
	return events;
}

const scenarios = [];

function save(name, description, { agent, events, extra = {} }) {
	if (agent !== undefined) {
		writeFileSync(join(out, `${name}.transcript.json`), JSON.stringify(agent.state.messages));
	}
	if (events !== undefined) writeFileSync(join(out, `${name}.events.jsonl`), `${events.join("\n")}\n`);
	writeFileSync(join(out, `${name}.json`), `${JSON.stringify({ scenario: name, description, ...extra }, null, 2)}\n`);
	scenarios.push({
		name,
		description,
		transcript: agent !== undefined,
		events: events !== undefined,
	});
}

// ------------------------------------------------------------------ agent scenarios

async function toolTurn() {
	const setup = faux([
		() => ai.fauxAssistantMessage(
			[ai.fauxThinking("Add them."), ai.fauxText("Let me add."), ai.fauxToolCall("add", { a: 2, b: 3 }, { id: "call_1" })],
			{ stopReason: "toolUse" },
		),
		() => ai.fauxAssistantMessage("2 + 3 = 5"),
	]);
	const agent = newAgent(setup, { systemPrompt: "You add numbers.", tools: [add] });
	const events = record(agent);
	await agent.prompt("What is 2 + 3?");
	save("tool_turn", "one tool call, its result, then the answer", { agent, events });
}

async function parallelTools() {
	let fastDone;
	const fastFinished = new Promise((resolve) => {
		fastDone = resolve;
	});
	const slow = tool("slow", "Finishes after fast", async (_id, { a, b }, _signal, onUpdate) => {
		onUpdate?.({ content: [{ type: "text", text: "waiting" }], details: { stage: 1 } });
		await fastFinished;
		return { content: [{ type: "text", text: `slow ${a + b}` }], details: {} };
	});
	const fast = tool("fast", "Finishes first", async (_id, { a, b }) => {
		fastDone();
		return { content: [{ type: "text", text: `fast ${a * b}` }], details: {} };
	});
	const setup = faux([
		() => ai.fauxAssistantMessage(
			[ai.fauxToolCall("slow", { a: 1, b: 2 }, { id: "call_slow" }), ai.fauxToolCall("fast", { a: 3, b: 4 }, { id: "call_fast" })],
			{ stopReason: "toolUse" },
		),
		() => ai.fauxAssistantMessage("done"),
	]);
	const agent = newAgent(setup, { tools: [slow, fast] });
	const events = record(agent);
	await agent.prompt("Run both.");
	save("parallel_tools", "two tool calls in one response; the second finishes first; an update", {
		agent,
		events,
	});
}

async function abortStreaming() {
	// paced, so the listener's abort lands between two chunks
	const setup = faux([() => ai.fauxAssistantMessage("This answer is long enough to be cut off early.")], {
		tokensPerSecond: 1000,
	});
	const agent = newAgent(setup);
	const events = record(agent);
	agent.subscribe((event) => {
		if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") agent.abort();
	});
	await agent.prompt("Talk.");
	save("abort_streaming", "abort() on the first text_delta", { agent, events });
}

async function abortTools() {
	const quick = tool("quick", "Returns at once", async () => ({ content: [{ type: "text", text: "quick" }], details: {} }));
	const hang = tool("hang", "Waits for the abort", async (_id, _params, signal) => {
		await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
		throw new Error("hang saw the abort");
	});
	const setup = faux([
		() => ai.fauxAssistantMessage(
			[ai.fauxToolCall("hang", { a: 1, b: 1 }, { id: "call_hang" }), ai.fauxToolCall("quick", { a: 1, b: 1 }, { id: "call_quick" })],
			{ stopReason: "toolUse" },
		),
		() => ai.fauxAssistantMessage("never asked"),
	]);
	const agent = newAgent(setup, { tools: [hang, quick] });
	const events = record(agent);
	agent.subscribe((event) => {
		if (event.type === "tool_execution_end") agent.abort();
	});
	await agent.prompt("Run both.");
	save("abort_tools", "abort() when the first of two parallel tool calls ends", { agent, events });
}

async function streamFunctionThrows() {
	const setup = faux([]);
	setup.streamFn = () => {
		throw new Error("network down");
	};
	const agent = newAgent(setup, { tools: [add] });
	const events = record(agent);
	await agent.prompt("Hello?");
	save("stream_function_throws", "the stream function throws instead of returning a stream", {
		agent,
		events,
		extra: { errorMessage: agent.state.errorMessage },
	});
}

async function lengthWithToolCalls() {
	const hooks = [];
	const setup = faux([
		() => ai.fauxAssistantMessage(
			[ai.fauxText("Adding."), ai.fauxToolCall("add", { a: 1, b: 2 }, { id: "call_1" }), ai.fauxToolCall("add", { a: 3 }, { id: "call_2" })],
			{ stopReason: "length" },
		),
		() => ai.fauxAssistantMessage("Let me try again."),
	]);
	const agent = newAgent(
		setup,
		{ tools: [add] },
		{
			beforeToolCall: async ({ toolCall }) => {
				hooks.push(`before ${toolCall.id}`);
			},
		},
	);
	const events = record(agent);
	await agent.prompt("Add twice.");
	save("length_with_tool_calls", "a response cut off by the token limit that holds tool calls", {
		agent,
		events,
		extra: { hooks },
	});
}

async function malformedArguments() {
	const text = '{"a": 2, "b": ';
	const parsed = ai.parseToolCallArguments(text);
	const hooks = [];
	const setup = faux([
		() => ai.fauxAssistantMessage([{ ...ai.fauxToolCall("add", {}, { id: "call_1" }), ...parsed }], { stopReason: "toolUse" }),
		() => ai.fauxAssistantMessage("Sorry."),
	]);
	const agent = newAgent(
		setup,
		{ tools: [add] },
		{
			beforeToolCall: async ({ toolCall }) => {
				hooks.push(`before ${toolCall.id}`);
			},
			afterToolCall: async ({ toolCall }) => {
				hooks.push(`after ${toolCall.id}`);
			},
		},
	);
	const events = record(agent);
	await agent.prompt("Add.");
	save("malformed_arguments", "a tool call whose argument text was not JSON (argumentsError)", {
		agent,
		events,
		extra: { argumentText: text, parsed, hooks },
	});
}

async function nestedCalls() {
	const hooks = [];
	let captured;
	const outcomes = [];
	const batch = tool(
		"batch",
		"Runs add twice and a missing tool",
		async (_id, _params, signal) => {
			const calls = [
				{ type: "toolCall", id: "nested_1", name: "add", arguments: { a: 1, b: 2 } },
				{ type: "toolCall", id: "nested_2", name: "add", arguments: { a: "x" } },
				{ type: "toolCall", id: "nested_3", name: "nope", arguments: {} },
			];
			for (const call of calls) {
				const outcome = await core.runToolCall(call, {
					tools: [add],
					assistantMessage: captured.assistantMessage,
					context: captured.context,
					signal,
					beforeToolCall: async ({ toolCall }) => {
						hooks.push(`nested before ${toolCall.id}`);
					},
					afterToolCall: async ({ toolCall, isError }) => {
						hooks.push(`nested after ${toolCall.id} ${isError}`);
					},
				});
				outcomes.push(outcome);
			}
			return {
				content: [{ type: "text", text: outcomes.map((o) => o.result.content[0].text).join("; ") }],
				details: { ran: outcomes.length },
			};
		},
		{ type: "object", properties: {} },
	);
	const setup = faux([
		() => ai.fauxAssistantMessage([ai.fauxToolCall("batch", {}, { id: "call_batch" })], { stopReason: "toolUse" }),
		() => ai.fauxAssistantMessage("Batch done."),
	]);
	const agent = newAgent(
		setup,
		{ tools: [batch, add] },
		{
			beforeToolCall: async (context) => {
				captured = context;
				hooks.push(`before ${context.toolCall.id}`);
			},
			afterToolCall: async ({ toolCall }) => {
				hooks.push(`after ${toolCall.id}`);
			},
		},
	);
	// The host records the nested calls on the result message (the loop does not).
	agent.subscribe((event) => {
		if (event.type === "message_end" && event.message.role === "toolResult") {
			event.message.nestedCalls = {
				calls: outcomes.map(({ toolCall, isError, durationMs }) => ({
					id: toolCall.id,
					name: toolCall.name,
					arguments: toolCall.arguments,
					status: isError ? "error" : "ok",
					...(durationMs === undefined ? {} : { durationMs }),
					...(isError ? { error: "failed" } : {}),
				})),
				complete: true,
			};
		}
	});
	const events = record(agent);
	await agent.prompt("Run the batch.");
	save("run_tool_call_nested", "a tool runs nested calls with runToolCall; the host records nestedCalls", {
		agent,
		events,
		extra: { hooks, outcomes },
	});
}

async function toolResultFields() {
	const usage = (input, output) => ({
		input,
		output,
		cacheRead: 0,
		cacheWrite: 0,
		totalTokens: input + output,
		cost: { input: 0.001, output: 0.002, cacheRead: 0, cacheWrite: 0, total: 0.003 },
	});
	const result = (text, extra) => async () => ({ content: [{ type: "text", text }], details: { text }, ...extra });
	const empty = { type: "object", properties: {} };
	const tools = [
		tool("refuse", "Reports a failure without throwing", result("refused", { isError: true }), empty),
		tool("measure", "Structured result with usage", result("42 cm", { structuredContent: { cm: 42 }, usage: usage(5, 7) }), empty),
		tool("rewrite", "Structured result whose content the hook replaces", result("raw", { structuredContent: { raw: true } }), empty),
		tool("annotate", "Structured result whose details the hook replaces", result("kept", { structuredContent: { kept: true } }), empty),
	];
	const setup = faux([
		() => ai.fauxAssistantMessage(
			["refuse", "measure", "rewrite", "annotate"].map((name, i) => ai.fauxToolCall(name, {}, { id: `call_${i + 1}` })),
			{ stopReason: "toolUse" },
		),
		() => ai.fauxAssistantMessage("Noted."),
	]);
	const agent = newAgent(
		setup,
		{ tools },
		{
			toolExecution: "sequential",
			afterToolCall: async ({ toolCall }) => {
				if (toolCall.name === "rewrite") return { content: [{ type: "text", text: "rewritten" }] };
				if (toolCall.name === "annotate") return { details: { note: "hook" }, usage: usage(1, 1) };
				return undefined;
			},
		},
	);
	const events = record(agent);
	await agent.prompt("Use the tools.");
	save("tool_result_fields", "isError, structuredContent and usage of tool results; afterToolCall replacing content or details", {
		agent,
		events,
	});
}

async function everyField() {
	// Every field a 1.6 message can carry, and at several depths a field no line knows yet
	// (with numbers that JavaScript and msgspec spell differently); the 1.6 agent keeps
	// them all through a run.
	const future = (name) => ({ [`future_${name}`]: { deep: [1, { at: name }], small: 3e-6, big: 1e21 } });
	const usage = {
		input: 10,
		output: 20,
		cacheRead: 3,
		cacheWrite: 4,
		cacheWrite1h: 2,
		reasoning: 5,
		totalTokens: 37,
		cost: { input: 0.00003, output: 0.0003, cacheRead: 9e-7, cacheWrite: 0.000015, total: 0.000345, totalFromProvider: true, ...future("cost") },
		...future("usage"),
	};
	const declared = {
		name: "add",
		description: "Add",
		parameters: { type: "object", properties: { a: { type: "number", minimum: 0.000001 } } },
		constrainedSampling: { type: "json_schema", strict: "prefer" },
		...future("tool"),
	};
	const messages = [
		{
			role: "system",
			content: [{ type: "text", text: "sys", textSignature: "ts0", ...future("system_text") }],
			sections: { intro: "hi", gone: null },
			toolsAdded: [declared],
			toolsRemoved: [{ name: "mul", ...future("tool_reference") }],
			timestamp: 1,
			...future("system"),
		},
		{
			role: "user",
			content: [{ type: "text", text: "hi", ...future("text") }, { type: "image", data: "AA==", mimeType: "image/png", ...future("image") }],
			timestamp: 2,
			...future("user"),
		},
		{
			role: "assistant",
			content: [
				{ type: "thinking", thinking: "t", thinkingSignature: "sig", redacted: true, ...future("thinking") },
				{ type: "text", text: "x", textSignature: '{"v":1,"id":"msg_1","phase":"final_answer"}' },
				{
					type: "toolCall",
					id: "c1",
					name: "add",
					arguments: { a: 1.5, nested: { b: [null, true, 3e-6, -9.5e-6, 1e21, 1.5e300, 0.1] } },
					thoughtSignature: "th",
					namespace: "ns",
					argumentsError: "bad",
					...future("tool_call"),
				},
			],
			api: "anthropic-messages",
			provider: "anthropic",
			model: "claude",
			responseModel: "claude-x",
			responseId: "r1",
			providerThinkingLevel: "high",
			thinkingLevel: "xhigh",
			diagnostics: [{ type: "retry", timestamp: 5, error: { name: "E", message: "m", code: 42 }, details: { k: 1e-6 } }],
			usage,
			stopReason: "deferred",
			deferred: { provider: "anthropic", modelId: "claude", api: "anthropic-messages", id: "b1", expiresAt: 9, pollAfterMs: 100, data: { any: [1] }, ...future("deferred") },
			errorMessage: "e",
			rawStopReason: "pause_turn",
			endTurn: false,
			timestamp: 4,
			durationMs: 12,
			...future("assistant"),
		},
		{
			role: "toolResult",
			toolCallId: "c1",
			toolName: "add",
			content: [{ type: "text", text: "ok" }],
			details: null,
			usage,
			nestedCalls: {
				calls: [
					{ id: "n1", name: "add", arguments: { a: 0.000005 }, status: "ok", durationMs: 1, ...future("nested_call") },
					{ id: "n2", name: "big", argumentsBytes: 99999, status: "unfinished", error: "cut" },
				],
				complete: false,
				...future("nested_calls"),
			},
			isError: false,
			timestamp: 5,
			durationMs: 7,
			...future("tool_result"),
		},
	];
	const setup = faux([() => ai.fauxAssistantMessage("Done.")]);
	const agent = newAgent(setup, { messages });
	const events = record(agent);
	await agent.prompt("Next.");
	save("every_field", "a transcript with every 1.6 field and fields no line knows yet, through one more run", {
		agent,
		events,
	});
}

async function systemToolChanges() {
	const setup = faux([() => ai.fauxAssistantMessage("First."), () => ai.fauxAssistantMessage("Second.")]);
	const agent = newAgent(setup, { systemPrompt: "You do arithmetic.", tools: [add] });
	const events = record(agent);
	await agent.prompt("One.");
	agent.state.tools = [mul];
	await agent.prompt("Two.");
	save("system_tool_changes", "the transcript declares the tools; changing state.tools adds a system message", {
		agent,
		events,
		extra: { systemPrompt: agent.state.systemPrompt },
	});
}

async function retry() {
	const setup = faux([
		() => ai.fauxAssistantMessage([], { stopReason: "error", errorMessage: "529 overloaded_error: Overloaded" }),
		() => ai.fauxAssistantMessage([], { stopReason: "error", errorMessage: "Connection closed." }),
		() => ai.fauxAssistantMessage("Recovered."),
	]);
	const log = [];
	const produce = async () => {
		const stream = setup.streamFn(setup.model, ai.normalizeContext({ messages: [{ role: "user", content: "Hi", timestamp: 1 }] }), {});
		return stream.result();
	};
	const policy = { enabled: true, maxRetries: 3, baseDelayMs: 1 };
	const message = await ai.retryAssistantCall(produce, policy, undefined, {
		onRetryScheduled: (attempt, maxAttempts, delayMs, errorMessage) => {
			log.push({ event: "scheduled", attempt, maxAttempts, delayMs, errorMessage });
		},
		onRetryAttemptStart: () => {
			log.push({ event: "attempt_start" });
		},
		onRetryFinished: (success, attempt, finalError) => {
			log.push({ event: "finished", success, attempt, ...(finalError === undefined ? {} : { finalError }) });
		},
	});
	const delays = [1, 2, 3, 4, 5, 10, 20].map((attempt) => ({
		attempt,
		default: ai.retryDelayMs({ baseDelayMs: 2000 }, attempt),
		capped: ai.retryDelayMs({ baseDelayMs: 2000, maxAgentDelayMs: 10000 }, attempt),
	}));
	const errors = [
		"429 Too Many Requests",
		"req_4290abc failed",
		"Error 503: service temporarily unavailable",
		"overloaded_error",
		"rate limit exceeded",
		"ECONNRESET",
		"read ETIMEDOUT",
		"Connection closed.",
		"websocket connection limit reached",
		"fetch failed",
		"terminated",
		"Request was aborted",
		"400 invalid_request_error: prompt is too long",
		"500 Internal Server Error",
		"model_x5023 not found",
		"Error: 529",
		"502",
		"context length exceeded",
	].map((errorMessage) => ({
		errorMessage,
		retryable: ai.isRetryableAssistantError({ ...ai.fauxAssistantMessage([], { stopReason: "error", errorMessage }) }),
	}));
	save("retry", "retryAssistantCall over two retryable errors; delays; which errors are retryable", {
		extra: { policy, log, message, delays, errors, defaultMaxDelayMs: ai.DEFAULT_MAX_AGENT_RETRY_DELAY_MS },
	});
}

// ------------------------------------------------------------------ provider scenarios

const SSE_CHUNKS = {
	openrouter_cost: [
		{ id: "gen-1", model: "openai/gpt-4o-mini", choices: [{ index: 0, delta: { role: "assistant", content: "Hel" } }] },
		{ id: "gen-1", model: "openai/gpt-4o-mini", choices: [{ index: 0, delta: { content: "lo." } }] },
		{ id: "gen-1", model: "openai/gpt-4o-mini", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
		{
			id: "gen-1",
			model: "openai/gpt-4o-mini",
			choices: [],
			usage: {
				prompt_tokens: 120,
				completion_tokens: 3,
				total_tokens: 123,
				prompt_tokens_details: { cached_tokens: 20 },
				cost: 0.0000419,
				is_byok: false,
			},
		},
	],
	openrouter_byok_cost: [
		{ id: "gen-2", model: "anthropic/claude-sonnet-4.5", choices: [{ index: 0, delta: { content: "Hi" } }] },
		{
			id: "gen-2",
			model: "anthropic/claude-sonnet-4.5",
			choices: [{ index: 0, delta: {}, finish_reason: "stop" }],
			usage: {
				prompt_tokens: 10,
				completion_tokens: 1,
				total_tokens: 11,
				cost: 0.000001,
				is_byok: true,
				cost_details: { upstream_inference_cost: null, upstream_inference_prompt_cost: 0.00003, upstream_inference_completions_cost: 0.000015 },
			},
		},
	],
	completions_malformed_arguments: [
		{ id: "c-3", choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_w", type: "function", function: { name: "write", arguments: "" } }] } }] },
		{ id: "c-3", choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"path": "a.txt", ' } }] } }] },
		{ id: "c-3", choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '"content": "trunc' } }] } }] },
		{ id: "c-3", choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }], usage: { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 } },
	],
};

function sseBody(chunks) {
	return `${chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join("")}data: [DONE]\n\n`;
}

async function providerScenario(name, description, model) {
	const body = sseBody(SSE_CHUNKS[name]);
	const server = createServer((request, response) => {
		request.resume();
		request.on("end", () => {
			response.writeHead(200, { "content-type": "text/event-stream" });
			response.end(body);
		});
	});
	await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
	const baseUrl = `http://127.0.0.1:${server.address().port}/api/v1`;
	const fullModel = {
		name: model.id,
		api: "openai-completions",
		baseUrl,
		reasoning: false,
		input: ["text"],
		contextWindow: 128000,
		maxTokens: 16384,
		...model,
	};
	const context = { messages: [{ role: "user", content: "Hi", timestamp: 1 }] };
	const transcript = line === "1.6" ? ai.normalizeContext(context) : context;
	const stream = completions.streamSimple(fullModel, transcript, { apiKey: "test-key" });
	const events = [];
	for await (const event of stream) events.push(JSON.stringify(event));
	const message = await stream.result();
	server.close();
	const { baseUrl: _baseUrl, ...recordedModel } = fullModel;
	writeFileSync(join(out, `${name}.sse`), body);
	writeFileSync(join(out, `${name}.message.json`), JSON.stringify(message));
	save(name, description, { events, extra: { model: recordedModel } });
}

// ------------------------------------------------------------------ api scenarios
//
// The original's mistral-conversations, azure-openai-responses, openai-codex-responses and
// pi-messages providers against a local server that answers with a scripted body. Besides
// the message and the events, <scenario>.json records the request the original sent (path,
// the headers that matter, the JSON body), so pi_trio's requests are compared too. The
// pi-messages scenarios are scrubbed (their diagnostics name the server's address and
// carry stack traces) and also write <scenario>.pushed.jsonl: every event as it was pushed.

const API_MODULES = {
	"mistral-conversations": "mistral-conversations.js",
	"azure-openai-responses": "azure-openai-responses.js",
	"openai-codex-responses": "openai-codex-responses.js",
	"pi-messages": "pi-messages.js",
};
// Headers the providers set themselves (the SDKs' own x-stainless-* and the runtime's
// user-agent differ between runtimes and are left out).
const RECORDED_HEADERS = [
	"accept",
	"api-key",
	"authorization",
	"chatgpt-account-id",
	"content-type",
	"content-encoding",
	"openai-beta",
	"originator",
	"session-id",
	"session_id",
	"x-affinity",
	"x-client-request-id",
];

function eventBody(events) {
	return events.map((event) => `data: ${typeof event === "string" ? event : JSON.stringify(event)}\n\n`).join("");
}

// A ChatGPT access token for account "acct_pi16": unsigned, which the provider never checks.
const CODEX_TOKEN = [
	{ alg: "none", typ: "JWT" },
	{ "https://api.openai.com/auth": { chatgpt_account_id: "acct_pi16" }, exp: 1893456000 },
]
	.map((part) => Buffer.from(JSON.stringify(part)).toString("base64url"))
	.concat("signature")
	.join(".");

// The local server's address as the recordings name it (the port changes from run to run).
const RECORDED_ORIGIN = "https://pi16.test";

// `scrub`: the JSON of a message or event with the local server's address replaced by
// RECORDED_ORIGIN and without JavaScript stack traces (they name files of this machine).
function scrubbed(json, origin) {
	return JSON.stringify(JSON.parse(json), (key, value) => {
		if (key === "stack") return undefined;
		return typeof value === "string" ? value.replaceAll(origin, RECORDED_ORIGIN) : value;
	});
}

async function apiScenario(name, description, { model, context, options = {}, body, status = 200, simple = true, scrub = false }) {
	const requests = [];
	const server = createServer((request, response) => {
		const chunks = [];
		request.on("data", (chunk) => chunks.push(chunk));
		request.on("end", () => {
			const headers = {};
			for (const header of RECORDED_HEADERS) {
				if (request.headers[header] !== undefined) headers[header] = request.headers[header];
			}
			requests.push({ method: request.method, path: request.url, headers, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
			response.writeHead(status, { "content-type": status < 400 ? "text/event-stream" : "application/json" });
			response.end(body);
		});
	});
	await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
	const baseUrl = `http://127.0.0.1:${server.address().port}${model.basePath ?? ""}`;
	const { basePath: _basePath, ...rest } = model;
	const fullModel = { ...rest, baseUrl };
	const api = await load("pi-ai", "dist", "api", API_MODULES[model.api]);
	const transcript = ai.normalizeContext(context);
	const stream = (simple ? api.streamSimple : api.stream)(fullModel, transcript, { apiKey: "test-key", ...options });
	// With `scrub`, each event is also written as it is pushed (the consumer below may
	// lag behind the producer, and the partial is shared): what every partial held then.
	const pushed = [];
	if (scrub) {
		const push = stream.push;
		stream.push = (event) => {
			push.call(stream, event);
			pushed.push(JSON.stringify(event));
		};
	}
	const events = [];
	for await (const event of stream) events.push(JSON.stringify(event));
	const message = await stream.result();
	server.close();
	const clean = scrub ? (json) => scrubbed(json, new URL(baseUrl).origin) : (json) => json;
	const { baseUrl: _baseUrl, ...recordedModel } = fullModel;
	const { apiKey: _apiKey, ...recordedOptions } = options;
	writeFileSync(join(out, `${name}.sse`), body);
	writeFileSync(join(out, `${name}.message.json`), clean(JSON.stringify(message)));
	if (scrub) writeFileSync(join(out, `${name}.pushed.jsonl`), `${pushed.map(clean).join("\n")}\n`);
	save(name, description, {
		events: events.map(clean),
		extra: { model: recordedModel, basePath: model.basePath ?? "", context, options: recordedOptions, simple, status, requests },
	});
}

const MISTRAL_SMALL = {
	id: "mistral-small-latest",
	name: "Mistral Small (latest)",
	api: "mistral-conversations",
	provider: "mistral",
	reasoning: true,
	input: ["text", "image"],
	cost: { input: 0.15, output: 0.6, cacheRead: 0.015, cacheWrite: 0 },
	contextWindow: 262144,
	maxTokens: 256000,
	thinkingLevelMap: { off: "none", minimal: null, low: null, medium: null, high: "high", xhigh: null, max: null },
};
const MAGISTRAL = {
	id: "magistral-medium-2509",
	name: "Magistral Medium",
	api: "mistral-conversations",
	provider: "mistral",
	reasoning: true,
	input: ["text", "image"],
	cost: { input: 2, output: 5, cacheRead: 0.2, cacheWrite: 0 },
	contextWindow: 131072,
	maxTokens: 40000,
};
const AZURE_GPT54 = {
	id: "gpt-5.4",
	name: "GPT-5.4",
	api: "azure-openai-responses",
	provider: "azure",
	basePath: "/openai/v1",
	reasoning: true,
	input: ["text", "image"],
	cost: { input: 2.5, output: 15, cacheRead: 0.25, cacheWrite: 0 },
	contextWindow: 1050000,
	maxTokens: 128000,
	thinkingLevelMap: { off: null, xhigh: "xhigh" },
	compat: { supportsOpenAIGrammarTools: true },
};
const CODEX_SOL = {
	id: "gpt-6.2-sol",
	name: "GPT-6.2 Sol",
	api: "openai-codex-responses",
	provider: "openai-codex",
	basePath: "/backend-api",
	reasoning: true,
	input: ["text", "image"],
	cost: { input: 2, output: 10, cacheRead: 0.1, cacheWrite: 2.5 },
	contextWindow: 500000,
	maxTokens: 128000,
	thinkingLevelMap: { off: null, minimal: "low", low: "low", medium: "medium", high: "high", xhigh: "xhigh", max: "max" },
	compat: {
		supportsOpenAIGrammarTools: true,
		supportsAdditionalTools: true,
		supportsToolSearch: true,
		supportsMidConvoSystemMessages: true,
		supportsMidConvoEffort: true,
	},
};

const mistralChunk = (id, model, delta, finish = null, usage = undefined) => ({
	id,
	object: "chat.completion.chunk",
	created: 1767225600,
	model,
	choices: [{ index: 0, delta, finish_reason: finish }],
	...(usage === undefined ? {} : { usage }),
});
const thinkingDelta = (text) => ({ content: [{ type: "thinking", thinking: [{ type: "text", text }] }] });
const ts = (n) => EPOCH - 1000 + n;
const ZERO = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

async function mistralScenarios() {
	const S = "cmpl-5e4f0c2a9b1d4e7f";
	await apiScenario("mistral_text", "Mistral: a system prompt, text in three deltas, usage with cached tokens", {
		model: MISTRAL_SMALL,
		context: { systemPrompt: "You are terse.", messages: [{ role: "user", content: "Greet the world.", timestamp: ts(1) }] },
		options: { sessionId: "sess-mistral-1" },
		body: `${eventBody([
			mistralChunk(S, "mistral-small-2603", { role: "assistant", content: "" }),
			mistralChunk(S, "mistral-small-2603", { content: "Bonjour" }),
			mistralChunk(S, "mistral-small-2603", { content: " le monde 🌍" }),
			mistralChunk(S, "mistral-small-2603", { content: " !" }),
			mistralChunk(S, "mistral-small-2603", { content: "" }, "stop", {
				prompt_tokens: 1100,
				total_tokens: 1108,
				completion_tokens: 8,
				prompt_tokens_details: { cached_tokens: 1024 },
			}),
		])}data: [DONE]\n\n`,
	});
	const T = "cmpl-8a7b6c5d4e3f2a1b";
	const priorCall = { type: "toolCall", id: "call_0|fc_0123456789", name: "add", arguments: { a: 1, b: 1 } };
	await apiScenario("mistral_thinking_tools", "Mistral: reasoning level to prompt_mode, thinking parts, two tool calls, a replayed foreign tool call", {
		model: MAGISTRAL,
		context: {
			systemPrompt: "You add numbers.",
			tools: [add],
			messages: [
				{ role: "user", content: "Warm up: 1 + 1?", timestamp: ts(1) },
				{
					role: "assistant",
					content: [{ type: "thinking", thinking: "Easy.", thinkingSignature: "sig" }, { type: "text", text: "Adding." }, priorCall],
					api: "openai-responses",
					provider: "openai",
					model: "gpt-5.4",
					usage: ZERO,
					stopReason: "toolUse",
					timestamp: ts(2),
				},
				{ role: "toolResult", toolCallId: priorCall.id, toolName: "add", content: [{ type: "text", text: "2" }], isError: false, timestamp: ts(3) },
				{ role: "user", content: [{ type: "text", text: "Now 2 + 3 and 4 + 5." }], timestamp: ts(4) },
			],
		},
		options: { reasoning: "medium" },
		body: `${eventBody([
			mistralChunk(T, "magistral-medium-2509", { role: "assistant", content: "" }),
			mistralChunk(T, "magistral-medium-2509", thinkingDelta("Two sums,")),
			mistralChunk(T, "magistral-medium-2509", { content: [{ type: "thinking", thinking: [] }] }),
			mistralChunk(T, "magistral-medium-2509", thinkingDelta(" two calls.")),
			mistralChunk(T, "magistral-medium-2509", { content: [{ type: "text", text: "Calling add twice." }] }),
			mistralChunk(T, "magistral-medium-2509", {
				tool_calls: [{ id: "Xb2mK9pQr", function: { name: "add", arguments: '{"a": 2, "b": 3}' }, index: 0 }],
			}),
			mistralChunk(T, "magistral-medium-2509", {
				tool_calls: [{ id: "null", function: { name: "add", arguments: { a: 4, b: 5 } }, index: 1 }],
			}),
			mistralChunk(T, "magistral-medium-2509", { content: "" }, "tool_calls", {
				prompt_tokens: 240,
				total_tokens: 300,
				completion_tokens: 60,
			}),
		])}data: [DONE]\n\n`,
	});
	await apiScenario("mistral_error_finish", "Mistral: a stream that finishes with reason error keeps its text", {
		model: MISTRAL_SMALL,
		context: { messages: [{ role: "user", content: "Hi", timestamp: ts(1) }] },
		options: { reasoning: "high" },
		body: `${eventBody([
			mistralChunk(S, "mistral-small-2603", { content: "Partial" }),
			mistralChunk(S, "mistral-small-2603", { content: "" }, "error", { prompt_tokens: 5, total_tokens: 6, completion_tokens: 1 }),
		])}data: [DONE]\n\n`,
	});
	await apiScenario("mistral_http_error", "Mistral: a 429 with a JSON body", {
		model: MISTRAL_SMALL,
		context: { messages: [{ role: "user", content: "Hi", timestamp: ts(1) }] },
		status: 429,
		body: '{"object":"error","message":"Requests rate limit exceeded","type":"rate_limited","param":null,"code":"1300"}',
	});
}

async function azureScenarios() {
	const reasoningItem = { id: "rs_az1", type: "reasoning", summary: [{ type: "summary_text", text: "Plan: add." }] };
	await apiScenario("azure_reasoning_backfill", "Azure: encrypted reasoning only in response.completed is backfilled; session cache key", {
		model: AZURE_GPT54,
		context: { systemPrompt: "You add numbers.", tools: [add], messages: [{ role: "user", content: "2 + 3?", timestamp: ts(1) }] },
		options: { reasoning: "high", sessionId: "sess-azure-1", maxTokens: 4000 },
		body: eventBody([
			{ type: "response.created", response: { id: "resp_az1", status: "in_progress", model: "gpt-5.4-2026-03-05" } },
			{ type: "response.output_item.added", output_index: 0, item: { id: "rs_az1", type: "reasoning", summary: [] } },
			{ type: "response.reasoning_summary_text.delta", output_index: 0, delta: "Plan: add." },
			{ type: "response.reasoning_summary_part.done", output_index: 0 },
			{ type: "response.output_item.done", output_index: 0, item: reasoningItem },
			{ type: "response.output_item.added", output_index: 1, item: { id: "fc_az1", type: "function_call", call_id: "call_az1", name: "add", arguments: "" } },
			{ type: "response.function_call_arguments.delta", output_index: 1, delta: '{"a":2,' },
			{ type: "response.function_call_arguments.delta", output_index: 1, delta: '"b":3}' },
			{ type: "response.function_call_arguments.done", output_index: 1, arguments: '{"a":2,"b":3}' },
			{ type: "response.output_item.done", output_index: 1, item: { id: "fc_az1", type: "function_call", call_id: "call_az1", name: "add", arguments: '{"a":2,"b":3}', status: "completed" } },
			{
				type: "response.completed",
				response: {
					id: "resp_az1",
					status: "completed",
					model: "gpt-5.4-2026-03-05",
					output: [{ ...reasoningItem, encrypted_content: "gAAAAB-azure-encrypted" }],
					usage: { input_tokens: 300, input_tokens_details: { cached_tokens: 100 }, output_tokens: 40, output_tokens_details: { reasoning_tokens: 20 }, total_tokens: 340 },
				},
			},
		]),
	});
	await apiScenario("azure_incomplete", "Azure: an incomplete response for a content filter is an error", {
		model: AZURE_GPT54,
		context: { messages: [{ role: "user", content: "Hi", timestamp: ts(1) }] },
		body: eventBody([
			{ type: "response.output_item.added", output_index: 0, item: { id: "msg_az2", type: "message", content: [] } },
			{ type: "response.output_text.delta", output_index: 0, delta: "Once" },
			{ type: "response.output_item.done", output_index: 0, item: { id: "msg_az2", type: "message", content: [{ type: "output_text", text: "Once" }] } },
			{ type: "response.incomplete", response: { id: "resp_az2", status: "incomplete", incomplete_details: { reason: "content_filter" }, usage: { input_tokens: 5, output_tokens: 1, total_tokens: 6 } } },
		]),
	});
	await apiScenario("azure_http_error", "Azure: a 400 with an OpenAI error body", {
		model: AZURE_GPT54,
		context: { messages: [{ role: "user", content: "Hi", timestamp: ts(1) }] },
		status: 400,
		body: '{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI\'s content management policy.","type":null,"param":"prompt","code":"content_filter","status":400}}',
	});
}

async function codexScenarios() {
	const earlier = {
		role: "assistant",
		content: [{ type: "text", text: "Hello.", textSignature: '{"v":1,"id":"msg_cx0"}' }],
		api: "openai-codex-responses",
		provider: "openai-codex",
		model: "gpt-6.2-sol",
		providerThinkingLevel: "low",
		usage: ZERO,
		stopReason: "stop",
		timestamp: ts(2),
	};
	await apiScenario("codex_tools", "Codex over SSE: account header, configuration_update effort, additional_tools, response.done", {
		model: CODEX_SOL,
		context: {
			systemPrompt: "You add numbers.",
			tools: [add],
			messages: [
				{ role: "user", content: "Hi", timestamp: ts(1) },
				earlier,
				{ role: "user", content: "2 + 3?", timestamp: ts(3) },
			],
		},
		options: { apiKey: CODEX_TOKEN, transport: "sse", reasoning: "high", sessionId: "sess-codex-1" },
		body: eventBody([
			{ type: "response.created", response: { id: "resp_cx1", status: "in_progress" } },
			{ type: "response.output_item.added", output_index: 0, item: { id: "rs_cx1", type: "reasoning", summary: [] } },
			{ type: "response.output_item.done", output_index: 0, item: { id: "rs_cx1", type: "reasoning", summary: [], encrypted_content: "gAAAAB-codex" } },
			{ type: "response.output_item.added", output_index: 1, item: { id: "fc_cx1", type: "function_call", call_id: "call_cx1", name: "add", arguments: "" } },
			{ type: "response.function_call_arguments.delta", output_index: 1, delta: '{"a":2,"b":3}' },
			{ type: "response.output_item.done", output_index: 1, item: { id: "fc_cx1", type: "function_call", call_id: "call_cx1", name: "add", arguments: '{"a":2,"b":3}' } },
			{
				type: "response.done",
				response: {
					id: "resp_cx1",
					status: "completed",
					end_turn: false,
					service_tier: "default",
					usage: { input_tokens: 900, input_tokens_details: { cached_tokens: 512 }, output_tokens: 30, output_tokens_details: { reasoning_tokens: 12 }, total_tokens: 930 },
				},
			},
			{ type: "response.output_text.delta", output_index: 2, delta: "after the end" },
		]),
	});
	await apiScenario("codex_service_tier", "Codex: a priority request billed by the default tier the response names", {
		model: CODEX_SOL,
		context: { messages: [{ role: "user", content: "Hi", timestamp: ts(1) }] },
		options: { apiKey: CODEX_TOKEN, transport: "sse", serviceTier: "priority", reasoningEffort: "none", textVerbosity: "medium" },
		simple: false,
		body: eventBody([
			{ type: "response.output_item.added", output_index: 0, item: { id: "msg_cx2", type: "message", content: [] } },
			{ type: "response.output_text.delta", output_index: 0, delta: "Hi." },
			{ type: "response.output_item.done", output_index: 0, item: { id: "msg_cx2", type: "message", phase: "final_answer", content: [{ type: "output_text", text: "Hi." }] } },
			{ type: "response.completed", response: { id: "resp_cx2", status: "completed", service_tier: "default", usage: { input_tokens: 20, output_tokens: 2, total_tokens: 22 } } },
		]),
	});
	await apiScenario("codex_error_event", "Codex: an error event mid-stream", {
		model: CODEX_SOL,
		context: { messages: [{ role: "user", content: "Hi", timestamp: ts(1) }] },
		options: { apiKey: CODEX_TOKEN, transport: "sse" },
		body: eventBody([
			{ type: "response.output_item.added", output_index: 0, item: { id: "msg_cx3", type: "message", content: [] } },
			{ type: "response.output_text.delta", output_index: 0, delta: "Part" },
			{ type: "error", error: { type: "server_error", code: "server_is_overloaded", message: "Our servers are currently overloaded." } },
		]),
	});
	await apiScenario("codex_http_error", "Codex: a 400 with a JSON error body", {
		model: CODEX_SOL,
		context: { messages: [{ role: "user", content: "Hi", timestamp: ts(1) }] },
		options: { apiKey: CODEX_TOKEN, transport: "sse" },
		status: 400,
		body: '{"detail":"Unsupported parameter: max_output_tokens"}',
	});
}

const RADIUS_BALANCED = {
	id: "balanced",
	name: "Balanced",
	api: "pi-messages",
	provider: "radius",
	basePath: "/v1",
	reasoning: true,
	input: ["text", "image"],
	cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 0 },
	contextWindow: 1048576,
	maxTokens: 262144,
	thinkingLevelMap: { off: null, minimal: null, low: "low", medium: null, high: "high", xhigh: null, max: "max" },
};
const radiusUsage = (input, output, cacheRead, total) => ({
	input,
	output,
	cacheRead,
	cacheWrite: 0,
	totalTokens: input + output + cacheRead,
	cost: { input: input * 3e-6, output: output * 15e-6, cacheRead: cacheRead * 3e-7, cacheWrite: 0, total },
});

async function piMessagesScenarios() {
	const scenario = (name, description, spec) => apiScenario(name, description, { model: RADIUS_BALANCED, scrub: true, ...spec });
	await scenario("pimessages_text", "pi-messages: the request's options, text with a signature, usage and ids from done", {
		context: { systemPrompt: "You are terse.", messages: [{ role: "user", content: "Greet the world.", timestamp: ts(1) }] },
		options: { temperature: 0.3, maxTokens: 512, sessionId: "sess-radius-1", cacheRetention: "long" },
		simple: false,
		body: `: connected\n\n${eventBody([
			{ type: "start" },
			{ type: "text_start", contentIndex: 0 },
			{ type: "text_delta", contentIndex: 0, delta: "Bonjour" },
			{ type: "text_delta", contentIndex: 0, delta: " le monde 🌍" },
			{ type: "text_delta", contentIndex: 0, delta: " !" },
			{ type: "text_end", contentIndex: 0, content: "Bonjour le monde 🌍 !", contentSignature: "msg_r1" },
			{
				type: "done",
				reason: "stop",
				usage: radiusUsage(76, 8, 1024, 0.0005508),
				responseId: "resp_r1",
				responseModel: "kimi-k3",
				providerThinkingLevel: "low",
			},
		])}`,
	});
	const earlier = {
		role: "assistant",
		content: [{ type: "thinking", thinking: "Easy.", thinkingSignature: "sig0" }, { type: "text", text: "2." }],
		api: "pi-messages",
		provider: "radius",
		model: "balanced",
		usage: ZERO,
		stopReason: "stop",
		timestamp: ts(2),
	};
	await scenario("pimessages_thinking_tools", "pi-messages: reasoning, toolChoice and debug sent; redacted and streamed thinking; two tool calls with streamed arguments; a rewrite", {
		context: {
			systemPrompt: "You add numbers.",
			tools: [add],
			messages: [
				{ role: "user", content: "1 + 1?", timestamp: ts(1) },
				earlier,
				{ role: "user", content: [{ type: "text", text: "Now 2 + 3 and 4 + 5." }], timestamp: ts(3) },
			],
		},
		options: { reasoning: "high", toolChoice: "auto", debug: true },
		body: eventBody([
			{ type: "start" },
			{ type: "thinking_start", contentIndex: 0 },
			{ type: "thinking_end", contentIndex: 0, content: "", contentSignature: "enc_r2", redacted: true },
			{ type: "thinking_start", contentIndex: 1 },
			{ type: "thinking_delta", contentIndex: 1, delta: "Two sums," },
			{ type: "thinking_delta", contentIndex: 1, delta: " two calls." },
			{ type: "thinking_end", contentIndex: 1, content: "Two sums, two calls.", contentSignature: "sig_r2" },
			{ type: "text_start", contentIndex: 2 },
			{ type: "text_delta", contentIndex: 2, delta: "Adding." },
			{ type: "text_end", contentIndex: 2, content: "Adding." },
			{ type: "toolcall_start", contentIndex: 3, id: "call_r1", toolName: "add" },
			{ type: "toolcall_delta", contentIndex: 3, delta: '{"a": 2,' },
			{ type: "toolcall_delta", contentIndex: 3, delta: ' "b"' },
			{ type: "toolcall_delta", contentIndex: 3, delta: ": 3}" },
			{ type: "toolcall_end", contentIndex: 3, toolCall: { type: "toolCall", id: "call_r1", name: "add", arguments: { a: 2, b: 3 } } },
			{ type: "toolcall_start", contentIndex: 4, id: "call_r2", toolName: "add" },
			{ type: "toolcall_delta", contentIndex: 4, delta: '{"a": 4, "b": 5' },
			{ type: "toolcall_end", contentIndex: 4, toolCall: { type: "toolCall", id: "call_r2", name: "add", arguments: { a: 4, b: 5 }, thoughtSignature: "ts_r2" } },
			{
				type: "done",
				reason: "toolUse",
				usage: { ...radiusUsage(240, 60, 0, 0.00162), reasoning: 20 },
				responseId: "resp_r2",
				rewrite: { policyId: "trim-history", policyVersion: 3, changed: true, tokenCountChange: -120, messageCountChange: -1, systemPromptChanged: false },
			},
		]),
	});
	await scenario("pimessages_error_event", "pi-messages: the backend's error event keeps the text streamed before it", {
		context: { messages: [{ role: "user", content: "Hi", timestamp: ts(1) }] },
		body: eventBody([
			{ type: "start" },
			{ type: "text_start", contentIndex: 0 },
			{ type: "text_delta", contentIndex: 0, delta: "Partial" },
			{ type: "error", reason: "error", errorMessage: "Upstream provider overloaded", usage: radiusUsage(5, 1, 0, 0.00003), responseId: "resp_r3" },
		]),
	});
	await scenario("pimessages_http_error", "pi-messages: a 429 whose JSON body names a message and a code", {
		context: { messages: [{ role: "user", content: "Hi", timestamp: ts(1) }] },
		status: 429,
		body: '{"error":{"message":"Rate limit exceeded for organization","code":"rate_limited","type":"rate_limit"}}',
	});
	await scenario("pimessages_http_error_body", "pi-messages: a 502 whose body is no JSON error object", {
		context: { messages: [{ role: "user", content: "Hi", timestamp: ts(1) }] },
		status: 502,
		body: "<html><body>Bad gateway</body></html>",
	});
	await scenario("pimessages_no_terminal", "pi-messages: a stream that ends without done or error", {
		context: { messages: [{ role: "user", content: "Hi", timestamp: ts(1) }] },
		body: eventBody([
			{ type: "start" },
			{ type: "text_start", contentIndex: 0 },
			{ type: "text_delta", contentIndex: 0, delta: "Cut" },
		]),
	});
}

// ------------------------------------------------------------------ corpora

function mulberry32(seed) {
	return () => {
		seed = (seed + 0x6d2b79f5) | 0;
		let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
		t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

function streamingJsonCorpus() {
	const random = mulberry32(16);
	const pick = (items) => items[Math.floor(random() * items.length)];
	const bases = [
		{ a: [1, 2.5, { b: "x\\y" }], c: null, d: true },
		{ path: "a/b.txt", content: 'line\n"q" é', n: -12.5e3 },
		{ k: [[], {}, [{ z: false }]] },
		{ s: "😀", t: "\\u0041", u: "tab\there" },
	];
	const alphabet = [..."{}[]\":,\\ \tntrufalsNIy-0123456789.eEabc", "\\u00e9", "\\u12", "é", "\u0001"];
	const cases = [];
	for (let n = 0; n < 400; n++) {
		let text = JSON.stringify(pick(bases));
		for (let edits = Math.floor(random() * 5); edits > 0; edits--) {
			const at = Math.floor(random() * (text.length + 1));
			const roll = random();
			if (roll < 0.4) text = text.slice(0, at) + text.slice(at + 1);
			else if (roll < 0.8) text = text.slice(0, at) + pick(alphabet) + text.slice(at);
			else text = text.slice(0, at);
		}
		const cuts = [...new Set(Array.from({ length: Math.floor(random() * 6) }, () => Math.floor(random() * (text.length + 1))))].sort((x, y) => x - y);
		const points = [0, ...cuts, text.length];
		const chunks = points.slice(1).map((end, i) => text.slice(points[i], end));
		const parser = new ai.StreamingJsonParser();
		const snapshots = chunks.map((chunk) => {
			parser.append(chunk);
			const snapshot = parser.snapshot();
			return snapshot === undefined ? null : snapshot;
		});
		cases.push({ chunks, snapshots });
	}
	save("streaming_json", "StreamingJsonParser: pieces of (mutated) JSON and the snapshot after each", {
		extra: { cases },
	});
}

const ARGUMENT_TEXTS = [
	"",
	"  ",
	'{"a": 1}',
	'{"a": [1, {"b": null}], "c": "é"}',
	'{"a": ',
	'{"a": "abc',
	'{"a":1',
	'{"a": }',
	'{"a":1}x',
	"{'a': 1}",
	'{"a": 01}',
	'{"a": 1.}',
	'{"a": 1e}',
	'{"a": -}',
	"[1]",
	'"text"',
	"null",
	'{"a": "x\ty\\q"}',
	'{"a": "\\ud83d!"}',
	'{"a":1,}',
	"[1,]",
	'{"a":1 "b":2}',
	'{"a" 1}',
	'{"a": NaN}',
	'{"a": tru}',
	'{"a": "\\u12"}',
	'{"a": "b\u0001"}',
	'{"path": "/tmp/x", "content": "hello world, this is long", "z": }',
	'x{"content": "hello world, this is long", "z": ]}',
	'{"a": "😀", "b": }',
];

function argumentsCorpus() {
	const cases = ARGUMENT_TEXTS.map((text) => ({ text, parsed: ai.parseToolCallArguments(text) }));
	save("parse_tool_call_arguments", "parseToolCallArguments on complete argument texts", { extra: { cases } });
}

function validationCorpus() {
	const object = (properties, required, extra = {}) => ({ type: "object", properties, ...(required ? { required } : {}), ...extra });
	const pairs = [
		[object({ a: { type: "number" } }, ["a", "b"]), { a: "x", é: [1] }],
		[object({ v: { type: "number", minimum: 1 } }), { v: 0 }],
		[object({ v: { type: "number", multipleOf: 2 } }), { v: 3 }],
		[object({ v: { type: "string", minLength: 2, pattern: "^a" } }), { v: "b" }],
		[object({ v: { type: "array", maxItems: 1, uniqueItems: true } }), { v: [1, 1] }],
		[object({ v: { enum: ["a", "b"] } }), { v: "c" }],
		[object({ v: { const: "add" } }), { v: "c" }],
		[object({ v: { type: ["string", "null"] } }), { v: [] }],
		[object({ a: { type: "integer" } }, undefined, { additionalProperties: false, maxProperties: 1 }), { a: 1, b: 2 }],
		[object({}, undefined, { dependentRequired: { a: ["b"] } }), { a: 1 }],
		[
			{ type: "object", oneOf: [object({ op: { const: "add" }, a: { type: "number" } }, ["op", "a"]), object({ op: { const: "neg" }, x: { type: "number" } }, ["op", "x"])] },
			{ op: "mul", a: 1 },
		],
		[
			{ type: "object", oneOf: [object({ op: { const: "add" }, a: { type: "number" } }, ["op", "a"]), object({ op: { const: "neg" }, x: { type: "number" } }, ["op", "x"])] },
			{ op: "add", a: [] },
		],
		[object({ v: { oneOf: [{ type: "number" }, { type: "integer" }] } }), { v: 3 }],
		[{ $defs: { n: { type: "integer", minimum: 0 } }, type: "object", properties: { a: { $ref: "#/$defs/n" } } }, { a: -1 }],
		[
			object({ path: { type: "string" }, edits: { type: "array", items: object({ oldText: { type: "string" }, newText: { type: "string" } }, ["oldText", "newText"]) } }, ["path", "edits"]),
			{ path: "a", edits: [{ oldText: 1 }] },
		],
		[object({ n: { type: "integer" } }), { n: "7" }],
		[object({ f: { type: "number" } }), { f: 0.000003, g: 1.5 }],
		[{ type: "array", prefixItems: [{ type: "integer" }], items: false }, [1, 2]],
	];
	const cases = pairs.map(([parameters, args]) => {
		const call = { type: "toolCall", id: "1", name: "calc", arguments: args };
		try {
			return { parameters, arguments: args, result: ai.validateToolArguments({ name: "calc", description: "d", parameters }, call) };
		} catch (error) {
			return { parameters, arguments: args, error: error.message };
		}
	});
	save("validation", "validateToolArguments: schemas, arguments and the error texts", { extra: { cases } });
}

function costCorpus() {
	const rates = [
		{ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
		{ input: 0.15, output: 0.6, cacheRead: 0.075, cacheWrite: 0 },
		{
			input: 1.25,
			output: 10,
			cacheRead: 0.125,
			cacheWrite: 1.625,
			tiers: [{ inputTokensAbove: 200000, input: 2.5, output: 15, cacheRead: 0.25, cacheWrite: 4.5 }],
		},
	];
	const usages = [
		{ input: 1, output: 0, cacheRead: 0, cacheWrite: 300 },
		{ input: 1000, output: 500, cacheRead: 2000, cacheWrite: 400, cacheWrite1h: 100 },
		{ input: 250000, output: 7, cacheRead: 0, cacheWrite: 0 },
		{ input: 3, output: 2, cacheRead: 1, cacheWrite: 0 },
	];
	const cases = [];
	for (const cost of rates) {
		for (const usage of usages) {
			const full = { ...usage, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
			ai.calculateCost({ cost }, full);
			cases.push({ rates: cost, usage: JSON.stringify(full) });
		}
	}
	save("calculate_cost", "calculateCost: rates, usage and the usage JSON it writes", { extra: { cases } });
}

// ------------------------------------------------------------------ main

await toolTurn();
await parallelTools();
await abortStreaming();
await abortTools();
await streamFunctionThrows();
if (line === "1.6") {
	await lengthWithToolCalls();
	await malformedArguments();
	await nestedCalls();
	await systemToolChanges();
	await retry();
	await providerScenario("openrouter_cost", "OpenRouter reports the billed cost in usage.cost", {
		id: "openai/gpt-4o-mini",
		provider: "openrouter",
		cost: { input: 0.15, output: 0.6, cacheRead: 0.075, cacheWrite: 0 },
	});
	await providerScenario("openrouter_byok_cost", "OpenRouter BYOK: billed cost plus the upstream cost", {
		id: "anthropic/claude-sonnet-4.5",
		provider: "openrouter",
		cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
	});
	await providerScenario("completions_malformed_arguments", "streamed tool arguments cut off mid-string", {
		id: "gpt-4o-mini",
		provider: "openai",
		cost: { input: 0.15, output: 0.6, cacheRead: 0.075, cacheWrite: 0 },
	});
	await mistralScenarios();
	await azureScenarios();
	await codexScenarios();
	await piMessagesScenarios();
	streamingJsonCorpus();
	argumentsCorpus();
	validationCorpus();
	costCorpus();
	// recorded last, so the scenarios above keep their virtual timestamps
	await toolResultFields();
	await everyField();
}
const index = {
	recordedWith: {
		"pi-ai": version("pi-ai"),
		"pi-agent-core": version("pi-agent-core"),
		node: process.version,
	},
	scenarios,
};
writeFileSync(join(out, "index.json"), `${JSON.stringify(index, null, 2)}\n`);
console.log(`recorded ${scenarios.length} scenarios with ${scope} ${index.recordedWith["pi-ai"]} into ${out}`);
