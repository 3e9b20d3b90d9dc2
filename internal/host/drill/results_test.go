package drill

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/host/fleet"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// sampleJSON is sample() as freeze-drill --output json:FILE writes it.
func sampleJSON(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, sample(), FormatJSON); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	// As fs.WriteReport does: a new file renamed into place.
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
}

// TestReadResult: the drill's own JSON reads back as it was; what is not
// a drill's result of this version, or is hostile, is one line naming
// the file and saying what it is.
func TestReadResult(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	writeFile(t, good, sampleJSON(t))
	r, fi, err := ReadResult(good)
	if err != nil || fi == nil {
		t.Fatalf("%v", err)
	}
	if !reflect.DeepEqual(r, sample()) {
		t.Errorf("read back:\n%+v\nwant\n%+v", r, sample())
	}

	huge := filepath.Join(dir, "huge.json")
	if err := os.WriteFile(huge, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, MaxResultFile+1); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	js := string(sampleJSON(t))
	for name, tc := range map[string]struct {
		body string // written to NAME.json unless the file is made above
		want string
	}{
		"missing":   {want: "missing.json: no such file or directory"},
		"huge":      {want: "huge.json: larger than 16 MiB: not a freeze-drill result"},
		"fifo":      {want: "fifo.json: not a regular file"},
		"empty":     {body: "\n", want: "empty.json: empty: write it with guestcheck freeze-drill --output json:"},
		"truncated": {body: js[:len(js)/2], want: "truncated.json: line 86, column 1: not JSON: unexpected end of JSON input"},
		"garbage":   {body: "{\n\"tool\": nope}", want: "garbage.json: line 2, column 10: not JSON: invalid character 'o' in literal null (expecting 'u')"},
		"fleet":     {body: `{"schema_version": 1, "tool": "guestcheck fleet", "vms": []}`, want: `fleet.json: not a freeze-drill result (tool "guestcheck fleet"): write it with guestcheck freeze-drill --output json:`},
		"report":    {body: `{"schema_version": 1, "checks": []}`, want: `report.json: not a freeze-drill result (tool "")`},
		"v2":        {body: strings.Replace(js, `"schema_version": 1`, `"schema_version": 2`, 1), want: "v2.json: a freeze-drill result of schema_version 2, and this guestcheck reads 1"},
		"status":    {body: strings.Replace(js, `"status": "pass"`, `"status": "fine"`, 1), want: `status.json: line 20, column 17: not a valid freeze-drill result: vms[0].status "fine" is not one of pass, warn, unknown, fail`},
		"nofix":     {body: strings.Replace(js, `"fix": "Make the freeze faster.",`, ``, 1), want: "nofix.json: line 80, column 5: not a valid freeze-drill result: vms[1]: a fail VM without a fix"},
		"negative":  {body: strings.Replace(js, `"freeze_ms": 41`, `"freeze_ms": -41`, 1), want: "negative.json: line 28, column 20: not a valid freeze-drill result: vms[0].freeze_ms is -41, less than 0"},
		"twice":     {body: strings.Replace(js, `"host": "hv1",`, `"host": "hv1", "host": "hv2",`, 1), want: `twice.json: line 5, column 18: not a valid freeze-drill result: has the key "host" twice`},
		"array":     {body: `[` + js + `]`, want: "array.json: line 1, column 1: not a valid freeze-drill result"},
	} {
		p := filepath.Join(dir, name+".json")
		if tc.body != "" || name == "empty" {
			writeFile(t, p, []byte(tc.body))
		}
		done := make(chan struct{})
		var err error
		go func() { _, _, err = ReadResult(p); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: ReadResult hangs", name)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), p+": ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v\nwant one line starting with %s: and holding %q", name, err, p, tc.want)
		}
	}
}

// TestReadResultCleans: control and bidi characters in a result's
// strings (a VM named by a hostile --agent-socket NAME, a file written by
// someone else) are cleaned as fleet cleans them, in the Result and in
// the series.
func TestReadResultCleans(t *testing.T) {
	js := strings.Replace(string(sampleJSON(t)), `"name": "web1"`, `"name": "web1\u001b[2J\u202e\nx\"y"`, 1)
	p := filepath.Join(t.TempDir(), "drill.json")
	writeFile(t, p, []byte(js))
	r, _, err := ReadResult(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.VMs[0].Name; got != "web1\uFFFD[2J\uFFFD x\"y" {
		t.Errorf("name %q", got)
	}
	var b bytes.Buffer
	if err := WritePrometheus(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `guestcheck_freeze_drill_status{vm="web1`+"\uFFFD"+`[2J`+"\uFFFD"+` x\"y",source="socket",status="pass"} 1`) {
		t.Errorf("series:\n%s", b.String())
	}
	// The textfile's writer cleans too, whatever Result it is given.
	raw := sample()
	raw.VMs[0].Name = "web1\x1b]0;owned\x07"
	b.Reset()
	if err := WritePrometheus(&b, raw); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\x1b\x07") {
		t.Errorf("control characters in the textfile:\n%q", b.String())
	}
}

// promtoolCheck fails the test unless promtool check metrics accepts b.
func promtoolCheck(t *testing.T, b []byte) {
	t.Helper()
	promtool := testenv.Tool(t, "promtool", "prometheus")
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(b)
	if out, err := cmd.CombinedOutput(); err != nil || len(out) != 0 {
		t.Errorf("promtool check metrics: %v\n%s\non:\n%s", err, out, b)
	}
}

// TestResultsFile follows the file a drill's timer rewrites through a
// scraper's eyes: missing, then a drill's result, then a file that is
// no longer valid. Never a stale series passed off as the file's, never
// a crash; one log line per change of state.
func TestResultsFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "freeze-drill.json")
	var logs []string
	rf := &ResultsFile{Path: p, Log: func(l string) { logs = append(logs, l) }}
	scrape := func() string {
		var b bytes.Buffer
		if err := rf.WritePrometheus(&b); err != nil {
			t.Fatal(err)
		}
		promtoolCheck(t, b.Bytes())
		return b.String()
	}
	for range 2 {
		if s := scrape(); s != "# HELP "+ResultsMetric+" Whether the last freeze drill's result file could be read (1); 0: it is missing or invalid, no drill series are served, and the exporter's log says why.\n# TYPE "+ResultsMetric+" gauge\n"+ResultsMetric+" 0\n" {
			t.Errorf("missing file:\n%s", s)
		}
	}
	if len(logs) != 1 || logs[0] != p+": no such file or directory; serving guestcheck_freeze_drill_results_ok 0 and no drill series until the file holds a drill's result" {
		t.Errorf("logs %q", logs)
	}

	writeFile(t, p, sampleJSON(t))
	var want bytes.Buffer
	WritePrometheus(&want, sample())
	for range 2 {
		if s := scrape(); s != want.String()+"# HELP "+ResultsMetric+" Whether the last freeze drill's result file could be read (1); 0: it is missing or invalid, no drill series are served, and the exporter's log says why.\n# TYPE "+ResultsMetric+" gauge\n"+ResultsMetric+" 1\n" {
			t.Errorf("the drill's result: not its textfile's series and %s 1:\n%s", ResultsMetric, s)
		}
	}
	if len(logs) != 2 || logs[1] != p+": read again: the drill of 2025-12-07T16:00:00Z, 3 VM(s), fail" {
		t.Errorf("logs %q", logs)
	}

	// A drill of another day replaces it: its series, not the first's.
	next := sample()
	next.StartedAt = next.StartedAt.Add(24 * time.Hour)
	next.VMs = next.VMs[:1]
	var b bytes.Buffer
	Render(&b, next, FormatJSON)
	writeFile(t, p, b.Bytes())
	if s := scrape(); !strings.Contains(s, "guestcheck_freeze_drill_timestamp_seconds 1765209600\n") || strings.Contains(s, `vm="db1"`) {
		t.Errorf("a new result not read:\n%s", s)
	}

	// Cut short (a disk full): no drill series at all, not the last
	// good ones.
	writeFile(t, p, b.Bytes()[:100])
	s := scrape()
	if strings.Contains(s, "guestcheck_freeze_drill_status") || strings.Contains(s, "timestamp_seconds") || !strings.HasSuffix(s, ResultsMetric+" 0\n") {
		t.Errorf("an invalid file still serves drill series:\n%s", s)
	}
	if len(logs) != 3 || !strings.HasPrefix(logs[2], p+": line 5, column 16: not JSON: unexpected end of JSON input; serving") {
		t.Errorf("logs %q", logs)
	}
}

// TestFleetServesDrillSeries: guestcheck fleet's /metrics, on loopback,
// carries the drill's series from its file beside the survey's, and the
// whole answer passes promtool check metrics.
func TestFleetServesDrillSeries(t *testing.T) {
	p := filepath.Join(t.TempDir(), "freeze-drill.json")
	writeFile(t, p, sampleJSON(t))
	rf := &ResultsFile{Path: p, Log: func(l string) { t.Errorf("log: %s", l) }}
	srv := &fleet.Server{Interval: time.Hour, Append: rf.WritePrometheus, Survey: func(context.Context) fleet.Result {
		return fleet.Result{SchemaVersion: 1, Tool: "guestcheck fleet", Version: "1", StartedAt: time.Unix(1765123200, 0),
			VMs: []fleet.VM{{Name: "web1", Source: "socket", Status: fleet.Pass}}}
	}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv.Handler()}
	go hs.Serve(l)
	defer hs.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Run(ctx)
	for start := time.Now(); srv.Surveys() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatal("no survey")
		}
	}
	cl := http.Client{Timeout: 10 * time.Second}
	resp, err := cl.Get("http://" + l.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %v", resp.StatusCode, err)
	}
	for _, want := range []string{
		`guestcheck_fleet_vm_status{domain="web1",status="pass"} 1`,
		`guestcheck_freeze_drill_status{vm="db1",source="libvirt",status="fail"} 1`,
		`guestcheck_freeze_drill_freeze_seconds{vm="db1",source="libvirt"} 3.2`,
		"guestcheck_freeze_drill_timestamp_seconds 1765123200\n",
		ResultsMetric + " 1\n",
	} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("/metrics lacks %s:\n%s", want, b)
		}
	}
	promtoolCheck(t, b)
}

// TestResultsFileConcurrentScrapes: scrapes at once while the drill's
// file is replaced, good and bad in turn, each see one whole state: the
// drill's series with ok 1, or ok 0 and nothing of the drill (go test
// -race runs it for the data races too).
func TestResultsFileConcurrentScrapes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "freeze-drill.json")
	good := sampleJSON(t)
	var want bytes.Buffer
	WritePrometheus(&want, sample())
	rf := &ResultsFile{Path: p, Log: func(string) {}}
	done := make(chan struct{})
	errs := make(chan string, 8)
	for range 8 {
		go func() {
			for {
				select {
				case <-done:
					errs <- ""
					return
				default:
				}
				var b bytes.Buffer
				rf.WritePrometheus(&b)
				s := b.String()
				if s != want.String()+"# HELP "+ResultsMetric+" Whether the last freeze drill's result file could be read (1); 0: it is missing or invalid, no drill series are served, and the exporter's log says why.\n# TYPE "+ResultsMetric+" gauge\n"+ResultsMetric+" 1\n" &&
					(strings.Contains(s, "guestcheck_freeze_drill_status") || !strings.HasSuffix(s, ResultsMetric+" 0\n")) {
					errs <- s
					return
				}
			}
		}()
	}
	for i := range 200 {
		if i%2 == 0 {
			writeFile(t, p, good)
		} else {
			writeFile(t, p, good[:len(good)-i])
		}
	}
	close(done)
	for range 8 {
		if s := <-errs; s != "" {
			t.Fatalf("a scrape saw a mixed state:\n%s", s)
		}
	}
}
