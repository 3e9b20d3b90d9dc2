package procfs

import (
	"reflect"
	"testing"
	"time"
)

func TestParseUptime(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{"350.27 690.12\n", 350270 * time.Millisecond, ""},
		{"0.00 0.00", 0, ""},
		{"", 0, "empty"},
		{"x 1", 0, `uptime "x": not a number`},
		{"-1 2", 0, `uptime "-1": out of range`},
		{"1e300 1", 0, `uptime "1e300": out of range`},
		{"NaN 1", 0, `uptime "NaN": out of range`},
	} {
		d, err := ParseUptime([]byte(tc.in))
		switch {
		case tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr):
			t.Errorf("%q: err = %v, want %q", tc.in, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || d != tc.want):
			t.Errorf("%q = %v, %v; want %v", tc.in, d, err, tc.want)
		}
	}
}

func TestParseStat(t *testing.T) {
	for in, want := range map[string]Stat{
		"612 (cloud-init) S 1 612 612 0 -1":       {612, "cloud-init", 1},
		"77 (a) b) (c) R 42 77 77 0":              {77, "a) b) (c", 42},
		"9 (sd-pam) S 8 8 8 0 -1 1077936448 44 0": {9, "sd-pam", 8},
		"5 () S 0": {5, "", 0},
	} {
		got, err := ParseStat([]byte(in))
		if err != nil || got != want {
			t.Errorf("%q = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"":                  "no (comm) field",
		"12 cloud-init S 1": "no (comm) field",
		"x (a) S 1":         `pid "x": not a positive integer`,
		"0 (a) S 1":         `pid "0": not a positive integer`,
		"5 (a) S":           "no ppid field",
		"5 (a) S -3":        `ppid "-3": not a non-negative integer`,
		") 5 (a":            "no (comm) field",
	} {
		if _, err := ParseStat([]byte(in)); err == nil || err.Error() != want {
			t.Errorf("stat %q: err = %v, want %q", in, err, want)
		}
	}
}

func TestParseCmdline(t *testing.T) {
	for in, want := range map[string][]string{
		"/bin/sh\x00/var/lib/cloud/instance/scripts/runcmd\x00": {"/bin/sh", "/var/lib/cloud/instance/scripts/runcmd"},
		"a\x00\x00b":   {"a", "", "b"},
		"no-nul":       {"no-nul"},
		"":             nil,
		"\x00\x00\x00": nil,
	} {
		if got := ParseCmdline([]byte(in)); !reflect.DeepEqual(got, want) {
			t.Errorf("%q = %q, want %q", in, got, want)
		}
	}
}

func FuzzParseUptime(f *testing.F) {
	f.Add([]byte("350.27 690.12\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if d, err := ParseUptime(b); err == nil && d < 0 {
			t.Fatalf("negative uptime %v", d)
		}
	})
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("612 (cloud-init) S 1 612 612 0 -1 4194560"))
	f.Add([]byte("77 (a) b) (c) R 42 77 77 0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ps, err := ParseStat(b)
		if err == nil && (ps.PID <= 0 || ps.PPID < 0) {
			t.Fatalf("bad pids %+v", ps)
		}
	})
}

func FuzzParseCmdline(f *testing.F) {
	f.Add([]byte("/usr/bin/python3\x00/usr/bin/cloud-init\x00modules\x00--mode=final\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, a := range ParseCmdline(b) {
			if len(a) > len(b) {
				t.Fatalf("argument %q longer than the input", a)
			}
		}
	})
}
