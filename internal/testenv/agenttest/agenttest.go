// Package agenttest is what the qemu-guest-agent and fs-freeze checks'
// tests share: a KubeVirt guest with qemu-ga ready, as files under a
// root, and the Presence a healthy agent has.
package agenttest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/agent"
	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Ready are the files of a KubeVirt guest with qemu-ga installed and its
// channel present; Env adds them unless the test overrides one (an empty
// value deletes it).
var Ready = map[string]string{
	"/sys/class/dmi/id/sys_vendor":          "KubeVirt\n",
	"/usr/sbin/qemu-ga":                     "ELF QEMU Guest Agent 7.2.22",
	"/sys/class/virtio-ports/vport2p1/name": "org.qemu.guest_agent.0\n",
	"/sys/class/virtio-ports/vport1p1/name": "org.qemu.console.0\n",
	"/sys/module/virtio_console/initstate":  "live\n",
}

// Env is a live Env over a root holding Ready, files and mountinfo as
// /proc/self/mountinfo.
func Env(t *testing.T, mountinfo string, files map[string]string) *runner.Env {
	t.Helper()
	dir := t.TempDir()
	files["/proc/self/mountinfo"] = mountinfo
	for p, c := range Ready {
		if _, ok := files[p]; !ok {
			files[p] = c
		}
	}
	for p, c := range files {
		if c == "" {
			continue
		}
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return &runner.Env{Root: root, Live: true, Now: time.Now}
}

// Healthy is the presence of a running agent holding its channel open.
func Healthy() *agent.Presence {
	return &agent.Presence{Live: true, Binary: "/usr/sbin/qemu-ga", Port: "vport2p1", Link: "../vport2p1",
		Ports: []string{"vport2p1=" + agent.PortName}, QEMU: true, VM: true, Platform: "the guest-agent port exists", VirtioConsole: true,
		Procs: []agent.Proc{{PID: 55, Argv: []string{"/usr/sbin/qemu-ga"}, Env: map[string]string{}, FDs: []string{"/dev/vport2p1"}}}}
}

// Index is findings by code, the first of each.
func Index(fs []runner.Finding) map[string]runner.Finding {
	m := map[string]runner.Finding{}
	for _, f := range fs {
		if _, ok := m[f.Code]; !ok {
			m[f.Code] = f
		}
	}
	return m
}
