//go:build vmtest

package vm

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// qemuSeen is one QEMU of a prove run as /proc showed it.
type qemuSeen struct {
	pid     string
	uid     string // the Uid line's fields
	seccomp string // the Seccomp line's value
}

// qemuWatch polls /proc while a prove run goes on, for the
// qemu-system processes whose command line names a file under dir (the
// run's --keep directory: every clone's console and sockets are there),
// and records how each ran.
type qemuWatch struct {
	dir  string
	mu   sync.Mutex
	seen map[string]qemuSeen
	done chan struct{}
	wg   sync.WaitGroup
}

func watchQEMU(dir string) *qemuWatch {
	w := &qemuWatch{dir: dir, seen: map[string]qemuSeen{}, done: make(chan struct{})}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for {
			w.poll()
			select {
			case <-w.done:
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	return w
}

var (
	uidLine     = regexp.MustCompile(`(?m)^Uid:\s+(.*)$`)
	seccompLine = regexp.MustCompile(`(?m)^Seccomp:\s+(\d+)$`)
)

func (w *qemuWatch) poll() {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		cmd, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		argv := bytes.Split(cmd, []byte{0})
		if !strings.HasPrefix(filepath.Base(string(argv[0])), "qemu-system") || !bytes.Contains(cmd, []byte(w.dir+"/")) {
			continue
		}
		st, err := os.ReadFile(filepath.Join(filepath.Dir(p), "status"))
		if err != nil {
			continue
		}
		s := qemuSeen{pid: filepath.Base(filepath.Dir(p))}
		if m := uidLine.FindSubmatch(st); m != nil {
			s.uid = strings.Join(strings.Fields(string(m[1])), " ")
		}
		if m := seccompLine.FindSubmatch(st); m != nil {
			s.seccomp = string(m[1])
		}
		w.mu.Lock()
		w.seen[s.pid] = s
		w.mu.Unlock()
	}
}

// check stops the watch and asserts that it saw a QEMU of the run and
// that every one ran as a user other than root (all four uids) under
// seccomp filter mode (2).
func (w *qemuWatch) check(t *testing.T) {
	t.Helper()
	close(w.done)
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.seen) == 0 {
		t.Errorf("no qemu-system process under %s was seen while prove ran", w.dir)
	}
	for _, s := range w.seen {
		confined := s.seccomp == "2" && s.uid != ""
		for _, f := range strings.Fields(s.uid) {
			confined = confined && f != "0"
		}
		if !confined {
			t.Errorf("QEMU pid %s ran with Uid %q, Seccomp %q; want no root uid and Seccomp 2", s.pid, s.uid, s.seccomp)
		} else {
			t.Logf("QEMU pid %s: Uid %s, Seccomp %s", s.pid, s.uid, s.seccomp)
		}
	}
}
