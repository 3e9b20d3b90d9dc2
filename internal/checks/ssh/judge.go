package ssh

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
	"github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
	"github.com/guestcheck/guestcheck/internal/parse/sshdconfig"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Check is the ssh check: sshd is installed, enabled, active and
// listening where its configuration says, its host keys are sound and
// were generated for this instance, and the effective authentication
// settings meet the baseline. docs/checks/ssh.md explains each code.
var Check = runner.Check{
	ID:    "ssh",
	Title: "SSH server, host keys and authentication settings",
	Description: "sshd is installed, enabled, active and listening on its configured addresses; host keys exist, parse, " +
		"match, have accepted modes and are newer than the instance; password and root login meet ssh.baseline",
	Settings: settings.Section(),
	Codes:    Codes,
	Run:      Run,
}

// Run gathers the facts and judges them; past the check's deadline the
// facts are partial, and judging them would report what was not read.
func Run(ctx context.Context, env *runner.Env) []runner.Finding {
	f := Gather(ctx, env)
	if ctx.Err() != nil {
		return []runner.Finding{CodeUnreadable.New(runner.Error, "the check's deadline passed while reading sshd's state", nil,
			CodeUnreadable.CaseFix("when the deadline passed"))}
	}
	return Judge(f)
}

// Judge turns the facts into findings.
func Judge(f Facts) []runner.Finding {
	out := JudgeInstalled(f)
	if f.Binary == "" && !f.Live {
		return out
	}
	if p := f.Config.Unreadable(); p != nil {
		// Without the whole configuration neither the addresses, the host
		// keys nor the settings are known; judging defaults would mislead.
		if f.Live {
			out = append(out, JudgeUnits(f)...)
		}
		file := f.show(p.File)
		d := map[string]string{"file": file, "error": p.Msg}
		if !f.IsRoot {
			return append(out, CodeConfigUnread.New(runner.Skip, "sshd's configuration not judged: "+file+" is readable by root only", d,
				CodeConfigUnread.CaseFix("when guestcheck is not root", "file", file)))
		}
		return append(out, CodeConfigUnread.New(runner.Error, "cannot read sshd's configuration "+file, d,
			CodeConfigUnread.FixOn(f.Live, "file", file)))
	}
	if f.Live {
		out = append(out, JudgeUnits(f)...)
		out = append(out, JudgeListening(f)...)
	} else {
		out = append(out, runner.Skipf(CodeNotLive.ID, "running state and listening sockets not checked: "+f.NotLiveReason, nil))
		out = append(out, JudgeUnitFiles(f)...)
	}
	out = append(out, JudgeConfig(f)...)
	out = append(out, JudgeHostKeys(f)...)
	out = append(out, JudgeTemplateKeys(f)...)
	out = append(out, JudgeKeyAge(f)...)
	out = append(out, JudgeAuth(f)...)
	return out
}

func (f Facts) show(p string) string {
	if f.Display == nil {
		return p
	}
	return f.Display(p)
}

// JudgeInstalled: is there an sshd binary at all.
func JudgeInstalled(f Facts) []runner.Finding {
	if f.Binary != "" {
		return []runner.Finding{runner.Passf(CodeInstalled.ID, "sshd is installed at "+f.Binary, map[string]string{"binary": f.show(f.Binary)})}
	}
	return []runner.Finding{CodeNotInstalled.New(runner.Fail, "sshd is not installed",
		map[string]string{"searched": strings.Join(binaries, ",")}, CodeNotInstalled.FixOn(f.Live))}
}

func unitByName(us []systemd.UnitState, names []string) (systemd.UnitState, bool) {
	for _, n := range names {
		for _, u := range us {
			if u.Name == n && u.Found() {
				return u, true
			}
		}
	}
	return systemd.UnitState{}, false
}

// socketActive reports whether sshd is socket-activated (Ubuntu 22.10+):
// systemd then holds the listening socket and ssh.service runs per need.
func (f Facts) socketActive() (systemd.UnitState, bool) {
	u, ok := unitByName(f.Units, socketUnits)
	return u, ok && u.ActiveState == "active"
}

// JudgeUnits: the unit is enabled and active (or its socket is).
func JudgeUnits(f Facts) []runner.Finding {
	if f.UnitsErr != nil {
		if errors.Is(f.UnitsErr, systemd.ErrNotRunning) {
			return []runner.Finding{runner.Skipf(CodeNoSystemd.ID, "sshd's unit state not checked: "+f.UnitsErr.Error(), nil)}
		}
		fix := CodeUnreadable.Fixf()
		if !f.IsRoot {
			fix = CodeUnreadable.CaseFix("when guestcheck is not root")
		}
		return []runner.Finding{CodeUnreadable.New(runner.Error, "cannot read sshd's unit state", map[string]string{"error": f.UnitsErr.Error()}, fix)}
	}
	svc, found := unitByName(f.Units, serviceUnits)
	sock, sockActive := f.socketActive()
	d := map[string]string{}
	for _, u := range f.Units {
		if u.Found() {
			d[strings.ReplaceAll(strings.ReplaceAll(u.Name, ".", "_"), "-", "_")] = fmt.Sprintf("%s/%s (%s, %s)", u.ActiveState, u.SubState, u.LoadState, u.UnitFileState)
		}
	}
	if !found && !sockActive {
		return []runner.Finding{CodeUnitInactive.New(runner.Fail, "no ssh.service or sshd.service unit is loaded", d,
			CodeUnitInactive.CaseFix("when no sshd unit is loaded"))}
	}
	name := svc.Name
	if !found {
		name = sock.Name
	}
	if svc.LoadState == "masked" || svc.UnitFileState == "masked" {
		return []runner.Finding{CodeUnitMasked.New(runner.Fail, svc.Name+" is masked", d, CodeUnitMasked.Fixf("unit", svc.Name))}
	}
	var out []runner.Finding
	switch {
	case sockActive:
		out = append(out, runner.Passf(CodeUnitActive.ID, sock.Name+" is active: systemd listens and starts sshd per connection", d))
		name = sock.Name
		svc = sock
	case svc.ActiveState == "active":
		out = append(out, runner.Passf(CodeUnitActive.ID, svc.Name+" is active ("+svc.SubState+")", d))
	default:
		return append(out, CodeUnitInactive.New(runner.Fail, fmt.Sprintf("%s is %s (%s)", svc.Name, svc.ActiveState, svc.SubState), d,
			CodeUnitInactive.Fixf("unit", svc.Name)))
	}
	switch svc.UnitFileState {
	case "enabled", "enabled-runtime", "static", "indirect", "alias", "generated", "transient":
	default:
		out = append(out, CodeUnitDisabled.New(runner.Warn, fmt.Sprintf("%s is running but %s: it will not start at the next boot", name, svc.UnitFileState), d,
			CodeUnitDisabled.Fixf("unit", name)))
	}
	return out
}

// JudgeUnitFiles judges an image root: the sshd unit (or socket) is
// enabled, so the VM starts sshd at boot.
func JudgeUnitFiles(f Facts) []runner.Finding {
	d := map[string]string{"unit_files": "/etc/systemd/system"}
	root := runner.ShellWord(f.RootDir)
	switch f.Enablement {
	case "enabled":
		d["unit"] = f.EnabledUnit
		return []runner.Finding{runner.Passf(CodeUnitEnabled.ID, f.EnabledUnit+" is enabled in the image", d)}
	case "masked":
		return []runner.Finding{CodeUnitMasked.New(runner.Fail, f.EnabledUnit+" is masked in the image", d,
			CodeUnitMasked.FixOn(f.Live, "root", root, "unit", f.EnabledUnit))}
	}
	return []runner.Finding{CodeUnitDisabled.New(runner.Warn, "no ssh or sshd unit is enabled in the image: sshd will not start at boot", d,
		CodeUnitDisabled.FixOn(f.Live, "root", root))}
}

// Endpoint is an address and port sshd is configured to listen on.
type Endpoint struct {
	Addr netip.AddrPort
	Name string // a ListenAddress host name that is not an IP literal
	At   string
}

// String is "addr:port" ("[v6]:port"), or "name:port" for an unresolved host name.
func (e Endpoint) String() string {
	if e.Name != "" {
		return e.Name + ":" + strconv.Itoa(int(e.Addr.Port()))
	}
	return e.Addr.String()
}

// Endpoints computes where sshd listens from Port, ListenAddress and
// AddressFamily (servconf.c: a ListenAddress without a port takes every
// Port; no ListenAddress means the wildcard of each family).
func Endpoints(c sshdconfig.Config) []Endpoint {
	var ports []uint16
	portAt := "default"
	for _, d := range c.All("Port") {
		if p, err := strconv.ParseUint(d.Value(), 10, 16); err == nil && p > 0 {
			ports = append(ports, uint16(p))
			portAt = d.At()
		}
	}
	if len(ports) == 0 {
		ports = []uint16{22}
	}
	fam := "any"
	if d, ok := c.First("AddressFamily"); ok {
		fam = strings.ToLower(d.Value())
	}
	var out []Endpoint
	las := c.All("ListenAddress")
	if len(las) == 0 {
		for _, p := range ports {
			if fam != "inet6" {
				out = append(out, Endpoint{Addr: netip.AddrPortFrom(netip.IPv4Unspecified(), p), At: portAt})
			}
			if fam != "inet" {
				out = append(out, Endpoint{Addr: netip.AddrPortFrom(netip.IPv6Unspecified(), p), At: portAt})
			}
		}
		return out
	}
	for _, d := range las {
		host, port := splitHostPort(d.Value())
		ps := ports
		if port != 0 {
			ps = []uint16{port}
		}
		for _, p := range ps {
			e := Endpoint{At: d.At()}
			if a, err := netip.ParseAddr(host); err == nil {
				e.Addr = netip.AddrPortFrom(a.WithZone(""), p)
			} else {
				e.Name, e.Addr = host, netip.AddrPortFrom(netip.Addr{}, p)
			}
			out = append(out, e)
		}
	}
	return out
}

// splitHostPort reads "addr", "addr:port", "[v6]:port" and bare IPv6.
func splitHostPort(s string) (string, uint16) {
	if strings.HasPrefix(s, "[") {
		h, rest, _ := strings.Cut(s[1:], "]")
		p, _ := strconv.ParseUint(strings.TrimPrefix(rest, ":"), 10, 16)
		return h, uint16(p)
	}
	if strings.Count(s, ":") == 1 {
		h, ps, _ := strings.Cut(s, ":")
		p, _ := strconv.ParseUint(ps, 10, 16)
		return h, uint16(p)
	}
	return s, 0
}

// isSSHD reports whether a listener belongs to sshd, or to systemd holding
// sshd's socket for activation.
func isSSHD(l Listener, socketActivated bool) bool {
	if l.Comm == "sshd" || path.Base(l.Exe) == "sshd" {
		return true
	}
	return socketActivated && (l.PID == 1 || l.Comm == "systemd")
}

// JudgeListening: something listens on each configured endpoint, and it is sshd.
func JudgeListening(f Facts) []runner.Finding {
	if f.ListenErr != nil {
		return []runner.Finding{CodeUnreadable.New(runner.Error, "cannot read the listening sockets", map[string]string{"error": f.ListenErr.Error()},
			CodeUnreadable.CaseFix("when the listening sockets cannot be read"))}
	}
	_, sockAct := f.socketActive()
	var ok, missing, other []string
	for _, e := range Endpoints(f.Config) {
		if e.Name != "" {
			// sshd resolves names at start; only IP literals can be compared.
			ok = append(ok, e.String()+" (name, not resolved)")
			continue
		}
		var match []Listener
		for _, l := range f.Listeners {
			if l.Addr == e.Addr {
				match = append(match, l)
			}
		}
		if len(match) == 0 {
			missing = append(missing, e.String()+" ("+e.At+")")
			continue
		}
		l := match[0]
		switch {
		case isSSHD(l, sockAct):
			ok = append(ok, e.String()+" by "+l.Owner())
		case l.PID == 0 && !f.OwnersKnown:
			ok = append(ok, e.String()+" by an unverified process (not root)")
		default:
			other = append(other, e.String()+" by "+l.Owner())
		}
	}
	d := map[string]string{}
	if len(ok) > 0 {
		d["listening"] = strings.Join(ok, ", ")
	}
	var out []runner.Finding
	if len(missing) > 0 {
		d["not_listening"] = strings.Join(missing, ", ")
		out = append(out, CodeNotListening.New(runner.Fail, "sshd does not listen on "+strings.Join(missing, ", "), d, CodeNotListening.Fixf()))
	}
	if len(other) > 0 {
		d["held_by_other"] = strings.Join(other, ", ")
		out = append(out, CodePortOther.New(runner.Fail, "sshd's port is held by another process: "+strings.Join(other, ", "), d,
			CodePortOther.Fixf("held_by", strings.Join(other, ", "))))
	}
	if len(out) > 0 {
		return out
	}
	return []runner.Finding{runner.Passf(CodeListening.ID, "sshd listens on "+strings.Join(ok, ", "), d)}
}

// authSettings are the judged keywords with sshd's compiled-in defaults
// (OpenSSH 7.0 and later) and the values sshd accepts.
var authSettings = []struct {
	key, def string
	valid    []string
}{
	{"PasswordAuthentication", "yes", []string{"yes", "no"}},
	{"KbdInteractiveAuthentication", "yes", []string{"yes", "no"}},
	{"PermitRootLogin", "prohibit-password", []string{"yes", "no", "prohibit-password", "without-password", "forced-commands-only"}},
	{"PermitEmptyPasswords", "no", []string{"yes", "no"}},
	{"PubkeyAuthentication", "yes", []string{"yes", "no"}},
}

// aliases are keywords sshd treats as another (servconf.c keywords[]).
var aliases = map[string]string{"KbdInteractiveAuthentication": "ChallengeResponseAuthentication"}

// first returns the winning global directive for key or its alias.
func first(c sshdconfig.Config, key string) (sshdconfig.Directive, bool) {
	for _, d := range c.Directives {
		if d.Match == nil && (strings.EqualFold(d.Keyword, key) || (aliases[key] != "" && strings.EqualFold(d.Keyword, aliases[key]))) {
			return d, true
		}
	}
	return sshdconfig.Directive{}, false
}

func conditional(c sshdconfig.Config, key string) []sshdconfig.Directive {
	out := c.Conditional(key)
	if a := aliases[key]; a != "" {
		out = append(out, c.Conditional(a)...)
	}
	return out
}

// JudgeConfig reports lines sshd would reject: it refuses to start (or
// to restart after a change) with any of them.
func JudgeConfig(f Facts) []runner.Finding {
	var probs []string
	for _, p := range f.Config.Problems {
		if p.Line == 0 && p.File == sshdconfig.DefaultPath && f.Binary == "" {
			continue
		}
		probs = append(probs, p.In(f.show(p.File)).String())
	}
	for _, s := range authSettings {
		for _, d := range f.Config.Directives {
			if (strings.EqualFold(d.Keyword, s.key) || strings.EqualFold(d.Keyword, aliases[s.key])) && !slices.Contains(s.valid, strings.ToLower(d.Value())) {
				probs = append(probs, fmt.Sprintf("%s:%d: unsupported %s value %q", f.show(d.File), d.Line.Line, d.Keyword, d.Value()))
			}
		}
	}
	if len(probs) == 0 {
		return nil
	}
	return []runner.Finding{CodeConfigInvalid.New(runner.Fail, probs[0], map[string]string{"problems": strings.Join(probs, "\n")},
		CodeConfigInvalid.FixOn(f.Live, "problems", strings.Join(probs, "; ")))}
}

// privateModeOK is sshd's sshkey_perm_ok: no group or other bits. Red
// Hat's openssh (openssh-6.6p1-keyperm.patch) also accepts 0640 when the
// group is ssh_keys, which RHEL 7 to 9 ship.
func privateModeOK(k HostKey, redHat bool) bool {
	perm := k.Mode.Perm()
	if perm&0o077 == 0 {
		return true
	}
	return redHat && k.Group == "ssh_keys" && perm&0o077 == 0o040
}

// JudgeHostKeys: each configured key exists, parses, matches its .pub and
// has a mode and owner sshd accepts. In a sealed template no key is the
// expected state (JudgeTemplateHostKeys). On a sealed image's first boot
// keys that exist may have been generated by this boot already (a
// regenerator that runs before cloud-init): they are judged as a guest's.
func JudgeHostKeys(f Facts) []runner.Finding {
	if f.State.Is && !(f.Live && len(templateKeys(f)) > 0) {
		return JudgeTemplateHostKeys(f)
	}
	var out []runner.Finding
	var good []string
	usable := 0
	for _, k := range f.HostKeys {
		d := map[string]string{"path": f.show(k.Path), "configured": k.At}
		if k.Err != nil {
			if errors.Is(k.Err, iofs.ErrNotExist) {
				if f.DefaultHostKeys {
					continue // sshd skips missing default keys
				}
				out = append(out, CodeHostKeyMissing.New(runner.Warn, "host key "+k.Path+" ("+k.At+") does not exist", d,
					CodeHostKeyMissing.FixOn(f.Live, "path", k.Path, "at", k.At)))
				continue
			}
			d["error"] = k.Err.Error()
			if errors.Is(k.Err, iofs.ErrPermission) && !f.IsRoot {
				out = append(out, CodeHostKeyUnread.New(runner.Skip, "host key "+k.Path+" not checked: reading it needs root", d,
					CodeHostKeyUnread.CaseFix("when guestcheck is not root", "path", k.Path)))
				usable++ // unknown, not judged missing
				continue
			}
			fix := CodeHostKeyUnread.FixOn(f.Live, "path", k.Path)
			if !f.Live && runner.IsPermission(k.Err) {
				fix = CodeHostKeyUnread.CaseFix(runner.WhenRootDenied, "path", k.Path)
			}
			out = append(out, CodeHostKeyUnread.New(runner.Error, "cannot read host key "+k.Path, d, fix))
			continue
		}
		d["mode"] = fmt.Sprintf("%04o", k.Mode.Perm())
		d["owner"] = fmt.Sprintf("%d:%d", k.UID, k.GID)
		if k.Group != "" {
			d["group"] = k.Group
		}
		if k.ParseErr != nil {
			d["error"] = problem.OneLine(k.ParseErr.Error())
			out = append(out, CodeHostKeyInvalid.New(runner.Fail, "host key "+k.Path+" does not parse as an unencrypted private key", d,
				CodeHostKeyInvalid.FixOn(f.Live, "path", k.Path)))
			continue
		}
		d["type"], d["fingerprint"] = k.Type, k.Fingerprint
		permOK := true
		switch {
		case k.UID != 0:
			permOK = false
			out = append(out, CodeHostKeyPerms.New(runner.Fail, fmt.Sprintf("host key %s is owned by uid %d, not root", k.Path, k.UID), d,
				CodeHostKeyPerms.FixOn(f.Live, "path", k.Path)))
		case !privateModeOK(k, f.RedHat):
			permOK = false
			want := "0600"
			if f.RedHat {
				want = "0600 (or 0640 with group ssh_keys)"
			}
			out = append(out, CodeHostKeyPerms.New(runner.Fail, fmt.Sprintf("host key %s has mode %04o: sshd refuses it as unprotected (wants %s)", k.Path, k.Mode.Perm(), want), d,
				CodeHostKeyPerms.CaseFix(onImage(f.Live, "when only the mode is wrong"), "path", k.Path)))
		}
		if permOK {
			usable++
		}
		switch {
		case errors.Is(k.PubErr, iofs.ErrNotExist):
			out = append(out, CodeHostKeyNoPub.New(runner.Warn, "host key "+k.Path+" has no "+path.Base(k.Path)+".pub", d,
				CodeHostKeyNoPub.FixOn(f.Live, "path", k.Path)))
		case k.PubErr != nil:
			d["pub_error"] = problem.OneLine(k.PubErr.Error())
			out = append(out, CodeHostKeyMismatch.New(runner.Fail, k.Path+".pub does not parse as a public key", d,
				CodeHostKeyMismatch.FixOn(f.Live, "path", k.Path)))
		case k.PubFingerprint != k.Fingerprint:
			d["pub_fingerprint"] = k.PubFingerprint
			out = append(out, CodeHostKeyMismatch.New(runner.Fail, k.Path+".pub is not the public half of "+k.Path, d,
				CodeHostKeyMismatch.FixOn(f.Live, "path", k.Path)))
		case k.PubMode.Perm()&0o022 != 0 || k.PubUID != 0:
			d["pub_mode"] = fmt.Sprintf("%04o", k.PubMode.Perm())
			out = append(out, CodeHostKeyPerms.New(runner.Warn, fmt.Sprintf("%s.pub is writable by others or not owned by root (mode %04o, uid %d)", k.Path, k.PubMode.Perm(), k.PubUID), d,
				CodeHostKeyPerms.CaseFix(onImage(f.Live, "for the .pub file"), "path", k.Path)))
		default:
			if permOK {
				good = append(good, path.Base(k.Path)+" "+k.Type+" "+k.Fingerprint)
			}
		}
	}
	if usable == 0 {
		out = append(out, CodeHostKeyNone.New(runner.Fail, "sshd has no usable host key", map[string]string{"configured": keyPaths(f.HostKeys)},
			CodeHostKeyNone.FixOn(f.Live)))
	}
	if len(good) > 0 {
		out = append(out, runner.Passf(CodeHostKeyOK.ID, fmt.Sprintf("%d host key(s) exist, parse and match their .pub files", len(good)),
			map[string]string{"keys": strings.Join(good, "\n")}))
	}
	return out
}

// JudgeTemplateHostKeys judges the host keys of a sealed template: none
// is expected, with something that generates them at first boot. A key
// left in the template is one every clone answers with; no key and no
// regenerator is a clone whose sshd cannot start.
func JudgeTemplateHostKeys(f Facts) []runner.Finding {
	present := templateKeys(f)
	d := f.State.Detail(map[string]string{"configured": keyPaths(f.HostKeys)})
	kept, forced := keptHostKeys(f)
	switch {
	case len(present) > 0 && kept != nil:
		d["keys"] = strings.Join(present, "\n")
		d["kept"] = f.show(sealrecord.Path)
		return []runner.Finding{CodeHostKeyInTemplate.New(runner.Warn, kept.Message, d,
			CodeHostKeyInTemplate.CaseFix("when the template keeps them by choice"))}
	case len(present) > 0:
		d["keys"] = strings.Join(present, "\n")
		return []runner.Finding{CodeHostKeyInTemplate.New(runner.Fail,
			fmt.Sprintf("%d host key file(s) left in a sealed template (%s): every clone answers with the same identity", len(present), present[0]), d,
			CodeHostKeyInTemplate.Fixf("keys", strings.Join(present, " ")))}
	case f.Regenerator != "":
		d["regenerator"] = f.Regenerator
		return []runner.Finding{runner.Passf(CodeHostKeyTemplateNone.ID,
			"no host keys, as in a sealed template: "+f.Regenerator+" generates them at first boot", d)}
	}
	status, msg := runner.Fail, "no host keys in the template and nothing generates them at first boot: clones boot an sshd without keys, which cannot start"
	if forced != nil {
		status, msg = runner.Warn, forced.Message
		d["kept"] = f.show(sealrecord.Path)
	}
	return []runner.Finding{CodeHostKeyNone.New(status, msg, d, CodeHostKeyNone.CaseFix("in a sealed template"))}
}

// keptHostKeys is what sealprep's record says the template keeps by
// choice about its host keys: the ssh-host-keys operation dropped
// (--ops), or its refusal passed (--force); nil when neither.
func keptHostKeys(f Facts) (kept, forced *sealrecord.Item) {
	if f.Template == nil {
		return nil, nil
	}
	if it, ok := f.Template.KeptItem("ssh-host-keys", false); ok {
		kept = &it
	}
	if it, ok := f.Template.KeptItem("ssh-host-keys", true); ok {
		forced = &it
	}
	return kept, forced
}

// templateKeys lists the host key files a template holds: every
// /etc/ssh/ssh_host_* and every configured key that is there.
func templateKeys(f Facts) []string {
	present := append([]string(nil), f.KeyFiles...)
	for _, k := range f.HostKeys {
		if !errors.Is(k.Err, iofs.ErrNotExist) && !slices.Contains(present, k.Path) {
			present = append(present, k.Path)
		}
	}
	return present
}

func keyPaths(ks []HostKey) string {
	var s []string
	for _, k := range ks {
		s = append(s, k.Path)
	}
	return strings.Join(s, ", ")
}

// Tolerances when dating keys against the instance, the same as
// network-identity uses for the machine-id.
const (
	slackBoot  = 2 * time.Minute
	slackBirth = 10 * time.Minute
)

// instanceStart says when this cloud-init instance began, the way
// network-identity dates the machine-id: this boot when the instance
// changed on it, else the first per-instance semaphore, else when
// instance-id was written.
func (f Facts) instanceStart() (time.Time, time.Duration, string) {
	ev := f.Instance
	if ev.InstanceID == "" {
		return time.Time{}, 0, ""
	}
	changed := ev.PreviousID != "" && ev.PreviousID != "NO_PREVIOUS_INSTANCE_ID" && ev.PreviousID != ev.InstanceID
	switch {
	case changed && !ev.BootTime.IsZero():
		return ev.BootTime, slackBoot, "this boot (" + ev.BootTime.UTC().Format(time.RFC3339) + "), when the instance changed from " + identity.ShowInstanceID(ev.PreviousID)
	case !ev.InstanceBirth.IsZero():
		return ev.InstanceBirth, slackBirth, ev.InstanceBirth.UTC().Format(time.RFC3339) + " (first cloud-init semaphore)"
	case !ev.InstanceIDTime.IsZero():
		return ev.InstanceIDTime, slackBirth, ev.InstanceIDTime.UTC().Format(time.RFC3339) + " (instance-id written)"
	}
	return time.Time{}, 0, ""
}

// JudgeKeyAge: the host keys were generated for this instance. Keys older
// than the instance mean the VM kept its template's or original's keys,
// and every VM from that template answers with the same identity.
func JudgeKeyAge(f Facts) []runner.Finding {
	var dated []HostKey
	for _, k := range f.HostKeys {
		if k.Err == nil && !k.ModTime.IsZero() {
			dated = append(dated, k)
		}
	}
	if len(dated) == 0 {
		return nil
	}
	ref, slack, why := f.instanceStart()
	if ref.IsZero() {
		return []runner.Finding{runner.Skipf(CodeHostKeyUndated.ID, "host keys not dated: there is no cloud-init instance record to compare them with", nil)}
	}
	d := map[string]string{"instance_started": why}
	// A UUID instance-id may be the machine-id itself: only its hash.
	identity.InstanceIDDetail(d, "instance_id", f.Instance.InstanceID)
	var old, fresh []string
	for _, k := range dated {
		s := path.Base(k.Path) + " " + k.ModTime.UTC().Format(time.RFC3339)
		if k.ModTime.Before(ref.Add(-slack)) {
			old = append(old, s)
		} else {
			fresh = append(fresh, s)
		}
	}
	if len(old) > 0 {
		d["older_keys"] = strings.Join(old, ", ")
		return []runner.Finding{CodeHostKeyKept.New(runner.Fail,
			fmt.Sprintf("%d host key(s) predate instance %s: the VM kept its template's or original's keys", len(old), identity.ShowInstanceID(f.Instance.InstanceID)), d,
			CodeHostKeyKept.FixOn(f.Live))}
	}
	d["keys"] = strings.Join(fresh, ", ")
	return []runner.Finding{runner.Passf(CodeHostKeyFresh.ID, fmt.Sprintf("host keys were generated for instance %s", identity.ShowInstanceID(f.Instance.InstanceID)), d)}
}

// Baseline is the accepted values per judged keyword, lower case.
type Baseline map[string][]string

// DefaultBaseline is the article's: no password login, root only with
// keys or not at all, keys allowed.
func DefaultBaseline() Baseline {
	return Baseline{
		"PasswordAuthentication":       {"no"},
		"KbdInteractiveAuthentication": {"no"},
		"PermitRootLogin":              {"no", "prohibit-password", "without-password", "forced-commands-only"},
		"PermitEmptyPasswords":         {"no"},
		"PubkeyAuthentication":         {"yes"},
	}
}

// EffectiveBaseline applies the configured ssh.baseline, then cloud-init's
// ssh_pwauth, which decides PasswordAuthentication when it is set. source
// says where the PasswordAuthentication expectation came from.
func EffectiveBaseline(cfg Accepted, pw PwAuth) (Baseline, string) {
	b := DefaultBaseline()
	set := func(k string, v []string) {
		if v != nil {
			b[k] = lower(v)
		}
	}
	set("PasswordAuthentication", cfg.PasswordAuthentication)
	set("KbdInteractiveAuthentication", cfg.KbdInteractiveAuthentication)
	set("PermitRootLogin", cfg.PermitRootLogin)
	set("PermitEmptyPasswords", cfg.PermitEmptyPasswords)
	set("PubkeyAuthentication", cfg.PubkeyAuthentication)
	source := defaultSource
	if cfg.PasswordAuthentication != nil {
		source = "ssh.baseline"
	}
	if pw.Value != nil {
		v := "no"
		if *pw.Value {
			v = "yes"
		}
		b["PasswordAuthentication"] = []string{v}
		source = "cloud-init ssh_pwauth: " + pw.Raw + " (" + pw.Source + ")"
	}
	return b, source
}

func lower(v []string) []string {
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = strings.ToLower(s)
	}
	return out
}

// accepts compares like sshd: without-password is prohibit-password.
func accepts(allowed []string, v string) bool {
	v = strings.ToLower(v)
	for _, a := range allowed {
		if a == v || (a == "prohibit-password" && v == "without-password") || (a == "without-password" && v == "prohibit-password") {
			return true
		}
	}
	return false
}

// JudgeAuth judges the five authentication settings against the baseline.
func JudgeAuth(f Facts) []runner.Finding {
	var out []runner.Finding
	switch {
	case f.PwAuth.Denied:
		out = append(out, CodePwAuthUnread.New(runner.Skip, "cloud-init's ssh_pwauth not read: "+CloudConfigPath+" is readable by root only (mode 0600); the baseline applies as configured", nil,
			CodePwAuthUnread.CaseFix("when guestcheck is not root")))
	case f.PwAuth.Err != nil:
		out = append(out, CodePwAuthUnread.New(runner.Error, "cannot read ssh_pwauth from "+CloudConfigPath+": "+problem.OneLine(f.PwAuth.Err.Error()), nil,
			CodePwAuthUnread.FixOn(f.Live)))
	}
	base, source := EffectiveBaseline(f.Baseline, f.PwAuth)
	if f.Binary == "" && len(f.Config.Files) == 0 {
		return out
	}
	d := map[string]string{"files": strings.Join(showAll(f, f.Config.Files), ", "), "password_authentication_expected_from": source}
	var bad []runner.Finding
	for _, s := range authSettings {
		v, at := s.def, "sshd default"
		if dir, ok := first(f.Config, s.key); ok {
			v, at = strings.ToLower(dir.Value()), f.show(dir.File)+":"+strconv.Itoa(dir.Line.Line)
		}
		key := snake(s.key)
		d[key] = v + " (" + at + ")"
		if s.key == "PasswordAuthentication" && v == "yes" && !accepts(base[s.key], v) && source == defaultSource {
			bad = append(bad, passwordLogin(f, v, at, base[s.key]))
		} else if !accepts(base[s.key], v) {
			bad = append(bad, CodeAuthBaseline.New(runner.Fail,
				fmt.Sprintf("%s is %s (%s); the baseline allows %s", s.key, v, at, strings.Join(base[s.key], " or ")),
				map[string]string{"setting": s.key, "value": v, "at": at, "allowed": strings.Join(base[s.key], ","), "expected_from": sourceFor(s.key, source)},
				authFix(s.key, base[s.key], at, f.Live)))
		}
		for _, c := range conditional(f.Config, s.key) {
			cv := strings.ToLower(c.Value())
			if accepts(base[s.key], cv) {
				continue
			}
			cat := f.show(c.File) + ":" + strconv.Itoa(c.Line.Line)
			bad = append(bad, CodeAuthConditional.New(runner.Warn,
				fmt.Sprintf("Match %s (%s) sets %s %s for the connections it matches", c.Match.Criteria, cat, s.key, cv),
				map[string]string{"setting": s.key, "value": cv, "at": cat, "match": c.Match.Criteria, "allowed": strings.Join(base[s.key], ",")},
				CodeAuthConditional.Fixf("at", cat, "setting", s.key, "value", base[s.key][0])))
		}
	}
	if len(bad) > 0 {
		return append(out, bad...)
	}
	return append(out, runner.Passf(CodeAuthOK.ID, "PasswordAuthentication, KbdInteractiveAuthentication, PermitRootLogin, PermitEmptyPasswords and PubkeyAuthentication meet the baseline", d))
}

// defaultSource is EffectiveBaseline's source when nobody asked for a
// PasswordAuthentication value: neither ssh.baseline nor cloud-init's
// ssh_pwauth (Debian's cloud.cfg leaves it unset, and sshd's default is
// yes).
const defaultSource = "default baseline"

// maxAccounts bounds the accounts a message names; detail `accounts`
// has them all.
const maxAccounts = 5

// passwordLogin judges PasswordAuthentication yes under the default
// baseline by what it opens: a password login reaches only accounts with
// a usable password (or an empty one) in /etc/shadow. It fails naming
// them, warns when there are none (a password set later would be
// reachable), and when the file cannot be read says so: skipped without
// root, failed as before otherwise. Hashes are never read out of
// passwords.Logins, which holds none.
func passwordLogin(f Facts, v, at string, allowed []string) runner.Finding {
	const key = "PasswordAuthentication"
	l := f.Logins
	d := map[string]string{"setting": key, "value": v, "at": at, "allowed": strings.Join(allowed, ","), "expected_from": defaultSource, "shadow": l.File}
	head := fmt.Sprintf("%s is %s (%s)", key, v, at)
	tail := "; the baseline allows " + strings.Join(allowed, " or ")
	fix := authFix(key, allowed, at, f.Live)
	switch {
	case l.Err != nil && runner.IsPermission(l.Err) && !f.IsRoot:
		d["accounts"] = "unknown: " + l.File + " is readable by root only"
		return CodeAuthBaseline.New(runner.Skip,
			head+": not judged: whether an account has a password is unknown, "+l.File+" is readable by root only", d,
			CodeAuthBaseline.CaseFix("when /etc/shadow is readable by root only"))
	case l.Err != nil:
		why := fs.ErrorText(l.File, l.Err)
		d["accounts"] = "unknown: " + why
		return CodeAuthBaseline.New(runner.Fail, head+tail+" (whether an account has a password is unknown: "+why+")", d, fix)
	case len(l.Problems) > 0:
		d["accounts"] = "unknown: " + strings.Join(l.Problems, "; ")
		return CodeAuthBaseline.New(runner.Fail,
			fmt.Sprintf("%s%s (whether an account has a password is unknown: %d line(s) of %s do not parse, first %s)", head, tail, len(l.Problems), l.File, l.Problems[0]), d, fix)
	}
	open := l.Open()
	if len(open) == 0 {
		d["accounts"] = "none with a usable password"
		return CodeAuthBaseline.New(runner.Warn,
			head+", but no account has a usable password in "+l.File+": a password set later would be reachable over ssh"+tail, d, fix)
	}
	var names []string
	for _, n := range l.Empty {
		names = append(names, n+" (empty password)")
	}
	names = append(names, l.Usable...)
	d["accounts"] = strings.Join(names, ", ")
	shown := strings.Join(names, ", ")
	if len(names) > maxAccounts {
		shown = strings.Join(names[:maxAccounts], ", ") + fmt.Sprintf(" and %d more", len(names)-maxAccounts)
	}
	return CodeAuthBaseline.New(runner.Fail,
		fmt.Sprintf("%s and %d account(s) have a password it accepts: %s%s", head, len(open), shown, tail), d, fix)
}

func sourceFor(key, pwSource string) string {
	if key == "PasswordAuthentication" {
		return pwSource
	}
	return "baseline"
}

// authFix is the fix for a setting outside the baseline: change the line
// that won, or, when sshd's default wins, add a drop-in read first.
func authFix(key string, allowed []string, at string, live bool) string {
	kv := []string{"setting", key, "value", allowed[0], "at", at}
	if at == "sshd default" {
		return CodeAuthBaseline.CaseFix(onImage(live, "when the value is sshd's default"), kv...)
	}
	return CodeAuthBaseline.FixOn(live, kv...)
}

// onImage is the name of a case of a code's fix, or of its image root's
// variant ("under an image root, " and the case) when not live: the
// commands of the running system's wording would act on the host.
func onImage(live bool, when string) string {
	if live {
		return when
	}
	if rest, ok := strings.CutPrefix(when, "when "); ok {
		return "under an image root, when " + rest
	}
	return when + " under an image root"
}

func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

func showAll(f Facts, ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = f.show(p)
	}
	return out
}

// JudgeTemplateKeys: no host key is one that sealprep recorded as the
// template's. The record outlives the keys, so this names a clone of a
// half-sealed image (--ops -ssh-host-keys) and the template it came from
// whatever the file times say.
func JudgeTemplateKeys(f Facts) []runner.Finding {
	t := f.Template
	if t == nil {
		return nil
	}
	var hits []string
	for _, k := range f.HostKeys {
		fp := k.Fingerprint
		if fp == "" {
			fp = k.PubFingerprint
		}
		if fp == "" {
			continue
		}
		if rk, ok := t.KeyByFingerprint(fp); ok {
			hits = append(hits, k.Path+" "+rk.Type+" "+fp)
		}
	}
	if len(hits) == 0 {
		return nil
	}
	if kept, _ := keptHostKeys(f); kept != nil && f.State.Is {
		return nil // the template itself: JudgeTemplateHostKeys warns, once
	}
	how := " without its ssh-host-keys operation"
	if t.HostKeysRemoved {
		how = ", whose ssh-host-keys operation removed them; they were put back since"
	}
	d := map[string]string{"keys": strings.Join(hits, "\n"), "record": f.show(sealrecord.Path),
		"sealed_at": t.SealedAt.UTC().Format(time.RFC3339), "sealprep_version": t.SealprepVersion}
	return []runner.Finding{CodeHostKeyTemplate.New(runner.Fail,
		fmt.Sprintf("%d host key(s) are the template's keys (%s%s): every clone of the image presents them, so clones can impersonate each other", len(hits), t.Describe(), how), d,
		CodeHostKeyTemplate.FixOn(f.Live))}
}
