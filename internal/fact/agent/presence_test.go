package agent

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/store"
)

func fakeRoot(t *testing.T) *fs.Root {
	t.Helper()
	dir := t.TempDir()
	for p, c := range map[string]string{
		"usr/bin/qemu-ga":                      "",
		"sys/class/virtio-ports/vport2p1/name": PortName + "\n",
		"proc/40/stat":                         "40 (qemu-ga) S 1 40 40 0\n",
		"proc/40/cmdline":                      "/usr/bin/qemu-ga\x00-m\x00virtio-serial\x00",
		"proc/40/environ":                      "FSFREEZE_HOOK_ENABLED=1\x00",
		"proc/41/comm":                         "sshd\n",
		"sys/class/dmi/id/sys_vendor":          "QEMU\n",
		"sys/module/virtio_console/initstate":  "live\n",
	} {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestRead: the agent's processes come from the process table, with
// their arguments and environment.
func TestRead(t *testing.T) {
	p := Read(fakeRoot(t), true)
	if p.Binary != "/usr/bin/qemu-ga" || p.Port != "vport2p1" || !p.QEMU || !p.VirtioConsole {
		t.Errorf("Read = %+v", p)
	}
	if len(p.Procs) != 1 || p.Procs[0].PID != 40 || len(p.Procs[0].Argv) != 3 || p.Procs[0].Env["FSFREEZE_HOOK_ENABLED"] != "1" {
		t.Errorf("Procs = %+v", p.Procs)
	}
	if img := Read(fakeRoot(t), false); img.Live || len(img.Procs) != 0 || img.Port != "" {
		t.Errorf("under an image root Read = %+v", img)
	}
}

// TestDetectOncePerRun: qemu-guest-agent and fs-freeze, concurrently,
// get the one Presence of their run; live and image readings are kept
// apart, and without a store each call reads.
func TestDetectOncePerRun(t *testing.T) {
	r := fakeRoot(t)
	s := store.New()
	got := make([]*Presence, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = Detect(s, r, true)
		}()
	}
	wg.Wait()
	for _, p := range got {
		if p != got[0] {
			t.Fatal("two checks of one run got two readings")
		}
	}
	if img := Detect(s, r, false); img == got[0] || img.Live {
		t.Error("an image reading passed for the live one")
	}
	if Detect(store.New(), r, true) == got[0] {
		t.Error("two runs share one reading")
	}
	if a, b := Detect(nil, r, true), Detect(nil, r, true); a == b {
		t.Error("without a store two calls share one reading")
	}
}
