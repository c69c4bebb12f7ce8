// check.mjs fails when a SARIF multitool validation log (the output of
// `Sarif.Multitool validate`) holds any result, error or warning, and
// prints each.
import { readFileSync } from "node:fs";

let failed = 0;
for (const file of process.argv.slice(2)) {
  const log = JSON.parse(readFileSync(file, "utf8"));
  for (const run of log.runs) {
    for (const r of run.results || []) {
      failed++;
      const args = (r.message.arguments || []).join(", ");
      console.error(`${file}: ${r.level || "warning"} ${r.ruleId} (${r.message.id || r.message.text}): ${args}`);
    }
  }
}
process.exit(failed > 0 ? 1 : 0);
