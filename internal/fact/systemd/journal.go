package systemd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// The journal is read through systemd's own tool: journald has no query
// interface on D-Bus, and go-systemd's sdjournal needs cgo, which the
// static binary excludes. journalctl's JSON output is parsed here.

// ErrNoJournalctl is wrapped when journalctl is not installed.
var ErrNoJournalctl = errors.New("journalctl is not installed")

// JournalTimeout bounds one journalctl run when the caller's context
// allows longer: reading one boot's messages of one process takes well
// under a second natively, and a journal on a hung disk must not hold the
// check until its own deadline.
const JournalTimeout = 10 * time.Second

// maxJournalOutput bounds what one query may print: the queries of the
// checks are filtered to a few entries, so more means a filter that does
// not work here (an old journalctl ignoring a match).
const maxJournalOutput = 16 << 20

// maxJournalLine bounds one entry: journalctl prints fields above its data
// threshold (64 KiB) as null, so an entry is never much larger.
const maxJournalLine = 1 << 20

// JournalEntry is one entry of `journalctl -o json`. A field may occur
// more than once (systemd logs UNIT= for every unit of an ordering
// cycle), so each has a list of values.
type JournalEntry struct {
	Fields map[string][]string
}

// Get returns the field's first value, "" when it is absent.
func (e JournalEntry) Get(name string) string {
	if v := e.Fields[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// All returns every value of the field.
func (e JournalEntry) All(name string) []string { return e.Fields[name] }

// Realtime is __REALTIME_TIMESTAMP (µs since the epoch) as a time; zero
// when absent or malformed.
func (e JournalEntry) Realtime() time.Time {
	us, err := strconv.ParseInt(e.Get("__REALTIME_TIMESTAMP"), 10, 64)
	if err != nil || us <= 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

// ParseJournalLine parses one line of `journalctl -o json`: an object
// whose values are a string, null (a field over journalctl's size
// threshold, left out), an array of byte values (a field that is not
// valid UTF-8) or an array of those (a field that occurs more than once).
func ParseJournalLine(line []byte) (JournalEntry, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return JournalEntry{}, fmt.Errorf("not a JSON object: %v", err)
	}
	e := JournalEntry{Fields: make(map[string][]string, len(raw))}
	for k, v := range raw {
		if k == "" {
			return JournalEntry{}, errors.New("empty field name")
		}
		vals, err := journalValues(v, true)
		if err != nil {
			return JournalEntry{}, fmt.Errorf("field %s: %v", k, err)
		}
		if len(vals) > 0 {
			e.Fields[k] = vals
		}
	}
	return e, nil
}

// journalValues decodes one field's value; top is false inside an array
// of values, where a nested array can only be bytes.
func journalValues(v json.RawMessage, top bool) ([]string, error) {
	v = bytes.TrimSpace(v)
	switch {
	case bytes.Equal(v, []byte("null")):
		return nil, nil
	case len(v) > 0 && v[0] == '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, err
		}
		return []string{s}, nil
	case len(v) > 0 && v[0] == '[':
		var items []json.RawMessage
		if err := json.Unmarshal(v, &items); err != nil {
			return nil, err
		}
		if b, ok := journalBytes(items); ok {
			return []string{b}, nil
		}
		if !top {
			return nil, errors.New("an array inside an array of values is not a byte array")
		}
		var out []string
		for _, it := range items {
			vs, err := journalValues(it, false)
			if err != nil {
				return nil, err
			}
			out = append(out, vs...)
		}
		return out, nil
	}
	return nil, fmt.Errorf("value %.40s is neither a string, null nor an array", v)
}

// journalBytes decodes an array of numbers 0..255 (journalctl's form of a
// binary field); false when items are not that. An empty array is an
// empty value.
func journalBytes(items []json.RawMessage) (string, bool) {
	b := make([]byte, 0, len(items))
	for _, it := range items {
		n, err := strconv.ParseUint(string(bytes.TrimSpace(it)), 10, 8)
		if err != nil {
			return "", false
		}
		b = append(b, byte(n))
	}
	return string(b), true
}

// ParseJournalJSON parses journalctl's JSON output, one entry per line;
// errors name the line.
func ParseJournalJSON(r io.Reader) ([]JournalEntry, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxJournalLine)
	var out []JournalEntry
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		e, err := ParseJournalLine(line)
		if err != nil {
			return nil, fmt.Errorf("journalctl output line %d: %v", n, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("journalctl output line %d: %v", n+1, err)
	}
	return out, nil
}

// JournalReader reads this boot's journal. *Client implements it; the
// systemd check asks for it with a type assertion, as for Inspector.
type JournalReader interface {
	// BootJournal runs `journalctl -b -o json` with the given extra
	// arguments (matches, -p, -n, --output-fields) and returns the
	// entries, under a deadline of at most JournalTimeout.
	BootJournal(ctx context.Context, args ...string) ([]JournalEntry, error)
}

var _ JournalReader = (*Client)(nil)

// BootJournal implements JournalReader.
func (c *Client) BootJournal(ctx context.Context, args ...string) ([]JournalEntry, error) {
	if !c.live {
		return nil, fmt.Errorf("journal: %w", ErrNotRunning)
	}
	return RunJournalctl(ctx, c.journalctl, args...)
}

// RunJournalctl runs the journalctl at path ("" looks it up in PATH and
// the sbin directories) for this boot with JSON output, kills it when the
// deadline passes, and parses what it printed.
func RunJournalctl(ctx context.Context, path string, args ...string) ([]JournalEntry, error) {
	if path == "" {
		p, err := lookJournalctl()
		if err != nil {
			return nil, err
		}
		path = p
	}
	ctx, cancel := context.WithTimeout(ctx, JournalTimeout)
	defer cancel()
	argv := append([]string{"-b", "--no-pager", "-q", "-o", "json"}, args...)
	cmd := exec.CommandContext(ctx, path, argv...)
	// No pager, no colours, C messages; a child that keeps the pipes open
	// after the kill must not hold Wait.
	cmd.Env = []string{"SYSTEMD_PAGER=", "PAGER=cat", "SYSTEMD_COLORS=0", "LC_ALL=C", "PATH=/usr/bin:/bin:/usr/sbin:/sbin"}
	cmd.WaitDelay = time.Second
	var out limitedBuffer
	out.max = maxJournalOutput
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	start := time.Now()
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%s %s: no answer within %s: %w", path, strings.Join(argv, " "), time.Since(start).Round(time.Millisecond), ctx.Err())
	}
	if out.over {
		return nil, fmt.Errorf("%s %s: printed more than %d MiB", path, strings.Join(argv, " "), maxJournalOutput>>20)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		return nil, fmt.Errorf("%s %s: %v: %s", path, strings.Join(argv, " "), err, msg)
	}
	es, err := ParseJournalJSON(bytes.NewReader(out.b.Bytes()))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return es, nil
}

func lookJournalctl() (string, error) {
	if p, err := exec.LookPath("journalctl"); err == nil {
		return p, nil
	}
	for _, p := range []string{"/usr/bin/journalctl", "/bin/journalctl"} {
		if _, err := exec.LookPath(p); err == nil {
			return p, nil
		}
	}
	return "", ErrNoJournalctl
}

// limitedBuffer keeps at most max bytes and remembers that more came; it
// keeps accepting writes so that the child is not killed by a full pipe
// before it exits on its own.
type limitedBuffer struct {
	b    bytes.Buffer
	max  int
	over bool
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if l.b.Len()+len(p) > l.max {
		l.over = true
		return len(p), nil
	}
	return l.b.Write(p)
}
