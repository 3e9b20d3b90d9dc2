package cloudinittest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/systemd"
)

// Want is cloud-init's own verdict: `cloud-init status --long --format
// json` and its exit code, as captured on the guest. Fields that older
// releases do not print are nil.
type Want struct {
	Status            string              `json:"status"`
	ExtendedStatus    *string             `json:"extended_status"`
	BootStatusCode    string              `json:"boot_status_code"`
	Datasource        *string             `json:"datasource"`
	Detail            string              `json:"detail"`
	Errors            []string            `json:"errors"`
	RecoverableErrors map[string][]string `json:"recoverable_errors"`
	LastUpdate        string              `json:"last_update"`
	Stage             *string             `json:"stage"`
	RC                int                 `json:"-"`
}

// Parent is one line of a runcmd capture's parents.txt: a process in the
// chain from the runcmd script up to PID 1.
type Parent struct {
	PID, PPID int
	Args      []string
}

// Capture is one real capture: a case directory of testdata/real, or the
// runcmd/ directory inside one (taken while cloud-init ran the case's
// runcmd, so with cloud-init still running).
type Capture struct {
	Name string
	Dir  string
	// Files maps guest paths to their captured content.
	Files map[string][]byte
	// Mtimes maps guest paths to their captured modification times.
	Mtimes map[string]time.Time
	// UptimeRaw is /proc/uptime as captured; Now is the capture's wall time.
	UptimeRaw string
	Now       time.Time
	BootID    string
	// GeneratorEnabled: /run/cloud-init/enabled existed.
	GeneratorEnabled bool
	// Sysvinit: the guest did not boot with systemd (a "sysvinit" file in
	// a synthetic case); otherwise /run/systemd/system exists.
	Sysvinit bool
	Units    []systemd.UnitState
	Want     Want
	// Parents is the process chain (runcmd captures only).
	Parents []Parent
	// Runcmd is the capture taken from inside runcmd, if any.
	Runcmd *Capture
	// Verdict and VerdictWhy come from a synthetic case's
	// guestcheck-verdict file: the check's expected status where it
	// deliberately differs from cloud-init, and why. Empty otherwise.
	Verdict, VerdictWhy string
}

// LoadCaptures loads every case directory under dir.
func LoadCaptures(dir string) ([]*Capture, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []*Capture
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		c, err := loadCase(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		out = append(out, c)
	}
	return out, nil
}

func loadCase(dir string) (*Capture, error) {
	c := &Capture{Name: filepath.Base(dir), Dir: dir, Files: map[string][]byte{}, Mtimes: map[string]time.Time{}}
	if err := c.loadCommon(dir); err != nil {
		return nil, err
	}
	for _, name := range []string{"status.json", "result.json", "instance-data.json", "boot-finished"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			c.Files[guestPath(name)] = b
		} else if !os.IsNotExist(err) {
			return nil, err
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "capture-date"))
	if err != nil {
		return nil, err
	}
	if c.Now, err = time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b))); err != nil {
		return nil, fmt.Errorf("capture-date: %w", err)
	}
	// Synthetic cases carry further guest files (markers, /proc entries)
	// under root/, at their guest paths.
	if err := c.loadTree(filepath.Join(dir, "root")); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, "sysvinit")); err == nil {
		c.Sysvinit = true
	}
	if b, err := os.ReadFile(filepath.Join(dir, "guestcheck-verdict")); err == nil {
		c.Verdict, c.VerdictWhy, _ = strings.Cut(strings.TrimSpace(string(b)), " ")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "stat-mtimes.txt")); err == nil {
		c.Mtimes = parseStatMtimes(b)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "ls-cloud-dirs.txt")); err == nil {
		c.GeneratorEnabled = lsHas(b, "/run/cloud-init/", "enabled")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "units.txt")); err == nil {
		if c.Units, err = ParseUnits(b); err != nil {
			return nil, fmt.Errorf("units.txt: %w", err)
		}
	}
	rdir := filepath.Join(dir, "runcmd")
	if st, err := os.Stat(rdir); err == nil && st.IsDir() {
		r, err := loadRuncmd(rdir, c)
		if err != nil {
			return nil, fmt.Errorf("runcmd: %w", err)
		}
		c.Runcmd = r
	}
	return c, nil
}

// loadRuncmd loads the capture taken inside runcmd. It has no wall clock
// of its own: being the same boot as the case capture (same boot_id), its
// time is the case's capture time minus the uptime between the two.
func loadRuncmd(dir string, parent *Capture) (*Capture, error) {
	c := &Capture{Name: parent.Name + "/runcmd", Dir: dir, Files: map[string][]byte{}, Mtimes: map[string]time.Time{},
		GeneratorEnabled: parent.GeneratorEnabled}
	if err := c.loadCommon(dir); err != nil {
		return nil, err
	}
	if c.BootID != parent.BootID {
		return nil, fmt.Errorf("boot_id %q differs from the case's %q", c.BootID, parent.BootID)
	}
	b, err := os.ReadFile(filepath.Join(dir, "status.json"))
	if err != nil {
		return nil, err
	}
	c.Files[guestPath("status.json")] = b
	if present, err := os.ReadFile(filepath.Join(dir, "result-json-exists")); err == nil && strings.TrimSpace(string(present)) == "present" {
		if c.Files[guestPath("result.json")], err = os.ReadFile(filepath.Join(dir, "result.json")); err != nil {
			return nil, err
		}
	}
	// instance-data.json is written once, in the init stage, before runcmd.
	if b, ok := parent.Files[guestPath("instance-data.json")]; ok {
		c.Files[guestPath("instance-data.json")] = b
	}
	pu, err1 := parseUptime(parent.UptimeRaw)
	ru, err2 := parseUptime(c.UptimeRaw)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("uptime: %v %v", err1, err2)
	}
	c.Now = parent.Now.Add(ru - pu)
	if b, err := os.ReadFile(filepath.Join(dir, "units.txt")); err == nil {
		if c.Units, err = ParseUnits(b); err != nil {
			return nil, fmt.Errorf("units.txt: %w", err)
		}
	}
	b, err = os.ReadFile(filepath.Join(dir, "parents.txt"))
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		pid, err1 := strconv.Atoi(f[0])
		ppid, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("parents.txt: bad line %q", sc.Text())
		}
		c.Parents = append(c.Parents, Parent{PID: pid, PPID: ppid, Args: f[2:]})
	}
	if len(c.Parents) == 0 {
		return nil, fmt.Errorf("parents.txt: empty")
	}
	return c, nil
}

// loadTree adds the regular files under dir to c.Files at their guest paths.
func (c *Capture) loadTree(dir string) error {
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		c.Files["/"+filepath.ToSlash(rel)] = b
		return nil
	})
	if os.IsNotExist(err) {
		return nil
	}
	return err
}

// loadCommon reads what both kinds of capture have.
func (c *Capture) loadCommon(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "uptime"))
	if err != nil {
		return err
	}
	c.UptimeRaw = string(b)
	if b, err := os.ReadFile(filepath.Join(dir, "boot_id")); err == nil {
		c.BootID = strings.TrimSpace(string(b))
	}
	b, err = os.ReadFile(filepath.Join(dir, "cloud-init-status.json"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &c.Want); err != nil {
		return fmt.Errorf("cloud-init-status.json: %w", err)
	}
	b, err = os.ReadFile(filepath.Join(dir, "cloud-init-status.rc"))
	if err != nil {
		return err
	}
	if c.Want.RC, err = strconv.Atoi(strings.TrimSpace(string(b))); err != nil {
		return fmt.Errorf("cloud-init-status.rc: %w", err)
	}
	return nil
}

func parseUptime(s string) (time.Duration, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0, fmt.Errorf("empty uptime")
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return time.Duration(v * float64(time.Second)), err
}

// parseStatMtimes reads `stat -c '%n %Y.%y'` lines ("PATH EPOCH.YYYY-MM-DD
// HH:MM:SS.NNNNNNNNN +ZZZZ"); error lines from stat are skipped.
func parseStatMtimes(b []byte) map[string]time.Time {
	out := map[string]time.Time{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		p, rest, ok := strings.Cut(sc.Text(), " ")
		if !ok || !strings.HasPrefix(p, "/") {
			continue
		}
		_, human, ok := strings.Cut(rest, ".")
		if !ok {
			continue
		}
		if t, err := time.Parse("2006-01-02 15:04:05.999999999 -0700", human); err == nil {
			out[p] = t
		}
	}
	return out
}

// lsHas reports whether an `ls -la` listing shows name in section dir.
func lsHas(b []byte, dir, name string) bool {
	in := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasSuffix(line, ":") && strings.HasPrefix(line, "/") {
			in = line == dir+":" || line == strings.TrimSuffix(dir, "/")+":"
			continue
		}
		if !in {
			continue
		}
		f := strings.Fields(line)
		if i := indexOf(f, "->"); i > 0 {
			f = f[:i]
		}
		if len(f) > 0 && f[len(f)-1] == name {
			return true
		}
	}
	return false
}

func indexOf(f []string, s string) int {
	for i, x := range f {
		if x == s {
			return i
		}
	}
	return -1
}

// Root builds a fake live root holding the capture's files at their guest
// paths, with their captured modification times, /proc/uptime, and (for
// runcmd captures) the captured process chain with /proc/self as a child
// of the runcmd script, as guestcheck would be when run from runcmd.
func (c *Capture) Root(t testing.TB) *Root {
	t.Helper()
	r := New(t).Installed().Write("/proc/uptime", c.UptimeRaw)
	if c.Sysvinit {
		r.Remove("/run/systemd/system")
	}
	if c.GeneratorEnabled {
		r.Write("/run/cloud-init/enabled", "")
	}
	for p, b := range c.Files {
		r.Write(p, string(b))
		if mt, ok := c.Mtimes[p]; ok {
			r.Chtime(p, mt)
		}
	}
	if len(c.Parents) > 0 {
		for _, p := range c.Parents {
			comm := "?"
			if len(p.Args) > 0 {
				comm = filepath.Base(p.Args[0])
				if len(comm) > 15 {
					comm = comm[:15]
				}
			}
			r.Proc(p.PID, p.PPID, comm, p.Args...)
		}
		self := maxPID(c.Parents) + 1
		r.Proc(self, c.Parents[0].PID, "guestcheck", "/usr/local/bin/guestcheck")
		r.Self(self)
	}
	return r
}

func maxPID(ps []Parent) int {
	m := 0
	for _, p := range ps {
		if p.PID > m {
			m = p.PID
		}
	}
	return m
}
