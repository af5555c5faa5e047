// What the original 1.6 does with the transcripts pi_trio writes when a run pauses for
// approval (a placeholder tool result for each waiting call) and after it was resumed.
//
//   npm install --prefix <dir> @earendil-works/pi-agent-core@1.6.0 @earendil-works/pi-ai@1.6.0
//   node tests/record_approval_pi16.mjs <dir> [fixtures]   # fixtures: tests/fixtures/approval_pi16
//
// For each <name>.transcript.json in the fixtures (written by `python -m tests.approval_pi16`)
// the original parses it, re-stringifies it, gives it to an Agent as its transcript and
// runs the agent on it with its faux provider (continue() after a tool result, prompt()
// after an answer), and writes what it saw to original.json: whether the JSON came back
// unchanged, what the model was sent for each tool call, the results its transformMessages
// made up for calls without one ("No result provided"; and, as a control, those it makes
// up for the same history without the placeholders), the run's events and its
// transcript. The clock is virtual, so recording twice gives the same file.

import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, fixturesArgument] = process.argv.slice(2);
if (!packageDir) {
	console.error("usage: node tests/record_approval_pi16.mjs <dir with node_modules/@earendil-works> [fixtures]");
	process.exit(2);
}
const modules = join(resolve(packageDir), "node_modules", "@earendil-works");
const fixtures = resolve(fixturesArgument ?? join("tests", "fixtures", "approval_pi16"));
const load = (name, ...path) => import(pathToFileURL(join(modules, name, ...path)).href);
const version = (name) => JSON.parse(readFileSync(join(modules, name, "package.json"), "utf8")).version;
const ai = await load("pi-ai", "dist", "index.js");
const core = await load("pi-agent-core", "dist", "index.js");
const { transformMessages } = await load("pi-ai", "dist", "api", "transform-messages.js");

const EPOCH = 1767225600000;
let clock = EPOCH;
Date.now = () => ++clock;
Object.defineProperty(performance, "now", { value: () => ++clock - EPOCH, configurable: true });

function text(message) {
	const content = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
	return content.filter((block) => block.type === "text").map((block) => block.text).join("");
}

async function observe(name) {
	const raw = readFileSync(join(fixtures, `${name}.transcript.json`), "utf8");
	const messages = JSON.parse(raw);
	const handle = ai.fauxProvider({ api: "faux", tokenSize: { min: 3, max: 3 } });
	handle.setResponses([() => ai.fauxAssistantMessage("Noted.")]);
	const model = handle.getModel();
	const sent = [];
	const streamFn = (streamModel, context, options) => {
		sent.push(...context.messages);
		return handle.provider.streamSimple(streamModel, context, options);
	};
	const agent = new core.Agent({ initialState: { model, messages }, streamFn });
	const events = [];
	agent.subscribe((event) => events.push(event.type));
	const last = messages[messages.length - 1];
	if (last.role === "assistant") await agent.prompt("Thanks.");
	else await agent.continue();
	const madeUp = (history) => {
		const ids = new Set(history.filter((m) => m.role === "toolResult").map((m) => m.toolCallId));
		return transformMessages(history, model)
			.filter((m) => m.role === "toolResult" && !ids.has(m.toolCallId))
			.map((m) => ({ toolCallId: m.toolCallId, text: text(m) }));
	};
	// the control: the same history without the placeholders has dangling calls
	const withoutPlaceholders = messages.filter((m) => m.details?.piTrioApproval === undefined);
	return {
		reencodedUnchanged: JSON.stringify(messages) === raw,
		loaded: messages.length,
		sentToModel: sent.map((m) => ({
			role: m.role,
			...(m.role === "toolResult" ? { toolCallId: m.toolCallId, isError: m.isError } : {}),
			text: m.role === "assistant" ? undefined : text(m),
		})),
		madeUpResults: madeUp(sent),
		madeUpWithoutPlaceholders: madeUp(withoutPlaceholders),
		events,
		stopReason: agent.state.messages[agent.state.messages.length - 1].stopReason,
		errorMessage: agent.state.errorMessage ?? null,
		transcript: agent.state.messages,
	};
}

const names = readdirSync(fixtures)
	.filter((file) => file.endsWith(".transcript.json"))
	.map((file) => file.replace(/\.transcript\.json$/, ""))
	.sort();
const result = {
	recordedWith: { "pi-ai": version("pi-ai"), "pi-agent-core": version("pi-agent-core"), node: process.version },
	transcripts: {},
};
for (const name of names) result.transcripts[name] = await observe(name);
writeFileSync(join(fixtures, "original.json"), `${JSON.stringify(result, null, 2)}\n`);
