package qemuguestagent

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/parse/ini"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

func TestParseUnitDependencies(t *testing.T) {
	var u Unit
	applyUnit(&u, []byte(`[Unit]
Description=QEMU Guest Agent
BindsTo=dev-virtio\x2dports-org.qemu.guest_agent.0.device
After=dev-virtio\x2dports-org.qemu.guest_agent.0.device  network.target
Requires=a.service b.device
Requisite=c.device
After=c.device

[Service]
ExecStart=-/usr/sbin/qemu-ga

[Install]
WantedBy=dev-virtio\x2dports-org.qemu.guest_agent.0.device
`))
	dev := `dev-virtio\x2dports-org.qemu.guest_agent.0.device`
	if !slices.Equal(u.BindsTo, []string{dev}) || !slices.Equal(u.After, []string{dev, "network.target", "c.device"}) ||
		!slices.Equal(u.Requires, []string{"a.service", "b.device"}) || !slices.Equal(u.WantedBy, []string{dev}) || u.ExecStart != "-/usr/sbin/qemu-ga" {
		t.Fatalf("parsed %+v", u)
	}
	// b.device is required but not ordered: both start at once, so the
	// unit does not wait for it.
	if got := u.WaitsFor(); !slices.Equal(got, []string{dev, "c.device"}) {
		t.Errorf("WaitsFor = %v", got)
	}
	// A drop-in resets with empty assignments; BindTo= is the old spelling.
	applyUnit(&u, []byte("[Unit]\nBindsTo=\nRequisite=\nAfter=\nBindTo=x.device\n"))
	if got := u.WaitsFor(); !slices.Equal(got, []string{"x.device"}) {
		t.Errorf("after the drop-in WaitsFor = %v", got)
	}
	// Keys of other sections never leak into [Unit].
	var v Unit
	applyUnit(&v, []byte("[Service]\nBindsTo=y.device\n[Install]\nAfter=z.device\n"))
	if len(v.WaitsFor()) != 0 || len(v.After) != 0 {
		t.Errorf("other sections parsed as [Unit]: %+v", v)
	}
}

func TestDevicePath(t *testing.T) {
	for in, want := range map[string]string{
		`dev-virtio\x2dports-org.qemu.guest_agent.0.device`: DefaultVirtioPath,
		`dev-vport2p1.device`:                               "/dev/vport2p1",
		`-.device`:                                          "/",
		`dev-disk-by\x2dlabel-caf\xc3\xa9.device`:           "/dev/disk/by-label/café",
		`sys-subsystem-net-devices-eth0.device`:             "/sys/subsystem/net/devices/eth0",
	} {
		if got, ok := DevicePath(in); !ok || got != want {
			t.Errorf("DevicePath(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{`dev-vport2p1.service`, `.device`, `dev--x.device`, `-dev.device`, `dev-.device`,
		`dev\x2.device`, `dev\X2d.device`, `dev-..-x.device`, `dev-.-x.device`, `a\x2f.device`, `a\x00b.device`} {
		if got, ok := DevicePath(in); ok {
			t.Errorf("DevicePath(%q) = %q, want a refusal", in, got)
		}
	}
}

// TestDevicePathMatchesSystemdEscape feeds systemd-escape --unescape --path
// and DevicePath the same names, hand-made and generated, and requires the
// same path or the same refusal.
func TestDevicePathMatchesSystemdEscape(t *testing.T) {
	bin := testenv.Tool(t, "systemd-escape", "systemd")
	names := []string{`dev-virtio\x2dports-org.qemu.guest_agent.0`, `-`, `a--b`, `-a`, `a-`, `a\x2`, `a\x2fb`, `a\x2f\x2fb`,
		`a\xc3\xa9`, `a\xff`, `a-..-b`, `a-.-b`, `.a`, `a.-b`, `a\x2D`, `a\X2d`, `\x2e\x2e`, `a-\x2e`, strings.Repeat("x", 256), strings.Repeat("x", 255)}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "Z", "0", ".", "-", "_", ":", "@", `\x2d`, `\x2f`, `\x2e`, `\xc3`, `\x`, `\`, `\x4`, `\xG1`, "é", " ", "/", "\t"}
	for len(names) < 400 {
		var b strings.Builder
		for n := 1 + rng.IntN(8); n > 0; n-- {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		names = append(names, b.String())
	}
	for _, n := range names {
		cmd := exec.Command(bin, "--unescape", "--path", "--", n)
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		err := cmd.Run()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatal(err)
		}
		want, wantOK := strings.TrimSuffix(stdout.String(), "\n"), err == nil
		got, ok := DevicePath(n + ".device")
		if ok != wantOK || (ok && got != want) {
			t.Errorf("%q: systemd-escape gives %q (ok %v), DevicePath %q (ok %v)", n, want, wantOK, got, ok)
		}
	}
}

// TestPackageUnitWaitsForChannel reads the unit the installed
// qemu-guest-agent package ships and requires it to wait for the channel's
// device, as the fixture roots assume.
func TestPackageUnitWaitsForChannel(t *testing.T) {
	testenv.Tool(t, "qemu-ga", "qemu-guest-agent")
	var b []byte
	var err error
	for _, d := range unitDirs[2:] {
		if b, err = os.ReadFile(d + "/" + UnitName); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("the qemu-guest-agent package ships no %s: %v", UnitName, err)
	}
	var u Unit
	applyUnit(&u, b)
	var paths []string
	for _, n := range u.WaitsFor() {
		if p, ok := DevicePath(n); ok {
			paths = append(paths, p)
		}
	}
	if !slices.Contains(paths, DefaultVirtioPath) {
		t.Errorf("the package's unit waits for %v (WaitsFor %v), not %s:\n%s", paths, u.WaitsFor(), DefaultVirtioPath, b)
	}
	fixture, err := os.ReadFile("testdata/roots/debian/lib/systemd/system/" + UnitName)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fixture, b) {
		t.Errorf("testdata/roots/debian's %s differs from the installed package's: copy the package's file there\n%s", UnitName, b)
	}
}

func FuzzUnitApply(f *testing.F) {
	f.Add([]byte("[Unit]\nBindsTo=dev-virtio\\x2dports-org.qemu.guest_agent.0.device\nAfter=\\\n x.device\n[Service]\nExecStart=/x\n[Install]\nWantedBy=a.device\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var u Unit
		applyUnit(&u, b)
		for _, n := range u.WaitsFor() {
			if n == "" || strings.ContainsAny(n, " \t\n") {
				t.Fatalf("dependency %q is not one word", n)
			}
			DevicePath(n)
		}
	})
}

func FuzzDevicePath(f *testing.F) {
	f.Add(`dev-virtio\x2dports-org.qemu.guest_agent.0.device`)
	f.Add(`-.device`)
	f.Fuzz(func(t *testing.T, n string) {
		p, ok := DevicePath(n)
		if !ok {
			return
		}
		if !strings.HasPrefix(p, "/") || strings.Contains(p, "//") || strings.ContainsRune(p, 0) || (p != "/" && strings.HasSuffix(p, "/")) {
			t.Fatalf("DevicePath(%q) = %q, not a normalised absolute path", n, p)
		}
	})
}

// applyUnit parses b as systemd does and layers it over u.
func applyUnit(u *Unit, b []byte) {
	f, _ := ini.Parse("u.service", b, ini.Systemd)
	u.Apply(f)
}

// TestEnvironmentFileAsSystemdReadsIt: EnvironmentFile= is not sourced by
// a shell, so "export" sets nothing and '#' after a value is part of it.
func TestEnvironmentFileAsSystemdReadsIt(t *testing.T) {
	dir := t.TempDir()
	for p, c := range map[string]string{
		"/usr/lib/systemd/system/" + UnitName: "[Service]\nEnvironmentFile=/etc/sysconfig/qemu-ga\nExecStart=/usr/bin/qemu-ga $FILTER_RPC_ARGS\n",
		"/etc/sysconfig/qemu-ga":              "export FILTER_RPC_ARGS=--block-rpcs=guest-exec\nFSFREEZE_HOOK_PATHNAME=/h # the hook\n",
	} {
		if err := os.MkdirAll(filepath.Dir(dir+p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dir+p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	ui := readUnit(root)
	if ui == nil {
		t.Fatal("unit not found")
	}
	if v, ok := ui.env["FILTER_RPC_ARGS"]; ok {
		t.Errorf("export line set FILTER_RPC_ARGS=%q; systemd ignores it", v)
	}
	if v := ui.env["FSFREEZE_HOOK_PATHNAME"]; v != "/h # the hook" {
		t.Errorf("FSFREEZE_HOOK_PATHNAME = %q, want the whole rest of the line", v)
	}
}
