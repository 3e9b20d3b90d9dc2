package prove

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// SummaryLine is guestcheck.service's one line on the console: today's
// "guestcheck: FAIL (14 checks: 1 fail, ...) in 80 ms" and the older
// "guestcheck: FAIL 14 checks: 1 fail, ... (80 ms)" of images built before
// it, which prove still reads.
var SummaryLine = regexp.MustCompile(`guestcheck: ([A-Z]+) \(?(\d+) checks?: (\d+) fail, (\d+) error, (\d+) warn, (\d+) pass, (\d+) skip(?:; [^()]*)?(?: \(\d+ ms\)|\) in \d+ ms)`)

// Markers the console watcher times the phases by (cloud-init's own
// stage lines).
var (
	initLocalLine = regexp.MustCompile(`Cloud-init v\. \S+ running 'init-local'`)
	finishedLine  = regexp.MustCompile(`Cloud-init v\. \S+ finished at`)
	loginLine     = regexp.MustCompile(`(?m)^\S+ login: `)
	// initLine is the kernel handing over to userspace.
	initLine = regexp.MustCompile(`Run \S+ as init process|Freeing unused kernel image`)
)

// deadLines are console lines after which a guest will not come up on its
// own: a panic, an emergency or rescue shell, an initramfs that gave up.
var deadLines = regexp.MustCompile(`Kernel panic - not syncing|end Kernel panic|You are in emergency mode|You are in rescue mode|Entering emergency mode|Give root password for maintenance|Cannot open access to console, the root account is locked|Gave up waiting for root|Dropping to a shell!|\(initramfs\) $|dracut-initqueue\[\d+\]: Warning: Could not boot`)

// Console limits: a tail kept for the report and a cap on the whole file
// (a guest that floods its console is stopped).
const (
	tailBytes       = 64 << 10
	maxConsoleBytes = 64 << 20
	tailLines       = 25
)

// Console follows a clone's serial console file: it keeps the last
// 64 KiB, notes when the phase markers appeared and whether the guest
// died. Lines are matched whole; a line longer than the tail is cut.
type Console struct {
	mu       sync.Mutex
	path     string
	off      int64
	partial  []byte
	tail     []byte
	start    time.Time
	marks    map[string]time.Duration
	summary  string
	dead     string
	overflow bool
}

// NewConsole follows path from its start; times are since start.
func NewConsole(path string, start time.Time) *Console {
	return &Console{path: path, start: start, marks: map[string]time.Duration{}}
}

// NewConsoleAt follows path from offset off (a reboot's console, after
// the first boot's lines); times are since start.
func NewConsoleAt(path string, start time.Time, off int64) *Console {
	c := NewConsole(path, start)
	c.off = off
	return c
}

// Offset is how far the console has been read.
func (c *Console) Offset() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.off
}

// Poll reads what the console file gained since the last Poll.
func (c *Console) Poll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, err := os.Open(c.path)
	if err != nil {
		return
	}
	defer f.Close()
	if c.off >= maxConsoleBytes {
		c.overflow = true
		return
	}
	if _, err := f.Seek(c.off, io.SeekStart); err != nil {
		return
	}
	b, _ := io.ReadAll(io.LimitReader(f, maxConsoleBytes-c.off))
	c.off += int64(len(b))
	c.feed(b)
}

// Feed takes console bytes as Poll does: tests feed captured consoles.
func (c *Console) Feed(b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.feed(b)
}

func (c *Console) feed(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		seg := b
		if i >= 0 {
			seg = b[:i+1]
		}
		b = b[len(seg):]
		c.keep(seg)
		if i < 0 {
			c.partial = append(c.partial, seg...)
			break
		}
		full := append(c.partial, seg[:len(seg)-1]...)
		c.partial = nil
		c.line(string(full))
	}
	if len(c.partial) > 4096 {
		c.partial = append([]byte(nil), c.partial[len(c.partial)-4096:]...)
	}
	// A prompt waits without a newline.
	p := string(c.partial)
	if deadLines.MatchString(p) && c.dead == "" {
		c.dead = cleanLine(p)
	}
	if _, ok := c.marks["login"]; !ok && loginLine.MatchString(p) {
		c.marks["login"] = time.Since(c.start)
	}
}

// keep adds console bytes to the tail until a line showed the guest
// dead: prove stops the clone there, and what the guest wrote in the
// same poll after it (cloud-init's tables under a loaded host) would push
// that line out of the report's tail.
func (c *Console) keep(seg []byte) {
	if c.dead != "" {
		return
	}
	c.tail = append(c.tail, seg...)
	if len(c.tail) > tailBytes {
		c.tail = c.tail[len(c.tail)-tailBytes:]
	}
}

func (c *Console) line(l string) {
	l = strings.TrimRight(l, "\r")
	now := time.Since(c.start)
	mark := func(name string, re *regexp.Regexp) {
		if _, ok := c.marks[name]; !ok && re.MatchString(l) {
			c.marks[name] = now
		}
	}
	mark("init-local", initLocalLine)
	mark("cloud-init-finished", finishedLine)
	mark("login", loginLine)
	mark("init", initLine)
	if m := SummaryLine.FindString(l); m != "" {
		c.summary = m
		if _, ok := c.marks["guestcheck"]; !ok {
			c.marks["guestcheck"] = now
		}
	}
	// Cleaned too: an escape in the middle of a dead line hides nothing.
	if cl := cleanLine(l); c.dead == "" && (deadLines.MatchString(l) || deadLines.MatchString(cl)) {
		c.dead = cl
	}
}

// ConsoleState is what the console showed so far.
type ConsoleState struct {
	// Summary is guestcheck's summary line, "" until it appeared.
	Summary string
	// Dead is the line that shows the guest will not come up.
	Dead string
	// Overflow is set when the guest wrote more than 64 MiB.
	Overflow bool
	// Marks are the phase markers seen, as time since the start.
	Marks map[string]time.Duration
}

// State returns a copy of what the console showed.
func (c *Console) State() ConsoleState {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := make(map[string]time.Duration, len(c.marks))
	for k, v := range c.marks {
		m[k] = v
	}
	return ConsoleState{Summary: c.summary, Dead: c.dead, Overflow: c.overflow, Marks: m}
}

// Tail is the console's last lines, control characters removed.
func (c *Console) Tail() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return tailOf(c.tail, tailLines)
}

func tailOf(b []byte, n int) []string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = cleanLine(l); l != "" {
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// ansi matches terminal escape sequences: CSI (colours, cursor moves),
// OSC (window titles, hyperlinks) and DCS, SOS, PM and APC strings up to
// their terminator, and the two- and three-byte escapes (charsets,
// keypad modes, resets).
var ansi = regexp.MustCompile(`\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[PX^_][^\x1b]*(?:\x1b\\)?|\x1b[ -/]*[0-~]`)

// keyBody matches an OpenSSH public key's base64 body (cloud-init prints
// the host keys on the console); reports carry fingerprints, never keys.
var keyBody = regexp.MustCompile(`AAAA[0-9A-Za-z+/]{16,}=*(\.\.\.)?`)

// Bounds of a console line in a report: 300 characters and 512 bytes.
const (
	lineRunes = 300
	lineBytes = 512
)

// cleanLine makes one console line safe to print: escapes and control
// characters out, key bodies left out, at most 300 characters and 512
// bytes.
func cleanLine(s string) string { return safeText(s, lineRunes, lineBytes) }

// safeText makes guest text safe for a terminal, JSON and XML: terminal
// escapes, invalid UTF-8, C0 and C1 controls, DEL and the bidirectional
// overrides (which reorder what a reader sees) are taken out, a tab is a
// space, key bodies are left out, and it is cut to maxRunes characters
// and maxBytes bytes (on a character boundary), "..." marking the cut.
func safeText(s string, maxRunes, maxBytes int) string {
	s = strings.ToValidUTF8(s, "")
	s = ansi.ReplaceAllString(s, "")
	s = keyBody.ReplaceAllString(s, "[key left out]")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return ' '
		case unicode.IsControl(r), r == 0xfffd, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return -1
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	cut := false
	if r := []rune(s); len(r) > maxRunes {
		s, cut = string(r[:maxRunes]), true
	}
	if len(s) > maxBytes-3 && (cut || len(s) > maxBytes) {
		i := maxBytes - 3
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s, cut = s[:i], true
	}
	if cut {
		s += "..."
	}
	return s
}

// BootVerdict is guestcheck's verdict as its summary line states it.
type BootVerdict struct {
	Status string `json:"status" schema:"req,enum=PASS|WARN|FAIL|ERROR|SKIP"` // as guestcheck prints it
	Checks int    `json:"checks" schema:"req,min=0"`
	Counts Counts `json:"counts" schema:"req"`
}

// Counts are guestcheck's checks by status. The fields are in the
// order encoding/json wrote the map they replace, so that reports
// did not change.
type Counts struct {
	Error int `json:"error" schema:"min=0"`
	Fail  int `json:"fail" schema:"min=0"`
	Pass  int `json:"pass" schema:"min=0"`
	Skip  int `json:"skip" schema:"min=0"`
	Warn  int `json:"warn" schema:"min=0"`
}

// ParseSummary reads guestcheck's console summary line.
func ParseSummary(line string) (BootVerdict, bool) {
	m := SummaryLine.FindStringSubmatch(line)
	if m == nil {
		return BootVerdict{}, false
	}
	n := func(s string) int { v, _ := strconv.Atoi(s); return v }
	return BootVerdict{Status: m[1], Checks: n(m[2]), Counts: Counts{
		Fail: n(m[3]), Error: n(m[4]), Warn: n(m[5]), Pass: n(m[6]), Skip: n(m[7]),
	}}, true
}
