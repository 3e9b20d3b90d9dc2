package cloudinit

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/parse/procfs"
)

// seedFiles adds every file called name under testdata (real captures and
// synthetic fixtures) to the corpus.
func seedFiles(f *testing.F, names ...string) {
	f.Helper()
	for _, name := range names {
		for _, pat := range []string{"testdata/real/*/" + name, "testdata/real/*/runcmd/" + name, "testdata/synthetic/*/" + name} {
			ms, _ := filepath.Glob(pat)
			for _, m := range ms {
				if b, err := os.ReadFile(m); err == nil {
					f.Add(b)
				}
			}
		}
	}
}

func FuzzParseStatus(f *testing.F) {
	f.Add([]byte(statusPre242))
	f.Add([]byte(statusPost242))
	f.Add([]byte(`{"v1": {"init": {"recoverable_errors": {"WARNING": ["x"]}, "start": 1e300}}}`))
	seedFiles(f, "status.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		sf, err := ParseStatus(b)
		if err != nil {
			if sf != nil {
				t.Fatal("result with error")
			}
			return
		}
		// Whatever parses must compute without panicking, live or not.
		clock := NewBootClock(time.Unix(1700000000, 0), time.Time{}, time.Hour, true)
		for _, res := range []bool{false, true} {
			s := Compute(Inputs{Installed: true, Boot: enabledGen, Status: sf, ResultExists: res, Clock: clock})
			_ = s.ExtendedStatus()
			if s.ExitCode() == 1 && len(s.ErrorMessages()) == 0 {
				t.Fatal("error exit without errors")
			}
		}
	})
}

func FuzzParseResult(f *testing.F) {
	f.Add([]byte(`{"v1": {"datasource": "DataSourceNoCloud", "errors": []}}`))
	f.Add([]byte(`{"v1": {"datasource": null, "errors": ["a", "b"]}}`))
	seedFiles(f, "result.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		if rf, err := ParseResult(b); err != nil && rf != nil {
			t.Fatal("result with error")
		}
	})
}

func FuzzParseBootFinished(f *testing.F) {
	f.Add([]byte("37.42 - Sat, 29 Nov 2025 21:50:12 +0000 - v. 25.1.4\n"))
	f.Add([]byte("?? - ?? - v. 22.4.2"))
	seedFiles(f, "boot-finished")
	f.Fuzz(func(t *testing.T, b []byte) {
		bf, err := ParseBootFinished(b)
		if err == nil && bf.UptimeKnown && bf.Uptime < 0 {
			t.Fatalf("negative uptime %v", bf.Uptime)
		}
	})
}

// FuzzClassify holds classify to any argument list /proc may give.
func FuzzClassify(f *testing.F) {
	f.Add([]byte("/usr/bin/python3\x00/usr/bin/cloud-init\x00modules\x00--mode=final\x00"))
	f.Add([]byte("/bin/sh\x00/var/lib/cloud/instance/scripts/runcmd\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		args := procfs.ParseCmdline(b)
		_, _ = classify(args, string(b))
	})
}

func FuzzModuleName(f *testing.F) {
	f.Add("Running module write_files (<module 'cloudinit.config.cc_write_files' from 'x'>) failed")
	f.Add("('scripts_user', RuntimeError('Runparts: 1 failures (runcmd) in 1 attempted commands'))")
	f.Fuzz(func(t *testing.T, s string) {
		_ = ModuleName(s)
	})
}
