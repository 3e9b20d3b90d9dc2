package prove

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
)

// emergencyConsole is the end of a Debian 12 console whose fstab names a
// missing disk, as systemd prints it.
const emergencyConsole = "[  OK  ] Reached target local-fs-pre.target - Preparation for Local File Systems.\r\n" +
	"[ TIME ] Timed out waiting for device \x1b[0;1;39mdev-disk-by\\x2dlabel-nodata.device\x1b[0m - /dev/disk/by-label/nodata.\r\n" +
	"[DEPEND] Dependency failed for \x1b[0;1;39mdata.mount\x1b[0m - /data.\r\n" +
	"You are in emergency mode. After logging in, type \"journalctl -xb\" to view\r\n" +
	"system logs, \"systemctl reboot\" to reboot, \"systemctl default\" or \"exit\"\r\n" +
	"to boot into default mode.\r\n" +
	"Cannot open access to console, the root account is locked.\r\n"

func TestConsoleDead(t *testing.T) {
	for _, c := range []struct {
		name, text, want string
	}{
		{"emergency", emergencyConsole, "You are in emergency mode"},
		{"panic", "[    2.1] Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0)\r\n", "Kernel panic"},
		{"initramfs", "Gave up waiting for root file system device.  Common problems:\r\nALERT!  UUID=1234 does not exist.  Dropping to a shell!\r\n\r\n\r\nBusyBox v1.35.0 (Debian 1:1.35.0-4+b3) built-in shell (ash)\r\n(initramfs) ", "Gave up waiting for root"},
	} {
		con := NewConsole("/nonexistent", time.Now())
		// Fed in small pieces, as a console file grows.
		for i := 0; i < len(c.text); i += 7 {
			con.Feed([]byte(c.text[i:min(i+7, len(c.text))]))
		}
		st := con.State()
		if !strings.Contains(st.Dead, c.want) {
			t.Errorf("%s: dead %q, want %q", c.name, st.Dead, c.want)
		}
		for _, l := range con.Tail() {
			if strings.ContainsAny(l, "\x1b\r") {
				t.Errorf("%s: tail line %q keeps control characters", c.name, l)
			}
		}
	}
	con := NewConsole("/nonexistent", time.Now())
	con.Feed([]byte("(initramfs) "))
	if con.State().Dead == "" {
		t.Error("an initramfs prompt without a newline is not seen")
	}
	con = NewConsole("/nonexistent", time.Now())
	con.Feed([]byte("[  OK  ] Started emergency.service hint: a unit named like this is no emergency\r\n[  OK  ] Reached target multi-user.target\r\n"))
	if d := con.State().Dead; d != "" {
		t.Errorf("a healthy console is dead: %q", d)
	}
}

// TestConsoleTailEndsAtDeath: what the guest writes after the line that
// shows it dead, in the same poll (cloud-init's tables while a loaded
// host polls late), stays out of the tail, so the report's tail shows
// why the clone was stopped.
func TestConsoleTailEndsAtDeath(t *testing.T) {
	con := NewConsole("/nonexistent", time.Now())
	after := strings.Repeat("[   41.2] cloud-init[305]: ci-info: | eth0 | True | 192.0.2.8 |\r\n", 40)
	con.Feed([]byte(emergencyConsole + after))
	tail := con.Tail()
	if len(tail) == 0 || !strings.Contains(strings.Join(tail, "\n"), "You are in emergency mode") || strings.Contains(strings.Join(tail, "\n"), "ci-info") {
		t.Errorf("tail after the emergency shell:\n%s", strings.Join(tail, "\n"))
	}
}

func TestConsoleMarksAndSummary(t *testing.T) {
	p := filepath.Join(t.TempDir(), "console.log")
	os.WriteFile(p, []byte("[   30.1] cloud-init[220]: Cloud-init v. 22.4.2 running 'init-local' at Wed, 02 Dec 2026 03:50:00 +0000. Up 30.10 seconds.\r\n"), 0o644)
	con := NewConsole(p, time.Now())
	con.Poll()
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("[   95.2] cloud-init[380]: Cloud-init v. 22.4.2 finished at Wed, 02 Dec 2026 03:51:05 +0000. Datasource DataSourceNoCloud [seed=/dev/vdb][dsmode=net].  Up 95.20 seconds\r\n")
	f.WriteString("[  108.8] boot-check[396]: guestcheck: WARN 14 checks: 0 fail, 0 error, 2 warn, 12 pass, 0 skip; 1 finding waived (13638 ms) (report: /run/guestcheck/report.txt)\r\n")
	f.WriteString("\r\nDebian GNU/Linux 12 prove-1 ttyS0\r\n\r\nprove-1 login: ")
	f.Close()
	con.Poll()
	st := con.State()
	for _, m := range []string{"init-local", "cloud-init-finished", "guestcheck", "login"} {
		if _, ok := st.Marks[m]; !ok {
			t.Errorf("no %s mark: %v", m, st.Marks)
		}
	}
	bv, ok := ParseSummary(st.Summary)
	if !ok || bv.Status != "WARN" || bv.Checks != 14 || bv.Counts.Warn != 2 || bv.Counts.Pass != 12 {
		t.Errorf("summary %q: %+v %v", st.Summary, bv, ok)
	}
	// Today's line (with the failing checks --summary names) and the older
	// one of images built before it parse alike.
	for _, l := range []string{
		"guestcheck: FAIL (8 checks: 5 fail, 2 error, 0 warn, 1 pass, 0 skip) in 80 ms; fail: a, b, c, d, e and 2 more (report: /run/guestcheck/report.txt)",
		"guestcheck: FAIL 8 checks: 5 fail, 2 error, 0 warn, 1 pass, 0 skip (80 ms)",
	} {
		m := SummaryLine.FindString(l)
		bv, ok := ParseSummary(m)
		if !ok || bv.Status != "FAIL" || bv.Checks != 8 || bv.Counts.Fail != 5 || bv.Counts.Error != 2 {
			t.Errorf("%q: %+v %v", l, bv, ok)
		}
	}
	if _, ok := ParseSummary("guestcheck: PASS many checks"); ok {
		t.Error("a malformed summary parsed")
	}
	if tail := con.Tail(); tail[len(tail)-1] != "prove-1 login:" {
		t.Errorf("tail %q", tail)
	}
}

func TestConsoleBounds(t *testing.T) {
	con := NewConsole("/nonexistent", time.Now())
	con.Feed([]byte(strings.Repeat("x", 3*tailBytes) + "\n" + strings.Repeat("y", 10000)))
	if len(con.tail) > tailBytes || len(con.partial) > 4096 {
		t.Errorf("kept %d bytes of tail, %d of a partial line", len(con.tail), len(con.partial))
	}
	for _, l := range con.Tail() {
		if len([]rune(l)) > 303 {
			t.Errorf("a tail line of %d characters", len(l))
		}
	}
	if got := cleanLine("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICefWEQ5e5imFc0DUm2CPlIBRYBzstQE8t9Tk2/WzbdV root@prove-2"); got != "ssh-ed25519 [key left out] root@prove-2" {
		t.Errorf("a host key line: %q", got)
	}
	if got := cleanLine("a\x1b[31mred\x1b[0m\x00\x07b\tc"); got != "aredb c" {
		t.Errorf("clean: %q", got)
	}
}

// TestHostileConsole: a console full of escapes, NULs, carriage returns,
// invalid UTF-8, C1 controls, a bidirectional override and an overlong
// line, from the fake QEMU through the console, the clone's problem and
// tail, into the text, JSON and JUnit reports: none of it reaches them
// but printable text, every console line at most 512 bytes.
func TestHostileConsole(t *testing.T) {
	res, _ := fakeRun(t, "hostile", 30*time.Second)
	rep := Report{SchemaVersion: 1, Tool: "sealprep", Command: "prove", Clones: res}
	var cols []guestid.Collision
	rep.Items, cols = Compare(res, TemplateIdentity{})
	rep.Failures = failures(res, cols, TemplateIdentity{})
	for _, c := range res {
		if !strings.Contains(c.Problem, "You are in emergency mode.") || len(c.ConsoleTail) == 0 {
			t.Fatalf("%s: problem %q, tail %q: want the emergency line", c.Name, c.Problem, c.ConsoleTail)
		}
		for _, l := range c.ConsoleTail {
			if len(l) > lineBytes {
				t.Errorf("%s: a tail line of %d bytes", c.Name, len(l))
			}
		}
	}
	var text, js, junit bytes.Buffer
	if err := WriteText(&text, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteJUnit(&junit, rep); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "json": js.String(), "junit": junit.String()} {
		if !utf8.ValidString(out) {
			t.Errorf("%s: invalid UTF-8", name)
		}
		for i, r := range out {
			if (unicode.IsControl(r) && r != '\n') || (r >= 0x202a && r <= 0x202e) || r == 0xfffd {
				t.Errorf("%s: %U at %d: %q", name, r, i, out[max(0, i-40):min(len(out), i+40)])
				break
			}
		}
		// JSON escapes what it would not print: none may be a control.
		if m := regexp.MustCompile(`\\u00[01][0-9a-fA-F]|\\u007[fF]|\\u00[89][0-9a-fA-F]|\\u202[a-eA-E]`).FindString(out); m != "" {
			t.Errorf("%s: an escaped control %s", name, m)
		}
		for _, bad := range []string{"pwned-title", "dcs-secret", "http://evil", "[31m", "]8;;"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s: the escape's payload %q reached the report", name, bad)
			}
		}
		for _, want := range []string{"red nulbelldelCR", "raw-c1", "emergency mode", "txt.exe", "xyz.éxyz"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: the printable text %q is missing", name, want)
			}
		}
	}
	for _, l := range strings.Split(text.String(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "| ") && len(l) > lineBytes+20 {
			t.Errorf("text: a console line of %d bytes", len(l))
		}
	}
	noFakeLeft(t)
}
