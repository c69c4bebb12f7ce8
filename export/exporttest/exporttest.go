// Package exporttest holds the policies every export's tests render: the
// policy package's examples and policies that use every algorithm, key,
// endpoint cost, shadow mode and replica setting.
package exporttest

import (
	"bytes"
	"embed"
	"path"
	"sort"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/policy"
)

//go:embed policies/*.yaml
var files embed.FS

// Policy is one test policy with its file name (without .yaml).
type Policy struct {
	Name   string
	Policy policy.Policy
}

// Policies decodes every test policy, sorted by name; a policy that does
// not decode fails the test.
func Policies(t testing.TB) []Policy {
	t.Helper()
	entries, err := files.ReadDir("policies")
	if err != nil {
		t.Fatal(err)
	}
	var out []Policy
	for _, e := range entries {
		data, err := files.ReadFile(path.Join("policies", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		p, err := policy.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		out = append(out, Policy{Name: strings.TrimSuffix(e.Name(), ".yaml"), Policy: p})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Named is the test policy called name; an unknown name fails the test.
func Named(t testing.TB, name string) policy.Policy {
	t.Helper()
	for _, p := range Policies(t) {
		if p.Name == name {
			return p.Policy
		}
	}
	t.Fatalf("no test policy %q", name)
	return policy.Policy{}
}
