package identity

import (
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

const validID = "4f6b1c0e9a2d4e7f8a1b2c3d4e5f6a7b"

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Kind
	}{
		{"", Empty},
		{"uninitialized\n", Uninitialized},
		{"uninitialized", Uninitialized},
		{"uninitialized\n\n", Invalid},
		{"Uninitialized\n", Invalid},
		{"uninitialise\n", Invalid},
		{validID + "\n", Valid},
		{validID, Valid},
		{strings.ToUpper(validID) + "\n", Valid},
		{strings.Repeat("0", 32) + "\n", Null}, // systemd 252 keeps it: an ID to sealprep, no ID to guestcheck
		{validID + "\n\n", Invalid},
		{validID + "\r\n", Invalid},
		{validID + " ", Invalid},
		{validID[:31] + "\n", Invalid},
		{validID[:31] + "g", Invalid},
		{"4f6b1c0e-9a2d-4e7f-8a1b-2c3d4e5f6a7b\n", Invalid}, // UUID form: not the plain format
		{"\n", Invalid},
		{strings.Repeat("a", 64), Invalid},
	} {
		if got := Classify([]byte(tc.in)); got != tc.want {
			t.Errorf("Classify(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

var (
	specValid  = regexp.MustCompile(`^[0-9a-fA-F]{32}\n?$`)
	specUninit = regexp.MustCompile(`^uninitialized\n?$`)
)

// FuzzClassify holds the classifier to machine-id(5)'s rules written
// another way.
func FuzzClassify(f *testing.F) {
	for _, c := range machineIDContents() {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want := Invalid
		switch {
		case len(b) == 0:
			want = Empty
		case specUninit.Match(b):
			want = Uninitialized
		case specValid.Match(b):
			want = Valid
			if strings.Trim(strings.TrimSuffix(string(b), "\n"), "0") == "" {
				want = Null
			}
		}
		if got := Classify(b); got != want {
			t.Fatalf("Classify(%q) = %s, want %s", b, got, want)
		}
		if got := Classify(b); got == Valid && !ValidMachineID(strings.TrimSuffix(string(b), "\n")) {
			t.Fatalf("%q classified valid", b)
		}
	})
}

// machineIDContents are hand-made /etc/machine-id contents at the edges of
// systemd's reader, and generated ones around them.
func machineIDContents() []string {
	id := "0123456789abcdef0123456789abcdef"
	cs := []string{"", "\n", "uninitialized", "uninitialized\n", "uninitialized\n\n", "UNINITIALIZED\n",
		id, id + "\n", id + "\n\n", id + "\r\n", " " + id + "\n", id + " \n", strings.ToUpper(id) + "\n",
		strings.Repeat("0", 32) + "\n", strings.Repeat("0", 32), id[:31] + "\n", id + "0\n", id[:31] + "g\n",
		"01234567-89ab-cdef-0123-456789abcdef\n", "garbage\n", id + "\nextra\n"}
	rnd := rand.New(rand.NewSource(5))
	const hexd = "0123456789abcdefABCDEF"
	for i := 0; i < 40; i++ {
		n := 30 + rnd.Intn(5)
		b := make([]byte, n)
		for j := range b {
			b[j] = hexd[rnd.Intn(len(hexd))]
		}
		s := string(b)
		switch rnd.Intn(4) {
		case 0:
			s += "\n"
		case 1:
			s += "\n\n"
		case 2:
			b[rnd.Intn(n)] = " x-\t"[rnd.Intn(4)]
			s = string(b) + "\n"
		}
		cs = append(cs, s)
	}
	return cs
}

// TestClassifyAgainstSystemd feeds systemd-machine-id-setup --root
// and Classify the same contents: where guestcheck says systemd
// keeps the ID (valid or all zero), systemd must print it back; where it
// says systemd generates one (empty, uninitialized, anything else), systemd
// must report a generated ID.
func TestClassifyAgainstSystemd(t *testing.T) {
	tool := testenv.Tool(t, "systemd-machine-id-setup", "systemd")
	for _, c := range machineIDContents() {
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "etc/machine-id"), []byte(c), 0o444); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(tool, "--root", root, "--print").CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", c, err, out)
		}
		generated := strings.Contains(string(out), "Initializing machine ID")
		printed := strings.TrimSpace(string(out)[strings.LastIndexByte(strings.TrimSpace(string(out)), '\n')+1:])
		k := Classify([]byte(c))
		keeps := k.HoldsID()
		if keeps == generated {
			t.Errorf("%q: guestcheck says %s, systemd-machine-id-setup said %q", c, k, out)
		}
		if keeps && printed != strings.ToLower(strings.TrimSuffix(c, "\n")) {
			t.Errorf("%q: systemd kept %q", c, printed)
		}
	}
}

// TestDBusMachineIDAgainstSystemd checks the D-Bus fallback against
// systemd: with /etc/machine-id empty, a regular /var/lib/dbus/machine-id
// holding an ID is what systemd takes; a symlink, or a file without a
// valid ID, is not.
func TestDBusMachineIDAgainstSystemd(t *testing.T) {
	tool := testenv.Tool(t, "systemd-machine-id-setup", "systemd")
	dbusID := "fedcba9876543210fedcba9876543210"
	tests := []struct {
		name  string
		setup func(t *testing.T, root string)
	}{
		{"regular file", func(t *testing.T, root string) { writeHost(t, root, DBusMachineIDPath, dbusID+"\n") }},
		{"upper case", func(t *testing.T, root string) { writeHost(t, root, DBusMachineIDPath, strings.ToUpper(dbusID)+"\n") }},
		{"symlink to a file with an ID", func(t *testing.T, root string) {
			writeHost(t, root, "/var/lib/other-id", dbusID+"\n")
			if err := os.Symlink("/var/lib/other-id", filepath.Join(root, DBusMachineIDPath)); err != nil {
				t.Fatal(err)
			}
		}},
		{"all zero", func(t *testing.T, root string) { writeHost(t, root, DBusMachineIDPath, strings.Repeat("0", 32)+"\n") }},
		{"garbage", func(t *testing.T, root string) { writeHost(t, root, DBusMachineIDPath, "garbage\n") }},
		{"absent", func(t *testing.T, root string) {}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeHost(t, root, MachineIDPath, "")
			if err := os.MkdirAll(filepath.Join(root, "var/lib/dbus"), 0o755); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, root)
			got := ReadMachineID(openRoot(t, root)).DBusFallback()
			out, err := exec.Command(tool, "--root", root, "--print").CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			fromDBus := strings.Contains(string(out), "D-Bus machine ID")
			if fromDBus != (got != "") {
				t.Errorf("guestcheck reads %q, systemd said %q", got, out)
			}
			if fromDBus && !strings.Contains(string(out), got) {
				t.Errorf("systemd took another ID than %s: %q", got, out)
			}
		})
	}
}

// TestReadMachineID: the state both binaries see, through both readers.
func TestReadMachineID(t *testing.T) {
	const other = "fedcba9876543210fedcba9876543210"
	for _, tc := range []struct {
		name          string
		files         map[string]string
		found, exists bool
		kind          Kind
		unset         bool
		dbus          string
	}{
		{"missing", map[string]string{"/etc/hostname": "x\n"}, false, false, Valid, true, ""},
		{"empty", map[string]string{MachineIDPath: ""}, true, true, Empty, true, ""},
		{"uninitialized", map[string]string{MachineIDPath: "uninitialized\n"}, true, true, Uninitialized, true, ""},
		{"valid", map[string]string{MachineIDPath: validID + "\n", DBusMachineIDPath: other + "\n"}, true, true, Valid, false, ""},
		{"empty, D-Bus copy", map[string]string{MachineIDPath: "", DBusMachineIDPath: strings.ToUpper(other) + "\n"}, true, true, Empty, true, other},
		{"missing, D-Bus copy", map[string]string{"/etc/hostname": "x\n", DBusMachineIDPath: other}, false, false, Valid, true, other},
		{"empty, D-Bus all zero", map[string]string{MachineIDPath: "", DBusMachineIDPath: strings.Repeat("0", 32) + "\n"}, true, true, Empty, true, strings.Repeat("0", 32)},
		{"empty, D-Bus link", map[string]string{MachineIDPath: "", DBusMachineIDPath: "->/etc/machine-id"}, true, true, Empty, true, ""},
		{"empty, D-Bus link to an ID", map[string]string{MachineIDPath: "", "/var/lib/other": other, DBusMachineIDPath: "->/var/lib/other"}, true, true, Empty, true, ""},
		{"symlink to an ID", map[string]string{"/etc/real-id": validID + "\n", MachineIDPath: "->/etc/real-id"}, true, true, Valid, false, ""},
		{"dangling symlink", map[string]string{MachineIDPath: "->/etc/nowhere"}, false, true, Valid, true, ""},
	} {
		for name, r := range readers(t, testenv.WriteTree(t, tc.files)) {
			m := ReadMachineID(r)
			if m.Etc.Found != tc.found || m.Etc.Exists != tc.exists || (tc.found && m.Etc.Kind != tc.kind) || m.Unset() != tc.unset || m.DBusFallback() != tc.dbus || m.Etc.Err != nil {
				t.Errorf("%s/%s: %+v: unset %v, D-Bus fallback %q", tc.name, name, m, m.Unset(), m.DBusFallback())
			}
		}
	}
	// A directory in its place cannot be read: that is no unset ID.
	for name, r := range readers(t, testenv.WriteTree(t, map[string]string{MachineIDPath + "/x": ""})) {
		if m := ReadMachineID(r); m.Etc.Err == nil || m.Unset() {
			t.Errorf("%s: a directory: %+v", name, m)
		}
	}
}
