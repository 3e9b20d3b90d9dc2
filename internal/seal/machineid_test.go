package seal

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

const validID = "4f6b1c0e9a2d4e7f8a1b2c3d4e5f6a7b"

// mid is one state of the image's machine-id files.
type mid struct {
	name    string
	content *string // nil: missing
	perm    os.FileMode
	dbus    string // "", "link", or the content of a regular copy
}

func str(s string) *string { return &s }

// midNodes is a minimal systemd image with m and a kernel command line
// that mounts the root rw or ro.
func midNodes(m mid, boot string) []node {
	nodes := []node{
		f("/etc/os-release", "ID=debian\n"),
		f("/usr/lib/systemd/systemd", "ELF"),
		f("/etc/kernel/cmdline", "root=/dev/vda1 "+boot+" quiet\n"),
		d("/run"),
	}
	if m.content != nil {
		nodes = append(nodes, fm("/etc/machine-id", *m.content, m.perm))
	}
	switch m.dbus {
	case "":
	case "link":
		nodes = append(nodes, l("/var/lib/dbus/machine-id", "/etc/machine-id"))
	default:
		nodes = append(nodes, f("/var/lib/dbus/machine-id", m.dbus))
	}
	return nodes
}

// sealprepSays is verify's verdict on m with --ops machine-id.
func sealprepSays(t *testing.T, m mid, boot string, mode MachineIDMode) (bool, Report) {
	t.Helper()
	_, root := newRoot(t, midNodes(m, boot))
	plan := MakePlan(context.Background(), root, []Operation{opMachineID}, Options{MachineIDMode: mode})
	rep := PlanReport(Meta{Command: "verify"}, plan, nil, nil)
	return rep.Status == StatusSealed, rep
}

// TestVerifyMachineIDRules is machine-id(5) as verify must read it: an
// empty or "uninitialized" file is sealed whatever its mode (a mode other
// than 0444 is a warning), in either --machine-id-mode; a missing file is
// sealed only when the root is writable at boot; a valid ID never is.
func TestVerifyMachineIDRules(t *testing.T) {
	for _, tc := range []struct {
		m      mid
		boot   string
		sealed bool
		warns  int // in --machine-id-mode empty
	}{
		{mid{"empty 0444", str(""), 0o444, ""}, "ro", true, 0},
		{mid{"empty 0644", str(""), 0o644, ""}, "ro", true, 1},
		{mid{"empty 0600", str(""), 0o600, ""}, "rw", true, 1},
		{mid{"uninitialized 0444", str("uninitialized\n"), 0o444, ""}, "ro", true, 0},
		{mid{"uninitialized 0644", str("uninitialized\n"), 0o644, ""}, "ro", true, 1},
		{mid{"uninitialized, no newline", str("uninitialized"), 0o444, ""}, "ro", true, 0},
		{mid{"valid", str(validID + "\n"), 0o444, ""}, "rw", false, 0},
		{mid{"valid, no newline", str(validID), 0o644, ""}, "rw", false, 0},
		{mid{"garbage", str("not-an-id\n"), 0o444, ""}, "ro", true, 1},
		{mid{"missing, root rw at boot", nil, 0, ""}, "rw", true, 1},
		{mid{"missing, root ro at boot", nil, 0, ""}, "ro", false, 0},
		{mid{"empty, D-Bus copy of the ID", str(""), 0o444, validID + "\n"}, "rw", false, 0},
		{mid{"empty, empty D-Bus copy", str(""), 0o444, ""}, "rw", true, 0},
		{mid{"empty, D-Bus garbage", str(""), 0o444, "junk"}, "rw", true, 1},
		{mid{"empty, D-Bus link", str(""), 0o444, "link"}, "rw", true, 0},
	} {
		t.Run(tc.m.name, func(t *testing.T) {
			for _, mode := range []MachineIDMode{MachineIDEmpty, MachineIDUninitialized} {
				sealed, rep := sealprepSays(t, tc.m, tc.boot, mode)
				if sealed != tc.sealed {
					t.Errorf("--machine-id-mode %s: sealed = %v, want %v: %+v", mode, sealed, tc.sealed, rep.Actions)
				}
				if mode == MachineIDEmpty && rep.Summary.Warnings != tc.warns {
					t.Errorf("--machine-id-mode empty: %d warnings, want %d: %+v", rep.Summary.Warnings, tc.warns, rep.Actions)
				}
				if ExitCode(rep) != map[bool]int{true: ExitOK, false: ExitProblem}[tc.sealed] {
					t.Errorf("exit code %d for sealed=%v", ExitCode(rep), tc.sealed)
				}
			}
		})
	}
	// The case that applies is named.
	_, rep := sealprepSays(t, mid{"missing", nil, 0, ""}, "ro", MachineIDEmpty)
	if len(rep.Actions) != 1 || !strings.Contains(rep.Actions[0].Reason, "read-only when systemd starts (the kernel command line in /etc/kernel/cmdline mounts the root read-only (ro))") {
		t.Errorf("missing on a read-only root: %+v", rep.Actions)
	}
	_, rep = sealprepSays(t, mid{"missing", nil, 0, ""}, "rw", MachineIDEmpty)
	if len(rep.Actions) != 1 || !strings.Contains(rep.Actions[0].Tidy, "every kernel command line in the image ends in rw") {
		t.Errorf("missing on a writable root: %+v", rep.Actions)
	}
	// "uninitialized" is kept under the default mode, with a note.
	_, rep = sealprepSays(t, mid{"u", str("uninitialized\n"), 0o444, ""}, "ro", MachineIDEmpty)
	if len(rep.Actions) != 0 || len(rep.Notes) != 1 {
		t.Errorf("uninitialized under --machine-id-mode empty: actions %+v notes %+v", rep.Actions, rep.Notes)
	}
}

// systemdSays runs systemd's own machine-id setup (`systemd-machine-id-setup
// --root DIR --print`) on two fresh copies of the image, with the root
// mounted read-only (and a tmpfs /run, as at boot) when boot is "ro": the
// image is sealed when both succeed with different IDs. Failing is
// systemd refusing to boot; the same ID twice is an ID the image fixes.
func systemdSays(t *testing.T, setup, unshare string, m mid, boot string) (bool, string) {
	t.Helper()
	var ids []string
	for i := 0; i < 2; i++ {
		dir := scratchDir(t)
		build(t, dir, midNodes(m, boot))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var cmd *exec.Cmd
		if boot == "ro" {
			cmd = exec.CommandContext(ctx, unshare, "--mount", "--propagation", "private", "sh", "-c",
				`mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && mount -t tmpfs tmpfs "$1/run" && exec "$2" --root="$1" --print`,
				"sh", dir, setup)
		} else {
			cmd = exec.CommandContext(ctx, setup, "--root="+dir, "--print")
		}
		out, err := cmd.Output()
		cancel()
		if err != nil {
			msg := ""
			if ee, ok := err.(*exec.ExitError); ok {
				msg = strings.TrimSpace(string(ee.Stderr))
			}
			return false, "fails: " + msg
		}
		ids = append(ids, strings.TrimSpace(string(out)))
	}
	if ids[0] == ids[1] {
		return false, "keeps " + ids[0]
	}
	return true, "new IDs " + ids[0] + ", " + ids[1]
}

// generatedMIDs are machine-id contents near every boundary of systemd's
// reader: IDs of each case with and without newline, one byte off, UUID
// form, "uninitialized" variants, random bytes.
func generatedMIDs(rng *rand.Rand, n int) []mid {
	hex := func(upper bool) string {
		const lo, up = "0123456789abcdef", "0123456789ABCDEF"
		b := make([]byte, 32)
		for i := range b {
			if upper && rng.Intn(2) == 0 {
				b[i] = up[rng.Intn(16)]
			} else {
				b[i] = lo[rng.Intn(16)]
			}
		}
		return string(b)
	}
	perms := []os.FileMode{0o444, 0o644, 0o400, 0o600, 0o000}
	var out []mid
	for i := 0; i < n; i++ {
		var s string
		switch rng.Intn(8) {
		case 0:
			s = hex(rng.Intn(2) == 0)
		case 1:
			s = hex(true) + "\n"
		case 2:
			s = hex(false) + []string{"\n\n", " ", "\r\n", "\t", "x"}[rng.Intn(5)]
		case 3:
			h := []byte(hex(false))
			h[rng.Intn(32)] = "gz-. \n"[rng.Intn(6)]
			s = string(h)
		case 4:
			h := hex(false)
			s = h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:] + []string{"", "\n"}[rng.Intn(2)]
		case 5:
			s = []string{"uninitialized", "uninitialized\n", "UNINITIALIZED\n", "uninitialized\n\n", "uninitialized \n", "uninitialize\n"}[rng.Intn(6)]
		case 6:
			s = hex(false)[:rng.Intn(32)]
		default:
			b := make([]byte, rng.Intn(40))
			rng.Read(b)
			s = string(b)
		}
		out = append(out, mid{fmt.Sprintf("generated %d %q", i, s), str(s), perms[rng.Intn(len(perms))], ""})
	}
	return out
}

// TestMachineIDVerdictAgreesWithSystemd feeds the same image states to
// sealprep verify and to systemd-machine-id-setup, with the root
// writable and read-only at boot, and requires the same sealed/not-sealed
// verdict. The states are hand-made and generated (fixed seed).
func TestMachineIDVerdictAgreesWithSystemd(t *testing.T) {
	testenv.RequireRoot(t, "a read-only root for systemd-machine-id-setup needs a private mount namespace")
	setup := testenv.Tool(t, "systemd-machine-id-setup", "systemd")
	unshare := testenv.Tool(t, "unshare", "util-linux")
	testenv.Tool(t, "mount", "mount")
	hand := []mid{
		{"missing", nil, 0, ""},
		{"empty 0444", str(""), 0o444, ""},
		{"empty 0644", str(""), 0o644, ""},
		{"uninitialized", str("uninitialized\n"), 0o444, ""},
		{"uninitialized 0600 no newline", str("uninitialized"), 0o600, ""},
		{"valid", str(validID + "\n"), 0o444, ""},
		{"valid without newline", str(validID), 0o644, ""},
		{"valid upper case", str(strings.ToUpper(validID) + "\n"), 0o444, ""},
		{"all zeros", str(strings.Repeat("0", 32) + "\n"), 0o444, ""},
		{"garbage", str("hello world\n"), 0o644, ""},
		{"UUID form", str("4f6b1c0e-9a2d-4e7f-8a1b-2c3d4e5f6a7b\n"), 0o444, ""},
		{"empty, D-Bus copy of the ID", str(""), 0o444, validID + "\n"},
		{"uninitialized, D-Bus copy of the ID", str("uninitialized\n"), 0o444, validID},
		{"empty, D-Bus garbage", str(""), 0o444, "junk\n"},
		{"empty, D-Bus link", str(""), 0o444, "link"},
		{"missing, D-Bus copy of the ID", nil, 0, validID + "\n"},
	}
	seed := int64(20261201)
	cases := append(hand, generatedMIDs(rand.New(rand.NewSource(seed)), 40)...)
	t.Logf("%d states (generated with seed %d), each with the root rw and ro at boot", len(cases), seed)
	for _, m := range cases {
		for _, boot := range []string{"rw", "ro"} {
			want, why := systemdSays(t, setup, unshare, m, boot)
			for _, mode := range []MachineIDMode{MachineIDEmpty, MachineIDUninitialized} {
				got, rep := sealprepSays(t, m, boot, mode)
				if got != want {
					t.Errorf("%s, root %s at boot, --machine-id-mode %s: sealprep says sealed=%v, systemd %s\n  actions: %+v",
						m.name, boot, mode, got, why, rep.Actions)
				}
			}
		}
	}
	// The oracle itself must tell the cases apart, or this proves nothing.
	if ok, _ := systemdSays(t, setup, unshare, hand[0], "ro"); ok {
		t.Error("systemd accepted a missing machine-id on a read-only root: the oracle is not set up")
	}
	if ok, _ := systemdSays(t, setup, unshare, hand[5], "rw"); ok {
		t.Error("systemd replaced a valid machine-id: the oracle is not set up")
	}
	if ok, _ := systemdSays(t, setup, unshare, hand[1], "ro"); !ok {
		t.Error("systemd did not generate an ID for an empty file: the oracle is not set up")
	}
}

// TestMachineIDDropsRawDUID: the machine-id operation renews the DUID
// systemd-networkd derives from the machine ID, and drops a
// DUIDRawData= (with its continuation line) that would pin one DUID for
// every clone; DUIDType= and everything else stay.
func TestMachineIDDropsRawDUID(t *testing.T) {
	dir, root := newRoot(t, append(base("debian"),
		f("/etc/systemd/networkd.conf", "[Network]\nSpeedMeter=no\n\n[DHCPv4]\nDUIDType=link-layer-time\nDUIDRawData=00:01:52:54:00:12:34:56\n"),
		f("/usr/lib/systemd/networkd.conf.d/50-duid.conf", "[DHCPv6]\nDUIDRawData=00:01:\\\n  52:54\n# kept\n"),
		f("/etc/systemd/networkd.conf.d/60-other.conf", "[DHCPv6]\nDUIDType=link-layer\n"),
	))
	ops, _ := Select(All, "machine-id")
	_, res := applyAll(t, root, ops, Options{})
	for p, w := range map[string]string{
		"etc/systemd/networkd.conf":                    "[Network]\nSpeedMeter=no\n\n[DHCPv4]\nDUIDType=link-layer-time\n",
		"usr/lib/systemd/networkd.conf.d/50-duid.conf": "[DHCPv6]\n# kept\n",
		"etc/systemd/networkd.conf.d/60-other.conf":    "[DHCPv6]\nDUIDType=link-layer\n",
	} {
		b, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil || string(b) != w {
			t.Errorf("%s = %q (%v), want %q (results %+v)", p, b, err, w, res)
		}
	}
	if again := MakePlan(context.Background(), root, ops, Options{}); len(again.Actions) != 0 {
		t.Errorf("verify after apply: %+v", again.Actions)
	}
}
