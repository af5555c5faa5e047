// The original 1.6 proxy client (`streamProxy` of @earendil-works/pi-agent-core) reading what
// pi_trio's proxy server writes, case by case.
//
//   node tests/conformance/record_proxy_pi16.mjs <dir with node_modules/@earendil-works> <proxy.json>
//
// proxy.json (written by record.py) holds, per case, the model and context of the case and
// the SSE body pi_trio's server writes for it (`body`). A loopback server answers
// POST /api/stream with that body; the client's final message and events are added to the
// same file as `client` (its final message). The comparison (test_conformance) checks that
// pi_trio's server still writes the same body and that the message the 1.6 client rebuilt
// holds what the protocol carries of pi_trio's own message.

import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, file] = process.argv.slice(2);
if (!packageDir || !file) {
	console.error("usage: node tests/conformance/record_proxy_pi16.mjs <dir> <proxy.json>");
	process.exit(2);
}
const modules = join(resolve(packageDir), "node_modules", "@earendil-works");
const core = await import(pathToFileURL(join(modules, "pi-agent-core", "dist", "index.js")).href);
const data = JSON.parse(readFileSync(file, "utf8"));

for (const [name, entry] of Object.entries(data.cases)) {
	const server = createServer((request, response) => {
		request.resume();
		request.on("end", () => {
			response.writeHead(200, { "content-type": "text/event-stream" });
			response.end(entry.body);
		});
	});
	await new Promise((done) => server.listen(0, "127.0.0.1", done));
	const proxyUrl = `http://127.0.0.1:${server.address().port}`;
	const stream = core.streamProxy(entry.model, entry.context, { proxyUrl, authToken: "conformance" });
	for await (const _event of stream);
	const message = await stream.result();
	await new Promise((done) => server.close(done));
	entry.client = JSON.parse(JSON.stringify(message));
	process.stdout.write(".");
}
process.stdout.write("\n");
writeFileSync(file, `${JSON.stringify(data, null, 1)}\n`);
