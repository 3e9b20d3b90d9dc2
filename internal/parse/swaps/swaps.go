// Package swaps parses /proc/swaps, the kernel's list of active swap
// areas, so that an fstab swap entry can be compared with what is on.
package swaps

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/fstab"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Area is one active swap area from /proc/swaps.
type Area struct {
	// Filename is the device or file path, escapes decoded.
	Filename string
	// Type is "partition" or "file".
	Type string
	// Size is in KiB.
	Size int64
}

// Parse parses /proc/swaps; the header line is skipped and bad lines are
// returned as Problems.
func Parse(b []byte) ([]Area, []problem.Problem) {
	var out []Area
	var errs []problem.Problem
	for i, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || (i == 0 && f[0] == "Filename") {
			continue
		}
		if len(f) < 3 {
			errs = append(errs, problem.Problem{Line: i + 1, Msg: fmt.Sprintf("has %d fields, want at least 3", len(f))})
			continue
		}
		size, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			errs = append(errs, problem.Problem{Line: i + 1, Msg: fmt.Sprintf("size %q is not a number", f[2])})
			continue
		}
		out = append(out, Area{Filename: fstab.Unescape(f[0]), Type: f[1], Size: size})
	}
	return out, errs
}
