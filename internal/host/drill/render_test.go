package drill

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/host/fleet"
)

// sample is a drill of three VMs: a pass, a hook past the deadline and a
// freeze blocked by the agent's filter, with a name no VM has.
func sample() Result {
	fs := []FS{{Mountpoint: "/", Type: "ext4", Name: "vda"}, {Mountpoint: "/data", Type: "ext4", Name: "vdb"}}
	hook := Hook{State: HookRan, Log: DefaultHookLog, Scripts: []HookScript{{"/etc/qemu/fsfreeze-hook.d/db", "freeze", "ok"}, {"/etc/qemu/fsfreeze-hook.d/db", "thaw", "ok"}}}
	return Result{SchemaVersion: 1, Tool: "guestcheck freeze-drill", Version: "1.0.0", Host: "hv1", StartedAt: time.Unix(1765123200, 0).UTC(),
		DurationMS: 9000, DeadlineMS: 1000, Status: Fail,
		SourceErrors: []fleet.SourceError{{Source: "db2", Error: "no running VM of that name: not drilled"}},
		VMs: []VM{
			{Name: "web1", Source: "socket", Status: Pass, Reason: "froze 2 filesystem(s) in 41ms (deadline 1s), frozen 12ms, thawed in 9ms; the fsfreeze hook ran /etc/qemu/fsfreeze-hook.d/db (ok)",
				AgentVersion: "7.2.0", Froze: true, FrozenCount: 2, ThawedCount: 2, StatusFrozen: "frozen", ThawedBy: "drill", FreezeMS: 41, FrozenMS: 12, ThawMS: 9,
				FSBefore: fs, FSAfter: fs, Hook: hook, Prediction: Prediction{State: Agree, Predicted: []string{"/data", "/"}}, DurationMS: 2100},
			{Name: "db1", Source: "libvirt", Status: Fail, Reason: "freezing took 3.2s, past the 1s deadline; the fsfreeze hook ran /etc/qemu/fsfreeze-hook.d/db (ok); thawed by the drill",
				Fix: "Make the freeze faster.", AgentVersion: "7.2.0", Froze: true, FrozenCount: 2, ThawedCount: 2, StatusFrozen: "frozen", ThawedBy: "drill",
				FreezeMS: 3200, FrozenMS: 15, ThawMS: 8, FSBefore: fs, FSAfter: fs, Hook: hook,
				Prediction: Prediction{State: NotCompared, Why: "guest-exec is disabled by the agent's RPC filter (the RHEL family's default), so guestcheck in the guest cannot be asked"}, DurationMS: 5000},
			{Name: "rhel1", Source: "proxmox", Status: Unknown, Reason: "the agent's RPC filter blocks guest-fsfreeze-freeze: this VM's snapshots are never quiesced, and the drill cannot run",
				Fix: "In the guest, add them to --allow-rpcs.", AgentVersion: "8.2.0", FSBefore: []FS{}, FSAfter: []FS{},
				Hook: Hook{State: HookUnknown, Why: "the drill did not get that far"}, Prediction: Prediction{State: NotCompared, Why: "the drill did not get that far"}, DurationMS: 300},
		}}
}

// TestRender holds each format of sample to testdata/sample.* (-update
// rewrites them).
func TestRender(t *testing.T) {
	for _, f := range Formats {
		var b bytes.Buffer
		if err := Render(&b, sample(), f); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		p := filepath.Join("testdata", "sample."+f)
		if *update {
			os.MkdirAll("testdata", 0o755)
			if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b.Bytes(), want) {
			t.Errorf("%s differs from %s (go test -run TestRender -update rewrites it):\n%s", f, p, b.String())
		}
	}
}

// TestRenderRefusesWhatBreaksTheSchema: a fail without a fix is not
// written.
func TestRenderRefusesWhatBreaksTheSchema(t *testing.T) {
	r := sample()
	r.VMs[1].Fix = ""
	if err := Render(&bytes.Buffer{}, r, FormatJSON); err == nil {
		t.Error("a failing VM without a fix was rendered")
	}
	r = sample()
	r.VMs[0].Hook.State = "maybe"
	if err := Render(&bytes.Buffer{}, r, FormatText); err == nil {
		t.Error("a hook state outside the enum was rendered")
	}
}
