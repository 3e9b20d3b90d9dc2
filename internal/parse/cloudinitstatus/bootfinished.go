package cloudinitstatus

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// BootFinished is /var/lib/cloud/instance/boot-finished, written by
// cc_final_message as "<uptime> - <RFC 2822 time> - v. <version>". The file
// survives reboots, so it proves nothing about this boot on its own.
type BootFinished struct {
	// Uptime is the system uptime when it was written; UptimeKnown is
	// false when cloud-init wrote "??".
	Uptime      time.Duration
	UptimeKnown bool
	// Time is the wall time when it was written; zero when "??".
	Time time.Time
	// Version is cloud-init's version string.
	Version string
}

// rfc2822 is cloud-init's util.time_rfc2822 layout.
const rfc2822 = "Mon, 02 Jan 2006 15:04:05 -0700"

// ParseBootFinished parses the content of boot-finished. A result is
// returned only without an error, a problem.Problem.
func ParseBootFinished(b []byte) (*BootFinished, error) {
	s := strings.TrimRight(string(b), "\r\n")
	if s == "" {
		return nil, bad("empty file")
	}
	if strings.ContainsAny(s, "\n\r") {
		return nil, bad("more than one line")
	}
	parts := strings.SplitN(s, " - ", 3)
	if len(parts) != 3 {
		return nil, bad("want \"<uptime> - <time> - v. <version>\", got %q", clip(s, 80))
	}
	bf := &BootFinished{}
	if up := strings.TrimSpace(parts[0]); up != "??" {
		d, err := parseSeconds(up)
		if err != nil {
			return nil, bad("uptime %q: %v", clip(up, 40), err)
		}
		bf.Uptime, bf.UptimeKnown = d, true
	}
	if ts := strings.TrimSpace(parts[1]); ts != "??" {
		t, err := time.Parse(rfc2822, ts)
		if err != nil {
			return nil, bad("time %q: not RFC 2822", clip(ts, 60))
		}
		bf.Time = t
	}
	v, ok := strings.CutPrefix(parts[2], "v. ")
	if !ok {
		return nil, bad("version %q: want \"v. <version>\"", clip(parts[2], 40))
	}
	bf.Version = strings.TrimSpace(v)
	return bf, nil
}

// maxSeconds keeps durations far from overflowing time.Duration (292 years).
const maxSeconds = 100 * 365 * 24 * 3600

// parseSeconds reads a non-negative decimal number of seconds as written
// by /proc/uptime and cloud-init.
func parseSeconds(s string) (time.Duration, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, errors.New("not a number")
	}
	if f < 0 || f > maxSeconds || f != f {
		return 0, errors.New("out of range")
	}
	return time.Duration(f * float64(time.Second)), nil
}

// bad is a problem in the file as a whole: boot-finished has one line.
func bad(format string, args ...any) error {
	return problem.Problem{Msg: fmt.Sprintf(format, args...)}
}

// clip shortens s for error messages.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
