package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/checks"
	"github.com/guestcheck/guestcheck/internal/shared/report"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// imageChecks are the checks an image root's golden runs: those that
// judge files, and so speak of guest paths and image fixes.
const imageChecks = "hostname,dns,fstab,time-sync,cloud-config,ssh,network-identity"

// liveOnly matches a remediation that would act on the host's own
// devices, services or accounts if run where guestcheck runs: under an
// image root no fix may name one.
var liveOnly = regexp.MustCompile("`(hostnamectl|timedatectl|systemctl|blkid|mount|umount|resolvectl|ip|chronyc|journalctl|udevadm|usermod|gpasswd|passwd|useradd|groupadd|ssh-keygen|cloud-init (clean|status|init)|netplan apply|apt|dnf|chmod|chown|visudo|nmcli|systemd-machine-id-setup|: >)[ `]")

// writeImageRoot makes a small image-like root: cloud-init installed with
// user-data asking for a user, no resolv.conf, an invalid hostname, no
// time daemon, and an fstab mounting / by kernel device name. mode is
// /etc/passwd's and /etc/shadow's (0 for unreadable, -1 for absent).
func writeImageRoot(t *testing.T, mode os.FileMode, absent bool) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"usr/bin/cloud-init":                      "",
		"var/lib/cloud/instance/cloud-config.txt": "#cloud-config\nusers:\n  - name: ops\n    groups: [adm]\n",
		"etc/hostname":                            "bad_host_\n",
		"etc/fstab":                               "/dev/sda1 / ext4 defaults 0 1\n",
		"etc/machine-id":                          "4b2f0c1d9e8a4f6b8c7d6e5f4a3b2c1d\n",
		"etc/group":                               "root:x:0:\nadm:x:4:\n",
		"etc/systemd/system/multi-user.target.wants/.keep": "",
	}
	if !absent {
		files["etc/passwd"] = "root:x:0:0:root:/root:/bin/bash\nops:x:1000:1000::/home/ops:/bin/bash\n"
		files["etc/shadow"] = "root:*:19000:0:99999:7:::\nops:!:19000:0:99999:7:::\n"
	}
	for p, body := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !absent {
		for _, p := range []string{"etc/passwd", "etc/shadow"} {
			if err := os.Chmod(filepath.Join(dir, p), mode); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// imageRun runs guestcheck over root, in the text and the JSON format;
// the text has the root as $ROOT and no duration, for a golden file.
func imageRun(t *testing.T, root string, runAs func(args []string) string) (string, report.Report) {
	t.Helper()
	cfg := writeConfig(t, "")
	base := []string{"--root", root, "--config", cfg, "--only", imageChecks}
	text := runAs(base)
	var rep report.Report
	if err := json.Unmarshal([]byte(runAs(append(base, "--format", "json"))), &rep); err != nil {
		t.Fatalf("json report: %v", err)
	}
	text = strings.ReplaceAll(text, root, "$ROOT")
	return regexp.MustCompile(`(\(|\bin )\d+ ms\b`).ReplaceAllString(text, "${1}N ms"), rep
}

// inProcess runs the command in this process, as this test's user.
func inProcess(t *testing.T) func([]string) string {
	return func(args []string) string {
		var out, errb bytes.Buffer
		run(args, &out, &errb, checks.All)
		if errb.Len() > 0 {
			t.Errorf("stderr: %s", errb.String())
		}
		return out.String()
	}
}

// holdImageReport holds what every image-root report must say: the root
// once (in the header, and as JSON's root), guest paths in messages and
// details, no fix that acts on the host, and no message that names one
// path twice (an error wrapped in its own path).
func holdImageReport(t *testing.T, root, text string, rep report.Report) {
	t.Helper()
	if n := strings.Count(text, "$ROOT"); n != 1 || !strings.HasPrefix(text, "Guest root: $ROOT") {
		t.Errorf("the text names the root %d times, want once, in its header:\n%s", n, text)
	}
	if rep.Root != root {
		t.Errorf("JSON root = %q, want %q", rep.Root, root)
	}
	pathRe := regexp.MustCompile(`/[A-Za-z0-9._/-]+`)
	for _, c := range rep.Checks {
		for _, f := range c.Findings {
			all := f.Message + " " + f.Remediation
			for _, v := range f.Detail {
				all += " " + v
			}
			if strings.Contains(all, root) {
				t.Errorf("%s/%s names the host path %s: %q", c.ID, f.Code, root, all)
			}
			// systemctl --root acts on the image, not on the host.
			if m := liveOnly.FindString(strings.ReplaceAll(f.Remediation, "`systemctl --root=", "")); m != "" {
				t.Errorf("%s/%s: fix %q names %s, which would act on the host", c.ID, f.Code, f.Remediation, m)
			}
			seen := map[string]bool{}
			for _, p := range pathRe.FindAllString(f.Message, -1) {
				if seen[p] && strings.Count(p, "/") > 1 {
					t.Errorf("%s/%s: message names %s twice: %q", c.ID, f.Code, p, f.Message)
				}
				seen[p] = true
			}
		}
	}
}

// TestImageRootMessages is a --root run over an image-like root, whole
// lines in testdata/imageroot.golden: a missing resolv.conf, a missing
// passwd, a bad hostname, no time daemon and an fstab entry by device
// name, each named by its guest path, with the image's fixes.
func TestImageRootMessages(t *testing.T) {
	root := writeImageRoot(t, 0, true)
	text, rep := imageRun(t, root, inProcess(t))
	golden(t, "imageroot.golden", text)
	holdImageReport(t, root, text, rep)
}

// TestImageRootReadErrors makes every file the checks read a directory, so
// that each read fails whoever runs it: no message may name its path
// twice or name the host's path of the root.
func TestImageRootReadErrors(t *testing.T) {
	root := writeImageRoot(t, 0, true)
	for _, p := range []string{"etc/passwd", "etc/shadow", "etc/resolv.conf", "etc/chrony/chrony.conf", "etc/systemd/timesyncd.conf"} {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	text, rep := imageRun(t, root, inProcess(t))
	holdImageReport(t, root, text, rep)
	said := false
	for _, c := range rep.Checks {
		for _, f := range c.Findings {
			said = said || strings.Contains(f.Message, "/etc/passwd: is a directory;")
		}
	}
	if !said {
		t.Errorf("the passwd read error is not said as the guest path and why:\n%s", text)
	}
}

// TestImageRootUnreadable runs over a root whose /etc/passwd and
// /etc/shadow no one may read: as root (without the capabilities that
// override file modes, so that root is denied as an LSM or a root squash
// would deny it) the fix says permission denied; as another user it says
// to run as root. Whole lines in testdata/imageroot-denied-*.golden.
func TestImageRootUnreadable(t *testing.T) {
	for _, tc := range []struct {
		name   string
		golden string
		as     []string // setpriv's arguments; nil runs in this process
	}{
		{"as root", "imageroot-denied-root.golden", []string{"--inh-caps=-dac_override,-dac_read_search", "--bounding-set=-dac_override,-dac_read_search"}},
		{"as a user", "imageroot-denied-user.golden", []string{"--reuid=65534", "--regid=65534", "--clear-groups"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runAs := inProcess(t)
			switch {
			case testenv.IsRoot():
				runAs = helperAs(t, testenv.Tool(t, "setpriv", "util-linux"), tc.as)
			case tc.as[0] != "--reuid=65534":
				testenv.RequireRoot(t, "root denied by a file's mode needs root without CAP_DAC_OVERRIDE")
			}
			root := writeImageRoot(t, 0, false)
			// The other user must reach the root through the test's
			// private directories.
			for d := root; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
				os.Chmod(d, 0o755)
			}
			text, rep := imageRun(t, root, runAs)
			golden(t, tc.golden, text)
			holdImageReport(t, root, text, rep)
		})
	}
}

// helperAs runs guestcheck as this test binary re-executed by setpriv
// with args (TestHelperGuestcheck is the command).
func helperAs(t *testing.T, setpriv string, args []string) func([]string) string {
	return func(gcArgs []string) string {
		cmd := exec.Command(setpriv, append(args, os.Args[0], "-test.run=^TestHelperGuestcheck$")...)
		cmd.Env = append(os.Environ(), "GUESTCHECK_HELPER_ARGS="+strings.Join(gcArgs, "\x1f"))
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.Run() // guestcheck's own exit code says what it found
		if errb.Len() > 0 {
			t.Errorf("stderr: %s", errb.String())
		}
		return out.String()
	}
}

// TestHelperGuestcheck is guestcheck itself, for helperAs; it does
// nothing in an ordinary test run.
func TestHelperGuestcheck(t *testing.T) {
	args := os.Getenv("GUESTCHECK_HELPER_ARGS")
	if args == "" {
		return
	}
	os.Exit(run(strings.Split(args, "\x1f"), os.Stdout, os.Stderr, checks.All))
}
