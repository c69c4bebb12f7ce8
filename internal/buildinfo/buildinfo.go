// Package buildinfo names the running build, for "ratelab version" and the
// server's ratelab_build_info metric: the main module's version, the VCS
// revision it was built from and the Go version that built it, read from
// runtime/debug.ReadBuildInfo.
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Info names a build.
type Info struct {
	// Version is the main module's version: a tag such as "v1.4.0" for
	// go install module@version, "(devel)" for a build in a checkout, and
	// "unknown" without build information.
	Version string
	// Revision is the vcs.revision build setting (a commit id), or
	// "unknown" when absent (go run, -buildvcs=false, no VCS).
	Revision string
	// GoVersion is the Go version the binary was built with, or the
	// running one without build information.
	GoVersion string
}

// Read returns the running binary's Info.
func Read() Info {
	return From(debug.ReadBuildInfo())
}

// From returns the Info of a debug.ReadBuildInfo result.
func From(bi *debug.BuildInfo, ok bool) Info {
	info := Info{Version: "(devel)", Revision: "unknown", GoVersion: runtime.Version()}
	if !ok || bi == nil {
		info.Version = "unknown"
		return info
	}
	if bi.Main.Version != "" {
		info.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && s.Value != "" {
			info.Revision = s.Value
		}
	}
	if bi.GoVersion != "" {
		info.GoVersion = bi.GoVersion
	}
	return info
}

// String is the line "ratelab version" prints:
// "ratelab v1.4.0, revision 06a6c2f…, go1.26.7".
func (i Info) String() string {
	return "ratelab " + i.Version + ", revision " + i.Revision + ", " + i.GoVersion
}
