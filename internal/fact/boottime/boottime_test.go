package boottime

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

func TestParse(t *testing.T) {
	bt, err := Parse([]byte("cpu  1 2 3\nintr 5\nctxt 9\nbtime 1764452000\nprocesses 10\n"))
	if err != nil || bt.Unix() != 1764452000 {
		t.Errorf("btime = %v, %v", bt, err)
	}
	for _, in := range []string{"", "cpu 1\n", "btime x\n", "btime -4\n"} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("btime %q: no error", in)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("cpu  1 2 3\nbtime 1764452000\nprocesses 10\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if bt, err := Parse(b); err == nil && bt.Unix() <= 0 {
			t.Fatalf("non-positive btime %v", bt)
		}
	})
}

// TestReadersAgree: sealprep's Confined and guestcheck's Root read the
// same boot time from the same tree.
func TestReadersAgree(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "proc/stat"), []byte("cpu 1\nbtime 1764452000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c, err := fs.OpenConfined(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a, errA := Read(r)
	b, errB := Read(c)
	if errA != nil || errB != nil || !a.Equal(b) || a.Unix() != 1764452000 {
		t.Errorf("Root %v (%v), Confined %v (%v)", a, errA, b, errB)
	}
}
