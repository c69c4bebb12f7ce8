package policy

import _ "embed"

// Schema is the JSON Schema (draft 2020-12) of the policy file, for
// editors with a YAML language server and for pipelines. It checks the
// shape (fields, types, enums, single-field ranges); ranges that depend on
// other fields, and the lint, need Decode and Lint.
//
//go:embed schema/policy.json
var Schema []byte
