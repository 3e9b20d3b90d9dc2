package appliance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// PortName is the virtio-serial port the appliance speaks on.
const PortName = "org.sealprep.appliance.0"

// Message types, appliance to host. The host answers a confirm with one
// line, "yes" or "no".
const (
	MsgProgress = "progress" // Text: one line of apply's progress
	MsgConfirm  = "confirm"  // Report: the plan, to ask the user about
	MsgReport   = "report"   // Report and Exit: the run's report
	MsgError    = "error"    // Text: why the appliance could not seal
	MsgDone     = "done"     // Exit: everything unmounted and flushed
	MsgReady    = "ready"    // the kernel booted and the modules loaded
)

// Message is one line on the port.
type Message struct {
	Type   string          `json:"type"`
	Text   string          `json:"text,omitempty"`
	Report json.RawMessage `json:"report,omitempty"`
	Exit   *int            `json:"exit,omitempty"`
}

// Bounds of what the host reads from the port.
const (
	MaxMessage = 16 << 20 // one line: a report of a big image's actions
	MaxTotal   = 64 << 20 // everything the appliance says in one run
	MaxText    = 4 << 10  // a progress or error line, after cleaning
)

// ErrTooLong is a message or a stream over its bound.
var ErrTooLong = errors.New("the appliance said more than the host reads")

// messageReader reads the port's messages, bounded.
type messageReader struct {
	r     *bufio.Reader
	total int
}

func newMessageReader(r io.Reader) *messageReader {
	return &messageReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next reads and decodes one message, its strings cleaned (Clean). io.EOF
// is the end of the stream between messages; a stream cut in the middle
// of a line is io.ErrUnexpectedEOF.
func (m *messageReader) next() (Message, error) {
	// A loop, not a recursion, over blank lines: MaxTotal of newlines
	// would otherwise overflow the goroutine's stack.
	for {
		var line []byte
		for {
			chunk, err := m.r.ReadSlice('\n')
			line = append(line, chunk...)
			m.total += len(chunk)
			if len(line) > MaxMessage || m.total > MaxTotal {
				return Message{}, ErrTooLong
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if err == io.EOF && len(line) > 0 {
				return Message{}, io.ErrUnexpectedEOF
			}
			if err != nil {
				return Message{}, err
			}
			break
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			return DecodeMessage(line)
		}
	}
}

// DecodeMessage decodes one line: a JSON object of Message's fields and
// no others, its report re-encoded with every string cleaned.
func DecodeMessage(line []byte) (Message, error) {
	var msg Message
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&msg); err != nil {
		return Message{}, fmt.Errorf("a message that is not the appliance's: %s", Clean(err.Error(), 200))
	}
	// Not dec.More, which is false before a stray '}' or ']'.
	if len(bytes.TrimSpace(line[dec.InputOffset():])) > 0 {
		return Message{}, errors.New("a message with data after it")
	}
	switch msg.Type {
	case MsgProgress, MsgError:
		msg.Text = Clean(msg.Text, MaxText)
	case MsgConfirm, MsgReport:
		if len(msg.Report) == 0 {
			return Message{}, fmt.Errorf("a %s message without a report", msg.Type)
		}
		r, err := cleanJSON(msg.Report)
		if err != nil {
			return Message{}, fmt.Errorf("the %s message's report: %v", msg.Type, err)
		}
		msg.Report = r
	case MsgDone, MsgReady:
	default:
		return Message{}, fmt.Errorf("a message of unknown type %q", Clean(msg.Type, 40))
	}
	if (msg.Type == MsgReport || msg.Type == MsgDone) && msg.Exit == nil {
		return Message{}, fmt.Errorf("a %s message without an exit code", msg.Type)
	}
	return msg, nil
}

// cleanJSON decodes any JSON value, cleans every string in it (keys
// included), and encodes it again.
func cleanJSON(b []byte) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var walk func(v any, depth int) (any, error)
	walk = func(v any, depth int) (any, error) {
		if depth > 64 {
			return nil, errors.New("nested deeper than any report")
		}
		switch x := v.(type) {
		case string:
			return Clean(x, MaxMessage), nil
		case []any:
			for i := range x {
				var err error
				if x[i], err = walk(x[i], depth+1); err != nil {
					return nil, err
				}
			}
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				c, err := walk(e, depth+1)
				if err != nil {
					return nil, err
				}
				ck := Clean(k, 200)
				if _, dup := out[ck]; dup {
					return nil, fmt.Errorf("two keys that read the same, %q", ck)
				}
				out[ck] = c
			}
			return out, nil
		}
		return v, nil
	}
	v, err := walk(v, 0)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// Clean makes hostile text safe to print on a terminal and in a log:
// invalid UTF-8 becomes U+FFFD, control characters (escape sequences,
// carriage returns, newlines), line and paragraph separators and
// bidirectional marks, embeddings, overrides and isolates are dropped,
// and the text is cut to max bytes.
func Clean(s string, max int) string {
	var b strings.Builder
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n <= 1 {
				r = '\uFFFD'
			}
		}
		if unicode.IsControl(r) || hiddenFormat(r) {
			continue
		}
		if b.Len()+utf8.RuneLen(r) > max {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

// hiddenFormat reports the format characters that move or hide text: the
// bidirectional marks, embeddings, overrides and isolates, and the line
// and paragraph separators some terminals break lines at.
func hiddenFormat(r rune) bool {
	switch {
	case r == 0x061C, r == 0x200E, r == 0x200F, r == 0x2028, r == 0x2029:
		return true
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// tail keeps the last bytes written to it: the appliance's console, whose
// end says why a boot failed.
type tail struct {
	mu  sync.Mutex
	b   []byte
	max int
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

// lines is the kept text's last n lines, cleaned.
func (t *tail) lines(n int) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, l := range strings.Split(string(t.b), "\n") {
		if l = strings.TrimSpace(Clean(l, 300)); l != "" {
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}
