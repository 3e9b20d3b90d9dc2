package imagetest

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

// Hostile is one crafted image of the kind a download can hold, made with
// the real qemu-img, and what sealprep's one-line refusal must name.
type Hostile struct {
	Name string
	// Image is the file given to --image.
	Image string
	// Want are substrings the refusal line holds: what was found.
	Want []string
	// Involved are every file the image names or sits beside, hashed
	// before and after to show nothing changed (a loop device's backing
	// file stands for the device).
	Involved []string
}

// HostileCorpus builds every case under dir. It attaches one loop device
// (a data file and a backing file point at it), detached at cleanup.
func HostileCorpus(t testing.TB, dir string) []Hostile {
	t.Helper()
	qemuImg := testenv.Tool(t, "qemu-img", "qemu-utils")
	testenv.Tool(t, "losetup", "mount")
	q := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(qemuImg, args...).CombinedOutput(); err != nil {
			t.Fatalf("qemu-img %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	q("create", "-q", "-f", "raw", p("victim.raw"), "16M")
	q("create", "-q", "-f", "raw", p("scratch.raw"), "16M")
	out, err := exec.Command("losetup", "-f", "--show", p("scratch.raw")).Output()
	if err != nil {
		t.Fatalf("losetup: %v", err)
	}
	loop := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command("losetup", "-d", loop).Run() })

	var cs []Hostile
	add := func(name, image string, involved []string, want ...string) {
		cs = append(cs, Hostile{Name: name, Image: image, Want: want, Involved: append([]string{image}, involved...)})
	}

	// An external data file: a file, then (amended) a loop device.
	q("create", "-q", "-f", "qcow2", "-o", "data_file="+p("victim.raw"), p("datafile.qcow2"), "16M")
	add("data file is a file", p("datafile.qcow2"), []string{p("victim.raw")}, "external data file", p("victim.raw"))
	q("create", "-q", "-f", "qcow2", "-o", "data_file="+p("df-tmp.raw"), p("dataloop.qcow2"), "16M")
	q("amend", "-f", "qcow2", "-o", "data_file="+loop, p("dataloop.qcow2"))
	add("data file is a loop device", p("dataloop.qcow2"), []string{p("scratch.raw")}, "external data file", loop)

	// A backing file that is a host block device.
	q("create", "-q", "-f", "qcow2", "-u", "-F", "raw", "-b", loop, p("backdev.qcow2"), "16M")
	add("backing file is a device", p("backdev.qcow2"), []string{p("scratch.raw")}, "backing file", loop, "block device")

	// A backing file whose format is not stated: QEMU 7.2 will not make
	// one, so the backing format extension's type is overwritten with one
	// QEMU ignores, as an older qemu-img's image would be.
	q("create", "-q", "-f", "raw", p("base.raw"), "16M")
	q("create", "-q", "-f", "qcow2", "-F", "raw", "-b", "base.raw", p("nofmt.qcow2"), "16M")
	patch(t, p("nofmt.qcow2"), func(b []byte) {
		i := bytes.Index(b[:64<<10], []byte{0xe2, 0x79, 0x2a, 0xca})
		if i < 0 {
			t.Fatal("nofmt.qcow2: no backing format extension to remove")
		}
		copy(b[i:], []byte{0, 0, 0, 1})
	})
	add("backing file without a format", p("nofmt.qcow2"), []string{p("base.raw")}, "base.raw", "does not state its format")

	// A relative backing path that climbs out of the image's directory.
	sub := p("sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	q("create", "-q", "-f", "qcow2", "-u", "-F", "raw", "-b", "../victim.raw", filepath.Join(sub, "climb.qcow2"), "16M")
	add("relative ../ backing path", filepath.Join(sub, "climb.qcow2"), []string{p("victim.raw")}, p("victim.raw"), "outside its directory")

	// A VMDK whose descriptor names an absolute extent.
	q("create", "-q", "-f", "vmdk", "-o", "subformat=monolithicFlat", p("flat.vmdk"), "16M")
	desc, err := os.ReadFile(p("flat.vmdk"))
	if err != nil {
		t.Fatal(err)
	}
	desc = bytes.Replace(desc, []byte(`"flat-flat.vmdk"`), []byte(`"`+p("victim.raw")+`"`), 1)
	if err := os.WriteFile(p("flat.vmdk"), desc, 0o644); err != nil {
		t.Fatal(err)
	}
	add("vmdk with an absolute extent", p("flat.vmdk"), []string{p("victim.raw"), p("flat-flat.vmdk")}, "VMDK", "extent", p("victim.raw"))

	// A qcow2 whose L1 table claims 128 MiB (16 Mi entries).
	q("create", "-q", "-f", "qcow2", p("bigl1.qcow2"), "16M")
	patch(t, p("bigl1.qcow2"), func(b []byte) { binary.BigEndian.PutUint32(b[36:], 16<<20) })
	add("huge L1 table", p("bigl1.qcow2"), nil, "L1")

	// A qcow2 that claims an exabyte (qemu-img makes it with 2 MiB clusters).
	q("create", "-q", "-f", "qcow2", "-o", "cluster_size=2M", p("exabyte.qcow2"), "1E")
	add("an exabyte", p("exabyte.qcow2"), nil, "virtual size", "1 EiB")

	// An encrypted qcow2 (the legacy AES method: made at once, where
	// LUKS spends seconds measuring its key derivation).
	q("create", "-q", "-f", "qcow2", "--object", "secret,id=sec0,data=hostile", "-o", "encrypt.format=aes,encrypt.key-secret=sec0", p("crypt.qcow2"), "16M")
	add("encrypted qcow2", p("crypt.qcow2"), nil, "encrypted")

	// A raw file named .qcow2.
	q("create", "-q", "-f", "raw", p("disguised.qcow2"), "16M")
	add("raw file named .qcow2", p("disguised.qcow2"), nil, "named .qcow2", "raw")
	return cs
}

// patch rewrites a file's bytes in place.
func patch(t testing.TB, file string, edit func([]byte)) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	edit(b)
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
