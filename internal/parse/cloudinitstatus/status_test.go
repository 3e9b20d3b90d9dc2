package cloudinitstatus

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// statusPre242 is shaped like cloud-init 22.4's status.json (epoch
// timestamps, no recoverable_errors), statusPost242 like 25.1's (seconds
// since boot, recoverable_errors per stage).
const statusPre242 = `{
 "v1": {
  "datasource": "DataSourceNoCloud [seed=/dev/vdb][dsmode=net]",
  "init": {"errors": [], "finished": 1700000012.5, "start": 1700000010.25},
  "init-local": {"errors": [], "finished": 1700000005.0, "start": 1700000004.0},
  "modules-config": {"errors": [], "finished": 1700000020.0, "start": 1700000019.0},
  "modules-final": {"errors": ["('scripts_user', RuntimeError('Runparts: 1 failures (runcmd) in 1 attempted commands'))"], "finished": 1700000030.0, "start": 1700000025.0},
  "stage": null
 }
}`

const statusPost242 = `{
 "v1": {
  "datasource": "DataSourceNoCloud [seed=/dev/sr0][dsmode=net]",
  "init": {"errors": [], "finished": 12.5, "recoverable_errors": {}, "start": 10.25},
  "init-local": {"errors": [], "finished": 5.1, "recoverable_errors": {"WARNING": ["w1"]}, "start": 4.0},
  "modules-config": {"errors": [], "finished": null, "recoverable_errors": {"DEPRECATED": ["d1"], "WARNING": ["w2"]}, "start": 19.0},
  "modules-final": {"errors": [], "finished": null, "recoverable_errors": {}, "start": null},
  "stage": "modules-config",
  "future_key": [1, 2, 3]
 }
}`

func TestParseStatus(t *testing.T) {
	sf, err := ParseStatus([]byte(statusPre242))
	if err != nil {
		t.Fatal(err)
	}
	if sf.Datasource != "DataSourceNoCloud [seed=/dev/vdb][dsmode=net]" || sf.Stage != "" {
		t.Errorf("datasource/stage = %q/%q", sf.Datasource, sf.Stage)
	}
	var names []string
	for _, s := range sf.Stages {
		names = append(names, s.Name)
	}
	// Sorted by name, the order cloud-init aggregates errors in.
	if want := []string{"init", "init-local", "modules-config", "modules-final"}; !reflect.DeepEqual(names, want) {
		t.Errorf("stages = %v, want %v", names, want)
	}
	fin := sf.Lookup(StageModulesFinal)
	if fin == nil || len(fin.Errors) != 1 || fin.Start.Raw != 1700000025 || !fin.Finished.Set {
		t.Fatalf("modules-final = %+v", fin)
	}
	if fin.Start.Encoding() != EncodingEpoch {
		t.Errorf("encoding = %q, want epoch", fin.Start.Encoding())
	}

	sf, err = ParseStatus([]byte(statusPost242))
	if err != nil {
		t.Fatal(err)
	}
	if sf.Stage != StageModulesConfig {
		t.Errorf("stage = %q", sf.Stage)
	}
	cfg := sf.Lookup(StageModulesConfig)
	if cfg.Finished.Set || cfg.Start.Encoding() != EncodingUptime {
		t.Errorf("modules-config = %+v", cfg)
	}
	if !reflect.DeepEqual(cfg.RecoverableErrors, map[string][]string{"DEPRECATED": {"d1"}, "WARNING": {"w2"}}) {
		t.Errorf("recoverable = %v", cfg.RecoverableErrors)
	}
	if rec := sf.Lookup(StageInit).RecoverableErrors; rec != nil {
		t.Errorf("empty recoverable_errors = %#v, want nil", rec)
	}
	if sf.Lookup("future_key") != nil || sf.Lookup("nope") != nil {
		t.Error("non-object keys must not become stages")
	}
}

func TestParseStatusErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", ``, "unexpected end of JSON input"},
		{"truncated", statusPost242[:len(statusPost242)/2], "unexpected end of JSON input"},
		{"garbage", `{"v1": nope}`, "invalid character 'o' in literal null (expecting 'u') (at byte 9)"},
		{"binary", "\x00\x01", "invalid character '\\x00' looking for beginning of value (at byte 1)"},
		{"invalid utf-8", "{\"v1\": {\"init\": {\"errors\": [\"caf\xe9\"]}}}", "not valid UTF-8 (at byte 32)"},
		{"trailing", `{"v1": {}} x`, "invalid character 'x' after top-level value (at byte 12)"},
		{"top array", `[]`, "top level is an array, want an object"},
		{"v1 string", `{"v1": "x"}`, `"v1" is a string, want an object`},
		{"v1 null", `{"v1": null}`, `"v1" is null, want an object`},
		{"datasource number", `{"v1": {"datasource": 3}}`, `"v1.datasource" is a number, want a string`},
		{"stage bool", `{"v1": {"stage": true}}`, `"v1.stage" is a boolean, want a string`},
		{"errors string", `{"v1": {"init": {"errors": "boom"}}}`, `"v1.init.errors" is a string, want an array of strings`},
		{"errors null", `{"v1": {"init": {"errors": null}}}`, `"v1.init.errors" is null, want an array of strings`},
		{"error element", `{"v1": {"init": {"errors": ["a", 7]}}}`, `"v1.init.errors[1]" is a number, want a string`},
		{"start string", `{"v1": {"init-local": {"start": "12.5"}}}`, `"v1.init-local.start" is a string, want a number`},
		{"start too large", `{"v1": {"init-local": {"start": 1e400}}}`, `"v1.init-local.start" is a number out of range (1e400)`},
		{"finished object", `{"v1": {"modules-final": {"finished": {}}}}`, `"v1.modules-final.finished" is an object, want a number`},
		{"recoverable list", `{"v1": {"init": {"recoverable_errors": []}}}`, `"v1.init.recoverable_errors" is an array, want an object`},
		{"recoverable null", `{"v1": {"init": {"recoverable_errors": null}}}`, `"v1.init.recoverable_errors" is null, want an object`},
		{"recoverable level", `{"v1": {"init": {"recoverable_errors": {"WARNING": "x"}}}}`, `"v1.init.recoverable_errors.WARNING" is a string, want an array of strings`},
		{"recoverable element", `{"v1": {"init": {"recoverable_errors": {"ERROR": [null]}}}}`, `"v1.init.recoverable_errors.ERROR[0]" is null, want a string`},
		// Of two bad levels, the first by name is named, on every run.
		{"two bad levels", `{"v1": {"init": {"recoverable_errors": {"WARNING": 1, "ERROR": 2}}}}`, `"v1.init.recoverable_errors.ERROR" is a number, want an array of strings`},
		// Stages are checked in name order too.
		{"two bad stages", `{"v1": {"modules-final": {"errors": 1}, "init": {"errors": 2}}}`, `"v1.init.errors" is a number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sf, err := ParseStatus([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) || sf != nil {
				t.Fatalf("ParseStatus = %v, %v, want no result and an error containing %q", sf, err, tc.want)
			}
			if _, ok := err.(problem.Problem); !ok {
				t.Errorf("error is a %T, want a problem.Problem", err)
			}
		})
	}
}

func TestParseStatusTolerant(t *testing.T) {
	// A missing v1 is empty (as cloud-init treats it); unknown keys, even
	// a number too large for a float64 (Python reads it as inf), and null
	// times are fine.
	for _, in := range []string{`{}`, `{"v2": 1}`, `{"v1": {}}`, `{"v1": {"init": {}}}`, `{"v1": {"x": 1e400, "init": {"start": null, "extra": "y"}}}`} {
		if _, err := ParseStatus([]byte(in)); err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
}

func TestParseResult(t *testing.T) {
	rf, err := ParseResult([]byte(`{"v1": {"datasource": "DataSourceNoCloud [seed=/dev/sr0]", "errors": ["e1", "e2"], "new": {}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if rf.Datasource != "DataSourceNoCloud [seed=/dev/sr0]" || !reflect.DeepEqual(rf.Errors, []string{"e1", "e2"}) {
		t.Errorf("got %+v", rf)
	}
	for in, want := range map[string]string{
		`{"v1": {"errors": {}}}`:       `"v1.errors" is an object, want an array of strings`,
		`{"v1": {"errors": null}}`:     `"v1.errors" is null, want an array of strings`,
		`{"v1": {"datasource": []}}`:   `"v1.datasource" is an array, want a string`,
		`{"v1": {"errors": [1]}}`:      `"v1.errors[0]" is a number, want a string`,
		`{"v1": {"datasource": null`:   "unexpected end of JSON input",
		`"just a string"`:              "top level is a string, want an object",
		`null`:                         "top level is null, want an object",
		`{"v1": {"datasource": "x"}}}`: "invalid character '}' after top-level value (at byte 28)",
	} {
		rf, err := ParseResult([]byte(in))
		if err == nil || err.Error() != want || rf != nil {
			t.Errorf("%s: %v, %v, want no result and %q", in, rf, err, want)
		}
	}
}

func TestParseBootFinished(t *testing.T) {
	bf, err := ParseBootFinished([]byte("37.42 - Sat, 29 Nov 2025 21:50:12 +0000 - v. 25.1.4\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !bf.UptimeKnown || bf.Uptime != 37420*time.Millisecond || bf.Version != "25.1.4" ||
		!bf.Time.Equal(time.Date(2025, 11, 29, 21, 50, 12, 0, time.UTC)) {
		t.Errorf("got %+v", bf)
	}
	bf, err = ParseBootFinished([]byte("?? - ?? - v. 22.4.2"))
	if err != nil || bf.UptimeKnown || !bf.Time.IsZero() || bf.Version != "22.4.2" {
		t.Errorf("unknowns: %+v %v", bf, err)
	}
	for in, want := range map[string]string{
		"":        "empty file",
		"\n":      "empty file",
		"garbage": `want "<uptime> - <time> - v. <version>", got "garbage"`,
		"1 - 2":   `want "<uptime> - <time> - v. <version>", got "1 - 2"`,
		"x - Sat, 29 Nov 2025 21:50:12 +0000 - v. 1": `uptime "x": not a number`,
		"-5 - ?? - v. 1":               `uptime "-5": out of range`,
		"NaN - ?? - v. 1":              `uptime "NaN": out of range`,
		"1 - yesterday - v. 1":         `time "yesterday": not RFC 2822`,
		"1 - ?? - version 1":           `version "version 1": want "v. <version>"`,
		"1 - ?? - v. 1\n2 - ?? - v. 1": "more than one line",
		"4000000000 - ?? - v. 1":       `uptime "4000000000": out of range`,
	} {
		bf, err := ParseBootFinished([]byte(in))
		if err == nil || err.Error() != want || bf != nil {
			t.Errorf("%q: %v, %v, want no result and %q", in, bf, err, want)
		}
	}
}

// captures are the files of real cloud-init runs the cloud-init check's
// tests replay: every one must parse.
func captures(t testing.TB, name string) []string {
	var files []string
	for _, pat := range []string{"../../checks/cloud-init/testdata/real/*/" + name, "../../checks/cloud-init/testdata/real/*/runcmd/" + name} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	return files
}

func TestRealCaptures(t *testing.T) {
	parsers := map[string]func([]byte) error{
		"status.json":   func(b []byte) error { _, err := ParseStatus(b); return err },
		"result.json":   func(b []byte) error { _, err := ParseResult(b); return err },
		"boot-finished": func(b []byte) error { _, err := ParseBootFinished(b); return err },
	}
	for name, parse := range parsers {
		files := captures(t, name)
		if len(files) == 0 {
			t.Errorf("no real %s found: have the captures moved?", name)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := parse(b); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
}
