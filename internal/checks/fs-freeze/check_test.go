package fsfreeze

import (
	"reflect"
	"testing"

	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// TestFreezeTestFor: the request goes to the run only when the fs-freeze
// check is part of it, and carries the paths it must never freeze.
func TestFreezeTestFor(t *testing.T) {
	t.Parallel()
	other := runner.Check{ID: "hostname"}
	protect := []string{"/run/guestcheck/report.json"}
	ft, err := FreezeTestFor([]runner.Check{other, Check}, "/data", protect)
	want := &runner.FreezeTest{Mountpoint: "/data", Protect: protect}
	if err != nil || !reflect.DeepEqual(ft, want) {
		t.Errorf("FreezeTestFor = %+v, %v; want %+v", ft, err, want)
	}
	ft, err = FreezeTestFor([]runner.Check{other}, "/data", nil)
	if ft != nil || err == nil || err.Error() != "--freeze-test needs the fs-freeze check, which --only, --skip or the config left out" {
		t.Errorf("without fs-freeze: FreezeTestFor = %+v, %v", ft, err)
	}
}
