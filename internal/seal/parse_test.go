package seal

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/guestcheck/guestcheck/internal/parse/envfile"
)

func TestPasswdHomes(t *testing.T) {
	got := passwdHomes([]byte(passwd + "# comment\nbad-line\nweird:x:5:5::relative:/bin/sh\nroot2:x:0:0::/root:/bin/sh\nslash:x:6:6::/:/bin/sh\n"))
	want := []string{"/root", "/usr/sbin", "/nonexistent", "/home/alice", "/srv/svc"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("passwdHomes (-want +got):\n%s", diff)
	}
}

func TestStripKeys(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"DEVICE=eth0\nHWADDR=52:54:00:12:34:56\n  UUID=abc\nexport HWADDR=x\nMY_HWADDR=keep\n# HWADDR=comment\nONBOOT=yes",
			"DEVICE=eth0\nMY_HWADDR=keep\n# HWADDR=comment\nONBOOT=yes"},
		// What sh sets is what goes: one assignment of several, an export
		// with a tab, a quoted value over two lines, a line's comment.
		{"A=1 HWADDR=x B=2\nexport\tUUID=u C=3\nHWADDR=\"52:54\n:00\" D=4\nE=5; UUID=6; F=7\nHWADDR=x # pinned\n",
			"A=1 B=2\nexport\tC=3\nD=4\nE=5;  F=7\n"},
		{"HWADDR=x;A=1\n  export HWADDR=1 ; # c\n\nexport A HWADDR=2\n", "A=1\n\nexport A \n"},
		// A prefix to a command sets nothing, so it is not a pin.
		{"HWADDR=x true\n", "HWADDR=x true\n"},
	} {
		if got := string(stripKeys([]byte(c.in), "HWADDR", "UUID")); got != c.want {
			t.Errorf("stripKeys(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestStripNMKeyfile(t *testing.T) {
	in := "[connection]\nid=eth0\nuuid=5fb0\n\n[ethernet]\nmac-address=52:54:00:12:34:56\ncloned-mac-address=stable\n\n[vpn]\nuuid=keep\n[wifi]\nmac-address = aa\n"
	want := "[connection]\nid=eth0\n\n[ethernet]\ncloned-mac-address=stable\n\n[vpn]\nuuid=keep\n[wifi]\n"
	if got := string(stripNMKeyfile([]byte(in))); got != want {
		t.Errorf("stripNMKeyfile = %q, want %q", got, want)
	}
	// Group names are case-sensitive for NetworkManager (GLib key files):
	// [Connection] is not the connection setting, so its uuid stays; a
	// line that only looks like an assignment inside a comment stays too.
	in = "[Connection]\nuuid=1\n[connection]\n#uuid=2\nuuid=3\n"
	want = "[Connection]\nuuid=1\n[connection]\n#uuid=2\n"
	if got := string(stripNMKeyfile([]byte(in))); got != want {
		t.Errorf("stripNMKeyfile = %q, want %q", got, want)
	}
}

func TestSystemdVersionAndRotated(t *testing.T) {
	if v := systemdVersion([]string{"libsystemd-core-252.so", "libsystemd-shared-252.so", "libsystemd-shared-255.4-1.fc40.so", "x"}); v != 255 {
		t.Errorf("systemdVersion = %d, want 255", v)
	}
	if v := systemdVersion(nil); v != 0 {
		t.Errorf("systemdVersion(nil) = %d", v)
	}
	for name, want := range map[string]bool{"syslog.1": true, "syslog.2.gz": true, "messages-20240101": true, "dpkg.log.old": true,
		"syslog": false, "auth.log": false, "cloud-init.log": false, "Xorg.0.log": false} {
		if got := rotatedLog.MatchString(name); got != want {
			t.Errorf("rotated(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestLockRootPassword(t *testing.T) {
	in := "root:$6$salt$hash:19000:0:99999:7:::\nalice:$6$x:1::::::\n"
	if got := string(lockRootPassword([]byte(in))); got != "root:*:19000:0:99999:7:::\nalice:$6$x:1::::::\n" {
		t.Errorf("lockRootPassword = %q", got)
	}
	for _, locked := range []string{"root:*:1::::::\n", "root:!:1::::::\n", "root:*LOCK*:1::::::\n"} {
		if got := string(lockRootPassword([]byte(locked))); got != locked {
			t.Errorf("already locked %q rewritten to %q", locked, got)
		}
	}
}

func TestHostsMentions(t *testing.T) {
	b := []byte("127.0.0.1 localhost\n127.0.1.1 vm1.example.org vm1 # vm1\n192.0.2.1 other vm10\n")
	if diff := cmp.Diff([]string{"127.0.1.1 vm1.example.org vm1 # vm1"}, hostsMentions(b, "vm1")); diff != "" {
		t.Error(diff)
	}
	if got := hostsMentions(b, "localhost"); got != nil {
		t.Errorf("localhost reported: %v", got)
	}
}

func FuzzStripNMKeyfile(f *testing.F) {
	f.Add([]byte("[connection]\nuuid=1\n[ethernet]\nmac-address=x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		out := stripNMKeyfile(b)
		if len(out) > len(b) {
			t.Fatalf("output grew: %d > %d", len(out), len(b))
		}
		if again := stripNMKeyfile(out); string(again) != string(out) {
			t.Fatalf("not idempotent: %q -> %q", out, again)
		}
	})
}

func FuzzStripKeys(f *testing.F) {
	f.Add([]byte("DEVICE=eth0\nHWADDR=52:54:00:12:34:56\nA=1 UUID=2; export HWADDR=\"x\ny\" # c\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		out := stripKeys(b, "HWADDR", "UUID")
		if len(out) > len(b) {
			t.Fatalf("output grew: %d > %d", len(out), len(b))
		}
		as, _ := envfile.Assignments("", out)
		if _, probs := envfile.Assignments("", b); len(probs) == 0 {
			for _, a := range as {
				if a.Name == "HWADDR" || a.Name == "UUID" {
					t.Fatalf("%q still sets %s", out, a.Name)
				}
			}
		}
	})
}
