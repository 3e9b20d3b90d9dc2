package cloudinit

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseUptime parses /proc/uptime ("12345.67 23456.78"): the first number
// is the time since boot, which is also what cloud-init 24.2+ writes into
// status.json.
func ParseUptime(b []byte) (time.Duration, error) {
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, errors.New("empty")
	}
	d, err := parseSeconds(f[0])
	if err != nil {
		return 0, fmt.Errorf("uptime %q: %v", clip(f[0], 40), err)
	}
	return d, nil
}

// ProcStat is what guestcheck needs from /proc/<pid>/stat.
type ProcStat struct {
	PID  int
	Comm string // without the parentheses
	PPID int
}

// ParseProcStat parses /proc/<pid>/stat. comm is the text between the
// first "(" and the LAST ")", because comm itself may contain spaces and
// parentheses ("(sd-pam)", "a) b").
func ParseProcStat(b []byte) (ProcStat, error) {
	s := string(b)
	open := strings.IndexByte(s, '(')
	close := strings.LastIndexByte(s, ')')
	if open < 0 || close < open {
		return ProcStat{}, errors.New("no (comm) field")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	if err != nil || pid <= 0 {
		return ProcStat{}, fmt.Errorf("pid %q: not a positive integer", clip(strings.TrimSpace(s[:open]), 20))
	}
	rest := strings.Fields(s[close+1:])
	// rest[0] is the state letter, rest[1] the parent pid.
	if len(rest) < 2 {
		return ProcStat{}, errors.New("no ppid field")
	}
	ppid, err := strconv.Atoi(rest[1])
	if err != nil || ppid < 0 {
		return ProcStat{}, fmt.Errorf("ppid %q: not a non-negative integer", clip(rest[1], 20))
	}
	return ProcStat{PID: pid, Comm: s[open+1 : close], PPID: ppid}, nil
}

// ParseCmdline splits /proc/<pid>/cmdline (NUL-separated, usually
// NUL-terminated) into arguments. Kernel threads have an empty cmdline.
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
