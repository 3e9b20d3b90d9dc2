package qemuguestagent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// TestChannelMissingByPlatform: a missing channel fails only on a QEMU/KVM
// guest; on another hypervisor (here Firecracker-like: hypervisor flag, no
// DMI) and on bare metal the whole check is a skip, even with the agent
// installed, since no channel can ever appear there.
func TestChannelMissingByPlatform(t *testing.T) {
	const vmFlags = "processor\t: 0\nflags\t\t: fpu vme hypervisor lahf_lm\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  runner.Status
		code  string
		says  string
	}{
		{"kubevirt", map[string]string{"/sys/class/dmi/id/sys_vendor": "KubeVirt\n", "/proc/cpuinfo": vmFlags},
			runner.Fail, CodeChannelMissing.ID, "no org.qemu.guest_agent.0"},
		{"libvirt", map[string]string{"/sys/class/dmi/id/sys_vendor": "QEMU\n"},
			runner.Fail, CodeChannelMissing.ID, "no org.qemu.guest_agent.0"},
		{"other hypervisor", map[string]string{"/proc/cpuinfo": vmFlags, "/usr/sbin/qemu-ga": "ELF"},
			runner.Skip, CodeNotVM.ID, "does not run on QEMU/KVM"},
		{"bare metal", map[string]string{"/proc/cpuinfo": "processor\t: 0\nflags\t\t: fpu vme\n"},
			runner.Skip, CodeNotVM.ID, "does not look like a virtual machine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for p, data := range tc.files {
				full := filepath.Join(dir, p)
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(full, []byte(data), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			root, err := fs.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			env := &runner.Env{Root: root, Live: true, Systemd: active(), Now: time.Now}
			out := Run(context.Background(), env)
			f, ok := index(out)[tc.code]
			if !ok || f.Status != tc.want || !strings.Contains(f.Message, tc.says) || f.Detail["platform"] == "" {
				t.Fatalf("findings %+v, want %s %s saying %q with the platform in detail", out, tc.code, tc.want, tc.says)
			}
			if tc.want == runner.Skip {
				for _, g := range out {
					if g.Status != runner.Skip {
						t.Errorf("%s: %s %s, want only skips where no channel can exist", tc.name, g.Code, g.Status)
					}
				}
			}
		})
	}
}
