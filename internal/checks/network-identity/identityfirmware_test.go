package networkidentity

import (
	"context"
	"fmt"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/fact/identity/appid"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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
		// machine-id(5): the ID (and the UUID it equals) stays out of
		// the report; its hash is there, as the report's identity has it.
		for _, f := range fs {
			for k, v := range f.Detail {
				if flat := strings.ToLower(strings.ReplaceAll(v, "-", "")); strings.Contains(flat, tc.mid) || strings.Contains(flat, "4c4c4544004235108056b4c04f4d3232") {
					t.Errorf("%s: detail %s=%q carries the machine-id", tc.name, k, v)
				}
			}
			if want, _ := appid.MachineIDHash(tc.mid); f.Detail["machine_id_hash"] != want {
				t.Errorf("%s: machine_id_hash %q, want %q", tc.name, f.Detail["machine_id_hash"], want)
			}
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

// TestJudgeCloneUUIDInstanceID: KubeVirt's NoCloud instance-id is the
// firmware UUID, which systemd on KVM makes the machine-id; the clone
// judgement shows it only as its hash, in messages and detail alike.
func TestJudgeCloneUUIDInstanceID(t *testing.T) {
	t.Parallel()
	boot := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	stat := "cpu  1 2 3\nbtime " + strconv.FormatInt(boot.Unix(), 10) + "\nprocesses 10\n"
	const iid, prev = "4C4C4544-0042-3510-8056-B4C04F4D3232", "5d1e0f3a-9b2c-4d7e-8f10-2a3b4c5d6e7f"
	root := cloneRoot(t, boot.Add(-2*time.Hour), iid, prev, boot.Add(20*time.Second),
		map[string]time.Time{iid: boot.Add(30 * time.Second), prev: boot.Add(-time.Hour)}, stat)
	fs := JudgeClone(identity.ReadCloneEvidenceTimes(root, true, mtimeOnly))
	if len(fs) != 1 || fs[0].Code != CodeIDCloneKeptMachineID.ID {
		t.Fatalf("got %+v, want the clone failure", fs)
	}
	want, _ := appid.UUIDHash(iid)
	if fs[0].Detail["instance_id_hash"] != want || fs[0].Detail["instance_id"] != "" || fs[0].Detail["previous_instance_id_hash"] == "" {
		t.Errorf("detail %+v, want instance_id_hash %s and no raw instance-id", fs[0].Detail, want)
	}
	if !strings.Contains(fs[0].Message, "instance hash "+want[:8]+"...") {
		t.Errorf("message %q does not name the instance by its hash", fs[0].Message)
	}
	for _, raw := range []string{"4c4c4544", "5d1e0f3a"} {
		all := strings.ToLower(fs[0].Message + fmt.Sprint(fs[0].Detail))
		if strings.Contains(all, raw) {
			t.Errorf("finding carries the raw instance-id %s: %+v", raw, fs[0])
		}
	}
	// A UUID instance-id hashes as the machine-id systemd made from it.
	if mh, _ := appid.MachineIDHash("4c4c4544004235108056b4c04f4d3232"); mh != want {
		t.Errorf("UUIDHash %s, MachineIDHash %s: want one hash", want, mh)
	}
	if ShowInstanceID("i-0123abcd") != "i-0123abcd" || appid.UUIDShaped("4c4c4544-0042-3510-8056") {
		t.Error("a plain instance-id must show as it is; a part of a UUID is no UUID")
	}
}
