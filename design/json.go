package design

import (
	"bytes"
	"fmt"
	"io"

	"github.com/goccy/go-yaml"

	"github.com/ratelab/ratelab/policy"
)

// EncodeJSON writes p as JSON: the policy file's document with the same
// field names, order and values (durations as Go duration strings, "60s"),
// converted from policy.Encode's YAML so the two cannot drift apart.
func EncodeJSON(w io.Writer, p policy.Policy) error {
	var y bytes.Buffer
	if err := policy.Encode(&y, p); err != nil {
		return err
	}
	j, err := yaml.YAMLToJSON(y.Bytes())
	if err != nil {
		return fmt.Errorf("policy as JSON: %w", err)
	}
	_, err = w.Write(j)
	return err
}

// DecodeJSON reads a policy written by EncodeJSON (or by hand in the same
// shape). JSON is YAML, so this is policy.Decode with all its checks.
func DecodeJSON(r io.Reader) (policy.Policy, error) { return policy.Decode(r) }
