package networkidentity

import (
	"bufio"
	"fmt"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/parse/journalhdr"
)

// identityCapture is one tree captured from a real guest by test/vm
// (testdata/identity/<case>/, see its README): the guest files under
// root/ and their times as the guest's stat(1) printed them.
type identityCapture struct {
	dir   string
	times map[string]identity.FileTimes
}

func loadIdentityCapture(t *testing.T, name string) identityCapture {
	t.Helper()
	c := identityCapture{dir: filepath.Join("testdata/identity", name), times: map[string]identity.FileTimes{}}
	f, err := os.Open(filepath.Join(c.dir, "times.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		p, ft, err := parseStatTimes(sc.Text())
		if err != nil {
			t.Fatalf("%s/times.txt:%d: %v", c.dir, n, err)
		}
		c.times[p] = ft
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return c
}

// parseStatTimes parses a line of `stat -c '%n\t%y\t%z\t%a'`.
func parseStatTimes(l string) (string, identity.FileTimes, error) {
	f := strings.Split(l, "\t")
	if len(f) != 4 {
		return "", identity.FileTimes{}, fmt.Errorf("want 4 tab-separated fields, got %d", len(f))
	}
	const layout = "2006-01-02 15:04:05.999999999 -0700"
	m, err := time.Parse(layout, f[1])
	if err != nil {
		return "", identity.FileTimes{}, err
	}
	c, err := time.Parse(layout, f[2])
	if err != nil {
		return "", identity.FileTimes{}, err
	}
	return f[0], identity.FileTimes{Mod: m, Change: c}, nil
}

// timesFunc serves the captured times; a path the capture has no times
// for is an error, as a missing file would be.
func (c identityCapture) timesFunc(_ *fs.Root, p string) (identity.FileTimes, error) {
	if ft, ok := c.times[p]; ok {
		return ft, nil
	}
	return identity.FileTimes{}, fmt.Errorf("%s: no captured times", p)
}

// copyTree copies the capture's root into a temporary directory, so that
// a test can take evidence away from a real tree.
func (c identityCapture) copyTree(t *testing.T, drop ...string) *fs.Root {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join(c.dir, "root")
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		for _, x := range drop {
			if x := strings.TrimPrefix(x, "/"); rel == x || strings.HasPrefix(rel, x+"/") {
				return nil
			}
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return openRoot(t, dst)
}

// TestCloneCaptures judges trees captured from real Debian 12 guests: the
// template (the healthy guest, booted once) and two clones of its disk
// powered off unsealed, booted at once about two minutes later with new
// instance-ids. On today's main both clones passed.
func TestCloneCaptures(t *testing.T) {
	tests := []struct {
		name     string
		want     string
		evidence []string
	}{
		{"debian12-template", "pass identity-instance-ok", nil},
		{"debian12-unsealed-clone-1", "fail identity-clone-kept-machine-id", []string{EvFirstBoot, EvOtherInstance, EvJournalBefore}},
		{"debian12-unsealed-clone-2", "fail identity-clone-kept-machine-id", []string{EvFirstBoot, EvOtherInstance, EvJournalBefore}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := loadIdentityCapture(t, tc.name)
			ev := identity.ReadCloneEvidenceTimes(openRoot(t, filepath.Join(c.dir, "root")), true, c.timesFunc)
			if got := codesOf(JudgeMachineID(ev, true)); !slices.Equal(got, []string{"pass identity-machine-id-ok"}) {
				t.Errorf("machine-id: %v", got)
			}
			fs := JudgeClone(ev)
			assertConventions(t, fs, Codes)
			if got := codesOf(fs); len(got) != 1 || got[0] != tc.want {
				t.Fatalf("got %+v, want %s", fs, tc.want)
			}
			if got := strings.Split(fs[0].Detail["evidence"], ", "); tc.evidence != nil && !slices.Equal(got, tc.evidence) {
				t.Errorf("evidence %v, want %v\n%+v", got, tc.evidence, fs[0].Detail)
			}
			// The journal directory is named after the machine-id,
			// which a report must not carry (machine-id(5)).
			if mid := strings.TrimSpace(readCaptured(t, c, "/etc/machine-id")); mid != "" {
				if strings.Contains(fs[0].Message, mid) || strings.Contains(fmt.Sprint(fs[0].Detail), mid) {
					t.Errorf("the finding carries the machine-id %s in clear:\n%s\n%v", mid, fs[0].Message, fs[0].Detail)
				}
			}
			t.Logf("%s: %s", fs[0].Code, fs[0].Message)
		})
	}
}

// TestCloneCaptureVariants takes evidence away from a real clone's tree,
// one kind at a time, and shows that each rule alone still catches it:
// the states of a template sealed only in part.
func TestCloneCaptureVariants(t *testing.T) {
	c := loadIdentityCapture(t, "debian12-unsealed-clone-1")
	mid := strings.TrimSpace(readCaptured(t, c, "/etc/machine-id"))
	tmpl := "/var/lib/cloud/instances/gc-healthy-1"
	tests := []struct {
		name     string
		drop     []string
		live     bool
		want     string
		evidence []string
	}{
		// `cloud-init clean` without --machine-id: the template's instance
		// is gone, its machine-id and journal stay.
		{"cloud-init clean only", []string{tmpl}, true, "fail", []string{EvFirstBoot, EvJournalBefore}},
		// virt-sysprep with the machine-id kept, or an image with a fixed
		// machine-id: no earlier instance, no journal.
		{"fixed machine-id, nothing else left", []string{tmpl, "/var/log/journal"}, true, "fail", []string{EvFirstBoot}},
		// The clone's disk inspected offline (--root): no boot time, and
		// the template's instance directory still there.
		{"image root of the clone", nil, false, "fail", []string{EvOtherInstance}},
		// Offline, with only the machine-id and the clone's own instance:
		// the evidence of the first boot is gone, and the check says it
		// cannot tell (a documented limit).
		{"image root, fixed machine-id, nothing else left", []string{tmpl, "/var/log/journal"}, false, "pass", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := c.copyTree(t, tc.drop...)
			ev := identity.ReadCloneEvidenceTimes(root, tc.live, c.timesFunc)
			if ev.MachineID != mid {
				t.Fatalf("machine-id %q, want %q", ev.MachineID, mid)
			}
			fs := JudgeClone(ev)
			if len(fs) != 1 || string(fs[0].Status) != tc.want {
				t.Fatalf("got %+v, want %s", fs, tc.want)
			}
			if got := strings.Split(fs[0].Detail["evidence"], ", "); tc.evidence != nil && !slices.Equal(got, tc.evidence) {
				t.Errorf("evidence %v, want %v\n%+v", got, tc.evidence, fs[0].Detail)
			}
		})
	}
}

func readCaptured(t *testing.T, c identityCapture, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.dir, "root", p))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCaptureJournalHeaders parses the real journal headers of the
// captures (cut to their first 512 bytes) and checks them against what the
// capture says about the guest: its machine-id and boot.
func TestCaptureJournalHeaders(t *testing.T) {
	for _, name := range []string{"debian12-template", "debian12-unsealed-clone-1"} {
		c := loadIdentityCapture(t, name)
		mid := strings.TrimSpace(readCaptured(t, c, "/etc/machine-id"))
		boot := strings.ReplaceAll(strings.TrimSpace(readCaptured(t, c, "/proc/sys/kernel/random/boot_id")), "-", "")
		files, _ := filepath.Glob(filepath.Join(c.dir, "root/var/log/journal", mid, "*.journal*"))
		if len(files) == 0 {
			t.Fatalf("%s: no journal file under %s", name, mid)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			h, err := journalhdr.Parse(b)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if h.MachineID != mid || h.Entries == 0 || h.HeadRealtime.After(h.TailRealtime) {
				t.Errorf("%s: %+v", f, h)
			}
			if strings.HasSuffix(f, "/system.journal") && h.TailBootID != boot {
				t.Errorf("%s: tail boot %s, want the capture's boot %s", f, h.TailBootID, boot)
			}
			t.Logf("%s %s: %s, %d entries %s .. %s, tail boot %s", name, filepath.Base(f), h.State, h.Entries, h.HeadRealtime, h.TailRealtime, h.TailBootID)
		}
	}
}
