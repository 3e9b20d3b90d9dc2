package guestagent

import (
	"strconv"
	"strings"
	"time"
)

// AVC is one SELinux denial from the audit log.
type AVC struct {
	Time     time.Time
	Perms    []string // "open", "read"
	Comm     string
	Path     string // path=, or name= when no path is logged
	SContext string
	TContext string
	TClass   string
	// Permissive is true when the denial was only logged (permissive=1).
	Permissive bool
}

// ParseAuditLog returns the AVC denials in an audit.log. Other records and
// malformed lines are skipped: the log is evidence, not configuration.
func ParseAuditLog(b []byte) []AVC {
	var out []AVC
	for _, line := range strings.Split(string(b), "\n") {
		if a, ok := ParseAVC(line); ok {
			out = append(out, a)
		}
	}
	return out
}

// ParseAVC parses one "type=AVC msg=audit(SECS.MS:SERIAL): avc: denied
// { perms } for key=value ..." line.
func ParseAVC(line string) (AVC, bool) {
	var a AVC
	if !strings.HasPrefix(line, "type=AVC ") || !strings.Contains(line, " denied ") {
		return a, false
	}
	if i := strings.Index(line, "msg=audit("); i >= 0 {
		rest := line[i+len("msg=audit("):]
		if j := strings.IndexAny(rest, ":)"); j > 0 {
			if f, err := strconv.ParseFloat(rest[:j], 64); err == nil && f >= 0 && f < 1e12 {
				sec := int64(f)
				a.Time = time.Unix(sec, int64((f-float64(sec))*1e9)).UTC()
			}
		}
	}
	if i := strings.IndexByte(line, '{'); i >= 0 {
		if j := strings.IndexByte(line[i:], '}'); j > 0 {
			a.Perms = strings.Fields(line[i+1 : i+j])
			line = line[i+j+1:]
		}
	}
	var name string
	for _, kv := range splitAuditFields(line) {
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
	return a, true
}

// splitAuditFields splits on spaces outside double quotes.
func splitAuditFields(s string) []string {
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

// IsAgent reports whether the denial is qemu-ga's (by command or domain).
func (a AVC) IsAgent() bool {
	return a.Comm == "qemu-ga" || strings.Contains(a.SContext, ":virt_qemu_ga_")
}
