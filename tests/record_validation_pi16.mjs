// Records how the original validates tool arguments, as a fixture for pi_trio's differential test.
//
//   npm install --prefix <dir> @earendil-works/pi-ai@1.6.0
//   node tests/record_validation_pi16.mjs <dir> [out]    # out: tests/fixtures/validation_pi16.json
//
// Every case is a (schema, arguments) pair run through pi-ai's validateToolArguments, which
// coerces with @earendil-works/pi-schema and reports its issues. The fixture holds, per case,
// the schema, the arguments as JSON text (so both runtimes parse the same text: -0, 1.0 and
// integers past 2^53 stay as written) and either the coerced value or the exact error text;
// the schemas are listed once and cases name theirs by index.
// Recording twice gives the same file.

import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, outArgument] = process.argv.slice(2);
if (!packageDir) {
	console.error("usage: node tests/record_validation_pi16.mjs <dir with node_modules/@earendil-works> [out]");
	process.exit(2);
}
const root = join(resolve(packageDir), "node_modules", "@earendil-works");
const version = (name) => JSON.parse(readFileSync(join(root, name, "package.json"), "utf8")).version;
const ai = await import(pathToFileURL(join(root, "pi-ai", "dist", "index.js")).href);
const out = resolve(outArgument ?? join("tests", "fixtures", "validation_pi16.json"));

// ------------------------------------------------------------------ the table

const cases = [];
/** Arguments written as JSON text, for values a JavaScript literal cannot keep (-0, 1.0, 2^64). */
const raw = (text) => ({ raw: text });
const add = (group, schema, ...argumentsList) => {
	for (const args of argumentsList) cases.push({ group, schema, args });
};
const object = (properties, required, extra = {}) => ({
	type: "object",
	properties,
	...(required ? { required } : {}),
	...extra,
});
/** The schema of one required property `v`, and the arguments `{"v": <text>}`. */
const field = (schema) => object({ v: schema }, ["v"]);
const value = (text) => raw(`{"v":${text}}`);

// Every scalar coercion pair: each input (as JSON text) against each declared type.
const INPUTS = [
	'""',
	'" "',
	'"abc"',
	'"1"',
	'"0"',
	'"-0"',
	'"1.5"',
	'"3.7"',
	'"-3.7"',
	'"1e3"',
	'"1E3"',
	'"2e-7"',
	'"0x10"',
	'"0b11"',
	'"0o17"',
	'" 42 "',
	'"\\t7\\n"',
	'"\\u00a05"',
	'"+5"',
	'".5"',
	'"5."',
	'"Infinity"',
	'"-Infinity"',
	'"NaN"',
	'"1e999"',
	'"1_000"',
	'"1,5"',
	'"12n"',
	'"-12n"',
	'"12.9n"',
	'"9007199254740993"',
	'"12345678901234567890"',
	'"true"',
	'"false"',
	'"TRUE"',
	'"False"',
	'"null"',
	'"NULL"',
	'"undefined"',
	'"yes"',
	'"on"',
	"0",
	"1",
	"-1",
	"2",
	"-0",
	"1.0",
	"-0.0",
	"1.5",
	"-1.5",
	"0.1",
	"1e21",
	"1e-7",
	"0.000003",
	"123456789012345678",
	"12345678901234567890",
	"1e308",
	"true",
	"false",
	"null",
	"[]",
	"[1]",
	'["1"]',
	"[null]",
	"[[1]]",
	"{}",
	'{"a":1}',
];
const TYPES = ["string", "number", "integer", "boolean", "null", "array", "object"];
for (const type of TYPES) {
	for (const input of INPUTS) add(`scalar ${type}`, field({ type }), value(input));
}
// The same inputs against a schema with no type at all.
for (const input of INPUTS) add("scalar untyped", field({}), value(input));

// Type arrays: pass 3 (primitive coercion by type), tried in the order listed.
const SOME_INPUTS = ['""', '"5"', '"5.5"', '"abc"', '"true"', '"null"', "0", "1", "5.5", "true", "false", "null", "[1]", "{}"];
for (const types of [
	["integer", "null"],
	["null", "integer"],
	["number", "null"],
	["string", "null"],
	["boolean", "null"],
	["string", "number"],
	["number", "string"],
	["boolean", "integer"],
	["integer", "boolean"],
	["boolean", "string"],
	["string", "boolean"],
	["array", "null"],
	["object", "null"],
	["array", "string"],
]) {
	for (const input of SOME_INPUTS) add(`type array ${types.join(",")}`, field({ type: types }), value(input));
}

// Optional properties: a null the schema rejects is dropped; other values still coerce.
const optional = object({
	s: { type: "string" },
	n: { type: "number" },
	i: { type: "integer" },
	b: { type: "boolean" },
	a: { type: "array", items: { type: "string" } },
	o: object({ x: { type: "integer" } }),
	z: { type: "null" },
	sn: { type: ["string", "null"] },
	e: { enum: ["x", "y"] },
	c: { const: "x" },
	u: { anyOf: [{ type: "integer" }, { type: "string" }] },
	r: { $ref: "#/$defs/point" },
	any: {},
}, undefined, { $defs: { point: object({ x: { type: "integer" } }, ["x"]) } });
add(
	"optional nulls",
	optional,
	{ s: null },
	{ n: null },
	{ i: null },
	{ b: null },
	{ a: null },
	{ o: null },
	{ z: null },
	{ sn: null },
	{ e: null },
	{ c: null },
	{ u: null },
	{ r: null },
	{ any: null },
	{ s: null, n: null, i: null, b: null, a: null, o: null, z: null, sn: null },
	{ o: { x: null } },
	{ r: { x: null } },
	{ s: 5, n: "5", i: "5", b: "true", a: "x", o: { x: "1" }, z: "", sn: 5 },
	{ extra: null },
);
add(
	"required nulls",
	object(
		{ s: { type: "string" }, n: { type: "number" }, b: { type: "boolean" }, a: { type: "array" }, o: { type: "object" } },
		["s", "n", "b", "a", "o"],
	),
	{ s: null, n: null, b: null, a: null, o: null },
	{ s: null, n: null, b: null, a: null, o: {} },
);
add(
	"nulls in items and additional properties",
	object({
		list: { type: "array", items: object({ name: { type: "string" }, note: { type: "string" } }, ["name"]) },
		map: { type: "object", additionalProperties: object({ note: { type: "integer" } }) },
		pat: { type: "object", patternProperties: { "^n": object({ note: { type: "integer" } }) } },
	}),
	{ list: [{ name: "a", note: null }, { name: null }], map: { k: { note: null }, j: null }, pat: { n1: { note: null } } },
);

// Nested objects and arrays.
const nested = object(
	{
		inner: object({ n: { type: "integer" }, deep: object({ b: { type: "boolean" } }) }, ["n"]),
		list: { type: "array", items: { type: "number" } },
		strings: { type: "array", items: { type: "string" } },
		objects: { type: "array", items: object({ k: { type: "integer" } }, ["k"]) },
		matrix: { type: "array", items: { type: "array", items: { type: "integer" } } },
		pair: { type: "array", prefixItems: [{ type: "string" }, { type: "boolean" }] },
		closed: { type: "array", prefixItems: [{ type: "integer" }], items: false },
		legacy: { type: "array", items: [{ type: "integer" }, { type: "string" }], additionalItems: { type: "boolean" } },
		bounded: { type: "array", items: { type: "integer" }, minItems: 2 },
		untyped: { items: { type: "integer" } },
		props: { properties: { n: { type: "integer" } } },
	},
);
add(
	"nested",
	nested,
	{ inner: { n: "3", deep: { b: "true" } } },
	{ inner: { n: "x", deep: { b: "maybe" } } },
	{ inner: "3" },
	{ list: ["1", "2.5", 3, true, null] },
	{ list: "5" },
	{ list: 5 },
	{ list: "abc" },
	{ list: null },
	{ list: {} },
	{ strings: 5 },
	{ strings: [1, true, null, 1.5] },
	{ strings: "one" },
	{ objects: { k: "1" } },
	{ objects: [{ k: "1" }, { k: "x" }, {}] },
	{ objects: "x" },
	{ matrix: [["1", 2], "3"] },
	{ matrix: 5 },
	{ pair: [1, "true", "extra"] },
	{ pair: "x" },
	{ pair: [1] },
	{ closed: ["1", 2] },
	{ legacy: ["1", 2, "true", "x"] },
	{ bounded: "5" },
	{ bounded: ["5"] },
	{ untyped: "abc" },
	{ untyped: ["1", "x"] },
	{ untyped: 5 },
	{ props: "abc" },
	{ props: { n: "1" } },
);

// additionalProperties and patternProperties.
add(
	"additional properties",
	object({ a: { type: "integer" } }, ["a"], { additionalProperties: false }),
	{ a: 1, b: 2 },
	{ a: "1", b: 2, c: null },
	{ b: 2 },
	{ a: "x", b: 2 },
);
add(
	"additional properties",
	object({ a: { type: "integer" } }, undefined, { additionalProperties: { type: "boolean" } }),
	{ a: "1", b: "true", c: "0", d: 1 },
	{ a: "1", b: "maybe", c: [] },
);
add(
	"additional properties",
	object({}, undefined, { patternProperties: { "^n_": { type: "number" }, "^s_": { type: "string" } }, additionalProperties: false }),
	{ n_a: "1.5", s_b: 2, other: 1 },
	{ n_a: "x" },
);
add(
	"additional properties",
	object({ a: { type: "integer" } }, undefined, { unevaluatedProperties: false }),
	{ a: 1, b: 2 },
	{ a: "1" },
);
add(
	"additional properties",
	{ type: "object", additionalProperties: { type: "array", items: { type: "integer" } } },
	{ x: "1", y: ["2", "z"] },
);

// required and missing.
add(
	"required",
	object({ a: { type: "string" }, b: { type: "integer" }, c: { type: "boolean" } }, ["a", "b", "c", "d"]),
	{},
	{ a: "x" },
	{ b: "x", c: 1 },
	{ a: 1, b: "2", c: "false", d: null },
);
add(
	"required",
	object({ outer: object({ inner: object({ x: { type: "string" } }, ["x", "y"]) }, ["inner"]) }, ["outer"]),
	{},
	{ outer: {} },
	{ outer: { inner: {} } },
	{ outer: { inner: { x: 5 } } },
	{ outer: { inner: null } },
	{ outer: null },
);

// anyOf and oneOf, nullable and not.
const NULLABLE_INPUTS = ['""', '"5"', '"5.5"', '"abc"', '"true"', '"null"', "5", "5.5", "0", "true", "false", "null", "[]", '["1"]', '{"x":"1"}'];
for (const [name, member] of [
	["integer", { type: "integer" }],
	["number", { type: "number" }],
	["string", { type: "string" }],
	["boolean", { type: "boolean" }],
	["array", { type: "array", items: { type: "integer" } }],
	["object", object({ x: { type: "integer" } }, ["x"])],
	["enum", { enum: ["a", "b"] }],
]) {
	for (const input of NULLABLE_INPUTS) {
		add(`anyOf ${name} null`, field({ anyOf: [member, { type: "null" }] }), value(input));
		add(`anyOf null ${name}`, field({ anyOf: [{ type: "null" }, member] }), value(input));
		add(`oneOf ${name} null`, field({ oneOf: [member, { type: "null" }] }), value(input));
	}
}
for (const branches of [
	[{ type: "integer" }, { type: "boolean" }],
	[{ type: "boolean" }, { type: "integer" }],
	[{ type: "integer" }, { type: "string" }],
	[{ type: "string" }, { type: "integer" }],
	[{ type: "number", minimum: 10 }, { type: "string", maxLength: 2 }],
	[{ type: "array", items: { type: "string" } }, { type: "object" }],
	[{ type: "integer", enum: [1, 2] }, { type: "string", enum: ["x"] }],
]) {
	for (const input of ['"1"', '"true"', '"abc"', '"12"', "12", "1.5", "true", "null", '"x"', "[1]"]) {
		add("anyOf members", field({ anyOf: branches }), value(input));
		add("oneOf members", field({ oneOf: branches }), value(input));
	}
}
add("oneOf members", field({ oneOf: [{ type: "number" }, { type: "integer" }] }), value("3"), value('"3"'), value("3.5"));
add(
	"union with members",
	field({ type: "object", properties: { n: { type: "integer" } }, anyOf: [object({ k: { const: "a" } }, ["k"]), object({ k: { const: "b" } }, ["k"])] }),
	raw('{"v":{"k":"a","n":"1"}}'),
	raw('{"v":{"k":"c","n":"1"}}'),
	raw('{"v":{"n":"1"}}'),
);
add(
	"not, if then else",
	object({
		n: { not: { type: "string" } },
		t: { if: { type: "string" }, then: { minLength: 2 }, else: { type: "integer" } },
	}),
	{ n: "x" },
	{ n: 5 },
	{ t: "a" },
	{ t: "ab" },
	{ t: "5" },
	{ t: 5.5 },
);
add(
	"allOf",
	object({
		v: { allOf: [{ type: "string" }, { maxLength: 3 }] },
		w: { allOf: [{ type: "integer" }, { minimum: 1 }], maximum: 5 },
		x: { allOf: [object({ a: { type: "integer" } }), object({ b: { type: "boolean" } })] },
	}),
	{ v: 12 },
	{ v: 12345 },
	{ w: "3" },
	{ w: "0" },
	{ w: "9" },
	{ x: { a: "1", b: "true" } },
	{ x: { a: "x", b: "x" } },
);

// Tagged and untagged unions of objects.
const tagged = {
	type: "object",
	oneOf: [
		object({ op: { const: "add" }, a: { type: "number" }, b: { type: "number" } }, ["op", "a", "b"]),
		object({ op: { const: "neg" }, x: { type: "number" } }, ["op", "x"]),
	],
};
add(
	"tagged union",
	tagged,
	{ op: "add", a: "1", b: 2 },
	{ op: "add", a: "x", b: 2 },
	{ op: "mul", a: 1 },
	{ op: "neg" },
	{ a: 1, b: 2 },
	{ op: "neg", x: "-1.5" },
	"add",
);
const untagged = {
	anyOf: [
		object({ a: { type: "number" } }, ["a"], { additionalProperties: false }),
		object({ b: { type: "string" }, c: { type: "string" } }, ["b"], { additionalProperties: false }),
	],
};
add("untagged union", untagged, { a: "1" }, { b: 1, c: 2 }, { b: [1], c: "x" }, { a: 1, b: "x" }, {}, { z: 1 });

// enum and const.
for (const [name, schema] of [
	["enum strings", { enum: ["add", "sub"] }],
	["enum numbers", { enum: [1, 2, 3] }],
	["enum mixed", { enum: ["1", 2, true, null] }],
	["enum booleans", { enum: [true, false] }],
	["enum typed", { type: "string", enum: ["1", "2"] }],
	["enum objects", { enum: [{ a: 1 }, [1, 2]] }],
	["enum long", { enum: Array.from({ length: 30 }, (_, i) => `v${i}`) }],
	["const string", { const: "add" }],
	["const number", { const: 5 }],
	["const true", { const: true }],
	["const false", { const: false }],
	["const null", { const: null }],
	["const object", { const: { a: [1, "x"] } }],
	["const typed", { type: "integer", const: 5 }],
]) {
	for (const input of ['"add"', '"ADD"', '"sub"', '"1"', '"2"', '"2.0"', '"5"', '"true"', '"false"', '"null"', '""', "1", "2", "5", "5.0", "true", "false", "null", '{"a":1}', "[1,2]", '"v29"', '"v31"']) {
		add(name, field(schema), value(input));
	}
}

// Integer edge cases and number keywords.
const bounds = object({
	i: { type: "integer" },
	min: { type: "integer", minimum: 0 },
	max: { type: "number", maximum: 1.5 },
	xmin: { type: "number", exclusiveMinimum: 0 },
	xmax: { type: "integer", exclusiveMaximum: 10 },
	mul: { type: "number", multipleOf: 0.0001 },
	mul2: { type: "integer", multipleOf: 3 },
	big: { type: "integer", maximum: 9007199254740992 },
});
add(
	"numbers",
	bounds,
	raw('{"i":1.0}'),
	raw('{"i":-0}'),
	raw('{"i":"-0"}'),
	raw('{"i":1e3}'),
	raw('{"i":"1e3"}'),
	raw('{"i":1.5}'),
	raw('{"i":"1.5"}'),
	raw('{"i":1e21}'),
	raw('{"i":"1e21"}'),
	raw('{"i":12345678901234567890}'),
	raw('{"i":"12345678901234567890"}'),
	raw('{"min":"-1"}'),
	raw('{"min":-0.5}'),
	raw('{"max":"2"}'),
	raw('{"max":1.5}'),
	raw('{"xmin":0}'),
	raw('{"xmin":"0"}'),
	raw('{"xmax":10}'),
	raw('{"xmax":"9.9"}'),
	raw('{"mul":0.0075}'),
	raw('{"mul":"0.0075"}'),
	raw('{"mul":0.00075}'),
	raw('{"mul2":"9"}'),
	raw('{"mul2":10}'),
	raw('{"big":9007199254740993}'),
	raw('{"big":"9007199254740993"}'),
	raw('{"min":-1,"max":2,"xmin":0,"xmax":10,"mul":0.00001}'),
);

// Strings.
add(
	"strings",
	object({
		short: { type: "string", maxLength: 3 },
		long: { type: "string", minLength: 2 },
		pat: { type: "string", pattern: "^[a-z]+$" },
		digits: { type: "string", pattern: "^\\d+$" },
		word: { type: "string", pattern: "^\\w+$" },
		upat: { type: "string", pattern: "^\\p{L}+$" },
		both: { type: "string", minLength: 2, pattern: "^a" },
	}),
	{ short: "abcd" },
	{ short: 1234 },
	{ short: 12 },
	{ short: true },
	{ long: "😀" },
	{ long: "😀😀" },
	{ long: 5 },
	{ pat: "abc" },
	{ pat: "abc\n" },
	{ pat: "Abc" },
	{ digits: "123" },
	{ digits: "١٢٣" },
	{ digits: 123 },
	{ word: "héllo" },
	{ word: "a_1" },
	{ upat: "héllo" },
	{ upat: "a1" },
	{ both: "b" },
	{ both: 5 },
);

// $ref and $defs, as msgspec writes them.
// msgspec.json.schema(Args) for
//   class Point(Struct): x: int; y: int
//   class Edit(Struct): old_text: str; new_text: str; count: int = 1
//   class Args(Struct): path: str; edits: list[Edit]; mode: Literal["text", "binary"] = "text";
//       origin: Point | None = None; limit: int | None = None; when: datetime | None = None;
//       ratio: float = 1.0; tags: list[str] = []
const msgspecArgs = {
	$ref: "#/$defs/Args",
	$defs: {
		Args: {
			title: "Args",
			type: "object",
			properties: {
				path: { type: "string" },
				edits: { type: "array", items: { $ref: "#/$defs/Edit" } },
				mode: { enum: ["binary", "text"], default: "text" },
				origin: { anyOf: [{ $ref: "#/$defs/Point" }, { type: "null" }], default: null },
				limit: { anyOf: [{ type: "integer" }, { type: "null" }], default: null },
				when: { anyOf: [{ type: "string", format: "date-time" }, { type: "null" }], default: null },
				ratio: { type: "number", default: 1.0 },
				tags: { type: "array", items: { type: "string" }, default: [] },
			},
			required: ["path", "edits"],
		},
		Edit: {
			title: "Edit",
			type: "object",
			properties: {
				old_text: { type: "string" },
				new_text: { type: "string" },
				count: { type: "integer", default: 1 },
			},
			required: ["old_text", "new_text"],
		},
		Point: {
			title: "Point",
			type: "object",
			properties: { x: { type: "integer" }, y: { type: "integer" } },
			required: ["x", "y"],
		},
	},
};
add(
	"msgspec struct",
	msgspecArgs,
	{ path: "a", edits: [{ old_text: "x", new_text: "y" }] },
	{ path: 5, edits: { old_text: 1, new_text: 2, count: "3" } },
	{ path: "a", edits: [{ old_text: "x", new_text: "y", count: null }], ratio: null, tags: null, mode: null },
	{ path: "a", edits: [], origin: { x: "1", y: "2" }, limit: "7", when: "2024-01-01T10:00:00Z" },
	{ path: "a", edits: [], origin: { x: "a" }, limit: "x", when: "yesterday", mode: "TEXT" },
	{ path: "a", edits: [], origin: null, limit: null, when: null },
	{ path: "a", edits: [{}], origin: "1,2" },
	{ edits: [{ old_text: "x" }] },
	{ path: "a", edits: [], tags: "one", ratio: "0.5", mode: "binary", extra: 1 },
);
// The same Args as pi_trio's @tool writes it: the root inlined, forbid_unknown_fields, $defs kept.
const toolArgs = {
	type: "object",
	properties: {
		path: { type: "string" },
		edits: { type: "array", items: { $ref: "#/$defs/Edit" } },
		origin: { anyOf: [{ $ref: "#/$defs/Point" }, { type: "null" }], default: null },
		limit: { type: "integer", default: 10 },
		dry: { type: "boolean", default: false },
	},
	required: ["path", "edits"],
	additionalProperties: false,
	$defs: { Edit: msgspecArgs.$defs.Edit, Point: msgspecArgs.$defs.Point },
};
add(
	"msgspec tool",
	toolArgs,
	{ path: "a", edits: [] },
	{ path: "a", edits: [], limit: null, dry: null, origin: null },
	{ path: "a", edits: [{ old_text: "x", new_text: "y", count: null }] },
	{ path: "a", edits: { old_text: "x", new_text: "y" }, limit: "3", dry: "false" },
	{ path: "a", edits: [{ old_text: "x", new_text: null }], origin: { x: 1 } },
	{ path: "a", edits: [], unknown: 1, other: 2 },
	{ path: "a", edits: [], limit: 2.5 },
);
// msgspec.json.schema(Calc) for a tagged union of Structs (tags as one-value enums).
const msgspecCalc = {
	$ref: "#/$defs/Calc",
	$defs: {
		Calc: {
			title: "Calc",
			type: "object",
			properties: {
				op: {
					anyOf: [{ $ref: "#/$defs/Add" }, { $ref: "#/$defs/Neg" }],
					discriminator: { propertyName: "type", mapping: { add: "#/$defs/Add", neg: "#/$defs/Neg" } },
				},
				id: { anyOf: [{ type: "string", format: "uuid" }, { type: "null" }], default: null },
				size: { type: "integer", minimum: 0, maximum: 10, default: 0 },
			},
			required: ["op"],
		},
		Add: {
			title: "Add",
			type: "object",
			properties: { type: { enum: ["add"] }, a: { type: "number" }, b: { type: "number" } },
			required: ["type", "a", "b"],
		},
		Neg: {
			title: "Neg",
			type: "object",
			properties: { type: { enum: ["neg"] }, x: { type: "number" } },
			required: ["type", "x"],
		},
	},
};
add(
	"msgspec tagged union",
	msgspecCalc,
	{ op: { type: "add", a: "1", b: "2" } },
	{ op: { type: "neg", x: "x" } },
	{ op: { type: "mul", a: 1 } },
	{ op: { a: 1, b: 2 } },
	{ op: { type: "add", a: 1 }, id: "not-a-uuid", size: "11" },
	{ op: { type: "neg", x: 1 }, id: "123e4567-e89b-12d3-a456-426614174000", size: "3.9" },
	{ op: "add" },
);
add(
	"refs",
	{
		type: "object",
		properties: {
			tree: { $ref: "#/$defs/node" },
			ptr: { $ref: "#/properties/tree" },
			sib: { $ref: "#/$defs/num", minimum: 5 },
			chain: { $ref: "#/$defs/alias" },
		},
		$defs: {
			node: object({ n: { type: "integer" }, children: { type: "array", items: { $ref: "#/$defs/node" } } }, ["n"]),
			num: { type: "integer" },
			alias: { $ref: "#/$defs/num" },
		},
	},
	{ tree: { n: "1", children: [{ n: "2", children: [{ n: "3" }] }] } },
	{ tree: { n: "1", children: { n: "x" } } },
	{ ptr: { n: "5" } },
	{ sib: "3" },
	{ sib: "7" },
	{ chain: "4" },
	{ chain: "x" },
);
add(
	"refs missing",
	{ type: "object", properties: { a: { $ref: "#/$defs/missing" }, b: { type: "integer" } } },
	{ b: "1" },
	{ a: 1, b: "1" },
);
add("refs remote", { type: "object", properties: { a: { $ref: "https://example.invalid/schema.json" } } }, { a: 1 }, {});
add(
	"refs cycle",
	{ $defs: { a: { $ref: "#/$defs/b" }, b: { allOf: [{ $ref: "#/$defs/a" }] } }, type: "object", properties: { v: { $ref: "#/$defs/a" } } },
	{ v: "1" },
);
add(
	"refs recursive array",
	{ $defs: { list: { type: "array", items: { $ref: "#/$defs/list" } } }, type: "object", properties: { v: { $ref: "#/$defs/list" } } },
	{ v: "x" },
	{ v: [[], [[]]] },
);
add(
	"refs draft 7",
	{
		$schema: "http://json-schema.org/draft-07/schema#",
		type: "object",
		properties: { v: { $ref: "#/definitions/n", type: "string" } },
		definitions: { n: { type: "integer" } },
	},
	{ v: "1" },
	{ v: 1 },
);
add(
	"refs by anchor and id",
	{
		$id: "https://example.com/schemas/tool.json",
		type: "object",
		properties: {
			anchored: { $ref: "#num" },
			relative: { $ref: "tool.json#/$defs/flag" },
			absolute: { $ref: "https://example.com/schemas/tool.json#/$defs/flag" },
			nested: { $ref: "item.json" },
		},
		$defs: {
			n: { $anchor: "num", type: "integer" },
			flag: { type: "boolean" },
			item: { $id: "item.json", type: "object", properties: { k: { $ref: "#/$defs/k" } }, $defs: { k: { type: "integer" } } },
		},
	},
	{ anchored: "5", relative: "true", absolute: "0" },
	{ anchored: "x", relative: "x" },
	{ nested: { k: "7" } },
	{ nested: { k: "x" } },
);
add(
	"draft 4",
	{ $schema: "http://json-schema.org/draft-04/schema#", type: "object", properties: { v: { type: "number", maximum: 5, exclusiveMaximum: true } } },
	{ v: 5 },
	{ v: 6 },
);
add(
	"draft 7",
	{
		$schema: "http://json-schema.org/draft-07/schema#",
		type: "object",
		properties: { v: { type: "array", items: [{ type: "integer" }], additionalItems: false } },
		dependencies: { v: ["w"] },
	},
	{ v: ["1"] },
	{ v: [1, 2], w: 1 },
);

// Formats (checked as pi-ai checks them, with pi-schema's formats).
const FORMATS = {
	date: ["2024-02-29", "2023-02-29", "2024-13-01", "2024-1-01", "20240101", "2024-04-31"],
	"date-time": [
		"2024-01-01T10:00:00Z",
		"2024-01-01t10:00:00z",
		"2024-01-01T10:00:00",
		"2024-01-01 10:00:00Z",
		"2024-01-01T10:00:00+01:00",
		"2024-01-01T10:00:00.123Z",
		"2024-12-31T23:59:60Z",
		"2024-12-31T22:59:60-01:00",
		"2024-01-01T10:00:00+25:00",
	],
	time: ["10:00:00Z", "10:00:00", "25:00:00Z", "23:59:60Z", "10:00:00+05:30", "10:00Z", "10:00:00.5z"],
	duration: ["P1D", "PT1H", "P1W", "P1Y2M", "P", "1D", "PT", "P1DT", "P1.5D", "P1Y2M3DT4H5M6S"],
	email: ["a@b.co", "a@b", "a@@b", "a b@c.d", '"a b"@c.d', "a@[127.0.0.1]", "A@B.CO", "é@b.co", "a.@b.co", "a@-b.co"],
	"idn-email": ["é@b.co", "a@b", "a@-b.co", "ü@ü.de", "a b@c.d"],
	hostname: ["example.com", "a..b", "-a.com", "a-.com", "xn--nxasmq6b.com", "localhost", "é.com", "a.com.", `${"a".repeat(64)}.com`, "_a.com", "1.2.3.4", "xn--a.com"],
	"idn-hostname": [
		"例え.jp",
		"é.com",
		"a..b",
		"-a.com",
		"xn--nxasmq6b",
		"münchen.de",
		"a b.com",
		"ｅｘａｍｐｌｅ.com",
		"MÜNCHEN.de",
		"Ⅻ.com",
		"a\u200db.com",
		"ß.de",
		"xn--zca.de",
		"١٢٣.com",
		"עברית.co.il",
		`${"é".repeat(40)}.com`,
		"x\u0301.com",
		"\u0301x.com",
		"a·l.com",
		"l·l.cat",
		"💩.la",
		"xn--ls8h.la",
		"\u0640.com",
		"a\u30fbb.jp",
		"\u30fb\u30a2.jp",
		"a\u05f3.il",
		"\u0375α.gr",
		"\u0375a.gr",
		"क\u094d\u200dष.in",
		"١a.eg",
		`${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(62)}`,
	],
	ipv4: ["127.0.0.1", "256.1.1.1", "1.2.3", "01.2.3.4", "1.2.3.4 ", "0.0.0.0"],
	ipv6: ["::1", "2001:db8::1", "1::2::3", "::ffff:1.2.3.4", "12345::", "::", "fe80::1%eth0", "2001:DB8::1"],
	uri: ["https://example.com/a?b#c", "example.com", "mailto:a@b.c", "http://[::1]/", "http://a b.com", "urn:isbn:123", "//example.com", "http://é.com", "a:b", "http://x/%zz"],
	"uri-reference": ["/a/b", "a b", "#frag", "https://x.y", "\\\\a", "http://[::1", "", "../x?y"],
	iri: ["https://é.com/ü", "é", "http://a b", "http://x/%zz", "urn:x"],
	"iri-reference": ["/é", "a b", "#x", "httpx//example.com", "http://[::1"],
	"uri-template": ["https://x/{id}", "https://x/{id", "{+path}/a", "a{b}{c,d}", "{ x }"],
	url: ["https://example.com", "example.com", "http://[::1]:80", "a:b", "http://exa mple.com", "file:///tmp/x"],
	uuid: ["123e4567-e89b-12d3-a456-426614174000", "123e4567e89b12d3a456426614174000", "123E4567-E89B-12D3-A456-426614174000", "g23e4567-e89b-12d3-a456-426614174000"],
	"json-pointer": ["/a/b", "a", "/a~2", "", "/a~0~1", "/"],
	"json-pointer-uri-fragment": ["#/a", "#/a%20b", "/a", "#/a b", "#"],
	"relative-json-pointer": ["0", "1/a", "01", "0#", "-1", "2/a~1"],
	regex: ["^a+$", "[", "(?<n>x)", "\\p{L}", "a{", "(?i)a", "\\d", "[[:alpha:]]"],
	color: ["red", "not a color"],
};
for (const [format, values] of Object.entries(FORMATS)) {
	add(`format ${format}`, field({ type: "string", format }), ...values.map((text) => ({ v: text })));
}
add("format coercion", object({ d: { type: "string", format: "date" }, e: { type: ["string", "integer"], format: "email" }, n: { format: "ipv4" } }), { d: 20240101 }, { e: 5 }, { n: 5 }, { n: "x" });

// Several errors in one message: order and wording.
add(
	"multiple errors",
	object(
		{
			a: { type: "integer", minimum: 5, multipleOf: 2 },
			b: { type: "string", minLength: 3, maxLength: 1, pattern: "^x" },
			c: { type: "array", items: { type: "integer" }, minItems: 3, uniqueItems: true },
			d: object({ e: { type: "boolean" } }, ["e", "f"], { additionalProperties: false }),
			g: { enum: ["x"], const: "y" },
		},
		["a", "z", "b"],
		{ additionalProperties: false, minProperties: 9, dependentRequired: { a: ["y"] } },
	),
	{ a: 3, b: "ab", c: ["1", "x", "1"], d: { e: "x", h: 1 }, g: "q", extra: 1 },
	{ a: "x", b: 5, c: "x", d: [] },
	{},
);
add(
	"multiple errors",
	{ type: "array", items: object({ name: { type: "string" }, n: { type: "integer" } }, ["name", "n"]) },
	[{ name: 1 }, { n: "x" }, "str", { name: "ok", n: 1 }],
);
add(
	"multiple errors",
	object({ "a/b": { type: "integer" }, "c~d": object({ "e.f": { type: "integer" } }) }),
	{ "a/b": "x", "c~d": { "e.f": "y" } },
);
add(
	"multiple errors",
	object({ s: { type: "string" } }),
	{ s: 1, note: "é", big: 1e21, small: 0.000003, list: [1, [2, {}], { x: null }] },
);
add(
	"object and array keywords",
	object({
		named: { type: "object", propertyNames: { pattern: "^[a-z]+$" }, maxProperties: 2 },
		has: { type: "array", contains: { type: "integer" }, minContains: 2, maxContains: 3 },
		dep: { type: "object", dependentSchemas: { a: object({ b: { type: "integer" } }, ["b"]) } },
	}),
	{ named: { ok: 1, Bad: 2, _x: 3 } },
	{ has: ["1", 2] },
	{ has: [1, 2, 3, 4] },
	{ has: ["x"] },
	{ dep: { a: 1, b: "2" } },
	{ dep: { a: 1 } },
);

// Whole-value schemas and odd schemas.
add("root", { type: "object" }, [1, 2], "text", 5, null);
add("root array", { type: "array", items: { type: "integer" } }, ["1", 2], {});
add("root false", false, {}, { v: 1 });
add("root true", true, { v: 1 });
add("root empty", {}, { v: 1 });
add("root false property", { type: "object", properties: { v: false } }, { v: 1 }, {});
add("invalid schema type", { type: "object", properties: { a: { type: "foo" } } }, { a: 1 });
add("invalid schema keyword", { type: "object", properties: { a: { minLength: "3", type: "string" } } }, { a: "x" });
// Keywords whose values are not what JSON Schema allows: the original ignores each of them
// and checks the rest.
add(
	"malformed keywords",
	object(
		{
			a: { type: "integer", required: true },
			b: { type: "string", minLength: "3", maxLength: true, pattern: 5, format: 7 },
			c: { type: "array", minItems: "1", uniqueItems: "yes", items: { type: "integer" } },
			d: { type: "number", minimum: "0", maximum: null, multipleOf: "2" },
			e: { enum: "x" },
			f: { type: "object", required: ["g", 5], minProperties: "1" },
			h: { type: "array", contains: { type: "integer" }, minContains: "2" },
		},
		["a", 7],
	),
	{ a: "1", b: "x", c: "5", d: "-3", e: "y", f: {}, h: [1] },
	{ a: "x", b: [], c: ["x", "x"], d: "q", f: { g: 1 }, h: ["x"] },
	{},
);
add("malformed type", field({ type: 5 }), value("1"), value('"x"'));
add("malformed type", field({ type: ["integer", 5] }), value('"1"'), value('"x"'));
add("unusable schema", object({ a: 5, b: { type: "integer" } }), { a: 1, b: "2" });
add("invalid schema pattern", object({ a: { type: "string", pattern: "(?<=a" } }), { a: "x" }, { a: 5 });

// ------------------------------------------------------------------ recording

const schemas = [];
const schemaIndex = new Map();
const records = cases.map(({ group, schema, args }) => {
	const text = typeof args === "object" && args !== null && "raw" in args ? args.raw : JSON.stringify(args);
	const call = { type: "toolCall", id: "1", name: "calc", arguments: JSON.parse(text) };
	const tool = { name: "calc", description: "d", parameters: schema };
	const key = JSON.stringify(schema);
	if (!schemaIndex.has(key)) {
		schemaIndex.set(key, schemas.length);
		schemas.push(schema);
	}
	const record = { group, schema: schemaIndex.get(key), arguments: text };
	try {
		return { ...record, value: ai.validateToolArguments(tool, call) };
	} catch (error) {
		return { ...record, error: error.message };
	}
});
// One schema and one case per line, so a change shows as the lines it changes.
const lines = (items) => items.map((item) => JSON.stringify(item)).join(",\n");
const recordedWith = { "pi-ai": version("pi-ai"), "pi-schema": version("pi-schema"), node: process.version };
writeFileSync(
	out,
	`{"recordedWith": ${JSON.stringify(recordedWith)},\n"schemas": [\n${lines(schemas)}\n],\n"cases": [\n${lines(records)}\n]}\n`,
);
console.log(`recorded ${records.length} validation cases with pi-ai ${version("pi-ai")} into ${out}`);
