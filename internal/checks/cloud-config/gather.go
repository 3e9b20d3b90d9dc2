package cloudconfig

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"os/exec"
	"path"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/cloudcfg"
	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/fact/mounts"
	"github.com/guestcheck/guestcheck/internal/parse/authkeys"
	cc "github.com/guestcheck/guestcheck/internal/parse/cloudconfig"
	"github.com/guestcheck/guestcheck/internal/parse/cloudinitstatus"
	"github.com/guestcheck/guestcheck/internal/parse/dpkgstatus"
	"github.com/guestcheck/guestcheck/internal/parse/passwd"
	"github.com/guestcheck/guestcheck/internal/parse/sshdconfig"
	"github.com/guestcheck/guestcheck/internal/parse/sudoers"
)

// InstanceLink is cloud-init's link to the current instance.
var InstanceLink = identity.CloudInstancePath

// Guest paths the check reads.
const (
	UserDataPath  = "/var/lib/cloud/instance/cloud-config.txt"
	CombinedPath  = "/run/cloud-init/combined-cloud-config.json"
	SudoersDropIn = "/etc/sudoers.d/90-cloud-init-users"
	StatusPath    = "/run/cloud-init/status.json"
	statusData    = "/var/lib/cloud/data/status.json"
	fstabPath     = mounts.FstabPath
)

// maxContent bounds the write_files content read back for comparison.
const maxContent = 4 << 20

// File is one guest path as found.
type File struct {
	Exists bool
	Info   Info // after following symlinks
	Link   bool // the path itself is a symlink
	Err    error
	// Content is read for regular files the check compares.
	Content []byte
}

// Facts is everything the judge functions need, read once.
type Facts struct {
	// IsRoot: running with UID 0; Live: the root is the running system.
	IsRoot, Live bool
	// Installed: cloud-init's program or system configuration exists.
	Installed bool
	// Display names guest paths in messages.
	Display func(string) string

	UserDataShown string
	UserDataErr   error // reading it
	UserData      *cc.Doc
	ParseErr      error // cloud-init could not load it
	CombinedUsed  bool  // the effective configuration is cloud-init's own merge
	System        map[string]any
	SystemFiles   []string
	Effective     map[string]any
	Users         []cc.User
	UserProblems  []string
	Groups        []cc.Group

	SchemaFile     string
	SchemaSkip     string // why schema validation did not run
	SchemaProblems []SchemaProblem
	SchemaTime     time.Duration

	Accounts    passwd.DB
	AccountsErr []string
	// AccountsReadErr is the first account database that could not be
	// read, and why, for the fix (AccountsErr words it).
	AccountsReadErr  error
	AccountsReadFile string
	Sudoers          sudoers.Config
	SSHD             sshdconfig.Config
	SSHDErr          error
	Dpkg             []dpkgstatus.Package
	DpkgErr          error
	DpkgFound        bool
	RPM              map[string]string // name -> "rpm -q" output line, or "" when not installed
	RPMSkip          string
	Fstab            []byte // /etc/fstab, for mounts
	FstabErr         error
	InstanceDir      string
	Semaphores       map[string]time.Time // sem file name -> mtime
	ModuleErrors     []string             // status.json errors, as cloud-init wrote them
	StatusErr        error
	Files            map[string]File
	// Inside is true when cloud-init itself started this run (runcmd).
	Inside bool
}

// Options tunes Gather.
type Options struct {
	IsRoot, Live bool
	// RPMTimeout bounds `rpm -q`.
	RPMTimeout time.Duration
}

// file stats (and reads, when read is set) one path into f.Files.
func (f *Facts) file(src Source, p string, read bool) File {
	if got, ok := f.Files[p]; ok && (!read || got.Content != nil || !got.Exists || got.Err != nil) {
		return got
	}
	var fl File
	li, err := src.Lstat(p)
	if err != nil {
		if !errors.Is(err, iofs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			fl.Err = err
		}
		f.Files[p] = fl
		return fl
	}
	fl.Exists = true
	fl.Link = li.Mode&iofs.ModeSymlink != 0
	fl.Info = li
	if fl.Link {
		if si, err := src.Stat(p); err == nil {
			fl.Info = si
		} else {
			fl.Exists = false
		}
	}
	if read && fl.Exists && fl.Info.Mode.IsRegular() {
		if fl.Info.Size > maxContent {
			fl.Err = fmt.Errorf("larger than %d bytes, not compared", maxContent)
		} else if b, err := src.ReadFile(p); err != nil {
			fl.Err = err
		} else {
			fl.Content = b
		}
	}
	f.Files[p] = fl
	return fl
}

// Gather reads the facts. It never fails: what cannot be read is recorded
// with its error for the judge to report.
func Gather(ctx context.Context, src Source, opt Options) *Facts {
	f := &Facts{IsRoot: opt.IsRoot, Live: opt.Live, Display: src.Display, Files: map[string]File{}, Semaphores: map[string]time.Time{}}
	f.UserDataShown = src.Display(UserDataPath)
	for _, p := range []string{"/usr/bin/cloud-init", cc.SystemPath, InstanceLink} {
		if _, err := src.Lstat(p); err == nil {
			f.Installed = true
		}
	}
	f.readSystem(src)
	b, err := src.ReadFile(UserDataPath)
	if err != nil {
		f.UserDataErr = err
		return f
	}
	f.UserData, f.ParseErr = cc.Parse(f.UserDataShown, b)
	if f.ParseErr != nil {
		return f
	}
	f.Effective = cc.Effective(f.UserData.Value, f.System)
	if cb, err := src.ReadFile(CombinedPath); err == nil {
		var comb map[string]any
		if json.Unmarshal(cb, &comb) == nil && comb != nil {
			f.Effective = jsonToYAMLTypes(comb).(map[string]any)
			f.CombinedUsed = true
		}
	}
	f.Users, f.UserProblems = cc.NormalizeUsers(f.Effective)
	var gp []string
	f.Groups, gp = cc.NormalizeGroups(f.Effective)
	f.UserProblems = append(f.UserProblems, gp...)

	start := time.Now()
	f.schema(src)
	f.SchemaTime = time.Since(start)

	f.readAccounts(src)
	f.Sudoers = sudoers.Load(sudoers.DefaultPath, sudoSource{src})
	if _, err := src.Lstat(sshdconfig.DefaultPath); err != nil {
		f.SSHDErr = err
	} else {
		f.SSHD = sshdconfig.Load(sshdconfig.DefaultPath, src)
	}
	f.readInstance(src)
	f.readPackages(ctx, src, opt)
	if _, ok := f.UserData.Value["mounts"]; ok {
		f.Fstab, f.FstabErr = src.ReadFile(fstabPath)
	}
	f.readUserFiles(src)
	f.readWriteFiles(src)
	f.readOther(src)
	return f
}

// jsonToYAMLTypes turns encoding/json's float64 integers into int64, the
// type the YAML parser gives, so both sources judge alike.
func jsonToYAMLTypes(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonToYAMLTypes(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = jsonToYAMLTypes(e)
		}
		return x
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
	}
	return v
}

// readSystem reads cloud-init's system configuration with the reader
// the hostname check and sealprep use.
func (f *Facts) readSystem(src Source) {
	sys := cloudcfg.Read(cfgTree{src})
	for _, fl := range sys.Files {
		if fl.Doc != nil {
			f.SystemFiles = append(f.SystemFiles, src.Display(fl.Path))
		}
	}
	f.System = sys.Merged
}

// cfgTree lets cloudcfg.Read read through a Source, which a captured
// tarball implements as well as a root.
type cfgTree struct{ src Source }

func (t cfgTree) ReadFile(p string) ([]byte, error) { return t.src.ReadFile(p) }

func (t cfgTree) Stat(p string) (fs.Entry, error) {
	in, err := t.src.Stat(p)
	if err != nil {
		return fs.Entry{}, err
	}
	e := fs.Entry{Name: path.Base(p), Size: in.Size, Mtime: in.ModTime, Perm: uint32(in.Mode.Perm())}
	switch {
	case in.Mode.IsRegular():
		e.Kind = fs.KindRegular
	case in.Mode.IsDir():
		e.Kind = fs.KindDir
	}
	return e, nil
}

func (t cfgTree) ReadDir(p string) ([]fs.Entry, error) {
	names, err := t.src.ReadDirNames(p)
	if err != nil {
		return nil, err
	}
	out := make([]fs.Entry, 0, len(names))
	for _, n := range names {
		out = append(out, fs.Entry{Name: n})
	}
	return out, nil
}

// schemaCandidates are where python packages live.
func schemaCandidates(src Source) []string {
	var out []string
	for _, lib := range []string{"/usr/lib", "/usr/lib64", "/usr/local/lib"} {
		names, _ := src.ReadDirNames(lib)
		sort.Strings(names)
		for _, n := range names {
			if !strings.HasPrefix(n, "python3") {
				continue
			}
			for _, pk := range []string{"dist-packages", "site-packages"} {
				out = append(out, path.Join(lib, n, pk, SchemaRel))
			}
		}
	}
	return out
}

func (f *Facts) schema(src Source) {
	for _, p := range schemaCandidates(src) {
		b, err := src.ReadFile(p)
		if err != nil {
			continue
		}
		f.SchemaFile = src.Display(p)
		s, err := CompileSchema(f.SchemaFile, b)
		if err != nil {
			f.SchemaSkip = "the guest's schema could not be used: " + err.Error()
			return
		}
		f.SchemaProblems = s.Validate(f.UserData)
		return
	}
	f.SchemaSkip = "the installed cloud-init ships no " + SchemaRel + " (cloud-init before 22.2 has no JSON schema file)"
}

func (f *Facts) readAccounts(src Source) {
	read := func(p string) []byte {
		b, err := src.ReadFile(p)
		if err != nil {
			f.AccountsErr = append(f.AccountsErr, fs.ErrorText(src.Display(p), err))
			if f.AccountsReadErr == nil {
				f.AccountsReadErr, f.AccountsReadFile = err, src.Display(p)
			}
		}
		return b
	}
	var probs []passwd.Problem
	var pp, gp, sp []passwd.Problem
	f.Accounts.Users, pp = passwd.ParsePasswd("/etc/passwd", read("/etc/passwd"))
	f.Accounts.Groups, gp = passwd.ParseGroup("/etc/group", read("/etc/group"))
	f.Accounts.Shadow, sp = passwd.ParseShadow("/etc/shadow", read("/etc/shadow"))
	probs = append(append(append(probs, pp...), gp...), sp...)
	for _, p := range probs {
		f.AccountsErr = append(f.AccountsErr, p.Error())
	}
}

type sudoSource struct{ s Source }

func (s sudoSource) ReadFile(p string) ([]byte, error)       { return s.s.ReadFile(p) }
func (s sudoSource) ReadDirNames(p string) ([]string, error) { return s.s.ReadDirNames(p) }

func (f *Facts) readInstance(src Source) {
	f.InstanceDir = InstanceLink
	if t, err := readlinkVia(src, InstanceLink); err == nil {
		f.InstanceDir = t
	}
	names, _ := src.ReadDirNames(InstanceLink + "/sem")
	for _, n := range names {
		if in, err := src.Stat(InstanceLink + "/sem/" + n); err == nil {
			f.Semaphores[n] = in.ModTime
		}
	}
	f.file(src, InstanceLink+"/scripts/runcmd", false)
	b, err := src.ReadFile(StatusPath)
	if err != nil {
		b, err = src.ReadFile(statusData)
	}
	if err != nil {
		f.StatusErr = err
		return
	}
	sf, err := cloudinitstatus.ParseStatus(b)
	if err != nil {
		f.StatusErr = err
		return
	}
	for _, st := range sf.Stages {
		f.ModuleErrors = append(f.ModuleErrors, st.Errors...)
	}
}

// readlinkVia resolves the instance link for display only.
func readlinkVia(src Source, p string) (string, error) {
	type readlinker interface{ Readlink(string) (string, error) }
	if r, ok := src.(readlinker); ok {
		return r.Readlink(p)
	}
	return "", errors.ErrUnsupported
}

// Readlink implements readlinker for the root source.
func (s RootSource) Readlink(p string) (string, error) { return s.R.Readlink(p) }

func (f *Facts) readPackages(ctx context.Context, src Source, opt Options) {
	if _, ok := f.UserData.Value["packages"]; !ok {
		return
	}
	b, err := src.ReadFile(dpkgstatus.Path)
	if err == nil {
		f.DpkgFound = true
		var probs []dpkgstatus.Problem
		f.Dpkg, probs = dpkgstatus.Parse(b)
		if len(probs) > 0 {
			f.DpkgErr = probs[0]
		}
		return
	}
	if !errors.Is(err, iofs.ErrNotExist) {
		f.DpkgFound, f.DpkgErr = true, err
		return
	}
	if _, err := src.Lstat("/var/lib/rpm"); err != nil {
		if _, err2 := src.Lstat("/usr/lib/sysimage/rpm"); err2 != nil {
			f.RPMSkip = "neither dpkg's " + dpkgstatus.Path + " nor an rpm database exists"
			return
		}
	}
	if !opt.Live {
		f.RPMSkip = "the rpm database can only be asked with `rpm -q` on the running system, and --root is an image root"
		return
	}
	rpm, err := exec.LookPath("rpm")
	if err != nil {
		f.RPMSkip = "this is an rpm system but the rpm program is not installed"
		return
	}
	f.RPM = map[string]string{}
	for _, p := range packageList(f.UserData.Value["packages"]) {
		to := opt.RPMTimeout
		if to == 0 {
			to = 10 * time.Second
		}
		cctx, cancel := context.WithTimeout(ctx, to)
		out, err := exec.CommandContext(cctx, rpm, "-q", "--qf", "%{NAME} %{EPOCHNUM}:%{VERSION}-%{RELEASE}\n", "--whatprovides", p.Name).Output()
		cancel()
		if err != nil {
			f.RPM[p.Name] = ""
			continue
		}
		f.RPM[p.Name] = strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	}
}

// authorizedKeysPaths renders sshd's AuthorizedKeysFile for a user, as
// cloud-init's ssh_util does (default %h/.ssh/authorized_keys).
func authorizedKeysPaths(c sshdconfig.Config, home, user string) []string {
	value := "%h/.ssh/authorized_keys"
	if d, ok := c.First("AuthorizedKeysFile"); ok && len(d.Args) > 0 {
		value = strings.Join(d.Args, " ")
	}
	var out []string
	for _, p := range strings.Fields(value) {
		p = strings.NewReplacer("%h", home, "%u", user, "%%", "%").Replace(p)
		if !strings.HasPrefix(p, "/") {
			p = path.Join(home, p)
		}
		out = append(out, path.Clean(p))
	}
	return out
}

// secureChain lists the paths sshd's StrictModes checks for a key file:
// the file, then each parent up to the home directory (or "/").
func secureChain(file, home string) []string {
	out := []string{file}
	for d := path.Dir(file); ; d = path.Dir(d) {
		out = append(out, d)
		if d == home || d == "/" {
			break
		}
	}
	return out
}

func (f *Facts) readUserFiles(src Source) {
	users := map[string]bool{}
	for _, u := range f.Users {
		users[u.Name] = true
	}
	if _, ok := f.UserData.Value["ssh_authorized_keys"]; ok {
		users["root"] = true
	}
	for name := range users {
		pw, ok := f.Accounts.User(name)
		if !ok {
			continue
		}
		f.file(src, pw.Home, false)
		for _, p := range authorizedKeysPaths(f.SSHD, pw.Home, name) {
			f.file(src, p, true)
			for _, c := range secureChain(p, pw.Home) {
				f.file(src, c, false)
			}
		}
	}
	f.file(src, SudoersDropIn, false)
}

func (f *Facts) readWriteFiles(src Source) {
	for _, w := range writeFiles(f.UserData.Value) {
		if w.File != "" {
			f.file(src, w.File, true)
		}
	}
}

func (f *Facts) readOther(src Source) {
	v := f.UserData.Value
	if _, ok := v["timezone"]; ok {
		f.file(src, "/etc/timezone", true)
		f.file(src, "/etc/localtime", false)
		if t, err := readlinkVia(src, "/etc/localtime"); err == nil {
			f.Files["/etc/localtime"] = File{Exists: true, Link: true, Content: []byte(t)}
		}
	}
	if _, ok := v["ntp"]; ok {
		for _, p := range ntpFiles {
			f.file(src, p.conf, true)
			for _, w := range p.wants {
				f.file(src, w, false)
			}
			f.file(src, p.binary, false)
		}
	}
	if _, ok := v["ssh_genkeytypes"]; ok {
		for _, t := range cc.GetList(v, "ssh_genkeytypes", nil) {
			f.file(src, "/etc/ssh/ssh_host_"+t+"_key", false)
			f.file(src, "/etc/ssh/ssh_host_"+t+"_key.pub", true)
		}
	}
}

// parseKey parses one requested key, for matching by key.
func parseKey(s string) (authkeys.Key, error) { return authkeys.ParseLine(s) }
