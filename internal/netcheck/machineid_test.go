package netcheck

import (
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

// machineIDContents are hand-made /etc/machine-id contents at the edges of
// systemd's reader, and generated ones around them.
func machineIDContents() []string {
	id := "0123456789abcdef0123456789abcdef"
	cs := []string{"", "\n", "uninitialized", "uninitialized\n", "uninitialized\n\n", "UNINITIALIZED\n",
		id, id + "\n", id + "\n\n", id + "\r\n", " " + id + "\n", id + " \n", strings.ToUpper(id) + "\n",
		strings.Repeat("0", 32) + "\n", strings.Repeat("0", 32), id[:31] + "\n", id + "0\n", id[:31] + "g\n",
		"01234567-89ab-cdef-0123-456789abcdef\n", "garbage\n", id + "\nextra\n"}
	rnd := rand.New(rand.NewSource(5))
	const hexd = "0123456789abcdefABCDEF"
	for i := 0; i < 40; i++ {
		n := 30 + rnd.Intn(5)
		b := make([]byte, n)
		for j := range b {
			b[j] = hexd[rnd.Intn(len(hexd))]
		}
		s := string(b)
		switch rnd.Intn(4) {
		case 0:
			s += "\n"
		case 1:
			s += "\n\n"
		case 2:
			b[rnd.Intn(n)] = " x-\t"[rnd.Intn(4)]
			s = string(b) + "\n"
		}
		cs = append(cs, s)
	}
	return cs
}

// TestClassifyMachineIDAgainstSystemd feeds systemd-machine-id-setup --root
// and ClassifyMachineID the same contents: where guestcheck says systemd
// keeps the ID (valid or all zero), systemd must print it back; where it
// says systemd generates one (empty, uninitialized, anything else), systemd
// must report a generated ID.
func TestClassifyMachineIDAgainstSystemd(t *testing.T) {
	tool := testenv.Tool(t, "systemd-machine-id-setup", "systemd")
	for _, c := range machineIDContents() {
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "etc/machine-id"), []byte(c), 0o444); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(tool, "--root", root, "--print").CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", c, err, out)
		}
		generated := strings.Contains(string(out), "Initializing machine ID")
		printed := strings.TrimSpace(string(out)[strings.LastIndexByte(strings.TrimSpace(string(out)), '\n')+1:])
		k := ClassifyMachineID([]byte(c))
		keeps := k == MachineIDValid || k == MachineIDNull
		if keeps == generated {
			t.Errorf("%q: guestcheck says %s, systemd-machine-id-setup said %q", c, k, out)
		}
		if keeps && printed != strings.ToLower(strings.TrimSuffix(c, "\n")) {
			t.Errorf("%q: systemd kept %q", c, printed)
		}
	}
}

// TestDBusMachineIDAgainstSystemd checks the D-Bus fallback against
// systemd: with /etc/machine-id empty, a regular /var/lib/dbus/machine-id
// holding an ID is what systemd takes; a symlink, or a file without a
// valid ID, is not.
func TestDBusMachineIDAgainstSystemd(t *testing.T) {
	tool := testenv.Tool(t, "systemd-machine-id-setup", "systemd")
	dbusID := "fedcba9876543210fedcba9876543210"
	tests := []struct {
		name  string
		setup func(t *testing.T, root string)
	}{
		{"regular file", func(t *testing.T, root string) { writeHost(t, root, DBusMachineIDPath, dbusID+"\n") }},
		{"upper case", func(t *testing.T, root string) { writeHost(t, root, DBusMachineIDPath, strings.ToUpper(dbusID)+"\n") }},
		{"symlink to a file with an ID", func(t *testing.T, root string) {
			writeHost(t, root, "/var/lib/other-id", dbusID+"\n")
			if err := os.Symlink("/var/lib/other-id", filepath.Join(root, DBusMachineIDPath)); err != nil {
				t.Fatal(err)
			}
		}},
		{"all zero", func(t *testing.T, root string) { writeHost(t, root, DBusMachineIDPath, strings.Repeat("0", 32)+"\n") }},
		{"garbage", func(t *testing.T, root string) { writeHost(t, root, DBusMachineIDPath, "garbage\n") }},
		{"absent", func(t *testing.T, root string) {}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeHost(t, root, MachineIDPath, "")
			if err := os.MkdirAll(filepath.Join(root, "var/lib/dbus"), 0o755); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, root)
			r := openRoot(t, root)
			got := readDBusMachineID(r)
			out, err := exec.Command(tool, "--root", root, "--print").CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			fromDBus := strings.Contains(string(out), "D-Bus machine ID")
			if fromDBus != (got != "") {
				t.Errorf("guestcheck reads %q, systemd said %q", got, out)
			}
			if fromDBus && !strings.Contains(string(out), got) {
				t.Errorf("systemd took another ID than %s: %q", got, out)
			}
		})
	}
}

func writeHost(t *testing.T, root, p, content string) {
	t.Helper()
	full := filepath.Join(root, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadRootMode(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  RootMode
	}{
		{"no boot configuration", map[string]string{"/etc/hostname": "x\n"}, RootMode{}},
		{"Debian GRUB: ro on every entry", map[string]string{"/boot/grub/grub.cfg": "menuentry 'Debian' {\n\tlinux\t/boot/vmlinuz-6.1.0-57-cloud-amd64 root=UUID=abc ro console=ttyS0\n}\n"},
			RootMode{ReadOnly: true, Known: true, Source: "/boot/grub/grub.cfg:2: the kernel command line mounts the root read-only"}},
		{"GRUB with rw", map[string]string{"/boot/grub/grub.cfg": "\tlinux /vmlinuz root=/dev/vda1 ro quiet rw\n"},
			RootMode{Known: true, Source: "/boot/grub/grub.cfg:1: the kernel command line has rw"}},
		{"one rescue entry without rw", map[string]string{"/boot/grub/grub.cfg": "\tlinux /vmlinuz root=/dev/vda1 rw\n\tlinux /vmlinuz root=/dev/vda1 single\n"},
			RootMode{ReadOnly: true, Known: true, Source: "/boot/grub/grub.cfg:2: the kernel command line mounts the root read-only"}},
		{"/etc/kernel/cmdline rw", map[string]string{"/etc/kernel/cmdline": "root=LABEL=rootfs rw quiet\n"},
			RootMode{Known: true, Source: "/etc/kernel/cmdline:1: the kernel command line has rw"}},
		{"BLS entry", map[string]string{"/boot/loader/entries/a.conf": "title Fedora\nlinux /vmlinuz\noptions root=UUID=x ro rhgb\n"},
			RootMode{ReadOnly: true, Known: true, Source: "/boot/loader/entries/a.conf:3: the kernel command line mounts the root read-only"}},
		{"fstab keeps / ro", map[string]string{"/etc/fstab": "# root\nLABEL=rootfs / ext4 ro,noatime 0 1\n", "/etc/kernel/cmdline": "rw\n"},
			RootMode{ReadOnly: true, Known: true, Source: "/etc/fstab:2: / is mounted ro"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ReadRootMode(writeRoot(t, tc.files)); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func FuzzClassifyMachineID(f *testing.F) {
	for _, c := range machineIDContents() {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		k := ClassifyMachineID(b)
		if k == MachineIDValid && !ValidMachineID(strings.TrimSuffix(string(b), "\n")) {
			t.Fatalf("%q classified valid", b)
		}
	})
}

// TestFirstbootMachineID: what systemd-firstboot --setup-machine-id writes
// into an image with no /etc/machine-id is, to guestcheck, a valid ID, and
// the image is then no longer judged by the missing-file rules. It leaves
// an existing file, empty or "uninitialized", as it is: systemd's own tools
// treat those as the sealed form too.
func TestFirstbootMachineID(t *testing.T) {
	tool := testenv.Tool(t, "systemd-firstboot", "systemd")
	for _, c := range []string{"missing", "", "uninitialized\n"} {
		root := t.TempDir()
		if c != "missing" {
			writeHost(t, root, MachineIDPath, c)
		} else if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(tool, "--root", root, "--setup-machine-id").CombinedOutput(); err != nil {
			t.Fatalf("%q: %v\n%s", c, err, out)
		}
		ev := ReadCloneEvidence(openRoot(t, root), false)
		got := codesOf(JudgeMachineID(ev, false))
		switch {
		case c == "missing" && (ev.MachineIDKind != MachineIDValid || !ev.MachineIDFound):
			t.Errorf("firstboot wrote %q, guestcheck reads it as %s", ev.MachineIDRaw, ev.MachineIDKind)
		case c != "missing" && string(ev.MachineIDRaw) != c:
			t.Errorf("firstboot changed %q to %q", c, ev.MachineIDRaw)
		case !slices.Equal(got, []string{"pass identity-machine-id-ok"}):
			t.Errorf("%q: %v", c, got)
		}
	}
}
