package fs

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestReadersAgree holds Root and Confined to one answer per read, so that
// a fact reader gives guestcheck and sealprep the same fact.
func TestReadersAgree(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "etc/ssh"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "etc/hostname"), []byte("vm1\n"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "etc/ssh/key"), []byte("k"), 0o600))
	must(os.Symlink("/etc/hostname", filepath.Join(dir, "etc/name-link")))
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	must(os.Chtimes(filepath.Join(dir, "etc/hostname"), old, old))

	r, err := Open(dir)
	must(err)
	defer r.Close()
	c, err := OpenConfined(dir)
	must(err)
	defer c.Close()

	for _, rd := range []Reader{r, c} {
		b, err := rd.ReadFile("/etc/name-link")
		if err != nil || string(b) != "vm1\n" {
			t.Errorf("%T ReadFile through an absolute link: %q, %v", rd, b, err)
		}
		if _, err := rd.ReadFileLimit("/etc/hostname", 2); err == nil {
			t.Errorf("%T ReadFileLimit: no error past the limit", rd)
		}
	}
	for _, p := range []string{"/etc/hostname", "/etc/name-link", "/etc/ssh/key", "/etc"} {
		a, errA := r.Stat(p)
		b, errB := c.Stat(p)
		a.MntID, b.MntID = 0, 0 // stat has no mount ID; statx does
		if errA != nil || errB != nil || !reflect.DeepEqual(a, b) {
			t.Errorf("Stat(%s): Root %+v (%v), Confined %+v (%v)", p, a, errA, b, errB)
		}
		a, errA = r.Lstat(p)
		b, errB = c.Lstat(p)
		a.MntID, b.MntID = 0, 0
		if errA != nil || errB != nil || !reflect.DeepEqual(a, b) {
			t.Errorf("Lstat(%s): Root %+v (%v), Confined %+v (%v)", p, a, errA, b, errB)
		}
	}
	if e, _ := r.Stat("/etc/hostname"); !e.Mtime.Equal(old) || e.Mode() != 0o644 || !e.IsRegular() {
		t.Errorf("Stat: %+v, mode %v", e, e.Mode())
	}
	if e, _ := r.Lstat("/etc/name-link"); e.Kind != KindSymlink || e.Mode()&os.ModeSymlink == 0 {
		t.Errorf("Lstat of a link: %+v", e)
	}
	ra, errA := r.ReadDir("/etc")
	ca, errB := c.ReadDir("/etc")
	for i := range ra {
		ra[i].MntID = 0
	}
	for i := range ca {
		ca[i].MntID = 0
	}
	if errA != nil || errB != nil || !reflect.DeepEqual(ra, ca) || len(ra) != 3 {
		t.Errorf("ReadDir: Root %+v (%v), Confined %+v (%v)", ra, errA, ca, errB)
	}
	names, err := r.ReadDirNames("/etc")
	if err != nil || !reflect.DeepEqual(names, []string{"hostname", "name-link", "ssh"}) {
		t.Errorf("ReadDirNames: %v, %v", names, err)
	}
}
