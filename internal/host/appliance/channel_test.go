package appliance

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"runtime/debug"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// countingReader yields an endless stream of one byte, counting how much
// of it was read.
type countingReader struct {
	b byte
	n int
}

func (r *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = r.b
	}
	r.n += len(p)
	return len(p), nil
}

// TestMessageReaderLineTooLong proves that a line that never ends is cut
// off at MaxMessage with ErrTooLong: the reader stops reading (no hang,
// no unbounded buffer), having read little more than the bound.
func TestMessageReaderLineTooLong(t *testing.T) {
	src := &countingReader{b: 'a'}
	_, err := newMessageReader(src).next()
	if !errors.Is(err, ErrTooLong) {
		t.Fatalf("endless line: %v, want ErrTooLong", err)
	}
	if src.n > MaxMessage+2*(64<<10) {
		t.Errorf("read %d bytes of an endless line, bound %d", src.n, MaxMessage)
	}
}

// paddedLines yields lines of size bytes (newline included), each a
// done message padded with spaces, made as they are read: count of
// them, or without end if count is 0.
type paddedLines struct {
	size, count int
	at          int // the byte of the current line to yield next
	lines       int // the lines yielded whole
	n           int // the bytes yielded
}

const paddedMsg = `{"type":"done","exit":0}`

var spaces = bytes.Repeat([]byte(" "), 64<<10)

func (r *paddedLines) Read(p []byte) (int, error) {
	if r.count > 0 && r.lines == r.count {
		return 0, io.EOF
	}
	var n int
	switch {
	case r.at < len(paddedMsg):
		n = copy(p, paddedMsg[r.at:])
	case r.at < r.size-1:
		n = copy(p, spaces[:min(len(spaces), r.size-1-r.at)])
	default:
		p[0], n = '\n', 1
	}
	r.at += n
	if r.at == r.size {
		r.at = 0
		r.lines++
	}
	r.n += n
	return n, nil
}

// TestMessageReaderLineBound proves where the line bound lies: a line of
// exactly MaxMessage bytes (its newline included) is read, one byte more
// is ErrTooLong.
func TestMessageReaderLineBound(t *testing.T) {
	m, err := newMessageReader(&paddedLines{size: MaxMessage, count: 1}).next()
	if err != nil || m.Type != MsgDone {
		t.Errorf("a line of MaxMessage bytes: %+v, %v", m, err)
	}
	if _, err := newMessageReader(&paddedLines{size: MaxMessage + 1, count: 1}).next(); !errors.Is(err, ErrTooLong) {
		t.Errorf("a line of MaxMessage+1 bytes: %v, want ErrTooLong", err)
	}
}

// TestMessageReaderStreamTooLong proves that MaxTotal bounds the whole
// stream across messages, each well under MaxMessage: MaxTotal of
// 32 KiB lines are read, and the next is ErrTooLong; the reader has then
// read no more than a buffer beyond the bound.
func TestMessageReaderStreamTooLong(t *testing.T) {
	const size = 32 << 10
	src := &paddedLines{size: size}
	r := newMessageReader(src)
	got := 0
	var err error
	for got <= MaxTotal/size+1 {
		var m Message
		if m, err = r.next(); err != nil {
			break
		}
		if m.Type != MsgDone {
			t.Fatalf("message %d: %+v", got, m)
		}
		got++
	}
	if !errors.Is(err, ErrTooLong) {
		t.Fatalf("after %d messages: %v, want ErrTooLong", got, err)
	}
	if got != MaxTotal/size {
		t.Errorf("%d messages of %d bytes read before ErrTooLong, want %d", got, size, MaxTotal/size)
	}
	if src.n > MaxTotal+2*(64<<10) {
		t.Errorf("read %d bytes, bound %d", src.n, MaxTotal)
	}
}

// TestMessageReaderBlankLines proves that blank lines between messages
// are skipped in a loop, not one stack frame a line: a hostile appliance
// may send MaxTotal of them, which overflowed the host's goroutine stack
// (1 GB) and crashed sealprep. The stack's bound is lowered to 64 MiB
// here, so that a million lines show a recursion quickly.
func TestMessageReaderBlankLines(t *testing.T) {
	defer debug.SetMaxStack(debug.SetMaxStack(64 << 20))
	var in bytes.Buffer
	in.Write(bytes.Repeat([]byte("\n"), 1<<20))
	in.WriteString(" \r\n\t\n")
	in.WriteString(`{"type":"done","exit":3}` + "\n\n")
	r := newMessageReader(&in)
	m, err := r.next()
	if err != nil || m.Type != MsgDone || m.Exit == nil || *m.Exit != 3 {
		t.Fatalf("after blank lines: %+v, %v", m, err)
	}
	if _, err := r.next(); err != io.EOF {
		t.Errorf("blank lines at the end: %v, want io.EOF", err)
	}
}

// TestMessageReaderEnds proves how a stream ends: between messages it is
// io.EOF, in the middle of a line (even of blanks) io.ErrUnexpectedEOF.
func TestMessageReaderEnds(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want error
	}{
		{"", io.EOF},
		{`{"type":"done","exit":0}` + "\n", io.EOF},
		{`{"type":"done","exit":0}`, io.ErrUnexpectedEOF},
		{`{"type":"report","exit":0,"report":{"a":`, io.ErrUnexpectedEOF},
		{"   ", io.ErrUnexpectedEOF},
	} {
		r := newMessageReader(strings.NewReader(tc.in))
		var err error
		for range 3 {
			if _, err = r.next(); err != nil {
				break
			}
		}
		if err != tc.want {
			t.Errorf("%q: %v, want %v", tc.in, err, tc.want)
		}
	}
}

// TestClean proves what Clean makes of hostile text: escape and other
// control characters (C0, C1, DEL, CR, LF, tab) and bidirectional
// overrides and isolates are dropped, invalid UTF-8 becomes U+FFFD, and
// the cut at max bytes never splits a character.
func TestClean(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"plain text", 100, "plain text"},
		{"a\x1b[31mred\x1b[0m\r\nb", 100, "a[31mred[0mb"},
		{"\x1b]0;title\x07x", 100, "]0;titlex"},
		{"file\u202Etxt.exe", 100, "filetxt.exe"},
		{"\u202A\u202B\u202C\u202D\u202E\u2066\u2067\u2068\u2069ok", 100, "ok"},
		{"bad \x80\xff utf8", 100, "bad \uFFFD\uFFFD utf8"},
		{"\xe2\x82", 100, "\uFFFD\uFFFD"},
		{"c1\u009b2Jx\u0085\x7f\x00\t", 100, "c12Jx"},
		{"kept \uFFFD é 日本", 100, "kept \uFFFD é 日本"},
		{"héllo", 2, "h"},
		{"héllo", 3, "hé"},
		{"日本", 5, "日"},
		{"\x1b\x1b\x1babc", 2, "ab"},
		{"abc", 0, ""},
	} {
		got := Clean(tc.in, tc.max)
		if got != tc.want {
			t.Errorf("Clean(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
		if !utf8.ValidString(got) || len(got) > tc.max {
			t.Errorf("Clean(%q, %d) = %q: invalid or over the bound", tc.in, tc.max, got)
		}
	}
}

// TestDecodeMessageCleans proves that every string a message carries is
// cleaned: progress and error text (cut to MaxText), and every string
// and key of a report or plan at any depth, numbers kept exactly.
func TestDecodeMessageCleans(t *testing.T) {
	for _, tc := range []struct {
		line string
		text string
		rep  string
	}{
		{line: `{"type":"progress","text":"\u001b[2Jwiped\r\u202Eabc\u0007"}`, text: "[2Jwipedabc"},
		{line: "{\"type\":\"progress\",\"text\":\"raw \xff\\u001b[1m byte\"}", text: "raw \uFFFD[1m byte"},
		{line: `{"type":"error","text":"mount: \u001b]8;;http://x\u001b\\link\u001b]8;;\u001b\\ failed\n"}`, text: "mount: ]8;;http://x\\link]8;;\\ failed"},
		{line: `{"type":"progress","text":"` + strings.Repeat("é", MaxText) + `"}`, text: strings.Repeat("é", MaxText/2)},
		{
			line: `{"type":"report","exit":0,"report":{"a\u001b[1m":"x\u202Ey","list":["\r\n",12345678901234567890,true,null,{"k\u0000":"v\u009b","n":-1.5e3}]}}`,
			rep:  `{"a[1m":"xy","list":["",12345678901234567890,true,null,{"k":"v","n":-1.5e3}]}`,
		},
		{
			line: "{\"type\":\"confirm\",\"report\":{\"actions\":[{\"path\":\"/etc/\xff\u2066x\",\"op\":\"rm\\r\"}]}}",
			rep:  `{"actions":[{"op":"rm","path":"/etc/` + "\uFFFD" + `x"}]}`,
		},
		{
			line: `{"type":"report","exit":2,"report":{"` + strings.Repeat("k", 300) + `":"v"}}`,
			rep:  `{"` + strings.Repeat("k", 200) + `":"v"}`,
		},
	} {
		m, err := DecodeMessage([]byte(tc.line))
		if err != nil {
			t.Errorf("%.80q: %v", tc.line, err)
			continue
		}
		if m.Text != tc.text {
			t.Errorf("%.80q: text %q, want %q", tc.line, m.Text, tc.text)
		}
		if string(m.Report) != tc.rep {
			t.Errorf("%.80q: report %s, want %s", tc.line, m.Report, tc.rep)
		}
	}
}

// TestDecodeMessageRefuses proves that a line that is not exactly one
// message of the appliance's is refused, with a cleaned reason: unknown
// fields and types, a report or done without an exit code, a report or
// confirm without a report, data after the object (a stray '}' or ']'
// included), a report nested deeper than any.
func TestDecodeMessageRefuses(t *testing.T) {
	deep := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	for _, tc := range []struct {
		line string
		want string
	}{
		{`{"type":"progress","text":"x","extra":1}`, `unknown field "extra"`},
		{`{"type":"reboot"}`, `unknown type "reboot"`},
		{`{"type":"\u001b[31mx"}`, `unknown type "[31mx"`},
		{`{"text":"no type"}`, `unknown type ""`},
		{`null`, `unknown type ""`},
		{`[]`, "not the appliance's"},
		{`not json`, "not the appliance's"},
		{`{"type":"done","exit":"0"}`, "not the appliance's"},
		{`{"type":"done","exit":1.5}`, "not the appliance's"},
		{`{"type":"report","report":{}}`, "a report message without an exit code"},
		{`{"type":"done"}`, "a done message without an exit code"},
		{`{"type":"report","exit":0}`, "a report message without a report"},
		{`{"type":"confirm"}`, "a confirm message without a report"},
		{`{"type":"done","exit":0} x`, "data after it"},
		{`{"type":"done","exit":0}{"type":"done","exit":0}`, "data after it"},
		{`{"type":"done","exit":0}}`, "data after it"},
		{`{"type":"done","exit":0}]`, "data after it"},
		{`{"type":"report","exit":0,"report":` + deep + `}`, "nested deeper than any report"},
	} {
		m, err := DecodeMessage([]byte(tc.line))
		if err == nil {
			t.Errorf("%.80q: accepted as %+v", tc.line, m)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.80q: %v, want %q", tc.line, err, tc.want)
		}
		if strings.ContainsRune(err.Error(), 0x1b) {
			t.Errorf("%.80q: the reason carries an escape: %q", tc.line, err)
		}
	}
	// A report nested as deep as a real one is no reason to refuse.
	shallow := strings.Repeat(`{"a":`, 60) + "1" + strings.Repeat("}", 60)
	if _, err := DecodeMessage([]byte(`{"type":"report","exit":0,"report":` + shallow + `}`)); err != nil {
		t.Errorf("a report nested 60 deep: %v", err)
	}
}

// TestVerdict proves when the appliance brought back a whole report: a
// report and then done with the same exit code, nothing wrong with the
// stream and no error message; every other case is an error saying which.
func TestVerdict(t *testing.T) {
	n := func(i int) *int { return &i }
	rep := []byte(`{}`)
	for _, tc := range []struct {
		name string
		c    converse
		want string // "" for no error
	}{
		{"whole", converse{report: rep, exit: n(2), done: n(2)}, ""},
		{"nothing", converse{}, "the appliance ended without a report"},
		{"done only", converse{done: n(0)}, "the appliance ended without a report"},
		{"no done", converse{report: rep, exit: n(0)}, "the appliance ended after its report without saying that the image was unmounted and flushed"},
		{"exit differs", converse{report: rep, exit: n(0), done: n(2)}, "the appliance's report ended with exit code 0, its last message with 2"},
		{"error message", converse{errMsg: "the appliance could not seal the image: x"}, "the appliance could not seal the image: x"},
		{"error message beside a report", converse{report: rep, exit: n(0), done: n(0), errMsg: "e"}, "e"},
		{"stream broken before the report", converse{err: io.ErrUnexpectedEOF}, "the appliance's report could not be read: unexpected EOF"},
		{"stream broken after the report", converse{report: rep, exit: n(0), done: n(0), err: errors.New("a second report")}, "the appliance's messages after its report could not be read: a second report"},
	} {
		err := tc.c.verdict()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// conversation is what one talk over a net.Pipe came to.
type conversation struct {
	c        converse
	answers  []string // the lines the host wrote back, as the appliance read them
	progress []string
	plans    []string
}

// talkOver runs talk on the host's end of a net.Pipe while the appliance's
// end writes lines (reading one answer line after each confirm) and then
// closes. A talk that does not return within 5 s fails the test.
func talkOver(t *testing.T, confirm func([]byte) bool, lines ...string) conversation {
	t.Helper()
	host, app := net.Pipe()
	var conv conversation
	cfg := Config{Progress: func(l string) { conv.progress = append(conv.progress, l) }}
	if confirm != nil {
		cfg.Confirm = func(b []byte) bool { conv.plans = append(conv.plans, string(b)); return confirm(b) }
	}
	answers := make(chan []string, 1)
	go func() {
		var got []string
		defer func() { answers <- got }()
		br := bufio.NewReader(app)
		for _, l := range lines {
			if _, err := io.WriteString(app, l); err != nil {
				return
			}
			if strings.Contains(l, `"type":"confirm"`) {
				a, err := br.ReadString('\n')
				if err != nil {
					return
				}
				got = append(got, a)
			}
		}
		app.Close()
	}()
	done := make(chan converse, 1)
	go func() { done <- talk(host, cfg, time.Now()) }()
	select {
	case conv.c = <-done:
	case <-time.After(5 * time.Second):
		host.Close()
		app.Close()
		t.Fatal("talk did not return")
	}
	host.Close()
	conv.answers = <-answers
	return conv
}

const (
	lineReport = `{"type":"report","exit":0,"report":{"status":"sealed"}}` + "\n"
	lineDone   = `{"type":"done","exit":0}` + "\n"
	lineConf   = `{"type":"confirm","report":{"plan":"rm \u202Ex\u001b[8m"}}` + "\n"
)

// TestTalkWhole proves a whole conversation: progress lines go to
// Progress cleaned, a confirm asks Confirm with the cleaned plan and the
// host writes "yes\n" when it agrees, and the report and done make a
// verdict of no error.
func TestTalkWhole(t *testing.T) {
	conv := talkOver(t, func([]byte) bool { return true },
		`{"type":"ready"}`+"\n",
		`{"type":"ready"}`+"\n",
		`{"type":"progress","text":"mount /dev/vda1\u001b[K\r"}`+"\n",
		lineConf,
		"\n",
		`{"type":"progress","text":"rm /etc/machine-id"}`+"\n",
		lineReport,
		lineDone,
	)
	if err := conv.c.verdict(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(conv.progress, "|"); got != "mount /dev/vda1[K|rm /etc/machine-id" {
		t.Errorf("progress %q", got)
	}
	if len(conv.plans) != 1 || conv.plans[0] != `{"plan":"rm x[8m"}` {
		t.Errorf("plans %q", conv.plans)
	}
	if len(conv.answers) != 1 || conv.answers[0] != "yes\n" {
		t.Errorf("answers %q, want yes", conv.answers)
	}
	if conv.c.boot <= 0 {
		t.Errorf("the ready message's time was not kept: %v", conv.c.boot)
	}
	if string(conv.c.report) != `{"status":"sealed"}` || *conv.c.exit != 0 || *conv.c.done != 0 {
		t.Errorf("report %s exit %v done %v", conv.c.report, conv.c.exit, conv.c.done)
	}
}

// TestTalkConfirmAnswers proves the answer to a confirm: "no\n" when
// Confirm declines or there is no Confirm (nobody to ask is no consent),
// and "no\n" without asking for a confirm after the report.
func TestTalkConfirmAnswers(t *testing.T) {
	conv := talkOver(t, func([]byte) bool { return false }, lineConf, lineReport, lineDone)
	if len(conv.answers) != 1 || conv.answers[0] != "no\n" || len(conv.plans) != 1 {
		t.Errorf("declined: answers %q, plans %q", conv.answers, conv.plans)
	}
	conv = talkOver(t, nil, lineConf, lineReport, lineDone)
	if len(conv.answers) != 1 || conv.answers[0] != "no\n" {
		t.Errorf("no Confirm: answers %q", conv.answers)
	}
	conv = talkOver(t, func([]byte) bool { return true }, lineReport, lineConf, lineDone)
	if len(conv.answers) != 1 || conv.answers[0] != "no\n" || len(conv.plans) != 0 {
		t.Errorf("confirm after the report: answers %q, plans %q", conv.answers, conv.plans)
	}
	if err := conv.c.verdict(); err != nil {
		t.Errorf("confirm after the report: %v", err)
	}
}

// TestTalkBroken proves that talk and verdict turn every broken
// conversation into an error: an error message (cleaned), a second
// report, a message after done, a line cut off by the port's close
// (before or after the report), a message that is not one, a report
// without done, and an endless line.
func TestTalkBroken(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"error message", []string{`{"type":"error","text":"mount: bad superblock\u001b]0;pwned\u0007"}` + "\n", lineDone},
			"the appliance could not seal the image: mount: bad superblock]0;pwned"},
		{"second report", []string{lineReport, lineReport, lineDone},
			"the appliance's messages after its report could not be read: a second report"},
		{"message after done", []string{lineReport, lineDone, `{"type":"progress","text":"x"}` + "\n"},
			"the appliance's messages after its report could not be read: a message after the last one"},
		{"cut report", []string{lineConf, `{"type":"report","exit":0,"report":{"status":"sea`},
			"the appliance's report could not be read: unexpected EOF"},
		{"cut after done", []string{lineReport, lineDone, `{"type":"pro`},
			"the appliance's messages after its report could not be read: unexpected EOF"},
		{"not a message", []string{`{"type":"progress","text":"x","t":1}` + "\n", lineReport, lineDone},
			"the appliance's report could not be read: a message that is not the appliance's"},
		{"no done", []string{lineReport},
			"the appliance ended after its report without saying that the image was unmounted and flushed"},
		{"nothing", nil, "the appliance ended without a report"},
	} {
		conv := talkOver(t, nil, tc.lines...)
		err := conv.c.verdict()
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		if strings.HasPrefix(tc.name, "cut") && conv.c.err != io.ErrUnexpectedEOF {
			t.Errorf("%s: talk's error %v, want io.ErrUnexpectedEOF", tc.name, conv.c.err)
		}
	}
	if conv := talkOver(t, nil, lineReport, lineDone); conv.c.verdict() != nil {
		t.Errorf("the whole conversation of the cases above: %v", conv.c.verdict())
	}
}

// TestTalkEndlessLine proves that an appliance that writes one endless
// line through the port is stopped at MaxMessage: talk returns
// ErrTooLong, not a hang or an ever-growing buffer.
func TestTalkEndlessLine(t *testing.T) {
	host, app := net.Pipe()
	defer host.Close()
	go func() {
		chunk := bytes.Repeat([]byte("a"), 64<<10)
		for {
			if _, err := app.Write(chunk); err != nil {
				return
			}
		}
	}()
	done := make(chan converse, 1)
	go func() { done <- talk(host, Config{}, time.Now()) }()
	select {
	case c := <-done:
		if !errors.Is(c.err, ErrTooLong) {
			t.Errorf("endless line: %v, want ErrTooLong", c.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("talk did not return")
	}
	app.Close()
}

// TestTalkStalledPort proves what Run relies on when the appliance stalls
// in the middle of a line and never closes the port: talk blocks (it is
// no error to be slow) until the host closes its end, and then returns
// an error, so a report cut off this way is never taken.
func TestTalkStalledPort(t *testing.T) {
	host, app := net.Pipe()
	defer app.Close()
	go io.WriteString(app, lineReport+`{"type":"do`)
	done := make(chan converse, 1)
	go func() { done <- talk(host, Config{}, time.Now()) }()
	select {
	case c := <-done:
		t.Fatalf("talk returned while the port was open: %+v", c)
	case <-time.After(200 * time.Millisecond):
	}
	host.Close()
	select {
	case c := <-done:
		if c.err == nil {
			t.Error("a stalled line then a close: no error")
		}
		if err := c.verdict(); err == nil || !strings.Contains(err.Error(), "after its report could not be read") {
			t.Errorf("verdict %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("talk did not return after the host closed its end")
	}
}

// TestTail proves that the console's tail keeps only its last max bytes
// and that lines returns its last n non-blank lines, cleaned.
func TestTail(t *testing.T) {
	tl := &tail{max: 40}
	for i := range 10 {
		io.WriteString(tl, "line "+string(rune('0'+i))+"\x1b[0m\r\n")
	}
	io.WriteString(tl, "\n\n")
	if len(tl.b) != 40 {
		t.Errorf("kept %d bytes, max 40", len(tl.b))
	}
	got := tl.lines(2)
	if strings.Join(got, "|") != "line 8[0m|line 9[0m" {
		t.Errorf("lines %q", got)
	}
	if got := (&tail{max: 10}).lines(4); len(got) != 0 {
		t.Errorf("an empty console: %q", got)
	}
}

// TestErrorMessage proves the shape of an appliance Error: why, then the
// console's end when there is one.
func TestErrorMessage(t *testing.T) {
	if got := (&Error{Why: "w"}).Error(); got != "w" {
		t.Errorf("%q", got)
	}
	if got := (&Error{Why: "w", Console: []string{"a", "b"}}).Error(); got != "w; its console ended with: a | b" {
		t.Errorf("%q", got)
	}
}
