package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/guestcheck/guestcheck/internal/shared/junitxml"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// FuzzRenderers builds a report from arbitrary strings and statuses and
// holds each machine format to its own rules: an exposition file the strict
// reader accepts, plugin output the guidelines parser accepts, well-formed
// XML with the right number of test cases, YAML blocks that parse, and one
// JSON object per finding.
func FuzzRenderers(f *testing.F) {
	f.Add("fstab", "fstab-x", "msg | # \" \\ <&>", "key", "v\nw", "fix", "host", "1.0", uint8(4))
	f.Add("a", "b", "\xff\x00\x1b[31m", "true", "\r\n", "", "", "", uint8(9))
	f.Fuzz(func(t *testing.T, id, code, msg, key, val, fix, host, version string, st uint8) {
		statuses := append(append([]runner.Status(nil), runner.Statuses...), "", "bogus")
		status := statuses[int(st)%len(statuses)]
		fs := []runner.Finding{{Status: status, Code: code, Message: msg, Detail: map[string]string{key: val}, Remediation: fix},
			{Status: runner.Pass, Code: code + "-ok", Message: msg}}
		r := New([]runner.Result{{ID: id, Title: msg, Status: reportv1.Worst(status, runner.Pass), Summary: msg, Findings: fs},
			{ID: "second", Status: runner.Skip, Summary: val, Findings: []runner.Finding{{Status: runner.Skip, Code: "s", Message: val}}}},
			Meta{Tool: "guestcheck", Version: version, Root: "/", Host: Host{Hostname: host}, StartedAt: time.Unix(1700000000, 0), Duration: time.Second})

		var b bytes.Buffer
		if err := WritePrometheus(&b, r); err != nil {
			t.Fatal(err)
		}
		if _, err := parseExposition(b.String()); err != nil {
			t.Errorf("prometheus: %v\n%s", err, b.String())
		}

		b.Reset()
		if err := WriteNagios(&b, r, NagiosOptions{Verbose: true}); err != nil {
			t.Fatal(err)
		}
		if o, err := parseNagios(b.String(), 80); err != nil || o.state != NagiosWord(NagiosExitCode(r)) || len(o.perf) != 7 {
			t.Errorf("nagios: %v %+v\n%s", err, o, b.String())
		}

		b.Reset()
		if err := WriteJUnit(&b, r); err != nil {
			t.Fatal(err)
		}
		var doc junitxml.Suites
		if err := xml.Unmarshal(b.Bytes(), &doc); err != nil || len(doc.Suites) != 2 || len(doc.Suites[0].Cases) != 2 {
			t.Errorf("junit: %v\n%s", err, b.String())
		}

		b.Reset()
		if err := WriteTAP(&b, r); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(b.String(), "\n")
		points := 0
		var block []string
		for _, l := range lines {
			switch {
			case strings.HasPrefix(l, "ok ") || strings.HasPrefix(l, "not ok "):
				points++
			case l == "  ---":
				block = []string{}
			case l == "  ...":
				var m map[string]any
				if err := yaml.Unmarshal([]byte(strings.Join(block, "\n")), &m); err != nil || m["message"] == nil {
					t.Errorf("tap yaml: %v\n%s", err, strings.Join(block, "\n"))
				}
				block = nil
			case block != nil:
				block = append(block, l)
			}
		}
		if points != 2 || lines[0] != "TAP version 13" {
			t.Errorf("tap: %d test points\n%s", points, b.String())
		}

		b.Reset()
		if err := WriteJSONL(&b, r); err != nil {
			t.Fatal(err)
		}
		objs := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		for _, l := range objs {
			var fl FindingLine
			if err := json.Unmarshal([]byte(l), &fl); err != nil {
				t.Errorf("jsonl: %v: %q", err, l)
			}
		}
		if len(objs) != 3 {
			t.Errorf("jsonl: %d lines, want 3", len(objs))
		}
	})
}
