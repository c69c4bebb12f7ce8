package buildinfo

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestFrom(t *testing.T) {
	for _, tt := range []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want Info
	}{
		{"no build info", nil, false, Info{"unknown", "unknown", runtime.Version()}},
		{"devel, no VCS", &debug.BuildInfo{GoVersion: "go1.26.7", Main: debug.Module{Path: "github.com/ratelab/ratelab", Version: "(devel)"}},
			true, Info{"(devel)", "unknown", "go1.26.7"}},
		{"empty version", &debug.BuildInfo{GoVersion: "go1.26.7"}, true, Info{"(devel)", "unknown", "go1.26.7"}},
		{"tagged, with VCS", &debug.BuildInfo{GoVersion: "go1.26.7", Main: debug.Module{Version: "v1.4.0"}, Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "06a6c2f0123456789abcdef0123456789abcdef0"}, {Key: "vcs.modified", Value: "false"},
		}}, true, Info{"v1.4.0", "06a6c2f0123456789abcdef0123456789abcdef0", "go1.26.7"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := From(tt.bi, tt.ok); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestString(t *testing.T) {
	got := Info{"v1.4.0", "06a6c2f0", "go1.26.7"}.String()
	if want := "ratelab v1.4.0, revision 06a6c2f0, go1.26.7"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
