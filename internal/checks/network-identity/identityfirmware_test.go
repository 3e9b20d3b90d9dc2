package networkidentity

import (
	"context"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"os"
	"path/filepath"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

func TestJudgeFirmwareMachineID(t *testing.T) {
	t.Parallel()
	const uuid = "4C4C4544-0042-3510-8056-B4C04F4D3232"
	for _, tc := range []struct {
		name, mid, uuid string
		warn            bool
	}{
		{"equal", "4c4c4544004235108056b4c04f4d3232", uuid, true},
		{"byte-swapped fields", "44454c4c420010358056b4c04f4d3232", uuid, true},
		{"different", "0f3e4a1b2c3d4e5f60718293a4b5c6d7", uuid, false},
		{"uuid unknown", "4c4c4544004235108056b4c04f4d3232", "", false},
		{"uuid not set", "00000000000000000000000000000000", "00000000-0000-0000-0000-000000000000", false},
		{"machine-id unset", "", uuid, false},
		{"uuid garbage", "4c4c4544004235108056b4c04f4d3232", "Not Settable", false},
	} {
		fs := JudgeFirmwareMachineID(tc.mid, tc.uuid)
		if len(fs) > 0 {
			assertConventions(t, fs, Codes)
		}
		if got := len(fs) == 1 && fs[0].Status == runner.Warn && fs[0].Code == CodeIDMachineIDFromFirmware.ID && fs[0].Remediation != ""; got != tc.warn || (!tc.warn && len(fs) != 0) {
			t.Errorf("%s: findings %+v, want warn=%v", tc.name, fs, tc.warn)
		}
	}
}

// TestIdentityFirmwareUUID runs the whole check on a fake live root whose
// machine-id is the product UUID, and on an image root, where the UUID of
// the machine running guestcheck says nothing about the image.
func TestIdentityFirmwareUUID(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for p, c := range map[string]string{
		"etc/machine-id":                "4c4c4544004235108056b4c04f4d3232\n",
		"sys/class/dmi/id/product_uuid": "4c4c4544-0042-3510-8056-b4c04f4d3232\n",
	} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	ev := identity.ReadCloneEvidence(root, true)
	if fs := JudgeFirmwareMachineID(ev.MachineID, ReadProductUUID(root, true)); len(fs) != 1 {
		t.Errorf("live: %+v, want the firmware warning", fs)
	}
	for _, f := range RunIdentity(context.Background(), &runner.Env{Root: root}) {
		if f.Code == CodeIDMachineIDFromFirmware.ID {
			t.Errorf("image root: %+v; the product UUID is the host's, not the image's", f)
		}
	}
}
