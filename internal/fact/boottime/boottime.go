// Package boottime is when the running system booted, from the btime line
// of /proc/stat, read once for the cloud-init check (the age of its
// records) and the clone-identity check (files older than this boot).
package boottime

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

// Path is the kernel's statistics file that holds btime.
const Path = "/proc/stat"

// Parse returns the btime line of /proc/stat: the boot time in whole
// epoch seconds.
func Parse(b []byte) (time.Time, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "btime ")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
		if err != nil || n <= 0 || n > 1<<40 {
			return time.Time{}, fmt.Errorf("btime %q: not a positive integer", clip(rest, 40))
		}
		return time.Unix(n, 0), nil
	}
	if err := sc.Err(); err != nil {
		return time.Time{}, err
	}
	return time.Time{}, errors.New("no btime line")
}

// Read reads the boot time through r, which must be the running system's
// root: an image has no boot. Read errors are returned as they are.
func Read(r fs.Reader) (time.Time, error) {
	b, err := r.ReadFile(Path)
	if err != nil {
		return time.Time{}, err
	}
	return Parse(b)
}

// clip shortens s to n bytes for a message.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
