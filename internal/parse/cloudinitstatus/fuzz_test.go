package cloudinitstatus

import (
	"os"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// seedCaptures adds the real captures called name to the corpus.
func seedCaptures(f *testing.F, name string) {
	for _, p := range captures(f, name) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
}

// checkErr holds every parser to its contract: a result or a one-line
// problem, never both, never encoding/json's Go wording.
func checkErr(t *testing.T, gotResult bool, err error) {
	if err == nil {
		if !gotResult {
			t.Fatal("neither result nor error")
		}
		return
	}
	if gotResult {
		t.Fatal("result with error")
	}
	p, ok := err.(problem.Problem)
	if !ok {
		t.Fatalf("error %v is a %T, want a problem.Problem", err, err)
	}
	if msg := p.Error(); msg == "" || strings.Contains(msg, "json: ") || strings.Contains(msg, "Go value") {
		t.Fatalf("error %q", msg)
	}
}

func FuzzParseStatus(f *testing.F) {
	f.Add([]byte(statusPre242))
	f.Add([]byte(statusPost242))
	f.Add([]byte(`{"v1": {"init": {"recoverable_errors": {"WARNING": ["x"]}, "start": 1e300}}}`))
	seedCaptures(f, "status.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		sf, err := ParseStatus(b)
		checkErr(t, sf != nil, err)
		if sf == nil {
			return
		}
		for i, st := range sf.Stages {
			if i > 0 && sf.Stages[i-1].Name >= st.Name {
				t.Fatalf("stages out of order: %q before %q", sf.Stages[i-1].Name, st.Name)
			}
			if sf.Lookup(st.Name) == nil {
				t.Fatalf("Lookup(%q) = nil", st.Name)
			}
			_ = st.Start.Encoding()
		}
	})
}

func FuzzParseResult(f *testing.F) {
	f.Add([]byte(`{"v1": {"datasource": "DataSourceNoCloud", "errors": []}}`))
	f.Add([]byte(`{"v1": {"datasource": null, "errors": ["a", "b"]}}`))
	seedCaptures(f, "result.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		rf, err := ParseResult(b)
		checkErr(t, rf != nil, err)
	})
}

func FuzzParseBootFinished(f *testing.F) {
	f.Add([]byte("37.42 - Sat, 29 Nov 2025 21:50:12 +0000 - v. 25.1.4\n"))
	f.Add([]byte("?? - ?? - v. 22.4.2"))
	seedCaptures(f, "boot-finished")
	f.Fuzz(func(t *testing.T, b []byte) {
		bf, err := ParseBootFinished(b)
		checkErr(t, bf != nil, err)
		if err == nil && bf.UptimeKnown && bf.Uptime < 0 {
			t.Fatalf("negative uptime %v", bf.Uptime)
		}
	})
}
