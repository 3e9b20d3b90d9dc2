package cloudinit

import (
	"reflect"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/parse/cloudinitstatus"
)

func mustStatus(t *testing.T, s string) *cloudinitstatus.StatusFile {
	t.Helper()
	sf, err := cloudinitstatus.ParseStatus([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return sf
}

func unit(name, active, sub, file string) systemd.UnitState {
	return systemd.UnitState{Name: name, LoadState: "loaded", ActiveState: active, SubState: sub, UnitFileState: file}
}

var enabledGen = BootStatus{EnabledByGenerator, "Cloud-init enabled by systemd cloud-init-generator"}

func TestDetectBootStatus(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   BootInputs
		want BootStatusCode
	}{
		{"nothing", BootInputs{}, BootStatusUnknown},
		{"sysvinit wins", BootInputs{Sysvinit: true, MarkerFile: true}, EnabledBySysvinit},
		{"cmdline enabled beats marker", BootInputs{Cmdline: "root=/dev/vda cloud-init=enabled", MarkerFile: true}, EnabledByKernelCmdline},
		{"marker", BootInputs{MarkerFile: true, GeneratorEnabled: true}, DisabledByMarkerFile},
		{"marker beats cmdline disabled", BootInputs{MarkerFile: true, Cmdline: "cloud-init=disabled"}, DisabledByMarkerFile},
		{"cmdline disabled", BootInputs{Cmdline: "quiet cloud-init=disabled", GeneratorEnabled: true}, DisabledByKernelCmdline},
		{"cmdline needs the whole word", BootInputs{Cmdline: "xcloud-init=disabled", GeneratorEnabled: true}, EnabledByGenerator},
		{"environment", BootInputs{Environment: true, GeneratorEnabled: true}, DisabledByEnvironment},
		{"generator disabled", BootInputs{GeneratorDisabled: true, GeneratorEnabled: true}, DisabledByGenerator},
		{"generator enabled", BootInputs{GeneratorEnabled: true}, EnabledByGenerator},
	} {
		if got := DetectBootStatus(tc.in); got.Code != tc.want || got.Reason == "" {
			t.Errorf("%s: %+v, want %s", tc.name, got, tc.want)
		}
	}
	if !environDisablesCloudInit([]byte("PATH=/bin\x00KERNEL_CMDLINE=cloud-init=disabled\x00")) ||
		environDisablesCloudInit([]byte("X=cloud-init=disabled\x00")) {
		t.Error("environDisablesCloudInit")
	}
}

func TestComputeStates(t *testing.T) {
	clock := NewBootClock(time.Unix(1700000100, 0), time.Time{}, 100*time.Second, true)
	done := `{"v1": {"datasource": "DataSourceNoCloud [seed=/dev/vdb]", "stage": null,
	  "init-local": {"errors": [], "start": 4.0, "finished": 5.0},
	  "modules-final": {"errors": [], "start": 25.0, "finished": 30.0}}}`
	errored := `{"v1": {"datasource": "DataSourceNoCloud", "stage": null,
	  "modules-config": {"errors": ["cfg boom"], "start": 19.0, "finished": 20.0},
	  "init": {"errors": ["init boom"], "start": 10.0, "finished": 12.0}}}`
	degraded := `{"v1": {"datasource": "DataSourceNoCloud", "stage": null,
	  "modules-final": {"errors": [], "recoverable_errors": {"WARNING": ["w-final"]}, "start": 25.0, "finished": 30.0},
	  "init": {"errors": [], "recoverable_errors": {"WARNING": ["w-init"], "DEPRECATED": ["d-init"]}, "start": 10.0, "finished": 12.0}}}`
	runningFinal := `{"v1": {"datasource": "DataSourceNoCloud", "stage": "modules-final",
	  "modules-config": {"errors": [], "start": 19.0, "finished": 20.0},
	  "modules-final": {"errors": [], "start": 25.0, "finished": null}}}`
	between := `{"v1": {"datasource": null, "stage": null, "init-local": {"errors": [], "start": 4.0, "finished": 5.0}}}`
	empty := `{"v1": {"datasource": null, "stage": null, "init": {"start": null, "finished": null}}}`

	for _, tc := range []struct {
		name     string
		in       Inputs
		ext      string
		status   string
		exit     int
		detail   string
		errors   []string
		recovery map[string][]string
	}{
		{name: "done", in: Inputs{Boot: enabledGen, Status: mustStatus(t, done), ResultExists: true},
			ext: "done", status: "done", detail: "DataSourceNoCloud [seed=/dev/vdb]"},
		{name: "error done", in: Inputs{Boot: enabledGen, Status: mustStatus(t, errored), ResultExists: true},
			ext: "error - done", status: "error", exit: 1, detail: "DataSourceNoCloud",
			// cloud-init sorts stages by name: init before modules-config.
			errors: []string{"init boom", "cfg boom"}},
		{name: "error running", in: Inputs{Boot: enabledGen, Status: mustStatus(t, errored)},
			ext: "error - running", status: "error", exit: 1, detail: "DataSourceNoCloud", errors: []string{"init boom", "cfg boom"}},
		{name: "degraded done", in: Inputs{Boot: enabledGen, Status: mustStatus(t, degraded), ResultExists: true},
			ext: "degraded done", status: "done", exit: 2, detail: "DataSourceNoCloud",
			recovery: map[string][]string{"DEPRECATED": {"d-init"}, "WARNING": {"w-init", "w-final"}}},
		{name: "degraded running", in: Inputs{Boot: enabledGen, Status: mustStatus(t, degraded)},
			ext: "degraded running", status: "running", exit: 2, detail: "DataSourceNoCloud",
			recovery: map[string][]string{"DEPRECATED": {"d-init"}, "WARNING": {"w-init", "w-final"}}},
		{name: "running final", in: Inputs{Boot: enabledGen, Status: mustStatus(t, runningFinal)},
			ext: "running", status: "running", detail: "DataSourceNoCloud"},
		{name: "running between stages", in: Inputs{Boot: enabledGen, Status: mustStatus(t, between)},
			ext: "running", status: "running", detail: enabledGen.Reason},
		{name: "not started", in: Inputs{Boot: enabledGen},
			ext: "not started", status: "not started", detail: enabledGen.Reason},
		{name: "result but no times", in: Inputs{Boot: enabledGen, Status: mustStatus(t, empty), ResultExists: true},
			ext: "not started", status: "not started", detail: enabledGen.Reason},
		{name: "disabled wins over files", in: Inputs{Boot: BootStatus{DisabledByMarkerFile, "Cloud-init disabled by /etc/cloud/cloud-init.disabled"},
			Status: mustStatus(t, done), ResultExists: true},
			ext: "disabled", status: "disabled", detail: "DataSourceNoCloud [seed=/dev/vdb]"},
		{name: "disabled with errors", in: Inputs{Boot: BootStatus{DisabledByGenerator, "x"}, Status: mustStatus(t, errored), ResultExists: true},
			ext: "error - disabled", status: "error", exit: 1, detail: "DataSourceNoCloud", errors: []string{"init boom", "cfg boom"}},
		{name: "running with failed unit", in: Inputs{Boot: enabledGen, Status: mustStatus(t, runningFinal), Units: []systemd.UnitState{
			unit("cloud-final.service", "failed", "failed", "enabled")}},
			ext: "error - done", status: "error", exit: 1, detail: "Failed due to systemd unit failure", errors: []string{SystemdFailureMessage}},
		{name: "running with masked unit", in: Inputs{Boot: enabledGen, Status: mustStatus(t, runningFinal), Units: []systemd.UnitState{
			unit("cloud-final.service", "active", "exited", "enabled"),
			unit("cloud-config.service", "inactive", "dead", "masked")}},
			ext: "error - done", status: "error", exit: 1, detail: "Failed due to systemd unit failure", errors: []string{SystemdFailureMessage}},
		{name: "running with final still activating", in: Inputs{Boot: enabledGen, Status: mustStatus(t, runningFinal), Units: []systemd.UnitState{
			unit("cloud-final.service", "activating", "start", "enabled"),
			unit("cloud-init-main.service", "failed", "failed", "enabled")}},
			// cloud-init stops at the first unit that is still running.
			ext: "running", status: "running", detail: "DataSourceNoCloud"},
		{name: "missing units are skipped", in: Inputs{Boot: enabledGen, Status: mustStatus(t, runningFinal), Units: []systemd.UnitState{
			unit("cloud-final.service", "active", "exited", "enabled"),
			{Name: "cloud-init-network.service", LoadState: "not-found"},
			unit("cloud-init-main.service", "active", "exited", "")}},
			ext: "running", status: "running", detail: "DataSourceNoCloud"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Clock = clock
			s := Compute(tc.in)
			if s.ExtendedStatus() != tc.ext || s.Status() != tc.status || s.ExitCode() != tc.exit || s.Detail != tc.detail {
				t.Errorf("got %q/%q/%d/%q, want %q/%q/%d/%q", s.ExtendedStatus(), s.Status(), s.ExitCode(), s.Detail,
					tc.ext, tc.status, tc.exit, tc.detail)
			}
			if got := s.ErrorMessages(); len(got)+len(tc.errors) > 0 && !reflect.DeepEqual(got, tc.errors) {
				t.Errorf("errors = %q, want %q", got, tc.errors)
			}
			if got := s.RecoverableByLevel(); len(got)+len(tc.recovery) > 0 && !reflect.DeepEqual(got, tc.recovery) {
				t.Errorf("recoverable = %q, want %q", got, tc.recovery)
			}
		})
	}
}

func TestComputeStageErrorsKeepStage(t *testing.T) {
	s := Compute(Inputs{Boot: enabledGen, ResultExists: true, Status: mustStatus(t, `{"v1": {
	  "modules-final": {"errors": ["f"], "start": 5, "finished": 6, "recoverable_errors": {"WARNING": ["w2"], "CRITICAL": ["c"]}},
	  "init": {"errors": ["i"], "start": 1, "finished": 2, "recoverable_errors": {"WARNING": ["w1"], "DEPRECATED": ["d"]}}}}`)})
	wantRec := []RecoverableError{{"CRITICAL", cloudinitstatus.StageModulesFinal, "c"}, {"DEPRECATED", cloudinitstatus.StageInit, "d"},
		{"WARNING", cloudinitstatus.StageInit, "w1"}, {"WARNING", cloudinitstatus.StageModulesFinal, "w2"}}
	if !reflect.DeepEqual(s.Recoverable, wantRec) {
		t.Errorf("recoverable = %+v", s.Recoverable)
	}
	want := []StageError{{cloudinitstatus.StageInit, "i"}, {cloudinitstatus.StageModulesFinal, "f"}}
	if !reflect.DeepEqual(s.Errors, want) {
		t.Errorf("errors = %+v", s.Errors)
	}
	if !s.StageErrorsBefore(cloudinitstatus.StageModulesFinal) {
		t.Error("init's error is before modules-final")
	}
	s = Compute(Inputs{Boot: enabledGen, Status: mustStatus(t, `{"v1": {"modules-final": {"errors": ["f"], "start": 5}}}`)})
	if s.StageErrorsBefore(cloudinitstatus.StageModulesFinal) {
		t.Error("only modules-final has errors")
	}
}

func TestTimestampEncodings(t *testing.T) {
	boot := time.Date(2025, 11, 29, 21, 0, 0, 0, time.UTC)
	now := boot.Add(5 * time.Minute)
	clock := NewBootClock(now, time.Time{}, 5*time.Minute, true)
	if !clock.BootTime.Equal(boot) {
		t.Fatalf("boot time = %v", clock.BootTime)
	}
	// 24.2+: seconds since boot.
	s := Compute(Inputs{Boot: enabledGen, ResultExists: true, Clock: clock, Status: mustStatus(t,
		`{"v1": {"init-local": {"start": 3.5, "finished": 4.25}, "modules-final": {"start": 60.0, "finished": 72.5}}}`)})
	if s.Encoding != cloudinitstatus.EncodingUptime || !s.LastUpdate.Equal(boot.Add(72500*time.Millisecond)) {
		t.Errorf("uptime encoding: %q %v", s.Encoding, s.LastUpdate)
	}
	if s.Stages[0].Name != cloudinitstatus.StageInitLocal || !s.Stages[0].StartWall.Equal(boot.Add(3500*time.Millisecond)) {
		t.Errorf("stages in boot order with wall times: %+v", s.Stages)
	}
	if s.StatusStale {
		t.Error("fresh uptime status judged stale")
	}
	// Before 24.2: epoch seconds.
	e := float64(boot.Unix()) + 72.5
	s = Compute(Inputs{Boot: enabledGen, ResultExists: true, Clock: clock, Status: &cloudinitstatus.StatusFile{Stages: []cloudinitstatus.StageStatus{
		{Name: cloudinitstatus.StageModulesFinal, Start: cloudinitstatus.Timestamp{Raw: e - 10, Set: true}, Finished: cloudinitstatus.Timestamp{Raw: e, Set: true}}}}})
	if s.Encoding != cloudinitstatus.EncodingEpoch || !s.LastUpdate.Equal(boot.Add(72500*time.Millisecond)) || s.StatusStale {
		t.Errorf("epoch encoding: %q %v stale=%v", s.Encoding, s.LastUpdate, s.StatusStale)
	}
	// Without a boot time an uptime value has no wall time, an epoch one does.
	var unknown BootClock
	if _, ok := unknown.Wall(cloudinitstatus.Timestamp{Raw: 72.5, Set: true}); ok {
		t.Error("uptime timestamp converted without boot time")
	}
	if w, ok := unknown.Wall(cloudinitstatus.Timestamp{Raw: e, Set: true}); !ok || !w.Equal(boot.Add(72500*time.Millisecond)) {
		t.Errorf("epoch without boot time = %v %v", w, ok)
	}
	// btime is preferred; uptime derived from it when /proc/uptime is missing.
	c := NewBootClock(now, boot.Add(-time.Second), 0, false)
	if !c.UptimeKnown || c.Uptime != 5*time.Minute+time.Second {
		t.Errorf("uptime from btime = %+v", c)
	}
}

func TestStaleStatus(t *testing.T) {
	boot := time.Date(2025, 11, 29, 21, 0, 0, 0, time.UTC)
	clock := NewBootClock(boot.Add(time.Minute), time.Time{}, time.Minute, true)
	// Uptime-encoded events later than the current uptime: an earlier,
	// longer boot wrote them (whatever the wall clock did since).
	s := Compute(Inputs{Boot: enabledGen, ResultExists: true, Clock: clock, Status: mustStatus(t,
		`{"v1": {"modules-final": {"start": 300.0, "finished": 310.0}}}`)})
	if !s.StatusStale {
		t.Error("uptime status from a longer earlier boot not judged stale")
	}
	// Epoch events before this boot.
	old := float64(boot.Add(-time.Hour).Unix())
	s = Compute(Inputs{Boot: enabledGen, ResultExists: true, Clock: clock, Status: &cloudinitstatus.StatusFile{Stages: []cloudinitstatus.StageStatus{
		{Name: cloudinitstatus.StageModulesFinal, Start: cloudinitstatus.Timestamp{Raw: old, Set: true}, Finished: cloudinitstatus.Timestamp{Raw: old + 5, Set: true}}}}})
	if !s.StatusStale {
		t.Error("epoch status from before boot not judged stale")
	}
	// Unknown clock: no judgement.
	s = Compute(Inputs{Boot: enabledGen, ResultExists: true, Status: &cloudinitstatus.StatusFile{Stages: []cloudinitstatus.StageStatus{
		{Name: cloudinitstatus.StageModulesFinal, Start: cloudinitstatus.Timestamp{Raw: old, Set: true}}}}})
	if s.StatusStale {
		t.Error("stale without a clock")
	}
}

func TestLeftovers(t *testing.T) {
	boot := time.Date(2025, 11, 29, 21, 0, 0, 0, time.UTC)
	clock := NewBootClock(boot.Add(30*time.Minute), time.Time{}, 30*time.Minute, true)
	bfOld := &FileFacts{Path: BootFinishedPath, ModTime: boot.Add(-24 * time.Hour),
		Content: &cloudinitstatus.BootFinished{Uptime: 40 * time.Second, UptimeKnown: true, Version: "25.1.4"}}
	bfLongUp := &FileFacts{Path: BootFinishedPath, ModTime: boot.Add(time.Minute), // clock stepped: mtime looks fresh
		Content: &cloudinitstatus.BootFinished{Uptime: 2 * time.Hour, UptimeKnown: true}}
	bfFresh := &FileFacts{Path: BootFinishedPath, ModTime: boot.Add(time.Minute),
		Content: &cloudinitstatus.BootFinished{Uptime: time.Minute, UptimeKnown: true}}
	dr := &FileFacts{Path: DataResultPath, ModTime: boot.Add(-24 * time.Hour)}

	s := Compute(Inputs{Boot: enabledGen, Clock: clock, BootFinished: bfOld, DataResult: dr})
	if s.Running != NotStarted || len(s.Leftovers) != 2 {
		t.Errorf("old boot-finished and result: %+v %+v", s.Running, s.Leftovers)
	}
	if s := Compute(Inputs{Boot: enabledGen, Clock: clock, BootFinished: bfLongUp}); len(s.Leftovers) != 1 {
		t.Errorf("boot-finished written at a larger uptime: %+v", s.Leftovers)
	}
	if s := Compute(Inputs{Boot: enabledGen, Clock: clock, BootFinished: bfFresh}); len(s.Leftovers) != 0 {
		t.Errorf("fresh boot-finished: %+v", s.Leftovers)
	}
	// When status.json describes this boot, leftovers are not looked for.
	st := mustStatus(t, `{"v1": {"modules-final": {"start": 60.0, "finished": 70.0}}}`)
	if s := Compute(Inputs{Boot: enabledGen, Clock: clock, Status: st, ResultExists: true, BootFinished: bfOld}); len(s.Leftovers) != 0 {
		t.Errorf("leftovers with a fresh status: %+v", s.Leftovers)
	}
}
