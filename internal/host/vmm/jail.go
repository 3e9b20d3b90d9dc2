package vmm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// systemd's dynamic-user range (systemd.exec DynamicUser=): ids no
// package and no login ever gets.
const (
	dynamicFirst = 61184
	dynamicLast  = 65519
)

// Jail is the user QEMU runs as and the files it is given. QEMU reads a
// hostile template and talks to a hostile guest: as root, a QEMU escape
// would be root on the host. So when sealprep runs as root, every QEMU of
// the run runs as one unused dynamic uid (the same gid), owns its run
// directory and reaches nothing of root's. When sealprep is not root, QEMU
// runs as the invoking user, already unprivileged, and cred is nil.
type Jail struct {
	uid, gid int
	// cred is what QEMU's process drops to before exec; nil keeps
	// sealprep's own user.
	cred *syscall.Credential
}

// idTables is what decides which dynamic ids are taken: the user and
// group databases, systemd's dynamic-uid registry and the owners of the
// running processes. pickDynamicID is a pure function of it.
type idTables struct {
	Passwd, Group []byte
	// Dynamic are the entry names under /run/systemd/dynamic-uid/
	// (a uid, or "direct:" and a uid).
	Dynamic []string
	// Proc are the /proc/PID/status files of the running processes.
	Proc [][]byte
}

// pickDynamicID picks a uid/gid number in 61184–65519 that no passwd or
// group entry names, systemd has not handed out, and no process runs
// as, starting at a random point (intn(n) is in [0, n)) and taking the
// first free one after it.
func pickDynamicID(t idTables, intn func(int) int) (int, error) {
	taken := map[int]bool{}
	for _, db := range [][]byte{t.Passwd, t.Group} {
		sc := bufio.NewScanner(bytes.NewReader(db))
		for sc.Scan() {
			// name:password:ID:... for both files.
			f := strings.Split(sc.Text(), ":")
			if len(f) >= 3 {
				if n, err := strconv.Atoi(f[2]); err == nil {
					taken[n] = true
				}
			}
		}
	}
	for _, name := range t.Dynamic {
		if n, err := strconv.Atoi(strings.TrimPrefix(name, "direct:")); err == nil {
			taken[n] = true
		}
	}
	for _, st := range t.Proc {
		for _, line := range strings.Split(string(st), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok || (k != "Uid" && k != "Gid") {
				continue
			}
			for _, f := range strings.Fields(v) {
				if n, err := strconv.Atoi(f); err == nil {
					taken[n] = true
				}
			}
		}
	}
	size := dynamicLast - dynamicFirst + 1
	start := intn(size)
	for i := range size {
		if n := dynamicFirst + (start+i)%size; !taken[n] {
			return n, nil
		}
	}
	return 0, errors.New("every uid of the dynamic-user range 61184-65519 is in use")
}

// hostIDTables reads the host's id tables; a file that cannot be read
// names nothing.
func hostIDTables() idTables {
	var t idTables
	t.Passwd, _ = os.ReadFile("/etc/passwd")
	t.Group, _ = os.ReadFile("/etc/group")
	if ents, err := os.ReadDir("/run/systemd/dynamic-uid"); err == nil {
		for _, e := range ents {
			t.Dynamic = append(t.Dynamic, e.Name())
		}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/status")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil {
			t.Proc = append(t.Proc, b)
		}
	}
	return t
}

// NewJail decides who the run's QEMUs run as: as root, a fresh dynamic
// uid with the kvm group when the accelerator is KVM and /dev/kvm's
// group may read and write it; otherwise sealprep's own user.
func NewJail(accel, kvmDev string) (Jail, error) {
	if os.Geteuid() != 0 {
		return Jail{uid: os.Geteuid(), gid: os.Getegid()}, nil
	}
	id, err := pickDynamicID(hostIDTables(), rand.IntN)
	if err != nil {
		return Jail{}, err
	}
	// Groups is set (NoSetGroups false), so root's supplementary groups
	// are dropped too; an empty list leaves none.
	cred := &syscall.Credential{Uid: uint32(id), Gid: uint32(id), Groups: []uint32{}}
	if accel == AccelKVM {
		if st, err := os.Stat(kvmDev); err == nil && st.Mode().Perm()&0o060 == 0o060 {
			if sys, ok := st.Sys().(*syscall.Stat_t); ok {
				cred.Groups = []uint32{sys.Gid}
			}
		}
	}
	return Jail{uid: id, gid: id, cred: cred}, nil
}

// dropped says whether QEMU runs as another user than sealprep.
func (j Jail) dropped() bool { return j.cred != nil }

// Dropped says whether QEMU runs as another user than sealprep (a
// dynamic uid, when sealprep runs as root).
func (j Jail) Dropped() bool { return j.dropped() }

// UID and GID are the ids QEMU runs as.
func (j Jail) UID() int { return j.uid }

// GID is the group QEMU runs as.
func (j Jail) GID() int { return j.gid }

// Credential is what QEMU's process drops to before exec, nil to keep
// sealprep's own user; for tests that start a process of their own.
func (j Jail) Credential() *syscall.Credential { return j.cred }

// Own gives path to QEMU's user with mode: the run's directories 0700
// and files 0600, so that only that user (and root) reaches them.
func (j Jail) Own(path string, mode os.FileMode) error {
	if j.dropped() {
		if err := os.Lchown(path, j.uid, j.gid); err != nil {
			return err
		}
	}
	return os.Chmod(path, mode)
}

// Reachable checks that QEMU's user may pass through every directory
// above dir (dir itself it owns): a parent of mode 0700, such as an
// existing --keep directory, would fail every clone with "permission
// denied" in QEMU's own words.
func (j Jail) Reachable(dir string) error {
	if !j.dropped() {
		return nil
	}
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		sys, ok := st.Sys().(*syscall.Stat_t)
		m := st.Mode().Perm()
		search := m&0o001 != 0 || (ok && int(sys.Uid) == j.uid && m&0o100 != 0) || (ok && int(sys.Gid) == j.gid && m&0o010 != 0)
		if !search {
			return fmt.Errorf("QEMU runs as uid %d, which cannot pass through %s (mode %04o, owner %d): give a directory others may search (chmod o+x)", j.uid, p, m, sys.Uid)
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// StageFile copies src, a host file QEMU reads (a kernel, an initrd, the
// OVMF code), into dst in the run's directory as QEMU's user's own, so
// that QEMU never opens a path of root's. It refuses a file over limit
// rather than boot a truncated copy.
func (j Jail) StageFile(src, dst string, limit int64) error {
	if err := CopyFileLimit(src, dst, limit); err != nil {
		return err
	}
	return j.Own(dst, 0o600)
}
