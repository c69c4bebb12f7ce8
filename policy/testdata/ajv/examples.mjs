// Validates the example policies against policy/schema/policy.json with
// ajv in strict mode (draft 2020-12): every policy/testdata/examples/*.yaml,
// and every ```yaml block of README.md whose first line is "apiVersion:" (a
// whole policy; the modeline block shows only the first lines of one).
// Each YAML document is parsed to JSON (YAML 1.2 core schema, as the Go
// decoder reads it) before validation. Exits 1 on an invalid example, or
// when fewer examples than expected are found, so a moved file cannot pass
// by validating nothing.
//
// Run from anywhere: node policy/testdata/ajv/examples.mjs
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Ajv2020 from "ajv/dist/2020.js";
import YAML from "yaml";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const schema = JSON.parse(fs.readFileSync(path.join(root, "policy/schema/policy.json"), "utf8"));
const validate = new Ajv2020({ strict: true, allErrors: true }).compile(schema);

// examples are [name, YAML text] pairs.
const examples = [];
const dir = path.join(root, "policy/testdata/examples");
for (const f of fs.readdirSync(dir).filter((f) => f.endsWith(".yaml")).sort()) {
  examples.push([path.join("policy/testdata/examples", f), fs.readFileSync(path.join(dir, f), "utf8")]);
}
const readme = fs.readFileSync(path.join(root, "README.md"), "utf8").split("\n");
for (let i = 0; i < readme.length; i++) {
  if (readme[i] !== "```yaml" || !readme[i + 1]?.startsWith("apiVersion:")) continue;
  const end = readme.indexOf("```", i + 1);
  examples.push([`README.md:${i + 2}`, readme.slice(i + 1, end).join("\n")]);
  i = end;
}

const want = { "policy/testdata/examples": 3, "README.md": 1 };
let failed = false;
for (const [where, n] of Object.entries(want)) {
  const got = examples.filter(([name]) => name.startsWith(where)).length;
  if (got < n) {
    console.error(`${where}: found ${got} example policies, want at least ${n}`);
    failed = true;
  }
}
for (const [name, text] of examples) {
  const doc = YAML.parse(text, { schema: "core" });
  if (validate(doc)) {
    console.log(`${name} valid`);
    continue;
  }
  failed = true;
  for (const e of validate.errors) {
    console.error(`${name}: ${e.instancePath || "/"} ${e.message} (${e.schemaPath})`);
  }
}
process.exit(failed ? 1 : 0);
