package cloudinit

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/parse/cloudinitstatus"
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

// FuzzComputeStatus holds Compute to whatever status.json the parser
// accepts (the parser's own targets are in internal/parse/cloudinitstatus).
func FuzzComputeStatus(f *testing.F) {
	f.Add([]byte(`{"v1": {"init": {"errors": [], "start": 10.25, "finished": 12.5}, "stage": null}}`))
	f.Add([]byte(`{"v1": {"modules-final": {"errors": ["x"], "start": 1700000025, "finished": null}, "stage": "modules-final"}}`))
	f.Add([]byte(`{"v1": {"init": {"recoverable_errors": {"WARNING": ["x"]}, "start": 1e300}}}`))
	seedFiles(f, "status.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		sf, err := cloudinitstatus.ParseStatus(b)
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
