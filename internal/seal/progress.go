package seal

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The two Progress renderers sealprep chooses between: a line that
// rewrites itself on a terminal, and a few plain lines for build logs
// (Packer, cloud-init, CI), where a line per action would bury the rest.
// Both put every failure on a line of its own. The report on stdout lists
// every action either way.

// tally counts results by outcome.
type tally struct{ done, unchanged, failed int }

func (t *tally) add(s ResultStatus) {
	switch s {
	case Done:
		t.done++
	case Unchanged:
		t.unchanged++
	default:
		t.failed++
	}
}

func (t tally) String() string {
	return fmt.Sprintf("%d done, %d unchanged, %d failed", t.done, t.unchanged, t.failed)
}

// failureLine is the line for a failed action: op, action, error.
func failureLine(r Result) string {
	return fmt.Sprintf("%s: failed: %s: %s", r.Op, describe(r.Action), r.Error)
}

// printable replaces control characters and invalid UTF-8 (and, with
// ascii, everything outside printable ASCII) by '?': paths come from the
// image, and a file name must not move the cursor, forge a log line or
// send escape sequences to the operator's terminal. ASCII also makes the
// width of the terminal line its length.
func printable(s string, ascii bool) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) || ascii && r >= 0x7f {
			r = '?'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ms is d for a person: "183ms", "1.204s", "<1ms".
func ms(d time.Duration) string {
	if d < time.Millisecond {
		return "<1ms"
	}
	return d.Round(time.Millisecond).String()
}

// NewLineProgress reports to a log: one line per operation when its last
// action has ended ("logfiles: 10000 done, 0 unchanged, 0 failed
// (183ms)"), a line for every failure with its path and error, and, when
// the run was interrupted, what each unfinished operation reached.
func NewLineProgress(w io.Writer) Progress {
	return &lineProgress{w: w, now: time.Now}
}

type lineProgress struct {
	w   io.Writer
	now func() time.Time
	ops []string // in the order of the plan
	per map[string]*opState
	n   int
}

type opState struct {
	tally
	left    int // actions not finished yet
	started bool
	start   time.Time
}

func (p *lineProgress) Begin(acts []Action) {
	p.n = len(acts)
	p.per = map[string]*opState{}
	for _, a := range acts {
		s := p.per[a.Op]
		if s == nil {
			s = &opState{}
			p.per[a.Op] = s
			p.ops = append(p.ops, a.Op)
		}
		s.left++
	}
}

func (p *lineProgress) Start(i int, a Action) {
	if s := p.per[a.Op]; s != nil && !s.started {
		s.started, s.start = true, p.now()
	}
}

// Finish writes each line with one write, unbuffered: a run killed at any
// point has already logged what it finished.
func (p *lineProgress) Finish(i int, r Result) {
	s := p.per[r.Op]
	if s == nil {
		return // not in Begin's actions: nothing to count it against
	}
	s.add(r.Status)
	s.left--
	if r.Status == Failed {
		fmt.Fprintln(p.w, printable(failureLine(r), false))
	}
	if s.left == 0 {
		fmt.Fprintf(p.w, "%s: %s (%s)\n", r.Op, s.tally, ms(p.now().Sub(s.start)))
	}
}

func (p *lineProgress) End(e ApplyEnd) {
	if e.NotAttempted > 0 {
		var unreached []string
		for _, op := range p.ops {
			s := p.per[op]
			switch {
			case s.left == 0:
			case s.started:
				fmt.Fprintf(p.w, "%s: %s; %d not attempted\n", op, s.tally, s.left)
			default:
				unreached = append(unreached, op)
			}
		}
		if len(unreached) > 0 {
			fmt.Fprintf(p.w, "not reached: %s\n", strings.Join(unreached, ", "))
		}
		fmt.Fprintf(p.w, "sealprep: interrupted (%v): %d of %d actions not attempted; run apply again to finish\n",
			e.Cause, e.NotAttempted, p.n)
	}
	if e.Sync != nil {
		fmt.Fprintf(p.w, "sealprep: sync: %v\n", e.Sync)
	}
}

// termInterval is the least time between two redraws of the terminal
// line: about ten a second is readable and costs nothing.
const termInterval = 100 * time.Millisecond

// NewTermProgress keeps one line on a terminal width columns wide,
// rewritten in place ("\r", the text, clear to the end of the line) at
// most about ten times a second, showing the action running and how far
// the run is. A failure gets a line of its own above it; the run ends
// with a summary line and a newline, interrupted or not.
func NewTermProgress(w io.Writer, width int) Progress {
	if width <= 0 {
		width = 80
	}
	return &termProgress{w: w, width: width, now: time.Now}
}

type termProgress struct {
	w     io.Writer
	width int
	now   func() time.Time
	n     int
	start time.Time
	last  time.Time // of the last redraw
	stale bool      // the line is not on screen: redraw at the next Start
	op    string    // of the last action started
	done  int       // actions finished
	tally tally
}

func (p *termProgress) Begin(acts []Action) {
	p.n = len(acts)
	p.start = p.now()
	p.stale = true
}

func (p *termProgress) Start(i int, a Action) {
	t := p.now()
	// A new operation and a live step (which may take seconds) are always
	// shown, so the line never names an action that is long over.
	force := p.stale || a.Op != p.op || a.Kind == StopUnit || a.Kind == RelinquishVar || a.Kind == RunHook
	p.op = a.Op
	if !force && t.Sub(p.last) < termInterval {
		return
	}
	p.last, p.stale = t, false
	head := fmt.Sprintf("[%d/%d] %s: %s ", i+1, p.n, a.Op, a.Kind)
	rest := strings.TrimPrefix(describe(a), string(a.Kind)+" ")
	io.WriteString(p.w, "\r"+fit(printable(head, true), printable(rest, true), p.width-1)+"\x1b[K")
}

// fit is head+rest in at most max columns, eliding the start of rest
// (the path: its end names the file) and, on a very narrow terminal,
// cutting head.
func fit(head, rest string, max int) string {
	const dots = "..."
	switch {
	case len(head)+len(rest) <= max:
		return head + rest
	case len(head)+len(dots)+8 <= max:
		return head + dots + rest[len(rest)-(max-len(head)-len(dots)):]
	case max <= 0:
		return ""
	}
	return (head + rest)[:max]
}

func (p *termProgress) Finish(i int, r Result) {
	p.done++
	p.tally.add(r.Status)
	if r.Status == Failed {
		io.WriteString(p.w, "\r\x1b[K"+printable(failureLine(r), true)+"\n")
		p.stale = true
	}
}

func (p *termProgress) End(e ApplyEnd) {
	var b strings.Builder
	b.WriteString("\r\x1b[K")
	if e.NotAttempted > 0 {
		fmt.Fprintf(&b, "sealprep: interrupted (%s) after %d of %d actions:\n  %s; run apply again to finish\n",
			printable(fmt.Sprint(e.Cause), true), p.done, p.n, p.tally)
	} else {
		fmt.Fprintf(&b, "sealprep: %d actions: %s (%s)\n", p.n, p.tally, ms(p.now().Sub(p.start)))
	}
	if e.Sync != nil {
		fmt.Fprintf(&b, "sealprep: sync: %s\n", printable(e.Sync.Error(), true))
	}
	io.WriteString(p.w, b.String())
}
