package prove

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/host/image"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: QEMU drops to a dynamic uid only when prove runs as root (as a user it runs as that user)")
	}
}

// TestFakeQEMUConfined: as root, the fake QEMU runs as the run's dynamic
// uid with no groups, its clone directory and files are that uid's with
// modes 0700 and 0600, it reads the template through its descriptor, and
// its arguments hold the seccomp sandbox and the template only as an fd
// set: no -drive or -blockdev names the template's path.
func TestFakeQEMUConfined(t *testing.T) {
	needRoot(t)
	res, _, dir, j := fakeRunDir(t, "silent", 3*time.Second)
	for _, c := range res {
		cdir := filepath.Join(dir, c.Name)
		b, err := os.ReadFile(filepath.Join(cdir, "fake-qemu.json"))
		if err != nil {
			t.Fatalf("%s: %v (%s)", c.Name, err, c.Problem)
		}
		var who struct {
			UID, GID int
			Groups   []int
			Args     []string
			FDs      []string
		}
		json.Unmarshal(b, &who)
		if who.UID != j.UID() || who.GID != j.GID() || who.UID < 61184 || who.UID > 65519 || len(who.Groups) != 0 {
			t.Errorf("%s: the fake QEMU ran as uid %d gid %d groups %v; want the run's dynamic uid %d, no groups", c.Name, who.UID, who.GID, who.Groups, j.UID())
		}
		if len(who.FDs) != 1 || !strings.Contains(who.FDs[0], "read 512 bytes <nil>") {
			t.Errorf("%s: the template's descriptor: %q", c.Name, who.FDs)
		}
		checkConfinedArgs(t, c.Name, who.Args, "template.img")
		for p, mode := range map[string]os.FileMode{cdir: 0o700 | os.ModeDir, filepath.Join(cdir, "disk.qcow2"): 0o600,
			filepath.Join(cdir, "seed.iso"): 0o600, filepath.Join(cdir, "console.log"): 0o600, dir: 0o700 | os.ModeDir} {
			st, err := os.Stat(p)
			if err != nil {
				t.Errorf("%v", err)
				continue
			}
			if uid := st.Sys().(*syscall.Stat_t).Uid; int(uid) != j.UID() || st.Mode() != mode {
				t.Errorf("%s: owner %d mode %v; want %d, %v", p, uid, st.Mode(), j.UID(), mode)
			}
		}
	}
	noFakeLeft(t)
}

// checkConfinedArgs asserts the sandbox, the fd set and that no disk
// option names the template.
func checkConfinedArgs(t *testing.T, name string, args []string, template string) {
	t.Helper()
	if sb := argValues(args, "-sandbox"); len(sb) != 1 || sb[0] != "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny" {
		t.Errorf("%s: -sandbox %q", name, sb)
	}
	if fd := argValues(args, "-add-fd"); len(fd) != 1 || fd[0] != "fd=3,set=1,opaque=tmpl-0" {
		t.Errorf("%s: -add-fd %q", name, fd)
	}
	bd := strings.Join(argValues(args, "-blockdev"), "\n")
	if !strings.Contains(bd, `"filename":"/dev/fdset/1"`) || !strings.Contains(bd, `"backing":"tmpl-0"`) {
		t.Errorf("%s: -blockdev %s", name, bd)
	}
	for _, v := range append(argValues(args, "-drive"), argValues(args, "-blockdev")...) {
		if strings.Contains(v, template) {
			t.Errorf("%s: a disk option names the template: %s", name, v)
		}
	}
}

// TestRealQEMUConfined starts the installed qemu-system-x86_64 with
// prove's arguments for a 1 MiB raw template (nothing boots: SeaBIOS
// finds no disk to boot, under TCG) as prove does as root, and asks the
// kernel and QEMU: it runs as a dynamic uid under a seccomp filter, and
// its disk is the overlay on the fd set, the template's path nowhere,
// though the overlay's header names a file that does not exist.
func TestRealQEMUConfined(t *testing.T) {
	needRoot(t)
	qemu := testenv.Tool(t, "qemu-system-x86_64", "qemu-system-x86")
	qemuImg := testenv.Tool(t, "qemu-img", "qemu-utils")
	dir := searchableTempDir(t)
	img, f := tinyTemplate(t, dir, 0o600)
	j, c := oneClone(t, dir)
	// The header names a path that does not exist: QEMU must not care.
	boot := Boot{Firmware: FirmwareBIOS, Accel: AccelTCG, MemoryMiB: 128, CPUs: 1,
		Chain: &image.Chain{Layers: []image.Layer{{Path: filepath.Join(dir, "nonexistent.img"), Format: "raw", VirtualSize: 1 << 20, File: f}}}}
	r := &cloneRun{cfg: Config{QEMUImg: qemuImg}, clone: c, boot: boot, jail: j}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.prepare(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	args := Args(c, boot, Devices{})
	checkConfinedArgs(t, "qemu", args, img)
	v, err := start(ctx, qemu, c, args, boot.files(), j)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Stop()
	st, err := os.ReadFile(filepath.Join("/proc", itoa(v.proc.Pid()), "status"))
	if err != nil {
		t.Fatal(err)
	}
	want := "Uid:\t" + itoa(j.UID()) + "\t" + itoa(j.UID()) + "\t" + itoa(j.UID()) + "\t" + itoa(j.UID()) + "\n"
	if !strings.Contains(string(st), want) || !strings.Contains(string(st), "\nSeccomp:\t2\n") || strings.Contains(string(st), "Uid:\t0") {
		t.Errorf("QEMU's status, want %q and Seccomp 2:\n%s", want, st)
	}
	var nodes []struct {
		Node    string `json:"node-name"`
		File    string `json:"file"`
		Backing string `json:"backing_file"`
	}
	out, err := v.qmp(`{"execute":"query-named-block-nodes"}`, 10*time.Second)
	var ret struct {
		Return json.RawMessage `json:"return"`
	}
	if err != nil || json.Unmarshal(out, &ret) != nil || json.Unmarshal(ret.Return, &nodes) != nil {
		t.Fatalf("query-named-block-nodes: %.300s %v", out, err)
	}
	files := map[string]string{}
	for _, n := range nodes {
		files[n.Node] = n.File
		// The header's name shows up as backing-filename, metadata QEMU
		// read; what it opened are the nodes' files and backing files.
		if strings.Contains(n.File+n.Backing, "template.img") || strings.Contains(n.File+n.Backing, "nonexistent.img") {
			t.Errorf("QEMU opened a template path: node %s, file %s, backing %s", n.Node, n.File, n.Backing)
		}
		if n.Node == "disk0" && n.Backing != "/dev/fdset/1" {
			t.Errorf("disk0's backing file is %q, want /dev/fdset/1", n.Backing)
		}
	}
	if files["tmpl-file0"] != "/dev/fdset/1" || files["tmpl-0"] != "/dev/fdset/1" || !strings.Contains(files["disk0"], "/dev/fdset/1") {
		t.Errorf("block nodes %v: want the template as /dev/fdset/1 under disk0", files)
	}
}

// TestRunConfined: Run itself, on the fake QEMU with a kernel boot and
// --keep: the template reaches QEMU as a descriptor, the kernel and
// initrd as the run's own copies (the dynamic user's, 0600), and the
// template's file is closed when Run returns.
func TestRunConfined(t *testing.T) {
	needRoot(t)
	qemuImg := testenv.Tool(t, "qemu-img", "qemu-utils")
	old := noAgentGrace
	noAgentGrace = time.Second
	defer func() { noAgentGrace = old }()
	t.Setenv(fakeEnv, "noagent")
	dir := searchableTempDir(t)
	img, kernel, initrd := filepath.Join(dir, "template.img"), filepath.Join(dir, "vmlinuz-host"), filepath.Join(dir, "initrd-host")
	os.WriteFile(img, make([]byte, 1<<20), 0o600)
	os.WriteFile(kernel, []byte("kernel"), 0o600)
	os.WriteFile(initrd, []byte("initrd"), 0o600)
	rep, err := Run(context.Background(), Config{Image: img, Clones: 1, Kernel: kernel, Initrd: initrd, Accel: AccelTCG,
		QEMU: fakeBin, QEMUImg: qemuImg, Keep: filepath.Join(dir, "keep"), Timeout: time.Minute}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Clones[0]; c.Boot != BootUp {
		t.Fatalf("%s: %s: %s", c.Name, c.Boot, c.Problem)
	}
	b, err := os.ReadFile(filepath.Join(rep.Kept, "clone-1", "fake-qemu.json"))
	if err != nil {
		t.Fatal(err)
	}
	var who struct {
		UID  int
		Args []string
		FDs  []string
	}
	json.Unmarshal(b, &who)
	checkConfinedArgs(t, "run", who.Args, "template.img")
	if k := argValues(who.Args, "-kernel"); len(k) != 1 || k[0] != filepath.Join(rep.Kept, "vmlinuz") {
		t.Errorf("-kernel %q, want the run's copy", k)
	}
	if len(who.FDs) != 1 || !strings.Contains(who.FDs[0], "read 512 bytes <nil>") {
		t.Errorf("the template's descriptor: %q", who.FDs)
	}
	for _, f := range []string{"vmlinuz", "initrd"} {
		st, err := os.Stat(filepath.Join(rep.Kept, f))
		if err != nil || int(st.Sys().(*syscall.Stat_t).Uid) != who.UID || st.Mode() != 0o600 {
			t.Errorf("%s: %v %v; want QEMU's uid %d's, 0600", f, st, err, who.UID)
		}
	}
	// The template is no longer open in this process.
	fds, _ := filepath.Glob("/proc/self/fd/*")
	for _, fd := range fds {
		if l, _ := os.Readlink(fd); l == img {
			t.Errorf("the template is still open as %s", fd)
		}
	}
}

// oneClone is a jail and clone-1 in a staged run directory under dir.
func oneClone(t *testing.T, dir string) (Jail, Clone) {
	t.Helper()
	j, err := NewJail(AccelTCG, "/dev/kvm")
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run")
	os.Mkdir(run, 0o700)
	if err := StageBoot(run, &Boot{}, j); err != nil {
		t.Fatal(err)
	}
	c, _ := NewClone(0, filepath.Join(run, "clone-1"))
	return j, c
}
