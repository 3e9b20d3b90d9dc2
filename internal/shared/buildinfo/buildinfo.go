// Package buildinfo carries what both binaries say about their build:
// the version stamped at link time with -ldflags "-X
// github.com/guestcheck/guestcheck/internal/shared/buildinfo.Version=...", the
// build date from SOURCE_DATE_EPOCH (Date, stamped the same way, so that
// package builds are reproducible), the commit (the one the Go toolchain
// records, else Commit as stamped), and the Go version and architecture.
package buildinfo

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strconv"
	"time"
)

// Version is the release version; "dev" for unstamped builds.
var Version = "dev"

// Date is the build date as Unix seconds (SOURCE_DATE_EPOCH); empty for
// unstamped builds.
var Date = ""

// Commit is the commit as the Makefile stamps it (git rev-parse HEAD, or
// COMMIT=... for a build from a tarball); --version shows it when the
// toolchain recorded no VCS data (-buildvcs=false, no .git). Empty for
// unstamped builds.
var Commit = ""

// Info is the build, as --version shows it.
type Info struct {
	Tool      string `json:"tool"`
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	BuildDate string `json:"build_date,omitempty"`
	GoVersion string `json:"go_version"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
}

// Read returns tool's build information.
func Read(tool string) Info {
	in := Info{Tool: tool, Version: Version, GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if sec, err := strconv.ParseInt(Date, 10, 64); err == nil {
		in.BuildDate = time.Unix(sec, 0).UTC().Format(time.RFC3339)
	}
	in.Commit = Commit
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				in.Commit = s.Value
			case "vcs.modified":
				in.Modified = s.Value == "true"
			}
		}
	}
	return in
}

// WriteText writes the information as lines for a person.
func (in Info) WriteText(w io.Writer) error {
	commit := in.Commit
	if commit == "" {
		commit = "unknown"
	} else if in.Modified {
		commit += " (with uncommitted changes)"
	}
	date := in.BuildDate
	if date == "" {
		date = "unknown"
	}
	_, err := fmt.Fprintf(w, "%s %s\ncommit:   %s\nbuilt:    %s\ngo:       %s\nplatform: %s/%s\n",
		in.Tool, in.Version, commit, date, in.GoVersion, in.OS, in.Arch)
	return err
}

// WriteJSON writes the information as one JSON object.
func (in Info) WriteJSON(w io.Writer) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
