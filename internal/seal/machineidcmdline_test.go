package seal

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every leak path is found, fixed by apply, and verify (a re-plan) finds
// nothing; unrelated lines and other parameters are kept byte for byte.
func TestMachineIDLeakPaths(t *testing.T) {
	const id = "23088bf0c2b64a7e9c8d3f1a2b4c5d6e"
	grubenv := "# GRUB Environment Block\nkernelopts=root=/dev/vda2 ro systemd.machine_id=" + id + "\n"
	grubenv += strings.Repeat("#", 1024-len(grubenv))
	nodes := []node{
		f("/etc/os-release", "ID=debian\n"),
		f("/etc/kernel/cmdline", "root=/dev/vda1 ro systemd.machine_id="+id+" quiet\n"),
		f("/etc/default/grub", "GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX_DEFAULT=\"quiet\"\nGRUB_CMDLINE_LINUX=\"console=ttyS0 systemd.machine_id="+id+"\"\n# systemd.machine_id= in a comment stays\n"),
		f("/etc/default/grub.d/50-cloudimg.cfg", "GRUB_CMDLINE_LINUX_DEFAULT=\"$GRUB_CMDLINE_LINUX_DEFAULT systemd.machine_id=firmware\"\n"),
		f("/boot/loader/entries/"+id+"-6.1.0.conf", "title Debian\nlinux /vmlinuz\noptions root=/dev/vda2 systemd.machine_id="+id+"\n"),
		f("/boot/efi/loader/entries/other.conf", "title Other\noptions root=/dev/vda2 systemd.set_credential=system.machine_id:"+id+"\n"),
		f("/efi/loader/entries/clean.conf", "title Clean\noptions root=/dev/vda2\n"),
		f("/boot/grub/grub.cfg", "menuentry 'Debian' {\n\tlinux\t/vmlinuz root=/dev/vda2 ro systemd.machine_id="+id+"\n\tinitrd\t/initrd.img\n}\n# echo systemd.machine_id=x\n"),
		f("/boot/grub2/grubenv", grubenv),
		f("/etc/credstore/system.machine_id", id+"\n"),
		f("/etc/credstore/other", "x\n"),
		f("/etc/credstore.encrypted/system.machine_id", "enc"),
		f("/usr/lib/credstore/system.machine_id", id),
	}
	dir, root := newRoot(t, nodes)
	ops := []Operation{opMachineIDCmdline, opMachineIDCredential}
	plan := MakePlan(context.Background(), root, ops, Options{})
	if len(plan.Errors) > 0 || len(plan.Refusals) > 0 {
		t.Fatalf("errors %v refusals %v", plan.Errors, plan.Refusals)
	}
	var paths []string
	for _, a := range plan.Actions {
		paths = append(paths, string(a.Kind)+" "+a.Path)
	}
	want := []string{
		"rewrite /etc/kernel/cmdline", "rewrite /etc/default/grub", "rewrite /boot/grub/grub.cfg",
		"rewrite /boot/grub2/grubenv", "rewrite /etc/default/grub.d/50-cloudimg.cfg",
		"rewrite /boot/loader/entries/" + id + "-6.1.0.conf", "rewrite /boot/efi/loader/entries/other.conf",
		"remove /etc/credstore/system.machine_id", "remove /etc/credstore.encrypted/system.machine_id",
		"remove /usr/lib/credstore/system.machine_id",
	}
	if strings.Join(paths, "\n") != strings.Join(want, "\n") {
		t.Errorf("plan:\n%s\nwant:\n%s", strings.Join(paths, "\n"), strings.Join(want, "\n"))
	}
	x := &Executor{Root: root}
	for _, r := range x.Apply(context.Background(), plan.Actions) {
		if r.Status == Failed {
			t.Errorf("%s %s: %s", r.Kind, r.Path, r.Error)
		}
	}
	if after := MakePlan(context.Background(), root, ops, Options{}); len(after.Actions) > 0 {
		t.Errorf("verify finds %d actions left: %+v", len(after.Actions), after.Actions)
	}
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	checks := map[string]string{
		"/etc/kernel/cmdline":                        "root=/dev/vda1 ro quiet\n",
		"/etc/default/grub":                          "GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX_DEFAULT=\"quiet\"\nGRUB_CMDLINE_LINUX=\"console=ttyS0\"\n# systemd.machine_id= in a comment stays\n",
		"/etc/default/grub.d/50-cloudimg.cfg":        "GRUB_CMDLINE_LINUX_DEFAULT=\"$GRUB_CMDLINE_LINUX_DEFAULT\"\n",
		"/boot/efi/loader/entries/other.conf":        "title Other\noptions root=/dev/vda2\n",
		"/boot/loader/entries/" + id + "-6.1.0.conf": "title Debian\nlinux /vmlinuz\noptions root=/dev/vda2\n",
		"/boot/grub/grub.cfg":                        "menuentry 'Debian' {\n\tlinux\t/vmlinuz root=/dev/vda2 ro\n\tinitrd\t/initrd.img\n}\n# echo systemd.machine_id=x\n",
		"/etc/credstore/other":                       "x\n",
	}
	for p, w := range checks {
		if got := read(p); got != w {
			t.Errorf("%s:\n%q\nwant\n%q", p, got, w)
		}
	}
	if env := read("/boot/grub2/grubenv"); len(env) != 1024 || strings.Contains(env, "machine_id") || !strings.Contains(env, "kernelopts=root=/dev/vda2 ro\n") {
		t.Errorf("grubenv (%d bytes): %q", len(env), env)
	}
}

// On a live system booted with the parameter from a place sealprep does
// not edit, plan says so.
func TestMachineIDCmdlineLiveNote(t *testing.T) {
	_, root := newRoot(t, []node{f("/proc/cmdline", "BOOT_IMAGE=/vmlinuz systemd.machine_id=firmware\n")})
	plan := MakePlan(context.Background(), root, []Operation{opMachineIDCmdline}, Options{Live: true})
	if len(plan.Notes) != 1 || plan.Notes[0].Path != "/proc/cmdline" {
		t.Errorf("notes %+v", plan.Notes)
	}
	plan = MakePlan(context.Background(), root, []Operation{opMachineIDCmdline}, Options{})
	if len(plan.Notes) != 0 {
		t.Errorf("offline, /proc is not the guest's: notes %+v", plan.Notes)
	}
}
