package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/internal/integration"
)

// TestScreenshots runs the command end to end, server build included,
// into a temporary directory: one PNG per page and viewport, each decoding
// to the viewport's size.
func TestScreenshots(t *testing.T) {
	chromium := integration.Need(t, "chromium", "chromium")
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"-o", dir, "-chromium", chromium}, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	var want []string
	for _, p := range pages {
		for _, v := range viewports {
			name := fileName(p.name, v)
			want = append(want, filepath.Join(dir, name))
			f, err := os.Open(filepath.Join(dir, name))
			if err != nil {
				t.Error(err)
				continue
			}
			img, err := png.Decode(f)
			f.Close()
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if b := img.Bounds(); int64(b.Dx()) != v.w || int64(b.Dy()) != v.h {
				t.Errorf("%s: %d×%d, want %d×%d", name, b.Dx(), b.Dy(), v.w, v.h)
			}
		}
	}
	if got := strings.Fields(stdout.String()); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("stdout lists %q, want %q", got, want)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(want) {
		t.Errorf("%d files in %s, want %d", len(entries), dir, len(want))
	}
}

// TestFileNames: the names the README links to.
func TestFileNames(t *testing.T) {
	var got []string
	for _, p := range pages {
		for _, v := range viewports {
			got = append(got, fileName(p.name, v))
		}
	}
	want := "designer-1440x900.png designer-390x844.png tiered-1440x900.png tiered-390x844.png compare-1440x900.png compare-390x844.png"
	if strings.Join(got, " ") != want {
		t.Errorf("file names %q, want %s", got, want)
	}
}

func TestRunFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"empty dir", []string{"-o", ""}, "-o: empty"},
		{"no chromium", []string{"-chromium", ""}, "-chromium: empty"},
		{"zero timeout", []string{"-timeout", "0s"}, "-timeout: 0s"},
		{"argument", []string{"extra"}, `unexpected argument "extra"`},
		{"missing chromium", []string{"-o", t.TempDir(), "-chromium", filepath.Join(t.TempDir(), "chromium")}, "install Debian's chromium package"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(t.Context(), tt.args, &out, &out)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("run(%q) = %v, want an error containing %q", tt.args, err, tt.want)
			}
		})
	}
}
