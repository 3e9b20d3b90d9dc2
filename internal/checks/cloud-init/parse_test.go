package cloudinit

import (
	"reflect"
	"strings"
	"testing"
	"time"
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
		{"garbage", `{"v1": nope}`, "invalid character 'o' in literal null (expecting 'u') (at byte"},
		{"binary", "\x00\x01", "invalid character"},
		{"invalid utf-8", "{\"v1\": {\"init\": {\"errors\": [\"caf\xe9\"]}}}", "not valid UTF-8 (at byte 32)"},
		{"trailing", `{"v1": {}} x`, "invalid character 'x' after top-level value"},
		{"top array", `[]`, "top level: want an object, got array"},
		{"v1 string", `{"v1": "x"}`, "v1: want an object, got string"},
		{"v1 null", `{"v1": null}`, "v1: want an object, got null"},
		{"datasource number", `{"v1": {"datasource": 3}}`, "v1.datasource: want a string or null, got number"},
		{"stage bool", `{"v1": {"stage": true}}`, "v1.stage: want a string or null, got boolean"},
		{"errors string", `{"v1": {"init": {"errors": "boom"}}}`, "v1.init.errors: want an array of strings, got string"},
		{"errors null", `{"v1": {"init": {"errors": null}}}`, "v1.init.errors: want an array of strings, got null"},
		{"error element", `{"v1": {"init": {"errors": ["a", 7]}}}`, "v1.init.errors[1]: want a string, got number"},
		{"start string", `{"v1": {"init-local": {"start": "12.5"}}}`, "v1.init-local.start: want a number or null, got string"},
		{"finished object", `{"v1": {"modules-final": {"finished": {}}}}`, "v1.modules-final.finished: want a number or null, got object"},
		{"recoverable list", `{"v1": {"init": {"recoverable_errors": []}}}`, "v1.init.recoverable_errors: want an object, got array"},
		{"recoverable level", `{"v1": {"init": {"recoverable_errors": {"WARNING": "x"}}}}`, "v1.init.recoverable_errors.WARNING: want an array of strings, got string"},
		{"recoverable element", `{"v1": {"init": {"recoverable_errors": {"ERROR": [null]}}}}`, "v1.init.recoverable_errors.ERROR[0]: want a string, got null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseStatus([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestParseStatusTolerant(t *testing.T) {
	// A missing v1 is empty (as cloud-init treats it); unknown keys and
	// null times are fine.
	for _, in := range []string{`{}`, `{"v2": 1}`, `{"v1": {}}`, `{"v1": {"init": {}}}`, `{"v1": {"x": 1, "init": {"start": null, "extra": "y"}}}`} {
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
		`{"v1": {"errors": {}}}`:       "v1.errors: want an array of strings, got object",
		`{"v1": {"datasource": []}}`:   "v1.datasource: want a string or null, got array",
		`{"v1": {"errors": [1]}}`:      "v1.errors[0]: want a string, got number",
		`{"v1": {"datasource": null`:   "unexpected end of JSON input",
		`"just a string"`:              "top level: want an object, got string",
		`{"v1": {"datasource": "x"}}}`: "after top-level value",
	} {
		if _, err := ParseResult([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", in, err, want)
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
	for _, in := range []string{"", "\n", "garbage", "1 - 2", "x - Sat, 29 Nov 2025 21:50:12 +0000 - v. 1",
		"-5 - ?? - v. 1", "1 - yesterday - v. 1", "1 - ?? - version 1", "1 - ?? - v. 1\n2 - ?? - v. 1", "NaN - ?? - v. 1"} {
		if _, err := ParseBootFinished([]byte(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func TestModuleName(t *testing.T) {
	for msg, want := range map[string]string{
		"Running module write_files (<module 'cloudinit.config.cc_write_files' from '/usr/lib/python3/dist-packages/cloudinit/config/cc_write_files.py'>) failed": "write_files",
		"('scripts_user', RuntimeError('Runparts: 1 failures (runcmd) in 1 attempted commands'))":                                                                 "scripts_user",
		"('write-files', FileNotFoundError(2, 'No such file or directory'))":                                                                                      "write-files",
		"Running module write-files (<module 'cloudinit.config.cc_write_files' from 'x'>) failed":                                                                 "write-files",
		"failed in cloudinit.config.cc_mounts.handle":                                                                                                             "mounts",
		"Consuming user data failed!": "",
		"sys.exit(1) called":          "",
	} {
		if got := ModuleName(msg); got != want {
			t.Errorf("ModuleName(%q) = %q, want %q", msg, got, want)
		}
	}
}

func TestNormalizeDatasource(t *testing.T) {
	for in, want := range map[string]string{
		"DataSourceNoCloud [seed=/dev/vdb][dsmode=net]": "nocloud",
		"DataSourceOpenStackLocal [net,ver=2]":          "openstacklocal",
		"DataSourceNone":                                "none",
		"":                                              "",
	} {
		if got := NormalizeDatasource(in); got != want {
			t.Errorf("%q = %q, want %q", in, got, want)
		}
	}
}
