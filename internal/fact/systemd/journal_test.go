package systemd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseJournalLine(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       map[string][]string
		err        string
	}{
		{name: "strings", line: `{"MESSAGE":"a.service: Found ordering cycle on b.service/start","_PID":"1"}`,
			want: map[string][]string{"MESSAGE": {"a.service: Found ordering cycle on b.service/start"}, "_PID": {"1"}}},
		{name: "repeated field", line: `{"UNIT":["a.service","b.service"]}`,
			want: map[string][]string{"UNIT": {"a.service", "b.service"}}},
		{name: "binary field", line: `{"MESSAGE":[104,105,255]}`, want: map[string][]string{"MESSAGE": {"hi\xff"}}},
		{name: "repeated binary", line: `{"X":[[104],"b"]}`, want: map[string][]string{"X": {"h", "b"}}},
		{name: "null is left out", line: `{"MESSAGE":null,"A":"b"}`, want: map[string][]string{"A": {"b"}}},
		{name: "empty array is an empty value", line: `{"A":[]}`, want: map[string][]string{"A": {""}}},
		{name: "not an object", line: `["a"]`, err: "not a JSON object"},
		{name: "number", line: `{"A":1}`, err: "field A: value 1 is neither"},
		{name: "object value", line: `{"A":{"b":"c"}}`, err: "field A"},
		{name: "nested non-bytes", line: `{"A":[["x"]]}`, err: "field A: an array inside an array"},
		{name: "byte out of range", line: `{"A":[[256]]}`, err: "field A"},
		{name: "empty name", line: `{"":"x"}`, err: "empty field name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := ParseJournalLine([]byte(tc.line))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(e.Fields) != len(tc.want) {
				t.Fatalf("fields %v, want %v", e.Fields, tc.want)
			}
			for k, v := range tc.want {
				if !slices.Equal(e.All(k), v) {
					t.Errorf("%s = %q, want %q", k, e.All(k), v)
				}
			}
		})
	}
}

func TestParseJournalJSONNamesLine(t *testing.T) {
	in := "{\"A\":\"1\"}\n\n{\"B\":2}\n"
	if _, err := ParseJournalJSON(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), "journalctl output line 3:") {
		t.Fatalf("error %v, want it to name line 3", err)
	}
	es, err := ParseJournalJSON(strings.NewReader("{\"__REALTIME_TIMESTAMP\":\"1764583200000000\"}\n"))
	if err != nil || len(es) != 1 {
		t.Fatal(es, err)
	}
	if got := es[0].Realtime(); !got.Equal(time.Date(2025, 12, 1, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("Realtime %v", got)
	}
	if (JournalEntry{}).Realtime() != (time.Time{}) {
		t.Error("Realtime of an entry without a timestamp is not zero")
	}
}

func FuzzParseJournalLine(f *testing.F) {
	for _, s := range []string{`{"MESSAGE":"x","UNIT":["a","b"]}`, `{"A":[1,2,3]}`, `{"A":[[1],"x",null]}`, `{"A":null}`, `[]`, `{"A":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := ParseJournalLine(b)
		if err != nil {
			return
		}
		for k, v := range e.Fields {
			if k == "" || len(v) == 0 {
				t.Fatalf("field %q with values %q", k, v)
			}
		}
	})
}

// fakeJournalctl writes a shell script standing in for journalctl.
func fakeJournalctl(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "journalctl")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunJournalctl(t *testing.T) {
	ctx := context.Background()
	argsFile := filepath.Join(t.TempDir(), "args")
	ok := fakeJournalctl(t, `printf '%s\n' "$@" >`+argsFile+`
printf '{"MESSAGE":"hello","_PID":"1"}\n'`)
	es, err := RunJournalctl(ctx, ok, "_PID=1", "-p", "warning")
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Get("MESSAGE") != "hello" {
		t.Fatalf("entries %+v", es)
	}
	args, _ := os.ReadFile(argsFile)
	if got := strings.Fields(string(args)); !slices.Equal(got, []string{"-b", "--no-pager", "-q", "-o", "json", "_PID=1", "-p", "warning"}) {
		t.Errorf("argv %q", got)
	}

	fail := fakeJournalctl(t, `echo "Failed to open journal: Permission denied" >&2; exit 1`)
	if _, err := RunJournalctl(ctx, fail); err == nil || !strings.Contains(err.Error(), "Permission denied") {
		t.Errorf("failing journalctl: %v", err)
	}
	bad := fakeJournalctl(t, `echo '{"A":"1"}'; echo 'garbage'`)
	if _, err := RunJournalctl(ctx, bad); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("garbage output: %v", err)
	}

	// A journalctl that never answers is killed at the deadline, even
	// when a child of it keeps the output pipe open.
	hang := fakeJournalctl(t, `sleep 5 & sleep 5`)
	dctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = RunJournalctl(dctx, hang)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no answer within") {
		t.Errorf("hanging journalctl: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("hanging journalctl held RunJournalctl for %s", d)
	}

	if _, err := RunJournalctl(ctx, filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a journalctl that does not exist gave no error")
	}
}

func TestBootJournalNotLive(t *testing.T) {
	c := New(false)
	defer c.Close()
	if _, err := c.BootJournal(context.Background(), "_PID=1"); !errors.Is(err, ErrNotRunning) {
		t.Errorf("BootJournal on an image root: %v, want ErrNotRunning", err)
	}
}
