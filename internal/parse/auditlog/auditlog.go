// Package auditlog reads the SELinux denials in a Linux audit log
// (/var/log/audit/audit.log as auditd writes it): one record a line,
// "type=AVC msg=audit(SECONDS.MILLIS:SERIAL): avc: denied { perms } for
// key=value ...", with values in double quotes when they may hold
// blanks. Records of other types are skipped: the log is evidence, not
// configuration, so a reader wants the denials it can find and is told
// of the lines it could read only in part.
//
// Parsing is pure.
package auditlog

import (
	"strconv"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// AVC is one SELinux denial.
type AVC struct {
	// Line is the 1-based line of the record in the log; 0 from
	// ParseLine.
	Line int
	// Time is the record's timestamp; zero when it could not be read.
	Time time.Time
	// Perms are the permissions denied ("open", "read").
	Perms []string
	// Comm is the command of the process that was denied.
	Comm string
	// Path is the object's path=, or its name= when no path is logged.
	Path     string
	SContext string
	TContext string
	TClass   string
	// Permissive is true when the denial was only logged (permissive=1).
	Permissive bool
}

// Parse returns the AVC denials in the log b, in order, and a problem for
// each denial whose timestamp or permissions could not be read; such a
// denial is still returned, with what could be read.
func Parse(b []byte) ([]AVC, []problem.Problem) {
	var out []AVC
	var probs []problem.Problem
	for i, line := range strings.Split(string(b), "\n") {
		a, why, ok := parseLine(line)
		if !ok {
			continue
		}
		a.Line = i + 1
		out = append(out, a)
		if why != "" {
			probs = append(probs, problem.Problem{Line: i + 1, Msg: why})
		}
	}
	return out, probs
}

// ParseLine parses one record; ok is false when it is not an AVC denial.
func ParseLine(line string) (a AVC, ok bool) {
	a, _, ok = parseLine(line)
	return a, ok
}

// parseLine is ParseLine that also says what of a denial could not be
// read ("" when all could).
func parseLine(line string) (a AVC, why string, ok bool) {
	if !strings.HasPrefix(line, "type=AVC ") || !strings.Contains(line, " denied ") {
		return a, "", false
	}
	a.Time, ok = stamp(line)
	if !ok {
		why = "AVC denial without a readable msg=audit(SECONDS:SERIAL) timestamp"
	}
	rest := line
	if i := strings.IndexByte(line, '{'); i >= 0 {
		if j := strings.IndexByte(line[i:], '}'); j > 0 {
			a.Perms = strings.Fields(line[i+1 : i+j])
			rest = line[i+j+1:]
		}
	}
	if a.Perms == nil && why == "" {
		why = "AVC denial without a { permissions } set"
	}
	var name string
	for _, kv := range splitFields(rest) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		v = strings.Trim(v, `"`)
		switch k {
		case "comm":
			a.Comm = v
		case "path":
			a.Path = v
		case "name":
			name = v
		case "scontext":
			a.SContext = v
		case "tcontext":
			a.TContext = v
		case "tclass":
			a.TClass = v
		case "permissive":
			a.Permissive = v == "1"
		}
	}
	if a.Path == "" {
		a.Path = name
	}
	return a, why, true
}

// stamp reads the time of "msg=audit(SECONDS.MILLIS:SERIAL)"; a value out
// of range is not a time, so that a corrupt record cannot pass as recent.
func stamp(line string) (time.Time, bool) {
	i := strings.Index(line, "msg=audit(")
	if i < 0 {
		return time.Time{}, false
	}
	rest := line[i+len("msg=audit("):]
	j := strings.IndexAny(rest, ":)")
	if j <= 0 {
		return time.Time{}, false
	}
	// Seconds and fraction are read apart, as integers, so that the
	// milliseconds auditd wrote are the nanoseconds returned, exactly.
	secs, frac, _ := strings.Cut(rest[:j], ".")
	sec, err := strconv.ParseInt(secs, 10, 64)
	if err != nil || sec < 0 || sec >= 1e12 || len(frac) > 9 || strings.Trim(frac, "0123456789") != "" {
		return time.Time{}, false
	}
	ns := 0
	if frac != "" {
		ns, _ = strconv.Atoi((frac + "00000000")[:9])
	}
	return time.Unix(sec, int64(ns)).UTC(), true
}

// splitFields splits on spaces outside double quotes, as auditd quotes
// values that may hold them.
func splitFields(s string) []string {
	var out []string
	var cur strings.Builder
	q := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '"' {
			q = !q
		}
		if c == ' ' && !q {
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
			continue
		}
		cur.WriteByte(c)
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}
