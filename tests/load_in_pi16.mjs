// Loads transcripts pi_trio wrote into the original TypeScript Agent and continues them.
//
//   node tests/load_in_pi16.mjs <dir with node_modules/@earendil-works> <cases.json> [out]
//
// cases.json is {"cases": [{"name", "transcript"}]}. For each case the original's Agent
// starts from the transcript (its tools are the ones the transcript declares), is
// prompted "continue", and its faux provider answers "continued". The output (JSON, to
// `out` or stdout) gives, per case, what the original sent to the model (`sent`: the
// context's messages) and its transcript afterwards (`after`). The clock is virtual
// (Date.now and performance.now advance by 1 ms per read from a fixed epoch), so the
// output is the same on every run.

import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, casesFile, outFile] = process.argv.slice(2);
if (!packageDir || !casesFile) {
	console.error("usage: node tests/load_in_pi16.mjs <dir> <cases.json> [out]");
	process.exit(2);
}
const modules = join(resolve(packageDir), "node_modules", "@earendil-works");
const load = (name) => import(pathToFileURL(join(modules, name, "dist", "index.js")).href);
const version = (name) => JSON.parse(readFileSync(join(modules, name, "package.json"), "utf8")).version;
const ai = await load("pi-ai");
const core = await load("pi-agent-core");

const EPOCH = 1767225600000; // 2026-01-01T00:00:00Z
let clock = EPOCH;
Date.now = () => ++clock;
Object.defineProperty(performance, "now", { value: () => ++clock - EPOCH, configurable: true });

const { cases } = JSON.parse(readFileSync(casesFile, "utf8"));
const results = [];
for (const { name, transcript } of cases) {
	let sent;
	const handle = ai.fauxProvider({ api: "faux", tokenSize: { min: 3, max: 3 } });
	handle.setResponses([
		(context) => {
			sent = JSON.parse(JSON.stringify(context.messages));
			return ai.fauxAssistantMessage("continued");
		},
	]);
	const tools = ai.getCurrentTools(transcript).map((declared) => ({
		...declared,
		label: declared.name,
		execute: async () => ({ content: [{ type: "text", text: "unused" }], details: {} }),
	}));
	const agent = new core.Agent({
		initialState: { model: handle.getModel(), messages: transcript, tools },
		streamFn: (model, context, options) => handle.provider.streamSimple(model, context, options),
	});
	await agent.prompt("continue");
	results.push({ name, sent, after: agent.state.messages });
}
const output = `${JSON.stringify(
	{
		recordedWith: {
			"@earendil-works/pi-agent-core": version("pi-agent-core"),
			"@earendil-works/pi-ai": version("pi-ai"),
		},
		results,
	},
	null,
	1,
)}\n`;
if (outFile) writeFileSync(outFile, output);
else process.stdout.write(output);
