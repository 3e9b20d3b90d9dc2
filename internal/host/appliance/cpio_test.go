package appliance

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

// TestCpioAgainstCpio holds the newc writer to GNU cpio, which extracts
// what it wrote: names, modes and contents, directories included. (GNU
// cpio stops at the first trailer, so the job's archive, which the kernel
// unpacks after the cached one, is read on its own: TestJobArchive.)
func TestCpioAgainstCpio(t *testing.T) {
	bin := testenv.Tool(t, "cpio", "cpio")
	var buf bytes.Buffer
	w := &cpioWriter{w: &buf}
	w.Dir("lib")
	w.Dir("lib/modules")
	w.File("init", 0o755, []byte("#!/bin/true\n"))
	w.File("lib/modules/a.ko", 0o644, bytes.Repeat([]byte{0, 1, 2}, 1001))
	w.File("odd name", 0o600, []byte("x"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if buf.Len()%4 != 0 {
		t.Errorf("archive of %d bytes, not padded to 4", buf.Len())
	}
	dir := t.TempDir()
	cmd := exec.Command(bin, "-idmu", "--quiet")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(buf.Bytes())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cpio -i: %v: %s", err, out)
	}
	for name, want := range map[string]struct {
		mode os.FileMode
		data string
	}{
		"init":             {0o755, "#!/bin/true\n"},
		"lib/modules/a.ko": {0o644, string(bytes.Repeat([]byte{0, 1, 2}, 1001))},
		"odd name":         {0o600, "x"},
	} {
		p := filepath.Join(dir, name)
		b, err := os.ReadFile(p)
		st, _ := os.Stat(p)
		if err != nil || string(b) != want.data || st.Mode().Perm() != want.mode {
			t.Errorf("%s: %v, mode %v, %d bytes", name, err, st.Mode(), len(b))
		}
	}
	list := exec.Command(bin, "-it", "--quiet")
	list.Stdin = bytes.NewReader(buf.Bytes())
	out, err := list.Output()
	if err != nil || !strings.Contains(string(out), "lib/modules\n") {
		t.Errorf("cpio -t: %v: %s", err, out)
	}
	var bad bytes.Buffer
	bw := &cpioWriter{w: &bad}
	bw.File("/abs", 0o644, nil)
	if bw.Close() == nil {
		t.Error("an absolute name was written")
	}
}
