package timesync

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// TestDropInOrderAgainstSystemd generates timesyncd drop-ins across
// /usr/lib, /run and /etc and compares the files readTimesyncd reads, in
// order, with `systemd-analyze cat-config --root`, which lists them the
// way systemd-timesyncd loads them.
func TestDropInOrderAgainstSystemd(t *testing.T) {
	t.Parallel()
	analyze := testenv.Tool(t, "systemd-analyze", "systemd")
	dirs := []string{"/usr/lib/systemd/timesyncd.conf.d", "/run/systemd/timesyncd.conf.d", "/etc/systemd/timesyncd.conf.d"}
	names := []string{"00-a.conf", "10-vendor.conf", "50-cloud.conf", "60-x.conf", "99-z.conf", "README", "10-vendor.conf.bak"}
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 30 {
		dir := t.TempDir()
		write := func(p, s string) {
			full := filepath.Join(dir, p)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if rng.IntN(4) > 0 {
			write("/etc/systemd/timesyncd.conf", "[Time]\n")
		}
		for range rng.IntN(6) {
			d, n := dirs[rng.IntN(len(dirs))], names[rng.IntN(len(names))]
			write(d+"/"+n, fmt.Sprintf("[Time]\nNTP=%s.example.org\n", strings.TrimSuffix(n, ".conf")))
		}
		out, err := exec.Command(analyze, "cat-config", "--root="+dir, "systemd/timesyncd.conf").CombinedOutput()
		if err != nil && !strings.Contains(string(out), "No such file") {
			t.Fatalf("systemd-analyze cat-config: %v\n%s", err, out)
		}
		var real []string
		for _, l := range strings.Split(string(out), "\n") {
			// systemd-analyze names host paths; readTimesyncd the guest's.
			if p, ok := strings.CutPrefix(l, "# "); ok && strings.HasPrefix(p, dir) {
				real = append(real, strings.TrimPrefix(p, dir))
			}
		}
		r, err := fs.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		got := readTimesyncd(r, false).Files
		r.Close()
		if !slices.Equal(got, real) {
			t.Errorf("case %d: files %v, systemd-analyze cat-config %v", i, got, real)
		}
	}
}
