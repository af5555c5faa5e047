// Records what pi-ai 1.6 makes of each schema in tests/fixtures/constrained/cases.json as
// the parameters of a tool that requires JSON-schema constrained sampling:
//   node tests/record_constrained_pi16.mjs <pi-ai package dir> tests/fixtures/constrained/cases.json
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, casesFile] = process.argv.slice(2);
const constrained = await import(pathToFileURL(join(packageDir, "dist", "api", "constrained-sampling.js")).href);
const cases = JSON.parse(readFileSync(casesFile, "utf8"));
const out = cases.map((schema) => {
	const tool = { name: "t", description: "d", parameters: schema, constrainedSampling: { type: "json_schema", strict: "require" } };
	try {
		const strict = constrained.resolveJsonSchemaStrictSampling(tool, true);
		return { schema, strict: constrained.getJsonSchemaToolParameters(tool, strict) };
	} catch (error) {
		return { schema, error: error.message };
	}
});
console.log(JSON.stringify(out, null, 1));
