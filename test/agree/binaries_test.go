package agree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/checks/network-identity"
	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/seal"
)

// TestBinariesAgree builds roots of every machine-id state, D-Bus copy
// and boot configuration (the last including the cases where guestcheck's
// and sealprep's old copies of the root-mode rule disagreed), and holds
// sealprep's machine-id planner and guestcheck's network-identity check to
// the same reading of each: the same machine-id state, the same D-Bus
// fallback, the same root mode.
func TestBinariesAgree(t *testing.T) {
	const id = "4f6b1c0e9a2d4e7f8a1b2c3d4e5f6a7b"
	etcs := map[string]*string{"missing": nil, "empty": ptr(""), "uninitialized": ptr("uninitialized\n"),
		"valid": ptr(id + "\n"), "all zero": ptr(strings.Repeat("0", 32) + "\n"), "garbage": ptr("garbage\n")}
	dbuses := map[string]string{"no D-Bus copy": "", "D-Bus copy": "fedcba9876543210fedcba9876543210\n"}
	boots := map[string]map[string]string{
		"no boot configuration": nil,
		"GRUB ro":               {"/boot/grub/grub.cfg": "linux /vmlinuz root=/dev/vda1 ro quiet\n"},
		"kernel-install rw":     {"/etc/kernel/cmdline": "root=/dev/vda1 rw\n"},
		"fstab ro,rw":           {"/etc/fstab": "LABEL=r / ext4 ro,rw 0 1\n", "/etc/kernel/cmdline": "rw\n"},
		"BLS options ro, rw":    {"/boot/loader/entries/a.conf": "options root=x ro\noptions rw\n"},
		"kernel-install rw, GRUB ro": {"/etc/kernel/cmdline": "rw\n",
			"/boot/grub/grub.cfg": "linux /vmlinuz root=/dev/vda1 ro\n"},
	}
	n := 0
	for en, etc := range etcs {
		for dn, dbus := range dbuses {
			for bn, boot := range boots {
				n++
				t.Run(fmt.Sprintf("%s, %s, %s", en, dn, bn), func(t *testing.T) {
					files := map[string]string{"/etc/os-release": "ID=debian\n", "/usr/lib/systemd/systemd": "ELF"}
					if etc != nil {
						files[identity.MachineIDPath] = *etc
					}
					if dbus != "" {
						files[identity.DBusMachineIDPath] = dbus
					}
					for p, c := range boot {
						files[p] = c
					}
					agree(t, writeTree(t, files))
				})
			}
		}
	}
	if n < 60 {
		t.Fatalf("only %d roots", n)
	}
}

// agree compares what the two binaries make of the tree at dir.
func agree(t *testing.T, dir string) {
	t.Helper()
	root, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	conf, err := fs.OpenConfined(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer conf.Close()

	// guestcheck's reading and verdict.
	ev := identity.ReadCloneEvidence(root, false)
	codes := map[string]bool{}
	for _, f := range networkidentity.JudgeMachineID(ev, false) {
		codes[f.Code] = true
	}
	// sealprep's plan.
	ops, err := seal.Select(seal.All, "machine-id")
	if err != nil {
		t.Fatal(err)
	}
	plan := seal.MakePlan(context.Background(), conf, ops, seal.Options{})
	if len(plan.Errors) > 0 {
		t.Fatalf("plan: %+v", plan.Errors)
	}
	clears := func(p string) bool {
		return slices.ContainsFunc(plan.Actions, func(a seal.Action) bool { return a.Path == p && a.Tidy == "" })
	}

	mid := identity.ReadMachineID(conf)
	if g := identity.ReadMachineID(root); g.Etc.Found != mid.Etc.Found || g.Etc.Kind != mid.Etc.Kind || g.DBusFallback() != mid.DBusFallback() {
		t.Fatalf("the readers differ: %+v and %+v", g, mid)
	}
	if ev.MachineIDFound != mid.Etc.Found || mid.Etc.Found && ev.MachineIDKind != mid.Etc.Kind {
		t.Errorf("guestcheck reads %v/%s, identity %v/%s", ev.MachineIDFound, ev.MachineIDKind, mid.Etc.Found, mid.Etc.Kind)
	}
	if ev.DBusMachineID != mid.DBusFallback() {
		t.Errorf("guestcheck's D-Bus fallback %q, identity's %q", ev.DBusMachineID, mid.DBusFallback())
	}
	// A machine ID in the file: sealprep clears it exactly when systemd
	// would keep it.
	if mid.Etc.Found && clears(identity.MachineIDPath) != mid.Etc.Kind.HoldsID() {
		t.Errorf("sealprep clears /etc/machine-id: %v, but it holds %s: %+v", clears(identity.MachineIDPath), mid.Etc.Kind, plan.Actions)
	}
	// The D-Bus copy resurrects the ID: both say so, or neither.
	if gc, sp := codes[networkidentity.CodeIDMachineIDDBusFallback.ID], clears(identity.DBusMachineIDPath) && mid.Unset(); gc != sp {
		t.Errorf("D-Bus fallback: guestcheck %v, sealprep %v: %+v", gc, sp, plan.Actions)
	}
	if mid.Etc.Found || ev.DBusMachineID != "" {
		return
	}
	// A missing file: the same root mode, and the same verdict on it.
	mode := identity.ReadRootMode(conf)
	if ev.Root != mode || identity.ReadRootMode(root) != mode {
		t.Errorf("root mode: guestcheck %+v, sealprep %+v", ev.Root, mode)
	}
	if gc, sp := codes[networkidentity.CodeIDMachineIDMissingRO.ID], clears(identity.MachineIDPath); gc != sp || gc != mode.MissingMachineIDFatal() {
		t.Errorf("missing file on %+v: guestcheck fails %v, sealprep must write %v", mode, gc, sp)
	}
}

// writeTree writes files under a new directory and returns it.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func ptr(s string) *string { return &s }
