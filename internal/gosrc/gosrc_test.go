package gosrc

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestConsts(t *testing.T) {
	src := `package p

const untyped = "u"

// Kinds.
const (
	KindA Kind = "a"
	KindB Kind = "b"
	other      = 3
	alias      = KindA
)

const Other Flavour = "x"
`
	file := filepath.Join(t.TempDir(), "p.go")
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Consts(file)
	if err != nil {
		t.Fatal(err)
	}
	want := []Const{
		{Name: "untyped", Value: "u", Literal: true},
		{Name: "KindA", Type: "Kind", Value: "a", Literal: true},
		{Name: "KindB", Type: "Kind", Value: "b", Literal: true},
		{Name: "other"},
		{Name: "alias"},
		{Name: "Other", Type: "Flavour", Value: "x", Literal: true},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Consts = %+v\nwant     %+v", got, want)
	}
	kinds, err := Typed(file, "Kind")
	if err != nil || !slices.Equal(kinds, []string{"a", "b"}) {
		t.Errorf("Typed(Kind) = %q, %v", kinds, err)
	}
	if _, err := Consts(filepath.Join(t.TempDir(), "missing.go")); err == nil {
		t.Error("Consts of a missing file: no error")
	}
}
