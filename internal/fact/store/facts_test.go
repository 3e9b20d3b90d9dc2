package store_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/mounts"
	"github.com/guestcheck/guestcheck/internal/fact/netstate"
	"github.com/guestcheck/guestcheck/internal/fact/procs"
	"github.com/guestcheck/guestcheck/internal/fact/store"
)

// counting is a reader that counts the reads of each file, to see how
// often a fact was read.
type counting struct {
	fs.Reader
	mu sync.Mutex
	n  map[string]int
}

func (c *counting) count(p string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[p]++
}

func (c *counting) reads(p string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[p]
}

func (c *counting) ReadFile(p string) ([]byte, error) {
	c.count(p)
	return c.Reader.ReadFile(p)
}

func (c *counting) ReadFileLimit(p string, limit int64) ([]byte, error) {
	c.count(p)
	return c.Reader.ReadFileLimit(p, limit)
}

// guest writes a root with a mount table, a resolver file and a process.
func guest(t *testing.T) *counting {
	t.Helper()
	dir := t.TempDir()
	for p, c := range map[string]string{
		"proc/self/mountinfo": "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n",
		"etc/resolv.conf":     "nameserver 192.0.2.53\n",
		"proc/1/stat":         "1 (systemd) S 0 1 1 0\n",
		"proc/1/cmdline":      "/sbin/init\x00",
	} {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return &counting{Reader: r, n: map[string]int{}}
}

// readAll is what a run's checks ask for, each from its own goroutine.
func readAll(t *testing.T, s *store.Store, r fs.Reader, checks int) {
	t.Helper()
	var wg sync.WaitGroup
	for range checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if ms, err := mounts.Table(s, r); err != nil || len(ms) != 1 {
				t.Errorf("mounts.Table = %v, %v", ms, err)
			}
			if st := netstate.Resolver(s, r); len(st.Servers()) != 1 {
				t.Errorf("netstate.Resolver = %+v", st)
			}
			if tb := procs.List(context.Background(), s, r); len(tb.Procs) != 1 {
				t.Errorf("procs.List = %+v", tb)
			}
		}()
	}
	wg.Wait()
}

var factFiles = []string{mounts.Path, netstate.ResolvConfPath, "/proc/1/stat", "/proc/1/cmdline"}

// TestFactsReadOncePerRun: eight concurrent checks of one run read each
// fact once; the next run reads it again.
func TestFactsReadOncePerRun(t *testing.T) {
	r := guest(t)
	for run := 1; run <= 2; run++ {
		readAll(t, store.New(), r, 8)
		for _, p := range factFiles {
			if n := r.reads(p); n != run {
				t.Errorf("after run %d, %s was read %d times, want %d", run, p, n, run)
			}
		}
	}
}

// TestFactsNilStore: a check called directly, without a store, reads.
func TestFactsNilStore(t *testing.T) {
	r := guest(t)
	readAll(t, nil, r, 3)
	for _, p := range factFiles {
		if n := r.reads(p); n != 3 {
			t.Errorf("%s was read %d times by 3 callers without a store, want 3", p, n)
		}
	}
}
