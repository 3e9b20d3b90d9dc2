package seal

import (
	"fmt"
	"io"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// TrimResult is what --fstrim did to one filesystem: the bytes the kernel
// reports discarded, or why it could not.
type TrimResult struct {
	// Path is the guest mount point ("/", "/boot").
	Path  string `json:"path"`
	Bytes uint64 `json:"bytes"`
	Error string `json:"error,omitempty"`
}

func writeTrimText(w io.Writer, trims []TrimResult) {
	fmt.Fprintln(w, "\nFree blocks discarded (fstrim):")
	for _, t := range trims {
		if t.Error != "" {
			fmt.Fprintf(w, "  %s: not trimmed: %s\n", t.Path, problem.OneLine(t.Error))
			continue
		}
		fmt.Fprintf(w, "  %s: %d bytes discarded (%.1f MiB)\n", t.Path, t.Bytes, float64(t.Bytes)/(1<<20))
	}
}
