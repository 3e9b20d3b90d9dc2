package identity

import (
	"fmt"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

// TestReadRootMode pins the one rule. The cases marked "was" are where
// guestcheck's and sealprep's copies of it disagreed before; the verdict
// each gave is in the comment.
func TestReadRootMode(t *testing.T) {
	const debianGrub = "menuentry 'Debian' {\n\tlinux\t/boot/vmlinuz-6.1.0-57-cloud-amd64 root=UUID=abc ro console=ttyS0\n}\n"
	tests := []struct {
		name     string
		files    map[string]string
		writable bool
		known    bool
		source   string
	}{
		{"no boot configuration", map[string]string{"/etc/hostname": "x\n"}, false, false, ""},
		{"Debian GRUB: ro on every entry", map[string]string{"/boot/grub/grub.cfg": debianGrub}, false, true, "/boot/grub/grub.cfg:2"},
		{"GRUB with rw last", map[string]string{"/boot/grub/grub.cfg": "\tlinux /vmlinuz root=/dev/vda1 ro quiet rw\n"}, true, true, "/boot/grub/grub.cfg:1"},
		{"GRUB: rw, then ro last", map[string]string{"/boot/grub2/grub.cfg": "linux /vmlinuz rw init=/bin/sh ro\n"}, false, true, "/boot/grub2/grub.cfg:1"},
		{"one rescue entry without rw", map[string]string{"/boot/grub/grub.cfg": "\tlinux /vmlinuz root=/dev/vda1 rw\n\tlinux /vmlinuz root=/dev/vda1 single\n"}, false, true, "/boot/grub/grub.cfg:2"},
		{"rootflags=ro is not ro", map[string]string{"/boot/grub/grub.cfg": "linux /vmlinuz rootflags=ro rd.rw rw\n"}, true, true, "/boot/grub/grub.cfg:1"},
		{"/etc/kernel/cmdline rw", map[string]string{"/etc/kernel/cmdline": "root=LABEL=rootfs rw quiet\n"}, true, true, "/etc/kernel/cmdline"},
		{"BLS entry ro", map[string]string{"/boot/loader/entries/a.conf": "title Fedora\nlinux /vmlinuz\noptions root=UUID=x ro rhgb\n"}, false, true, "/boot/loader/entries/a.conf"},
		{"BLS $kernelopts says neither", map[string]string{"/boot/loader/entries/a.conf": "options $kernelopts\n"}, false, true, "/boot/loader/entries/a.conf"},
		{"BLS rw and kernel-install rw", map[string]string{"/boot/loader/entries/a.conf": "options root=x rw\n", "/etc/kernel/cmdline": "rw"}, true, true, "/etc/kernel/cmdline"},
		{"fstab keeps / ro", map[string]string{"/etc/fstab": "# root\nLABEL=rootfs / ext4 ro,noatime 0 1\n", "/etc/kernel/cmdline": "rw\n"}, false, true, "/etc/fstab:2"},
		{"fstab ro,defaults: defaults sets no flag", map[string]string{"/etc/fstab": "LABEL=r / ext4 ro,defaults 0 1\n", "/etc/kernel/cmdline": "rw\n"}, false, true, "/etc/fstab:1"},
		{"fstab ro for /var only", map[string]string{"/etc/fstab": "LABEL=v /var ext4 ro 0 2\nLABEL=r / xfs rw 0 1\n", "/etc/kernel/cmdline": "rw\n"}, true, true, "/etc/kernel/cmdline"},

		// Where the two copies disagreed.
		// fstab: was read-only in guestcheck (any ro), writable in sealprep
		// (the last of ro and rw wins, as in libmount).
		{"fstab ro,rw", map[string]string{"/etc/fstab": "LABEL=r / ext4 ro,rw 0 1\n", "/etc/kernel/cmdline": "rw\n"}, true, true, "/etc/kernel/cmdline"},
		// fstab: was read-only in guestcheck (the first entry for /),
		// writable in sealprep (the last entry wins, as remount-fs applies it).
		{"fstab: a later entry for / without ro", map[string]string{"/etc/fstab": "LABEL=r / ext4 ro 0 1\nLABEL=r / ext4 defaults 0 1\n", "/etc/kernel/cmdline": "rw\n"}, true, true, "/etc/kernel/cmdline"},
		// BLS: was read-only in guestcheck (each options line judged on its
		// own), writable in sealprep (options lines concatenated, as the
		// Boot Loader Specification says).
		{"BLS: ro, then rw on a later options line", map[string]string{"/boot/loader/entries/a.conf": "options root=x ro\noptions rhgb rw\n"}, true, true, "/boot/loader/entries/a.conf"},
		{"BLS: rw on a second options line only", map[string]string{"/boot/loader/entries/a.conf": "options root=x\noptions rw\n"}, true, true, "/boot/loader/entries/a.conf"},
		// /etc/kernel/cmdline: was read-only in guestcheck (each line a
		// command line), writable in sealprep (the file is one command line,
		// as kernel-install reads it).
		{"kernel-install cmdline over two lines", map[string]string{"/etc/kernel/cmdline": "root=x ro\nquiet rw\n"}, true, true, "/etc/kernel/cmdline"},
		// Several files: was writable in guestcheck (the first file with a
		// command line decided), read-only in sealprep (every command line
		// counts: the image may boot any).
		{"kernel-install rw, GRUB ro", map[string]string{"/etc/kernel/cmdline": "root=x rw\n", "/boot/grub/grub.cfg": debianGrub}, false, true, "/boot/grub/grub.cfg:2"},
		// An empty /etc/kernel/cmdline: was unknown in guestcheck (skipped),
		// read-only in sealprep (kernel-install gives entries no ro or rw).
		{"empty /etc/kernel/cmdline", map[string]string{"/etc/kernel/cmdline": ""}, false, true, "/etc/kernel/cmdline"},
		// A bare "linux" line in grub.cfg: was read-only in guestcheck, no
		// command line in sealprep (it boots nothing).
		{"GRUB: a bare linux line", map[string]string{"/boot/grub/grub.cfg": "linux\n"}, false, false, ""},
		// A BLS entry that is a symlink: was read in guestcheck, skipped in
		// sealprep; it is read, as sd-boot loads what the name resolves to.
		{"BLS entry as a symlink", map[string]string{"/boot/loader/entries/a.conf": "->/boot/loader/real.conf", "/boot/loader/real.conf": "options root=x rw\n"}, true, true, "/boot/loader/entries/a.conf"},
	}
	for _, tc := range tests {
		dir := testenv.WriteTree(t, tc.files)
		for name, r := range readers(t, dir) {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				got := ReadRootMode(r)
				if got.Writable != tc.writable || got.Known != tc.known || got.Source != tc.source || got.Why == "" {
					t.Errorf("got %+v, want writable %v, known %v, source %q", got, tc.writable, tc.known, tc.source)
				}
				if got.Source != "" && !strings.Contains(got.Why, got.Source) {
					t.Errorf("the evidence does not name its source: %+v", got)
				}
				if got.MissingMachineIDFatal() != !tc.writable {
					t.Errorf("MissingMachineIDFatal = %v", got.MissingMachineIDFatal())
				}
			})
		}
	}
}

func TestCmdlineRoot(t *testing.T) {
	for in, want := range map[string]string{
		"root=/dev/vda1 ro quiet":            "ro",
		"root=/dev/vda1 ro quiet rw":         "rw",
		"BOOT_IMAGE=/vmlinuz root=UUID=x":    "",
		"rw init=/bin/sh ro":                 "ro",
		"rootflags=ro rd.rw":                 "", // neither word on its own
		"  rw\n":                             "rw",
		"root=/dev/sda2 ro\tsplash rw quiet": "rw",
	} {
		if got := CmdlineRoot(in); got != want {
			t.Errorf("CmdlineRoot(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseBootConfigs(t *testing.T) {
	grub := "menuentry 'Debian' {\n\tlinux\t/boot/vmlinuz-6.1.0 root=UUID=abc ro quiet\n\tinitrd /boot/initrd\n}\n" +
		"menuentry 'Recovery' {\n  linuxefi /vmlinuz root=UUID=abc ro single\n}\nlinux\n"
	got := ParseGrubCfg("/boot/grub/grub.cfg", []byte(grub))
	if len(got) != 2 || got[0].Args != "root=UUID=abc ro quiet" || got[0].Source != "/boot/grub/grub.cfg:2" || got[1].Args != "root=UUID=abc ro single" {
		t.Errorf("ParseGrubCfg = %+v", got)
	}
	bls := "title Fedora\nversion 6.5\nlinux /vmlinuz\noptions root=UUID=abc ro\noptions rhgb rw\n"
	if got := ParseBLSEntry("/boot/loader/entries/a.conf", []byte(bls)); len(got) != 1 || got[0].Args != "root=UUID=abc ro rhgb rw" {
		t.Errorf("ParseBLSEntry = %+v", got)
	}
	if got := ParseBLSEntry("x", []byte("title x\n")); got != nil {
		t.Errorf("ParseBLSEntry without options = %+v", got)
	}
	for in, want := range map[string]bool{
		"UUID=a / ext4 defaults 0 1\n":                     false,
		"UUID=a / ext4 ro,noatime 0 1\n":                   true,
		"UUID=a / ext4 ro,defaults 0 1\n":                  true,
		"UUID=a / ext4 ro,rw 0 1\n":                        false,
		"UUID=a /var ext4 ro 0 2\nUUID=b / xfs rw 0 1\n":   false,
		"# UUID=a / ext4 ro 0 1\n":                         false,
		"UUID=a / ext4 ro 0 1\nUUID=a / ext4 defaults 0 1": false,
	} {
		if _, got := FstabRootRO([]byte(in)); got != want {
			t.Errorf("FstabRootRO(%q) = %v, want %v", in, got, want)
		}
	}
}

func FuzzParseBootConfigs(f *testing.F) {
	f.Add([]byte("linux /vmlinuz root=/dev/vda1 ro\noptions rw\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, l := range append(ParseGrubCfg("g", b), ParseBLSEntry("e", b)...) {
			if r := CmdlineRoot(l.Args); r != "" && r != "ro" && r != "rw" {
				t.Fatalf("CmdlineRoot(%q) = %q", l.Args, r)
			}
		}
		if line, ro := FstabRootRO(b); ro && line < 1 {
			t.Fatalf("read-only from line %d", line)
		}
	})
}

// FuzzBootCmdlines holds the boot configuration parsers to their lines:
// each grub.cfg command line is its linux line's arguments, and a BLS
// entry's options lines add up to one command line.
func FuzzBootCmdlines(f *testing.F) {
	f.Add("menuentry 'x' {\n\tlinux\t/vmlinuz-6.1 root=UUID=1 ro quiet\n\tinitrd /initrd\n}\nlinuxefi /k rw\n")
	f.Add("title Fedora\noptions root=/dev/vda1 ro\n  options  quiet \nlinux /vmlinuz\n")
	f.Fuzz(func(t *testing.T, s string) {
		lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
		for _, c := range ParseGrubCfg("g", []byte(s)) {
			var n int
			if _, err := fmt.Sscanf(c.Source, "g:%d", &n); err != nil || n < 1 || n > len(lines) {
				t.Fatalf("source %q outside %d lines", c.Source, len(lines))
			}
			f := strings.Fields(strings.TrimSuffix(lines[n-1], "\r"))
			if len(f) < 2 || !strings.HasPrefix(f[0], "linux") || c.Args != strings.Join(f[2:], " ") {
				t.Fatalf("%s = %q is not the arguments of %q", c.Source, c.Args, lines[n-1])
			}
		}
		bls := ParseBLSEntry("e", []byte(s))
		if len(bls) > 1 {
			t.Fatalf("one entry gave %d command lines", len(bls))
		}
		// Another options line is appended to the command line.
		more := ParseBLSEntry("e", []byte(s+"\noptions extra=1\n"))
		want := "extra=1"
		if len(bls) == 1 {
			want = strings.TrimSpace(bls[0].Args + " extra=1")
		}
		if len(more) != 1 || strings.TrimSpace(more[0].Args) != want {
			t.Fatalf("appended options: %+v, want %q", more, want)
		}
	})
}
