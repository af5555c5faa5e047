// Records what pi 1.6 does for the three 1.x features of issue 27, as fixtures for pi_trio:
// deferred (background) responses and their handles, pi's telemetry vocabulary, and the
// Anthropic request bodies of message threads and mid-conversation changes.
//
//   npm install --prefix <dir> @earendil-works/pi-ai@1.6.0
//   node tests/record_pi1x_pi16.mjs <dir> [out]          # out: tests/fixtures/pi1x
//
// The clock is virtual (Date.now and performance.now advance by 1 ms per read) and
// Math.random is a seeded generator, so recording twice gives the same files. Only the
// local HTTP server's port changes between runs; recordings name it RECORDED_ORIGIN.

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, outArgument] = process.argv.slice(2);
if (!packageDir) {
	console.error("usage: node tests/record_pi1x_pi16.mjs <dir with node_modules/@earendil-works> [out]");
	process.exit(2);
}
const modules = join(resolve(packageDir), "node_modules", "@earendil-works");
const load = (name, ...path) => import(pathToFileURL(join(modules, name, ...path)).href);
const ai = await load("pi-ai", "dist", "index.js");
const telemetryPackage = await load("pi-telemetry", "dist", "index.js");
const out = resolve(outArgument ?? join("tests", "fixtures", "pi1x"));
mkdirSync(out, { recursive: true });
const version = JSON.parse(readFileSync(join(modules, "pi-ai", "package.json"), "utf8")).version;

// ------------------------------------------------------------------ determinism

const EPOCH = 1767225600000; // 2026-01-01T00:00:00Z
let clock = EPOCH;
Date.now = () => ++clock;
Object.defineProperty(performance, "now", { value: () => ++clock - EPOCH, configurable: true });
let seed = 27;
Math.random = () => {
	seed = (seed * 1103515245 + 12345) % 2147483648;
	return seed / 2147483648;
};

const fixtures = {};
function save(name, value) {
	fixtures[name] = true;
	writeFileSync(join(out, `${name}.json`), `${JSON.stringify(value, null, 1)}\n`);
}

const user = (text) => ({ role: "user", content: text, timestamp: Date.now() });

// ------------------------------------------------------------------ deferred

async function deferredFaux() {
	const faux = ai.fauxProvider({
		api: "faux",
		tokenSize: { min: 3, max: 3 },
		deferred: { pendingFetches: 1, pollAfterMs: 250 },
	});
	const models = ai.createModels();
	models.setProvider(faux.provider);
	const model = faux.getModel();
	faux.setResponses([
		() => ai.fauxAssistantMessage("The deferred answer."),
		() => ai.fauxAssistantMessage("Never fetched."),
	]);
	const context = { messages: [user("Summarize the report.")] };
	const submitted = await models.completeSimple(model, context, { deferred: true });
	const pending = await models.fetchDeferred(model, submitted.deferred);
	const final = await models.fetchDeferred(model, submitted.deferred);
	const again = await models.fetchDeferred(model, submitted.deferred);
	const second = await models.completeSimple(model, context, { deferred: { window: "1h" } });
	await models.cancelDeferred(model, second.deferred);
	const afterCancel = await models.fetchDeferred(model, second.deferred);
	const unknown = await models.fetchDeferred(model, { ...second.deferred, id: "deferred:unknown" });
	save("deferred_faux", {
		description: "pi 1.6's faux provider with deferred {pendingFetches: 1, pollAfterMs: 250}",
		version,
		submitted,
		pending,
		final,
		again,
		second,
		afterCancel,
		unknown,
		state: faux.state,
	});
}

// A provider of pi 1.6 with a background mode, as an application writes one: its handle
// carries every optional field. What its fetch and cancel receive is recorded.
const CUSTOM_API = "pi1x-background";
const CUSTOM_MODEL = {
	id: "batch-model",
	name: "Batch model",
	api: CUSTOM_API,
	provider: "pi1x",
	baseUrl: "http://localhost:0",
	reasoning: false,
	input: ["text"],
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
	contextWindow: 1000,
	maxTokens: 100,
};
const RICH_HANDLE = {
	provider: "pi1x",
	modelId: "batch-model",
	api: CUSTOM_API,
	id: "msgbatch_01:row-7",
	expiresAt: 1767312000000,
	pollAfterMs: 1500,
	data: { customId: "row-7", small: 0.000003, big: 1e21, list: [1.5, null, true, "é\u2028"], nested: { k: {} } },
};

function customProvider(received) {
	const message = (stopReason, extra = {}) => ({
		role: "assistant",
		content: [],
		api: CUSTOM_API,
		provider: "pi1x",
		model: "batch-model",
		usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
		stopReason,
		timestamp: Date.now(),
		...extra,
	});
	const streamOf = (final) => {
		const stream = ai.createAssistantMessageEventStream();
		queueMicrotask(() => {
			if (final.stopReason === "error") stream.push({ type: "error", reason: "error", error: final });
			else stream.push({ type: "done", reason: final.stopReason, message: final });
			stream.end(final);
		});
		return stream;
	};
	return ai.createProvider({
		id: "pi1x",
		auth: { apiKey: { name: "none", resolve: async () => ({ auth: {} }) } },
		models: [CUSTOM_MODEL],
		api: {
			stream: () => streamOf(message("deferred", { deferred: RICH_HANDLE })),
			streamSimple: () => streamOf(message("deferred", { deferred: RICH_HANDLE })),
			fetchDeferred: (_model, handle) => {
				received.push({ op: "fetch", handle: JSON.stringify(handle) });
				return streamOf(message("stop", { content: [{ type: "text", text: `fetched ${handle.id}` }] }));
			},
			cancelDeferred: async (_model, handle) => {
				received.push({ op: "cancel", handle: JSON.stringify(handle) });
			},
		},
	});
}

async function deferredAcross() {
	const received = [];
	const models = ai.createModels();
	models.setProvider(customProvider(received));
	const model = models.getModel("pi1x", "batch-model");
	const submitted = await models.completeSimple(model, { messages: [user("Batch me.")] }, { deferred: true });
	// the message as JSON text, and what a fetch of its handle receives
	const submittedJson = JSON.stringify(submitted);
	await models.fetchDeferred(model, JSON.parse(submittedJson).deferred);
	// a message pi_trio wrote (tests/fixtures/pi1x/pi_trio_deferred.json), fetched and cancelled here
	const fromPiTrio = readFileSync(join(out, "pi_trio_deferred.json"), "utf8").trim();
	const handle = JSON.parse(fromPiTrio).deferred;
	const fetched = await models.fetchDeferred(model, handle);
	await models.cancelDeferred(model, handle);
	save("deferred_across", {
		description: "a handle written by pi 1.6 (submittedJson) and one written by pi_trio, each fetched; received: what the API was given",
		version,
		submittedJson,
		fromPiTrio,
		fetched,
		received,
	});
}

// ------------------------------------------------------------------ telemetry

async function telemetryScenario(name, description, { responses, options = {}, abortAfter, deferred, tokensPerSecond }) {
	const faux = ai.fauxProvider({ api: "faux", tokenSize: { min: 3, max: 3 }, ...(deferred ? { deferred } : {}), ...(tokensPerSecond ? { tokensPerSecond } : {}) });
	faux.setResponses(responses);
	const models = ai.createModels();
	models.setProvider(faux.provider);
	const model = faux.getModel();
	const telemetry = new telemetryPackage.InMemoryTelemetryContext();
	const results = [];
	await telemetry.startSpan({ name: "application.turn" }, async (span) => {
		const controller = new AbortController();
		const stream = models.streamSimple(model, { messages: [user("Hello there.")] }, { telemetry: span, ...options, signal: controller.signal });
		let seen = 0;
		for await (const _event of stream) {
			seen++;
			if (abortAfter !== undefined && seen === abortAfter) controller.abort();
		}
		const message = await stream.result();
		results.push(message);
		if (message.stopReason === "deferred") {
			results.push(await models.fetchDeferred(model, message.deferred, { telemetry: span }));
			results.push(await models.fetchDeferred(model, message.deferred, { telemetry: span }));
		}
	});
	save(name, {
		description,
		version,
		options,
		results,
		spans: telemetry.getSpans().map(({ id, parentId, name, attributes, events, status, settled }) => ({ id, parentId, name, attributes, events, status, settled })),
		metrics: telemetry.getMetrics().map(({ kind, name, unit, value, attributes }) => ({ kind, name, unit, value, attributes })),
	});
}

async function telemetryScenarios() {
	await telemetryScenario("telemetry_blocks", "thinking, text and a tool call: first chunk, one block event each, end attributes and metrics", {
		responses: [
			() =>
				ai.fauxAssistantMessage(
					[ai.fauxThinking("Think it over."), ai.fauxText("Here it is."), ai.fauxToolCall("lookup", { query: "ünïcode 🚀" }, { id: "call-1" })],
					{ stopReason: "toolUse", responseId: "resp_1" },
				),
		],
		options: { reasoning: "high" },
	});
	await telemetryScenario("telemetry_error", "a provider error: error status provider_error with the first 500 characters", {
		responses: [() => ai.fauxAssistantMessage([], { stopReason: "error", errorMessage: `Upstream said: ${"x".repeat(600)}` })],
	});
	await telemetryScenario("telemetry_aborted", "aborted mid-stream: status ok with stop aborted", {
		responses: [() => ai.fauxAssistantMessage("A long answer that will be cut off by the abort.")],
		abortAfter: 3,
		tokensPerSecond: 1000,
	});
	await telemetryScenario("telemetry_deferred", "a deferred submission and two polls: pi.ai.request then pi.ai.poll spans; pending polls add no tokens", {
		responses: [() => ai.fauxAssistantMessage("Ready now.")],
		options: { deferred: true },
		deferred: { pendingFetches: 1 },
	});
}


// ------------------------------------------------------------------ anthropic: mid-conversation changes, threads

const RECORDED_ORIGIN = "https://pi16.test";
const anthropicApi = await load("pi-ai", "dist", "api", "anthropic-messages.js");

const CLAUDE = {
	id: "claude-sonnet-4-5",
	name: "Claude Sonnet 4.5",
	api: "anthropic-messages",
	provider: "anthropic",
	reasoning: false,
	input: ["text", "image"],
	cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
	contextWindow: 200000,
	maxTokens: 64000,
};

const numbers = { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] };
const ADD = { name: "add", description: "Add two numbers", parameters: numbers };
const ADD2 = { name: "add", description: "Add two or more numbers", parameters: numbers };
const MUL = { name: "mul", description: "Multiply two numbers", parameters: numbers };
const USAGE0 = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const assistant = (content, extra = {}) => ({
	role: "assistant",
	content,
	api: "anthropic-messages",
	provider: "anthropic",
	model: CLAUDE.id,
	usage: USAGE0,
	stopReason: "stop",
	timestamp: 5,
	...extra,
});

function claudeReply(id, text) {
	const events = [
		{ type: "message_start", message: { id, type: "message", role: "assistant", model: CLAUDE.id, content: [], stop_reason: null, usage: { input_tokens: 12, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } } },
		{ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
		{ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } },
		{ type: "content_block_stop", index: 0 },
		{ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 4 } },
		{ type: "message_stop" },
	];
	return { status: 200, body: events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("") };
}

// One local server per scenario answers the queued replies in order and records every request.
async function withServer(replies, run) {
	const requests = [];
	const queue = [...replies];
	const server = createServer((request, response) => {
		const chunks = [];
		request.on("data", (chunk) => chunks.push(chunk));
		request.on("end", () => {
			requests.push({ path: request.url, beta: request.headers["anthropic-beta"] ?? null, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
			const reply = queue.shift();
			response.writeHead(reply.status, { "content-type": reply.status < 400 ? "text/event-stream" : "application/json" });
			response.end(reply.body);
		});
	});
	await new Promise((done) => server.listen(0, "127.0.0.1", done));
	const baseUrl = `http://127.0.0.1:${server.address().port}`;
	try {
		return { result: await run(baseUrl), requests };
	} finally {
		server.close();
	}
}

const scrub = (value, baseUrl) => JSON.parse(JSON.stringify(value).replaceAll(baseUrl, RECORDED_ORIGIN));

async function send(model, messages, options) {
	const stream = anthropicApi.streamSimple(model, { messages }, { apiKey: "test-key", ...options });
	for await (const _event of stream) {
	}
	return stream.result();
}

const CHANGES_TRANSCRIPT = [
	{ role: "system", content: "You are terse.", sections: { rules: "<rules>Be brief.</rules>" }, toolsAdded: [ADD], timestamp: 1 },
	{ role: "user", content: "What is 2+3?", timestamp: 2 },
	assistant([{ type: "toolCall", id: "toolu_1", name: "add", arguments: { a: 2, b: 3 } }], { stopReason: "toolUse" }),
	{ role: "toolResult", toolCallId: "toolu_1", toolName: "add", content: [{ type: "text", text: "5" }], isError: false, timestamp: 6 },
	{ role: "system", content: "Multiplication is allowed now.", toolsAdded: [MUL], timestamp: 7 },
	assistant([{ type: "text", text: "5." }], { timestamp: 8 }),
	{ role: "system", content: "", sections: { rules: "<rules>Be thorough.</rules>" }, toolsAdded: [ADD2], toolsRemoved: [{ name: "add" }, { name: "mul" }], timestamp: 9 },
	{ role: "user", content: "And 2*3?", timestamp: 10 },
];

async function anthropicChanges() {
	const cases = [
		["native_tools", { supportsMidConvoSystemMessages: true, supportsMidConvoToolChanges: true }, CHANGES_TRANSCRIPT],
		["system_only", { supportsMidConvoSystemMessages: true }, CHANGES_TRANSCRIPT],
		["collapsed", {}, CHANGES_TRANSCRIPT],
		[
			"native_no_initial_tools",
			{ supportsMidConvoSystemMessages: true, supportsMidConvoToolChanges: true },
			[{ role: "system", content: "No tools yet.", timestamp: 1 }, ...CHANGES_TRANSCRIPT.slice(1)],
		],
		[
			"native_long_retention",
			{ supportsMidConvoSystemMessages: true, supportsMidConvoToolChanges: true },
			CHANGES_TRANSCRIPT,
			{ cacheRetention: "long" },
		],
		[
			"native_no_cache",
			{ supportsMidConvoSystemMessages: true, supportsMidConvoToolChanges: true },
			CHANGES_TRANSCRIPT,
			{ cacheRetention: "none" },
		],
	];
	const recorded = [];
	for (const [name, compat, messages, options = {}] of cases) {
		const { requests } = await withServer([claudeReply(`msg_${name}`, "ok")], (baseUrl) =>
			send({ ...CLAUDE, baseUrl, compat }, messages, options),
		);
		recorded.push({ name, compat, options, messages, request: requests[0] });
	}
	save("anthropic_changes", {
		description: "mid-conversation system messages and tool changes: the request pi 1.6 sends for each compat",
		version,
		model: CLAUDE,
		cases: recorded,
	});
}

const threadError = (message, errorCode) => ({
	status: 400,
	body: JSON.stringify({
		type: "error",
		error: { type: "invalid_request_error", message, ...(errorCode ? { details: { error_code: errorCode } } : {}) },
	}),
});

async function anthropicThreads() {
	const compat = { supportsMessageThreads: true };
	const system = { role: "system", content: "You are terse.", toolsAdded: [ADD], timestamp: 1 };
	const steps = [];
	const replies = [
		claudeReply("msg_t1", "First."),
		claudeReply("msg_t2", "Second."),
		claudeReply("msg_t3", "Third."),
		threadError("thread not found", "thread_not_found"),
		claudeReply("msg_t4", "Fourth."),
		threadError("thread: Extra inputs are not permitted"),
		claudeReply("msg_t5", "Fifth."),
		claudeReply("msg_t6", "Sixth."),
		claudeReply("msg_t7", "Seventh."),
		claudeReply("msg_t8", "Eighth."),
		claudeReply("msg_t9", "Ninth."),
		claudeReply("msg_t10", "Tenth."),
	];
	const { requests } = await withServer(replies, async (baseUrl) => {
		const model = { ...CLAUDE, baseUrl, compat };
		const options = { sessionId: "thread-session" };
		let messages = [system, { role: "user", content: "One.", timestamp: 2 }];
		const step = async (label, sent, stepOptions = options) => {
			const reply = await send(model, sent, stepOptions);
			steps.push({ label, messages: sent, options: stepOptions, reply: scrub(reply, baseUrl) });
			return reply;
		};
		// 1: a new thread; 2: continues it with the new message only
		let reply = await step("create", messages);
		messages = [...messages, reply, { role: "user", content: "Two.", timestamp: 20 }];
		reply = await step("continue", messages);
		// 3: an earlier message changed: the full request, a new thread
		const edited = [system, { role: "user", content: "One, edited.", timestamp: 2 }, ...messages.slice(2), reply, { role: "user", content: "Three.", timestamp: 30 }];
		reply = await step("changed_prefix", edited);
		messages = [...edited, reply, { role: "user", content: "Four.", timestamp: 40 }];
		// 4: the server lost the thread: the same request again as a new thread
		reply = await step("thread_not_found", messages);
		messages = [...messages, reply, { role: "user", content: "Five.", timestamp: 50 }];
		// 5: the endpoint does not take threads: sent again without, and threads stay off
		reply = await step("threads_unsupported", messages);
		messages = [...messages, reply, { role: "user", content: "Six.", timestamp: 60 }];
		reply = await step("after_off", messages);
		// 6: another session, replaying a request (cache warming): no continuation used or recorded
		const warm = { sessionId: "warm-session", disableContinuation: true };
		const first = [system, { role: "user", content: "Warm.", timestamp: 70 }];
		const warmReply = await step("disable_continuation", first, warm);
		await step("disable_continuation_again", [...first, warmReply, { role: "user", content: "Again.", timestamp: 71 }], warm);
		// 7: cacheRetention "none": no threads at all
		await step("no_cache", [system, { role: "user", content: "Uncached.", timestamp: 80 }], { sessionId: "none-session", cacheRetention: "none" });
	});
	save("anthropic_threads", {
		description: "Anthropic message threads in one session: what pi 1.6 sends for each step and what its replies hold",
		version,
		model: { ...CLAUDE, compat },
		replies,
		steps: steps.map((step, index) => ({ ...step })),
		requests,
	});
}

// ------------------------------------------------------------------ openai responses: additional_tools

const responsesApi = await load("pi-ai", "dist", "api", "openai-responses.js");
const GPT = {
	id: "gpt-5.1",
	name: "GPT-5.1",
	api: "openai-responses",
	provider: "openai",
	reasoning: false,
	input: ["text", "image"],
	cost: { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 },
	contextWindow: 400000,
	maxTokens: 128000,
};

function responsesReply(id) {
	const response = { id, object: "response", status: "completed", model: GPT.id, output: [], usage: { input_tokens: 12, output_tokens: 0, total_tokens: 12, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } } };
	const events = [
		{ type: "response.created", sequence_number: 0, response: { ...response, status: "in_progress" } },
		{ type: "response.completed", sequence_number: 1, response },
	];
	return { status: 200, body: events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("") };
}

async function responsesChanges() {
	const cases = [
		["additional_tools", { supportsMidConvoSystemMessages: true, supportsAdditionalTools: true }, CHANGES_TRANSCRIPT],
		["system_only", { supportsMidConvoSystemMessages: true }, CHANGES_TRANSCRIPT],
		["collapsed", {}, CHANGES_TRANSCRIPT],
	];
	const recorded = [];
	for (const [name, compat, messages] of cases) {
		const { requests } = await withServer([responsesReply(`resp_${name}`)], async (baseUrl) => {
			const stream = responsesApi.streamSimple({ ...GPT, baseUrl, compat }, { messages }, { apiKey: "test-key" });
			for await (const _event of stream) {
			}
			return stream.result();
		});
		recorded.push({ name, compat, messages, request: { path: requests[0].path, body: requests[0].body } });
	}
	save("responses_changes", {
		description: "OpenAI Responses with mid-conversation system messages and tool changes: the request pi 1.6 sends for each compat",
		version,
		model: GPT,
		cases: recorded,
	});
}

// ------------------------------------------------------------------ main

await deferredFaux();
await deferredAcross();
await telemetryScenarios();
await anthropicChanges();
await anthropicThreads();
await responsesChanges();
writeFileSync(join(out, "index.json"), `${JSON.stringify({ version, fixtures: Object.keys(fixtures) }, null, 1)}\n`);
