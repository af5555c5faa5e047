// Runs every conformance case through the original pi 1.6 and records what it did.
//
//   node tests/conformance/record_pi16.mjs <dir with node_modules/@earendil-works> [cases] [out]
//
// (`python tests/conformance/record.py` installs the original into a scratch folder and
// runs this.) For each case of cases/<api>.json a loopback HTTP server answers with the
// case's replies, one per request (the body in `chunk`-byte pieces; `reset` resets the
// connection after the body), and the API's own `streamSimple` of
// @earendil-works/pi-ai 1.6.0 streams against it. Written to out/<api>.json per case:
// the events (without `partial`, which the final message holds), the final message, the
// requests the server saw (method, path with query, headers, body) and, for a case with
// `replayFrom`, the context it resolved. The server's address is written as
// RECORDED_ORIGIN and stack traces are left out, so recording twice gives the same files
// except for timestamps, which the comparison ignores.

import { readdirSync, readFileSync, mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const [packageDir, casesArgument, outArgument] = process.argv.slice(2);
if (!packageDir) {
	console.error("usage: node tests/conformance/record_pi16.mjs <dir with node_modules/@earendil-works> [cases] [out]");
	process.exit(2);
}
const modules = join(resolve(packageDir), "node_modules", "@earendil-works");
const casesDir = resolve(casesArgument ?? join(here, "cases"));
const out = resolve(outArgument ?? join(here, "pi16"));
mkdirSync(out, { recursive: true });
const version = JSON.parse(readFileSync(join(modules, "pi-ai", "package.json"), "utf8")).version;
const load = (...path) => import(pathToFileURL(join(modules, ...path)).href);
const ai = await load("pi-ai", "dist", "index.js");
const MODULES = {
	"anthropic-messages": "anthropic-messages.js",
	"openai-completions": "openai-completions.js",
	"openai-responses": "openai-responses.js",
	"azure-openai-responses": "azure-openai-responses.js",
	"openai-codex-responses": "openai-codex-responses.js",
	"google-generative-ai": "google-generative-ai.js",
	"google-vertex": "google-vertex.js",
	"mistral-conversations": "mistral-conversations.js",
	"bedrock-converse-stream": "bedrock-converse-stream.js",
	"pi-messages": "pi-messages.js",
};
export const RECORDED_ORIGIN = "http://loopback.test";

// No ambient credentials, regions or proxies reach the SDKs: each case says what it uses.
for (const name of Object.keys(process.env)) {
	if (/^(AWS_|GOOGLE_|GEMINI_|OPENAI_|ANTHROPIC_|AZURE_|MISTRAL_|RADIUS_|HTTPS?_PROXY|ALL_PROXY|NO_PROXY)/i.test(name)) {
		delete process.env[name];
	}
}
process.env.AWS_EC2_METADATA_DISABLED = "true";

function scrub(value, origin) {
	return JSON.parse(
		JSON.stringify(value, (key, v) => {
			if (key === "stack") return undefined;
			return typeof v === "string" ? v.replaceAll(origin, RECORDED_ORIGIN) : v;
		}),
	);
}

function bodyOf(reply) {
	return reply.bodyBase64 !== undefined ? Buffer.from(reply.bodyBase64, "base64") : Buffer.from(reply.body, "utf8");
}

function pieces(body, size) {
	if (!size) return [body];
	const out = [];
	for (let i = 0; i < body.length; i += size) out.push(body.subarray(i, i + size));
	return out;
}

async function serve(replies) {
	const requests = [];
	const server = createServer((request, response) => {
		const chunks = [];
		request.on("data", (chunk) => chunks.push(chunk));
		request.on("end", () => {
			const raw = Buffer.concat(chunks).toString("utf8");
			let body;
			try {
				body = JSON.parse(raw);
			} catch {
				body = raw;
			}
			const headers = {};
			for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value;
			requests.push({ method: request.method, path: request.url, headers, body });
			const reply = replies[requests.length - 1] ?? { status: 599, headers: {}, body: '{"error":{"message":"no scripted reply left"}}' };
			const kind = reply.status < 400 ? (reply.bodyBase64 !== undefined ? "application/vnd.amazon.eventstream" : "text/event-stream") : "application/json";
			response.writeHead(reply.status, { "content-type": kind, ...reply.headers });
			const parts = pieces(bodyOf(reply), reply.chunk);
			let i = 0;
			const next = () => {
				if (i === parts.length) {
					if (reply.reset) response.socket.resetAndDestroy();
					else response.end();
					return;
				}
				response.write(parts[i++], next);
			};
			next();
		});
	});
	await new Promise((done) => server.listen(0, "127.0.0.1", done));
	return { server, requests, origin: `http://127.0.0.1:${server.address().port}` };
}

function withoutPartial(event) {
	const { partial: _partial, ...rest } = event;
	return rest;
}

async function runCase(api, spec, recorded) {
	const { server, requests, origin } = await serve(spec.replies);
	const { basePath, ...model } = spec.model;
	const fullModel = { ...model, baseUrl: `${origin}${basePath}` };
	let context = spec.context;
	if (spec.replayFrom) {
		const turns = [];
		spec.replayFrom.forEach((source, n) => {
			const [sourceApi, sourceCase] = source.split("/");
			const message = recorded[sourceApi]?.cases?.[sourceCase]?.message;
			if (message === undefined) throw new Error(`${api}/${spec.name}: no recorded ${source}`);
			turns.push({ role: "user", content: `Turn ${n + 1}`, timestamp: 1767225000100 + n });
			turns.push({ ...message, timestamp: 1767225000200 + n });
			const calls = message.content.filter((block) => block.type === "toolCall");
			for (const call of calls) {
				turns.push({
					role: "toolResult",
					toolCallId: call.id,
					toolName: call.name,
					content: [{ type: "text", text: "5" }],
					isError: false,
					timestamp: 1767225000300 + n,
				});
			}
		});
		context = { ...spec.context, messages: [...turns, ...spec.context.messages] };
	}
	const provider = await load("pi-ai", "dist", "api", MODULES[api]);
	const options = { apiKey: "test-key", ...spec.options };
	const stream = provider.streamSimple(fullModel, ai.normalizeContext(context), options);
	const events = [];
	for await (const event of stream) events.push(withoutPartial(event));
	const message = await stream.result();
	await new Promise((done) => server.close(done));
	server.closeAllConnections?.();
	const result = { events, message, requests };
	if (spec.replayFrom) result.context = context;
	return scrub(result, origin);
}

const files = readdirSync(casesDir).filter((name) => name.endsWith(".json")).sort();
const suites = files.map((name) => JSON.parse(readFileSync(join(casesDir, name), "utf8")));
const recorded = {};
for (const suite of suites) recorded[suite.api] = { api: suite.api, recordedWith: { "pi-ai": version, node: process.version }, cases: {} };
// two passes: the replay cases read the final messages the first pass recorded
for (const replay of [false, true]) {
	for (const suite of suites) {
		for (const spec of suite.cases) {
			if (Boolean(spec.replayFrom) !== replay) continue;
			recorded[suite.api].cases[spec.name] = await runCase(suite.api, spec, recorded);
			process.stdout.write(".");
		}
	}
}
process.stdout.write("\n");
for (const suite of suites) {
	writeFileSync(join(out, `${suite.api}.json`), `${JSON.stringify(recorded[suite.api], null, 1)}\n`);
	console.log(`${suite.api}: ${Object.keys(recorded[suite.api].cases).length} cases recorded`);
}
