package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/checks"
	"github.com/guestcheck/guestcheck/internal/host/fleet"
	"github.com/guestcheck/guestcheck/internal/shared/report"
)

// TestFleetLibvirtFlag: --libvirt takes the local system URIs only (a
// usage error otherwise), and a libvirtd that is not there is a source
// error in the report, not a crash or a hang.
func TestFleetLibvirtFlag(t *testing.T) {
	t.Parallel()
	for _, uri := range []string{"qemu+ssh://host/system", "qemu:///session", "qemu:///system?mode=direct"} {
		var out, errb bytes.Buffer
		code := run([]string{"fleet", "--libvirt", uri}, &out, &errb, checks.All)
		if code != report.ExitUsage || !strings.Contains(errb.String(), "--libvirt") || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("--libvirt %s: exit %d, stderr %q, want 3 and one line naming --libvirt", uri, code, errb.String())
		}
	}
	sock := filepath.Join(socketDir(t), "libvirt-sock")
	var out, errb bytes.Buffer
	code := run([]string{"fleet", "--libvirt", "qemu+unix:///system?socket=" + sock, "--format", "json"}, &out, &errb, checks.All)
	var r fleet.Result
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("exit %d, stderr %q: %v", code, errb.String(), err)
	}
	if code != report.ExitProblem || len(r.SourceErrors) != 1 || r.SourceErrors[0].Source != "libvirt" ||
		!strings.Contains(r.SourceErrors[0].Error, "libvirt is not running here: no socket "+sock) || r.Status != fleet.Unknown {
		t.Errorf("no libvirtd: exit %d, source errors %+v", code, r.SourceErrors)
	}
}
