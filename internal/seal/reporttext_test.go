package seal

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// TestReportText holds whole report texts to testdata/report.golden: an
// --image header (the image and its root partition once, then what else
// was mounted and why, in words), a refused image, and refusals, errors
// and notes with host paths rewritten to the guest's, one line each.
func TestReportText(t *testing.T) {
	const dir = "/run/sealprep/image/12536-0a1b2c3d4e5f/root"
	img := &ImageInfo{File: "/srv/images/template.qcow2", Format: "qcow2",
		Method: "qemu-storage-daemon's FUSE export and a loop device", Backing: []string{"/srv/images/base.qcow2"},
		Mounts: []ImageMount{
			{Path: "/", Dir: dir, Partition: 1, FSType: "ext4", Label: "rootfs",
				How: "its partition type marks it as the Linux root for amd64 (Discoverable Partitions Specification)"},
			{Path: "/boot/efi", Dir: dir + "/boot/efi", Partition: 2, FSType: "vfat", UUID: "ABCD-1234",
				How: "line 3 of the image's /etc/fstab names it as UUID=ABCD-1234"},
		},
		Notes:    []string{"the image's /etc/fstab line 4: UUID=0f7e on /var is not a partition of this image (or not named by UUID=, LABEL=, PARTUUID= or PARTLABEL=); not mounted, so the seal does not reach it"},
		Detached: true}
	meta := Meta{Tool: "sealprep", Version: "v1", Command: CommandApply, Root: dir, MachineIDMode: MachineIDEmpty,
		Operations: []Operation{opSSHHostKeys, opMachineID}, StartedAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), Image: img}
	plan := Plan{
		Actions: []Action{{Op: "machine-id", Kind: Truncate, Path: "/etc/machine-id", Mode: 0o444, Reason: "every clone must generate its own machine ID"}},
		Refusals: []Refusal{{Op: "ssh-host-keys", Path: "/etc/ssh", Forcible: true,
			Message: "sshd would not start on clones: nothing makes SSH host keys at first boot (no cloud-init ssh module, no sshd-keygen unit)", Fix: "install cloud-init, or ssh-keygen and systemd (sealprep then adds its own key unit), or drop the operation (--ops -ssh-host-keys), or --force"}},
		Errors: []OpError{{Op: "logfiles", Error: "open " + dir + "/var/log/private: permission denied"}},
		Notes:  []Note{{Op: "machine-id", Path: "/var/lib/dbus/machine-id", Message: "is a symlink\nto " + dir + "/etc/machine-id"}},
	}
	refused := RefusedReport(meta, plan, []Refusal{{Op: OpConfirm, Message: "standard input is not a terminal", Fix: "add --yes to apply without asking"}}, nil)
	refused.guestPaths(dir)

	forced := plan
	forced.Refusals, forced.Errors = nil, nil
	forced.Notes = append(forced.Notes, Note{Op: "ssh-host-keys", Path: "/etc/ssh", Forced: true,
		Message: plan.Refusals[0].Message})
	done := []Result{{Action: plan.Actions[0], Status: Done}}
	applied := ApplyReport(meta, forced, done, Plan{}, nil)
	applied.guestPaths(dir)

	noImage := meta
	noImage.Image = &ImageInfo{File: "/srv/images/template.qcow2", Mounts: []ImageMount{}}
	noImage.Root = "template.qcow2"
	badImage := RefusedReport(noImage, Plan{}, []Refusal{{Op: OpImage, Message: "the image is in use: another process holds QEMU's write lock on it"}}, nil)

	var b bytes.Buffer
	for _, r := range []Report{refused, applied, badImage} {
		if err := WriteText(&b, r); err != nil {
			t.Fatal(err)
		}
		b.WriteString("----\n")
	}
	testenv.Golden(t, filepath.Join("testdata", "report.golden"), b.String(), *update)
}

// TestGuestPath: the mount directory goes, in every position; a longer
// name that only starts like it stays.
func TestGuestPath(t *testing.T) {
	const dir = "/mnt/img"
	for in, want := range map[string]string{
		"open /mnt/img/etc/passwd: permission denied": "open /etc/passwd: permission denied",
		"stat /mnt/img: not a directory":              "stat /: not a directory",
		"/mnt/img2/x and /mnt/img/y":                  "/mnt/img2/x and /y",
		"/mnt/img":                                    "/",
		"nothing here":                                "nothing here",
	} {
		if got := guestPath(dir, in); got != want {
			t.Errorf("guestPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLeftAloneNotesSayItOnce: a note under "Left alone:" is one whole
// sentence (the kinds the operation removes in words) and does not say
// "left alone" again, in the text and in the JSON.
func TestLeftAloneNotesSayItOnce(t *testing.T) {
	dir, _ := newRoot(t, debianNodes())
	for _, command := range []string{CommandPlan, CommandVerify} {
		rep := runOn(t, dir, command, "defaults", nil)
		out := text(t, rep)
		if want := "[shell-history] /home/alice/.zsh_history: is a symlink, and this operation removes only regular files\n"; !strings.Contains(out, want) {
			t.Errorf("%s: no line %q in\n%s", command, want, out)
		}
		if strings.Contains(out, "left alone:") {
			t.Errorf("%s: a note repeats the heading:\n%s", command, out)
		}
		var b bytes.Buffer
		if err := WriteJSON(&b, rep); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), "left alone:") || !strings.Contains(b.String(), `"is a symlink, and this operation removes only regular files"`) {
			t.Errorf("%s: JSON notes:\n%s", command, b.String())
		}
	}
	if got := kindsNoun(fs.KindsOf(fs.KindRegular, fs.KindSymlink, fs.KindDir)); got != "regular files, directories and symlinks" {
		t.Errorf("kindsNoun = %q", got)
	}
}
