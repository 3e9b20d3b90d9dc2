package identity

import (
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

func TestStripMachineIDParams(t *testing.T) {
	const id = "23088bf0c2b64a7e9c8d3f1a2b4c5d6e"
	tests := []struct{ in, want string }{
		{"root=/dev/vda1 ro systemd.machine_id=" + id + " quiet\n", "root=/dev/vda1 ro quiet\n"},
		{"systemd.machine_id=" + id + " quiet", "quiet"},
		{"quiet systemd.machine_id=" + id, "quiet"},
		{"systemd.machine_id=firmware", ""},
		{`GRUB_CMDLINE_LINUX="systemd.machine_id=` + id + `"`, `GRUB_CMDLINE_LINUX=""`},
		{`GRUB_CMDLINE_LINUX="console=ttyS0 systemd.machine_id=` + id + ` net.ifnames=0"`, `GRUB_CMDLINE_LINUX="console=ttyS0 net.ifnames=0"`},
		{`GRUB_CMDLINE_LINUX_DEFAULT='quiet systemd.machine_id=` + id + `'`, `GRUB_CMDLINE_LINUX_DEFAULT='quiet'`},
		{`a systemd.machine_id="` + id + `" b`, "a b"},
		{"a systemd.set_credential=system.machine_id:" + id + " b", "a b"},
		{"a systemd.set_credential_binary=system.machine_id:I2Jh b", "a b"},
		{"a systemd.set_credential=other:x b", "a systemd.set_credential=other:x b"},
		{"a systemd.machine_id=1 systemd.machine_id=2 b", "a b"},
		// Not the parameter: part of another word.
		{"xsystemd.machine_id=1 b", "xsystemd.machine_id=1 b"},
		{"systemd.machine_idx=1", "systemd.machine_idx=1"},
		{"no params here", "no params here"},
	}
	for _, tc := range tests {
		got, n := StripMachineIDParams(tc.in)
		if got != tc.want {
			t.Errorf("strip(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if (n > 0) != (tc.in != tc.want) {
			t.Errorf("strip(%q) counted %d", tc.in, n)
		}
	}
}

func FuzzStripMachineIDParams(f *testing.F) {
	f.Add("root=/dev/vda1 systemd.machine_id=abc quiet")
	f.Add(`GRUB_CMDLINE_LINUX="systemd.machine_id=\"x y\""`)
	f.Add("systemd.set_credential=system.machine_id:")
	f.Fuzz(func(t *testing.T, s string) {
		got, n := StripMachineIDParams(s)
		if len(got) > len(s) {
			t.Fatalf("grew: %q -> %q", s, got)
		}
		again, m := StripMachineIDParams(got)
		if m != 0 && n == 0 {
			t.Fatalf("found nothing, then %d in its own output %q", m, got)
		}
		_ = again
		if n == 0 && got != s {
			t.Fatalf("changed %q without a match", s)
		}
	})
}

func TestReadMachineIDLeaks(t *testing.T) {
	dir := testenv.WriteTree(t, map[string]string{
		"/etc/credstore/system.machine_id": "0123456789abcdef0123456789abcdef",
		KernelCmdlinePath:                  "root=/dev/vda1 rw systemd.machine_id=0123456789abcdef0123456789abcdef\n",
		BLSEntriesDirs[0] + "/a.conf":      "title a\noptions root=/dev/vda1 rw\n",
	})
	for name, r := range readers(t, dir) {
		got := ReadMachineIDLeaks(r)
		if len(got) != 2 || got[0] != "/etc/credstore/system.machine_id (a system.machine_id credential)" ||
			got[1] != KernelCmdlinePath+" (systemd.machine_id= on the kernel command line)" {
			t.Errorf("%s: %q", name, got)
		}
	}
	for name, r := range readers(t, testenv.WriteTree(t, map[string]string{KernelCmdlinePath: "root=/dev/vda1 rw\n"})) {
		if got := ReadMachineIDLeaks(r); len(got) != 0 {
			t.Errorf("%s: %q", name, got)
		}
	}
}
