// Package procfs reads the few /proc files guestcheck judges processes and
// the boot by: /proc/uptime, /proc/<pid>/stat and /proc/<pid>/cmdline (and
// the NUL-separated /proc/<pid>/environ, which has cmdline's shape). Each
// reader is a pure function of the file's bytes, so that a fake /proc in
// tests and a hostile one on a guest go through the same code; errors are
// problem.Problem values.
package procfs

import (
	"bytes"
	"strconv"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// maxSeconds keeps durations far from overflowing time.Duration (292 years).
const maxSeconds = 100 * 365 * 24 * 3600

// ParseUptime parses /proc/uptime ("12345.67 23456.78"): the first number
// is the time since boot, which is also what cloud-init 24.2+ writes into
// its status.json.
func ParseUptime(b []byte) (time.Duration, error) {
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, problem.Problem{Msg: "empty"}
	}
	v, err := strconv.ParseFloat(f[0], 64)
	switch {
	case err != nil:
		return 0, problem.At("", 0, "uptime %q: not a number", clip(f[0], 40))
	case v < 0 || v > maxSeconds || v != v:
		return 0, problem.At("", 0, "uptime %q: out of range", clip(f[0], 40))
	}
	return time.Duration(v * float64(time.Second)), nil
}

// Stat is what guestcheck needs from /proc/<pid>/stat.
type Stat struct {
	PID  int
	Comm string // without the parentheses
	PPID int
}

// ParseStat parses /proc/<pid>/stat. comm is the text between the first
// "(" and the LAST ")", because comm itself may contain spaces and
// parentheses ("(sd-pam)", "a) b").
func ParseStat(b []byte) (Stat, error) {
	s := string(b)
	open := strings.IndexByte(s, '(')
	end := strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return Stat{}, problem.Problem{Msg: "no (comm) field"}
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	if err != nil || pid <= 0 {
		return Stat{}, problem.At("", 0, "pid %q: not a positive integer", clip(strings.TrimSpace(s[:open]), 20))
	}
	rest := strings.Fields(s[end+1:])
	// rest[0] is the state letter, rest[1] the parent pid.
	if len(rest) < 2 {
		return Stat{}, problem.Problem{Msg: "no ppid field"}
	}
	ppid, err := strconv.Atoi(rest[1])
	if err != nil || ppid < 0 {
		return Stat{}, problem.At("", 0, "ppid %q: not a non-negative integer", clip(rest[1], 20))
	}
	return Stat{PID: pid, Comm: s[open+1 : end], PPID: ppid}, nil
}

// ParseCmdline splits /proc/<pid>/cmdline (NUL-separated, usually
// NUL-terminated) into arguments; /proc/<pid>/environ splits the same
// way. Kernel threads have an empty cmdline.
func ParseCmdline(b []byte) []string {
	b = bytes.TrimRight(b, "\x00")
	if len(b) == 0 {
		return nil
	}
	parts := bytes.Split(b, []byte{0})
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = string(p)
	}
	return out
}

// clip shortens s for error messages: /proc text is quoted, not trusted
// to be short.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
