package seal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// clock is a fake time source; drive moves it by step per action.
type clock struct {
	t    time.Time
	step time.Duration
}

func (c *clock) now() time.Time { return c.t }

// synthetic is n actions of each op, in op order.
func synthetic(ops []string, n int) []Action {
	var acts []Action
	for _, op := range ops {
		for i := 0; i < n; i++ {
			acts = append(acts, Action{Op: op, Kind: Truncate, Path: fmt.Sprintf("/var/log/%s/%05d.log", op, i)})
		}
	}
	return acts
}

// drive feeds acts through p as Apply would, each action taking c.step
// (c may be nil): action fail[i] fails, and the run stops (ctx ended)
// before action stop when stop >= 0.
func drive(p Progress, c *clock, acts []Action, fail map[int]bool, stop int) {
	p.Begin(acts)
	end := ApplyEnd{}
	for i, a := range acts {
		if stop >= 0 && i >= stop {
			end.NotAttempted++
			end.Cause = errors.New("interrupt signal received")
			continue
		}
		p.Start(i, a)
		if c != nil {
			c.t = c.t.Add(c.step)
		}
		r := Result{Action: a, Status: Done}
		if fail[i] {
			r.Status, r.Error = Failed, "permission denied"
		}
		p.Finish(i, r)
	}
	p.End(end)
}

func TestLineProgress(t *testing.T) {
	var b bytes.Buffer
	c := &clock{step: time.Millisecond}
	p := &lineProgress{w: &b, now: c.now}
	acts := synthetic([]string{"logfiles", "tmp", "machine-id"}, 1000)
	drive(p, c, acts, map[int]bool{5: true, 1500: true}, -1)
	want := `logfiles: failed: truncate /var/log/logfiles/00005.log: permission denied
logfiles: 999 done, 0 unchanged, 1 failed (1s)
tmp: failed: truncate /var/log/tmp/00500.log: permission denied
tmp: 999 done, 0 unchanged, 1 failed (1s)
machine-id: 1000 done, 0 unchanged, 0 failed (1s)
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestLineProgressInterrupted(t *testing.T) {
	var b bytes.Buffer
	c := &clock{step: time.Millisecond}
	p := &lineProgress{w: &b, now: c.now}
	acts := synthetic([]string{"logfiles", "tmp", "passwd-backups", "machine-id"}, 10)
	drive(p, c, acts, nil, 13)
	want := `logfiles: 10 done, 0 unchanged, 0 failed (10ms)
tmp: 3 done, 0 unchanged, 0 failed; 7 not attempted
not reached: passwd-backups, machine-id
sealprep: interrupted (interrupt signal received): 27 of 40 actions not attempted; run apply again to finish
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// screen splits terminal output into what each write left on the line:
// the segments between carriage returns and newlines, escapes removed.
func screen(out string) []string {
	out = strings.ReplaceAll(out, "\x1b[K", "")
	return strings.FieldsFunc(out, func(r rune) bool { return r == '\r' || r == '\n' })
}

func TestTermProgress(t *testing.T) {
	var b bytes.Buffer
	// Every action takes 1ms: 4,000 actions are 4 s, so about 40 redraws
	// plus one per operation, not 4,000.
	c := &clock{step: time.Millisecond}
	p := &termProgress{w: &b, width: 80, now: c.now}
	acts := synthetic([]string{"logfiles", "tmp", "passwd-backups", "machine-id"}, 1000)
	for i := 0; i < 1000; i += 50 {
		acts[i].Path = "/var/log/" + strings.Repeat("very-long-directory-name/", 6) + "end.log"
	}
	drive(p, c, acts, map[int]bool{1500: true}, -1)
	out := b.String()
	if !strings.Contains(out, "\r[1/4000] logfiles: truncate ...-directory-name/very-long-directory-name/end.log\x1b[K\r[101/4000]") {
		t.Errorf("a long path is not shortened from its start:\n%q", out)
	}
	// 40 ten-a-second redraws, 4 operations, the one after the failure,
	// the failure's and the summary's clearing.
	redraws := strings.Count(out, "\x1b[K")
	if redraws < 40 || redraws > 40+4+1+2 {
		t.Errorf("%d redraws for 4,000 actions in 4 s: want about ten a second", redraws)
	}
	if n := strings.Count(out, "\n"); n != 2 {
		t.Errorf("%d newlines, want 2 (the failure and the summary):\n%q", n, out)
	}
	if !strings.HasSuffix(out, "\n") {
		t.Error("does not end with a newline")
	}
	for _, s := range screen(out) {
		if len(s) > 79 && !strings.Contains(s, "failed:") {
			t.Errorf("line of %d columns does not fit 80: %q", len(s), s)
		}
	}
	if !strings.Contains(out, "tmp: failed: truncate /var/log/tmp/00500.log: permission denied\n") {
		t.Errorf("failure not on its own line:\n%q", out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	last := screen(lines[len(lines)-1])
	if got, want := last[len(last)-1], "sealprep: 4000 actions: 3999 done, 0 unchanged, 1 failed (4s)"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}

func TestTermProgressInterrupted(t *testing.T) {
	var b bytes.Buffer
	p := &termProgress{w: &b, width: 80, now: time.Now}
	acts := synthetic([]string{"logfiles", "machine-id"}, 100)
	drive(p, nil, acts, nil, 42)
	out := b.String()
	if !strings.HasSuffix(out, "\x1b[Ksealprep: interrupted (interrupt signal received) after 42 of 200 actions:\n"+
		"  42 done, 0 unchanged, 0 failed; run apply again to finish\n") {
		t.Errorf("no summary of what was reached, or the line not ended:\n%q", out)
	}
	for _, s := range screen(out) {
		if len(s) > 79 {
			t.Errorf("line of %d columns: %q", len(s), s)
		}
	}
}

func TestTermProgressHostileNames(t *testing.T) {
	var b bytes.Buffer
	p := &termProgress{w: &b, width: 40, now: time.Now}
	acts := []Action{
		{Op: "logfiles", Kind: Remove, Path: "/var/log/\x1b]0;owned\x07\x1b[2J\n/x.log"},
		{Op: "tmp", Kind: Remove, Path: "/tmp/\u00e9t\u00e9\u202e.txt"},
	}
	drive(p, nil, acts, map[int]bool{0: true, 1: true}, -1)
	out := b.String()
	if strings.Contains(out, "\x07") || strings.Contains(out, "\x1b]") || strings.Contains(out, "\x1b[2J") {
		t.Errorf("escape sequences from a file name reached the terminal: %q", out)
	}
	for _, s := range screen(out) {
		if len(s) > 39 && strings.HasPrefix(s, "[") {
			t.Errorf("line of %d columns on a 40-column terminal: %q", len(s), s)
		}
		for _, r := range s {
			if r < 0x20 || r >= 0x7f {
				t.Errorf("non-ASCII or control character %q on the terminal line %q", r, s)
			}
		}
	}
	var lb bytes.Buffer
	drive(NewLineProgress(&lb), nil, acts, map[int]bool{0: true, 1: true}, -1)
	if n := strings.Count(lb.String(), "\n"); n != 4 {
		t.Errorf("a newline in a file name forged a log line: %d lines\n%s", n, lb.String())
	}
	if !strings.Contains(lb.String(), "\u00e9t\u00e9") {
		t.Errorf("UTF-8 names are kept in log lines: %q", lb.String())
	}
}

func TestFit(t *testing.T) {
	const head, path = "[1/9] tmp: remove ", "/tmp/abcdefghijklmnopqrstuvwxyz"
	for _, c := range []struct {
		max  int
		want string
	}{
		{79, head + path},
		{49, head + path},
		{40, head + "...hijklmnopqrstuvwxyz"}, // the start of the path goes
		{20, "[1/9] tmp: remove /t"},          // too narrow to elide: cut
		{0, ""},
	} {
		if got := fit(head, path, c.max); got != c.want {
			t.Errorf("fit(%d) = %q, want %q", c.max, got, c.want)
		}
	}
}

// recorder is a Progress that keeps every call, and can end the run's
// context when a given action finishes.
type recorder struct {
	calls  []string
	cancel func()
	at     int
}

func (r *recorder) Begin(acts []Action) {
	r.calls = append(r.calls, fmt.Sprintf("begin %d", len(acts)))
}
func (r *recorder) Start(i int, a Action) {
	r.calls = append(r.calls, fmt.Sprintf("start %d %s", i, a.Op))
}
func (r *recorder) Finish(i int, res Result) {
	r.calls = append(r.calls, fmt.Sprintf("finish %d %s %s", i, res.Op, res.Status))
	if i == r.at && r.cancel != nil {
		r.cancel()
	}
}
func (r *recorder) End(e ApplyEnd) {
	r.calls = append(r.calls, fmt.Sprintf("end %d %v %v", e.NotAttempted, e.Cause, e.Sync))
}

// TestExecutorProgress runs real actions, one of them bound to fail, and
// ends the context after the third: Progress hears of the three that ran,
// with their results, and the end with the count not attempted.
func TestExecutorProgress(t *testing.T) {
	_, root := newRoot(t, []node{f("/a", "a"), f("/b", "b"), f("/c", "c"), f("/d", "d")})
	acts := []Action{
		{Op: "one", Kind: Truncate, Path: "/a"},
		{Op: "one", Kind: Remove, Path: "/b"}, // no kinds: refused
		{Op: "two", Kind: Truncate, Path: "/a"},
		{Op: "two", Kind: Truncate, Path: "/c"},
		{Op: "three", Kind: Truncate, Path: "/d"},
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	rec := &recorder{at: 2, cancel: func() { cancel(errors.New("interrupt signal received")) }}
	res := (&Executor{Root: root, Progress: rec}).Apply(ctx, acts)
	want := []string{
		"begin 5",
		"start 0 one", "finish 0 one done",
		"start 1 one", "finish 1 one failed",
		"start 2 two", "finish 2 two unchanged",
		"end 2 interrupt signal received <nil>",
	}
	if strings.Join(rec.calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(rec.calls, "\n"), strings.Join(want, "\n"))
	}
	if len(res) != 5 || res[3].Status != Failed || res[3].Error != "not attempted: interrupt signal received" {
		t.Errorf("results: %+v", res)
	}

	// The same run through the line renderer: one line per operation
	// that ran, the failure, and what was not reached.
	_, root = newRoot(t, []node{f("/a", "a"), f("/b", "b"), f("/c", "c"), f("/d", "d")})
	ctx, cancel2 := context.WithCancelCause(context.Background())
	defer cancel2(nil)
	var b bytes.Buffer
	lp := NewLineProgress(&b)
	stopAfter := &cancelAt{Progress: lp, at: 2, cancel: func() { cancel2(errors.New("interrupt signal received")) }}
	(&Executor{Root: root, Progress: stopAfter}).Apply(ctx, acts)
	re := regexp.MustCompile(`^one: failed: remove /b: remove /b: no file kinds in the action
one: 1 done, 0 unchanged, 1 failed \(.*\)
two: 0 done, 1 unchanged, 0 failed; 1 not attempted
not reached: three
sealprep: interrupted \(interrupt signal received\): 2 of 5 actions not attempted; run apply again to finish
$`)
	if !re.MatchString(b.String()) {
		t.Errorf("line progress:\n%s", b.String())
	}
}

// cancelAt passes every call on and ends the context after action at.
type cancelAt struct {
	Progress
	at     int
	cancel func()
}

func (c *cancelAt) Finish(i int, r Result) {
	c.Progress.Finish(i, r)
	if i == c.at {
		c.cancel()
	}
}
