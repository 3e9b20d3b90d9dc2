// Package procs is the guest's processes as /proc shows them, read once
// per run through fs.Reader for every check that looks at processes: the
// agent's qemu-ga processes (internal/fact/agent), sshd's listening
// sockets (the ssh check) and the chain of parents guestcheck runs under
// (cloud-init's). /proc is read as it is found: it may hide processes
// (hidepid), change while read, or be a hostile image's files, so every
// read is capped and the walk has a deadline.
package procs

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/store"
	"github.com/guestcheck/guestcheck/internal/parse/procfs"
)

// Bounds of one walk. A guest has hundreds of processes, a busy server a
// few tens of thousands; past MaxProcs the table says it was cut rather
// than spend a check's deadline on it.
const (
	// MaxProcs is the most processes a Table holds.
	MaxProcs = 16384
	// MaxStat bounds /proc/PID/stat (a few hundred bytes in practice).
	MaxStat = 4 << 10
	// MaxCmdline bounds /proc/PID/cmdline; a longer one is left out
	// (Argv nil) rather than read partly.
	MaxCmdline = 32 << 10
	// Budget bounds one walk, whichever check asked first: processes not
	// reached are left out (Cut). Generous, for guests under emulation.
	Budget = 20 * time.Second
)

// Proc is one process.
type Proc struct {
	PID  int
	PPID int // 0 when /proc/PID/stat could not be read
	// Comm is the kernel's short name (/proc/PID/stat, else
	// /proc/PID/comm), at most 15 bytes; "" when unreadable.
	Comm string
	// Argv is /proc/PID/cmdline split at NULs; nil for kernel threads,
	// hidden or over-long command lines.
	Argv []string
	// Exe is the target of /proc/PID/exe, "" when it cannot be read (not
	// root, a kernel thread).
	Exe string
}

// Table is every process /proc lists, by PID.
type Table struct {
	Procs []Proc
	// Self is the reading process itself (/proc/self/stat): its PID and
	// parent, the start of a walk up the process tree. Zero when unknown.
	Self Proc
	// Err is why /proc could not be listed; Procs is then empty.
	Err error
	// Cut is set when MaxProcs or the deadline stopped the walk: a
	// process not found may still exist.
	Cut bool
}

// Find returns process pid.
func (t *Table) Find(pid int) (Proc, bool) {
	i, ok := slices.BinarySearchFunc(t.Procs, pid, func(p Proc, pid int) int { return p.PID - pid })
	if !ok {
		return Proc{}, false
	}
	return t.Procs[i], true
}

// Named returns the processes whose Comm is comm, by PID.
func (t *Table) Named(comm string) []Proc {
	var out []Proc
	for _, p := range t.Procs {
		if p.Comm == comm {
			out = append(out, p)
		}
	}
	return out
}

// listKey keeps a run's table in its store, per reader.
type listKey struct{ r fs.Reader }

// List is Read once per run: every check of the run sees the one table s
// keeps for r (read afresh when s is nil). It is shared and must not be
// modified.
func List(ctx context.Context, s *store.Store, r fs.Reader) *Table {
	return store.Memo(ctx, s, listKey{r}, func(ctx context.Context) *Table { return Read(ctx, r) })
}

// Read walks /proc through r, within Budget and ctx.
func Read(ctx context.Context, r fs.Reader) *Table {
	ctx, cancel := context.WithTimeout(ctx, Budget)
	defer cancel()
	t := &Table{}
	if b, err := r.ReadFileLimit("/proc/self/stat", MaxStat); err == nil {
		t.Self, _ = parseStat(b)
	}
	pids, err := listPIDs(r)
	if err != nil {
		t.Err = err
		return t
	}
	if len(pids) > MaxProcs {
		pids, t.Cut = pids[:MaxProcs], true
	}
	for _, pid := range pids {
		if ctx.Err() != nil {
			t.Cut = true
			break
		}
		t.Procs = append(t.Procs, readProc(r, pid))
	}
	return t
}

// listPIDs lists /proc's numeric entries in PID order. A Root lists names
// without a stat of each entry, which is most of the cost on /proc.
func listPIDs(r fs.Reader) ([]int, error) {
	names, err := dirNames(r, "/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, n := range names {
		if pid, err := strconv.Atoi(n); err == nil && pid > 0 && strconv.Itoa(pid) == n {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids, nil
}

// readProc reads one process; what cannot be read stays empty (the
// process may have exited, or /proc may hide it).
func readProc(r fs.Reader, pid int) Proc {
	base := "/proc/" + strconv.Itoa(pid)
	p := Proc{PID: pid}
	if b, err := r.ReadFileLimit(base+"/stat", MaxStat); err == nil {
		if st, err := parseStat(b); err == nil && st.PID == pid {
			p.PPID, p.Comm = st.PPID, st.Comm
		}
	}
	if p.Comm == "" {
		if b, err := r.ReadFileLimit(base+"/comm", MaxStat); err == nil {
			p.Comm = strings.TrimSpace(string(b))
		}
	}
	if b, err := r.ReadFileLimit(base+"/cmdline", MaxCmdline); err == nil {
		p.Argv = procfs.ParseCmdline(b)
	}
	p.Exe, _ = r.Readlink(base + "/exe")
	return p
}

// parseStat reads pid, comm and the parent's pid from /proc/PID/stat,
// through the one /proc parser.
func parseStat(b []byte) (Proc, error) {
	st, err := procfs.ParseStat(b)
	return Proc{PID: st.PID, PPID: st.PPID, Comm: st.Comm}, err
}
