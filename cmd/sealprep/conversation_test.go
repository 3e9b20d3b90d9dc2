package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/host/image/imagetest"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// step is one sealprep run of a conversation: its arguments (ROOT stands
// for the tree), whether stdin is a terminal and what it answers.
type step struct {
	args  []string
	tty   bool
	stdin string
}

// talk runs steps in order on root and writes each run's exit code,
// stderr and stdout, whole, with what changes from run to run (the
// root's directory, durations, the seal time) replaced by a name.
func talk(t *testing.T, b *strings.Builder, root, stateDir string, steps []step) {
	t.Helper()
	for _, s := range steps {
		args := make([]string, len(s.args))
		for i, a := range s.args {
			args[i] = strings.ReplaceAll(a, "ROOT", root)
		}
		var out, errb bytes.Buffer
		var powered bool
		e := testEnv(s.tty, &powered)
		e.imageStateDir = stateDir
		code := run(args, strings.NewReader(s.stdin), &out, &errb, e)
		fmt.Fprintf(b, "$ sealprep %s\nexit %d\n", strings.Join(s.args, " "), code)
		for _, stream := range []struct{ name, text string }{{"stderr", errb.String()}, {"stdout", out.String()}} {
			if stream.text == "" {
				continue
			}
			for _, l := range strings.Split(strings.TrimRight(stream.text, "\n"), "\n") {
				fmt.Fprintf(b, "%s| %s\n", stream.name, stable(l, root))
			}
		}
	}
}

var (
	msRE   = regexp.MustCompile(`\((<?\d+ ?ms)\)`)
	timeRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
	// The appliance line: its kernel, accelerator and time are this
	// host's.
	applRE = regexp.MustCompile(`appliance: kernel \S+ under \w+, [\d.]+ s \([\d.]+ s to boot\);`)
)

// stable is l without what differs between runs.
func stable(l, root string) string {
	l = strings.ReplaceAll(l, root, "ROOT")
	l = msRE.ReplaceAllString(l, "(N ms)")
	l = applRE.ReplaceAllString(l, "appliance: kernel KERNEL under ACCEL, N s;")
	return timeRE.ReplaceAllString(l, "TIME")
}

// writeGuest writes files (a trailing "/" makes a directory) under dir.
func writeGuest(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		hp := filepath.Join(dir, p)
		if strings.HasSuffix(p, "/") {
			must(t, os.MkdirAll(hp, 0o755))
			continue
		}
		must(t, os.MkdirAll(filepath.Dir(hp), 0o755))
		must(t, os.WriteFile(hp, []byte(c), 0o644))
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// keysNoRegenerator is a guest with sshd and host keys but nothing that
// regenerates them at first boot (no cloud-init, no systemd): removing
// the keys is refused, forcibly.
func keysNoRegenerator(t *testing.T) string {
	dir := scratch(t)
	writeGuest(t, dir, map[string]string{
		"etc/os-release":                   "ID=alpine\n",
		"etc/machine-id":                   "4f6b1c0e9a2d4e7f8a1b2c3d4e5f6a7b\n",
		"etc/ssh/ssh_host_ed25519_key":     "K",
		"etc/ssh/ssh_host_ed25519_key.pub": "K",
		"usr/sbin/sshd":                    "ELF",
	})
	return dir
}

// TestConversation holds sealprep's side of the conversation whole, to
// testdata/conversation.golden: apply without a terminal says so first
// and lists every refusal with its operation; --force says what went
// ahead; verify checks what apply recorded, or says what it assumed.
func TestConversation(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Apply without --yes and without a terminal, with a second refusal: both at once.\n")
	talk(t, &b, keysNoRegenerator(t), "", []step{
		{args: []string{"apply", "--root", "ROOT"}},
		{args: []string{"apply", "--root", "ROOT"}, tty: true, stdin: "n\n"},
		{args: []string{"apply", "--root", "ROOT", "--ops", "machine-id"}, tty: true, stdin: "no\n"},
	})
	b.WriteString("\n# --force over that refusal: the keys are removed, and the report says so; verify gives apply's verdict, the forced refusal a kept item.\n")
	talk(t, &b, keysNoRegenerator(t), "", []step{
		{args: []string{"plan", "--root", "ROOT", "--force"}},
		{args: []string{"apply", "--root", "ROOT", "--force", "--yes"}},
		{args: []string{"verify", "--root", "ROOT"}},
	})
	b.WriteString("\n# verify after apply --ops -ssh-host-keys checks what apply ran.\n")
	talk(t, &b, keysNoRegenerator(t), "", []step{
		{args: []string{"apply", "--root", "ROOT", "--ops", "-ssh-host-keys", "--machine-id-mode", "uninitialized", "--yes"}},
		{args: []string{"verify", "--root", "ROOT"}},
		{args: []string{"verify", "--root", "ROOT", "--machine-id-mode", "empty"}},
		{args: []string{"verify", "--root", "ROOT", "--ops", "defaults", "--machine-id-mode", "uninitialized"}},
	})
	b.WriteString("\n# verify with no record: the defaults, said to be assumed.\n")
	talk(t, &b, keysNoRegenerator(t), "", []step{
		{args: []string{"verify", "--root", "ROOT", "--ops", "-ssh-host-keys"}},
		{args: []string{"verify", "--root", "ROOT"}},
	})
	b.WriteString("\n# A root that is not an OS root, and an --image that is a directory: every refusal, one line each.\n")
	bare := scratch(t)
	writeGuest(t, bare, map[string]string{"etc/hostname": "x\n"})
	talk(t, &b, bare, "", []step{
		{args: []string{"apply", "--root", "ROOT", "--ops", "hostname"}},
		{args: []string{"apply", "--image", "ROOT/etc"}},
	})
	testenv.Golden(t, filepath.Join("testdata", "conversation.golden"), b.String(), *update)
}

// TestImageConversation: an --image report names the image and its root
// partition once, in its header, and speaks of guest paths only.
func TestImageConversation(t *testing.T) {
	requireImage(t)
	requireAppliance(t)
	t.Setenv("SEALPREP_APPLIANCE_INIT", sealprepBinary(t))
	dir := t.TempDir()
	tree := imagetest.Tree(t, map[string]string{
		"etc/os-release":          "ID=debian\nVERSION_ID=12\n",
		"etc/machine-id":          "23088bf0c2b64a7e9c8d3f1a2b4c5d6e\n",
		"var/lib/dbus/machine-id": "23088bf0c2b64a7e9c8d3f1a2b4c5d6e\n",
		"etc/fstab":               "LABEL=boot /boot ext4 defaults 0 2\n",
		"boot/":                   "",
		"root/.bash_history":      "ls\n",
	})
	boot := imagetest.Tree(t, map[string]string{"loader/entries/a.conf": "options root=LABEL=rootfs ro\n"})
	img := imagetest.Build(t, dir, "template", []imagetest.Part{
		{Type: imagetest.TypeLinux, FS: "ext4", SizeMiB: 24, Tree: tree, Label: "rootfs"},
		{Type: imagetest.TypeLinux, FS: "ext4", SizeMiB: 16, Tree: boot, Label: "boot"},
	}, false)
	name := "ROOT/" + filepath.Base(img)
	var b strings.Builder
	talk(t, &b, dir, filepath.Join(dir, "state"), []step{
		{args: []string{"plan", "--image", name}},
		{args: []string{"plan", "--image", name, "--trust-image-filesystems"}},
		{args: []string{"apply", "--image", name}, tty: true, stdin: "n\n"},
		{args: []string{"apply", "--image", name, "--yes"}},
		{args: []string{"verify", "--image", name}},
		{args: []string{"plan", "--image", "ROOT/missing.qcow2"}},
	})
	if strings.Contains(b.String(), "ROOT/state") {
		t.Errorf("a report names the session directory:\n%s", b.String())
	}
	testenv.Golden(t, filepath.Join("testdata", "image.golden"), b.String(), *update)
}
