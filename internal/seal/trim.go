package seal

import (
	"fmt"
	"io"
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
	fmt.Fprintln(w, "\nfstrim:")
	for _, t := range trims {
		if t.Error != "" {
			wrap(w, "  "+t.Path+": not trimmed: ", "    ", t.Error)
			continue
		}
		fmt.Fprintf(w, "  %s: %d bytes discarded (%.1f MiB)\n", t.Path, t.Bytes, float64(t.Bytes)/(1<<20))
	}
}
