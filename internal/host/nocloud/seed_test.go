package nocloud

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diskfs/go-diskfs/backend/file"
	"github.com/diskfs/go-diskfs/filesystem/iso9660"
)

// tool finds a program the test needs: as root (CI) a missing tool fails
// the test, as anyone else it skips.
func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Geteuid() == 0 {
			t.Fatalf("%s is needed (scripts/test-deps.sh installs it): %v", name, err)
		}
		t.Skipf("%s not installed", name)
	}
	return p
}

func sample() Seed {
	return Seed{InstanceID: "prove-1a2b3c-1", Hostname: "prove-1", UserData: []byte("#cloud-config\nruncmd: [true]\n"),
		NetworkConfig: []byte("version: 2\nethernets:\n  id0:\n    match: {macaddress: '52:54:00:12:34:56'}\n    dhcp4: true\n")}
}

// readBack reads every file of the volume with go-diskfs' reader, by the
// Rock Ridge names.
func readBack(t testing.TB, path string) map[string][]byte {
	t.Helper()
	b, err := file.OpenFromPath(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := iso9660.Read(b, st.Size(), 0, 2048)
	if err != nil {
		t.Fatal(err)
	}
	// go-diskfs pads the volume ID with NULs where ECMA-119 pads with
	// spaces; blkid and the kernel trim both.
	if got := strings.TrimRight(fsys.Label(), "\x00 "); got != Label {
		t.Errorf("label %q, want %q", got, Label)
	}
	ents, err := fsys.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range ents {
		f, err := fsys.OpenFile("/"+e.Name(), os.O_RDONLY)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(f)
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = body
	}
	return out
}

func TestWriteReadsBack(t *testing.T) {
	p := filepath.Join(t.TempDir(), "seed.iso")
	s := sample()
	if err := Write(p, s); err != nil {
		t.Fatal(err)
	}
	got := readBack(t, p)
	for name, want := range s.Files() {
		if !bytes.Equal(got[name], want) {
			t.Errorf("%s: %q, want %q", name, got[name], want)
		}
	}
	if len(got) != 3 {
		t.Errorf("files %v, want meta-data, user-data, network-config", keys(got))
	}
	if err := Write(p, s); err == nil {
		t.Error("a second Write over an existing seed succeeded")
	}
	if ents, _ := os.ReadDir(filepath.Dir(p)); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestEmptyUserDataIsCloudConfig(t *testing.T) {
	s := Seed{InstanceID: "i-1", Hostname: "h1"}
	f := s.Files()
	if string(f["user-data"]) != "#cloud-config\n" {
		t.Errorf("user-data %q", f["user-data"])
	}
	if _, ok := f["network-config"]; ok {
		t.Error("an empty network-config is written")
	}
	if string(f["meta-data"]) != "instance-id: i-1\nlocal-hostname: h1\n" {
		t.Errorf("meta-data %q", f["meta-data"])
	}
}

func TestValidate(t *testing.T) {
	big := bytes.Repeat([]byte("a"), MaxData+1)
	for _, c := range []struct {
		name string
		s    Seed
		want string
	}{
		{"empty instance-id", Seed{Hostname: "h"}, "instance-id"},
		{"yaml in instance-id", Seed{InstanceID: "a\nlocal-hostname: x", Hostname: "h"}, "instance-id"},
		{"colon in hostname", Seed{InstanceID: "i", Hostname: "h: x"}, "local-hostname"},
		{"leading hyphen", Seed{InstanceID: "i", Hostname: "-h"}, "local-hostname"},
		{"long hostname", Seed{InstanceID: "i", Hostname: strings.Repeat("h", 64)}, "local-hostname"},
		{"big user-data", Seed{InstanceID: "i", Hostname: "h", UserData: big}, "user-data"},
		{"big network-config", Seed{InstanceID: "i", Hostname: "h", NetworkConfig: big}, "network-config"},
	} {
		err := c.s.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %s", c.name, err, c.want)
		}
		if err := Write(filepath.Join(t.TempDir(), "s.iso"), c.s); err == nil {
			t.Errorf("%s: Write accepted it", c.name)
		}
	}
	if err := sample().Validate(); err != nil {
		t.Error(err)
	}
}

// TestRealTools reads the seed as the guest and the host's tools do:
// isoinfo with Rock Ridge and with Joliet names, blkid's label and, as
// root, a loop mount of the kernel's isofs.
func TestRealTools(t *testing.T) {
	isoinfo, blkid := tool(t, "isoinfo"), tool(t, "blkid")
	p := filepath.Join(t.TempDir(), "seed.iso")
	s := sample()
	if err := Write(p, s); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{"-R", "-J"} {
		out, err := exec.Command(isoinfo, ext, "-f", "-i", p).CombinedOutput()
		if err != nil {
			t.Fatalf("isoinfo %s: %v: %s", ext, err, out)
		}
		if got := strings.Fields(string(out)); strings.Join(got, " ") != "/meta-data /network-config /user-data" {
			t.Errorf("isoinfo %s -f: %q", ext, out)
		}
		for name, want := range s.Files() {
			body, err := exec.Command(isoinfo, ext, "-x", "/"+name, "-i", p).Output()
			if err != nil || !bytes.Equal(body, want) {
				t.Errorf("isoinfo %s -x /%s: %q, %v; want %q", ext, name, body, err, want)
			}
		}
	}
	out, err := exec.Command(blkid, "-p", "-o", "value", "-s", "LABEL", p).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != Label {
		t.Errorf("blkid LABEL: %q, %v", out, err)
	}
	if os.Geteuid() != 0 {
		t.Log("not root: the loop mount is not tried")
		return
	}
	if fss, _ := os.ReadFile("/proc/filesystems"); !bytes.Contains(fss, []byte("iso9660")) && exec.Command("modprobe", "isofs").Run() != nil {
		// Some build hosts' kernels have no isofs at all; the guest's
		// kernel reads the seed in the VM scenarios.
		t.Skip("this kernel has no iso9660 filesystem: the loop mount is not tried")
	}
	mnt := t.TempDir()
	if out, err := exec.Command(tool(t, "mount"), "-o", "loop,ro", "-t", "iso9660", p, mnt).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v: %s", err, out)
	}
	defer exec.Command("umount", mnt).Run()
	for name, want := range s.Files() {
		got, err := os.ReadFile(filepath.Join(mnt, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("mounted %s: %q, %v", name, got, err)
		}
	}
}

// FuzzSeed: whatever Validate accepts is written and read back intact.
func FuzzSeed(f *testing.F) {
	f.Add("i-1", "h1", []byte("#cloud-config\n"), []byte(""))
	f.Add("a.b-c", "host.example", []byte{0, 0xff, '\n'}, []byte("version: 2\n"))
	f.Fuzz(func(t *testing.T, id, host string, ud, nc []byte) {
		s := Seed{InstanceID: id, Hostname: host, UserData: ud, NetworkConfig: nc}
		p := filepath.Join(t.TempDir(), "seed.iso")
		err := Write(p, s)
		if (err == nil) != (s.Validate() == nil) {
			t.Fatalf("Write: %v, Validate: %v", err, s.Validate())
		}
		if err != nil {
			return
		}
		got := readBack(t, p)
		for name, want := range s.Files() {
			if !bytes.Equal(got[name], want) {
				t.Fatalf("%s: %q, want %q", name, got[name], want)
			}
		}
	})
}
