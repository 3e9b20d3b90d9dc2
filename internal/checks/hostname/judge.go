package hostname

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/cloudcfg"
	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/hostnamefile"
	"github.com/guestcheck/guestcheck/internal/parse/cloudconfig"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Judge decides the hostname check from f alone: the name is valid, not
// a placeholder, persisted in /etc/hostname, equal to what cloud-init was
// asked to set (or to hostname.expected), and resolvable to a local
// address. Unusable files come first, as errors, then the verdicts.
func Judge(f Facts) []runner.Finding {
	v := &verdict{f: &f, detail: map[string]string{}}
	v.names()
	v.cloudInit()
	v.detail["expected"] = or(f.Expected, "not set")
	if f.Template.Is {
		// A template's name is no clone's, so nothing resolves it.
		v.detail["resolution"] = "not attempted: a sealed template has no name of its own"
		v.judgeTemplate()
		return v.findings()
	}

	validName := v.judgeName()
	etcOK := v.judgeEtc()
	metaOK, metaNote := v.judgeMetadata()
	if validName && etcOK && metaOK && v.subject != "" {
		v.addOK(metaNote)
	}
	if validName {
		v.judgeResolution()
	} else if _, ok := v.detail["resolution"]; !ok {
		v.detail["resolution"] = "not attempted: no usable hostname"
	}
	return v.findings()
}

// verdict is Judge's working state: the evidence shared by every finding
// and the findings so far. Findings are built at the end so that each
// carries the complete evidence.
type verdict struct {
	f *Facts

	detail   map[string]string
	pending  []pendingFinding
	problems []pendingFinding // unusable files, reported as errors

	kernelRead bool
	etc        string
	etcState   hostnamefile.State
	subject    string // the name judged: kernel hostname, or /etc/hostname when not live
	subjectSrc string // "kernel hostname" or "/etc/hostname"

	cfg         Effective
	userDataOK  bool // user-data was read (or is absent), so its overrides are known
	setHost     *SetHostname
	local       string // v1.local_hostname
	request     Request
	requested   bool
	localSource string // how the request names instance-data
}

// pendingFinding is a finding whose Detail is filled in at the end; extra
// are its own key/value pairs.
type pendingFinding struct {
	status runner.Status
	code   runner.Code
	msg    string
	fix    string
	extra  []string
}

func (v *verdict) add(st runner.Status, code runner.Code, msg, fix string, extra ...string) {
	v.pending = append(v.pending, pendingFinding{st, code, msg, fix, extra})
}

// show names guest path p as the operator sees it.
func (v *verdict) show(p string) string {
	if v.f.Show == nil {
		return p
	}
	return v.f.Show(p)
}

// findings materialises the pending findings: problems first, then the
// overall verdict (hostname-ok) so that it heads a passing check. The
// shared evidence goes on the first finding and on every finding that needs
// attention; other passing notes carry only their own.
func (v *verdict) findings() []runner.Finding {
	pend := append([]pendingFinding{}, v.pending...)
	sort.SliceStable(pend, func(i, j int) bool {
		return pend[i].code.ID == codeOK.ID && pend[j].code.ID != codeOK.ID
	})
	all := append(append([]pendingFinding{}, v.problems...), pend...)
	out := make([]runner.Finding, 0, len(all))
	for i, p := range all {
		var shared map[string]string
		if i == 0 || (p.status != runner.Pass && p.status != runner.Skip) {
			shared = v.detail
		}
		fix := p.fix
		if p.status == runner.Pass || p.status == runner.Skip {
			fix = ""
		}
		// Parser errors may quote file content; keep messages on one line.
		msg := strings.NewReplacer("\n", " ", "\r", " ").Replace(p.msg)
		out = append(out, p.code.New(p.status, msg, runner.Detail(shared, p.extra...), fix))
	}
	return out
}

// fileProblem records that p could not be used, and why. The kernel
// hostname is no file to repair: /proc is what is missing there.
func (v *verdict) fileProblem(p, reason string) {
	shown := v.show(p)
	fix := codeFileUnreadable.Fixf("file", shown, "reason", reason)
	if p == pathKernelHostname {
		fix = codeFileUnreadable.CaseFix("when the kernel hostname cannot be read", "file", shown, "reason", reason)
	}
	v.problems = append(v.problems, pendingFinding{
		status: runner.Error,
		code:   codeFileUnreadable,
		msg:    shown + ": " + reason,
		fix:    fix,
		extra:  []string{"file", shown, "reason", reason},
	})
}

// readProblem records a read failure other than absence; it reports
// whether the file was read.
func (v *verdict) readProblem(p string, err error) bool {
	if err != nil && !isNotExist(err) {
		v.fileProblem(p, errReason(err))
	}
	return err == nil
}

// isNotExist: the file is absent, which callers judge on their own.
func isNotExist(err error) bool { return errors.Is(err, os.ErrNotExist) }

// errReason is the part of a read error after the path, which the message
// names already.
func errReason(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	if errors.Is(err, fs.ErrTooLarge) {
		return fs.ErrTooLarge.Error()
	}
	return err.Error()
}

// names judges what was read of the kernel hostname and /etc/hostname,
// and picks the name to judge.
func (v *verdict) names() {
	f := v.f
	switch {
	case !f.Live:
		v.detail["kernel_hostname"] = "not consulted: " + f.NotLive
	case f.KernelErr == nil:
		v.kernelRead = true
		v.detail["kernel_hostname"] = or(f.KernelName, "empty")
	default:
		if isNotExist(f.KernelErr) {
			v.fileProblem(pathKernelHostname, "file does not exist")
		} else {
			v.fileProblem(pathKernelHostname, errReason(f.KernelErr))
		}
		v.detail["kernel_hostname"] = "unreadable"
	}

	v.etcState = f.Static.State
	switch {
	case f.Static.ReadErr != nil:
		v.fileProblem(f.Static.File(), errReason(f.Static.ReadErr))
	case f.Static.ParseErr != nil:
		v.fileProblem(f.Static.File(), f.Static.ParseErr.Error())
	case f.Static.State == hostnamefile.Set:
		v.etc = f.Static.Name
	}
	v.detail["etc_hostname"] = map[hostnamefile.State]string{
		hostnamefile.Set: v.etc, hostnamefile.Missing: "missing", hostnamefile.Empty: "empty (no static hostname)", hostnamefile.Unusable: "unreadable",
	}[v.etcState]

	switch {
	case v.kernelRead:
		v.subject, v.subjectSrc = f.KernelName, "kernel hostname"
	case v.etcState == hostnamefile.Set:
		v.subject, v.subjectSrc = v.etc, f.Static.File()
	}
	if v.subjectSrc != "" {
		v.detail["judged_name"] = v.subjectSrc
	}
}

// cloudInit judges what cloud-init applied (set-hostname), what the
// meta-data asks for (instance-data v1.local_hostname) and the cloud-config
// layers that can override it or tell cloud-init to leave the name alone.
func (v *verdict) cloudInit() {
	f := v.f
	if v.readProblem(pathSetHostname, f.SetHostname.ReadErr) {
		s := f.SetHostname.Value
		if err := f.SetHostname.ParseErr; err != nil {
			v.fileProblem(pathSetHostname, err.Error())
		} else if s.Hostname != "" || s.FQDN != "" {
			v.setHost = &s
		}
	}
	if v.setHost != nil {
		v.detail["set_hostname"] = fmt.Sprintf("hostname=%s fqdn=%s", or(v.setHost.Hostname, "none"), or(v.setHost.FQDN, "none"))
	} else {
		v.detail["set_hostname"] = "absent"
	}

	if v.readProblem(pathInstanceData, f.Instance.ReadErr) {
		switch d := f.Instance.Value; {
		case f.Instance.ParseErr != nil:
			v.fileProblem(pathInstanceData, f.Instance.ParseErr.Error())
		case !d.HasV1:
			v.fileProblem(pathInstanceData, `no "v1" object`)
		default:
			v.local = d.LocalHostname
		}
	}
	v.detail["metadata_local_hostname"] = or(v.local, "absent")

	v.cfg = v.layers()
	v.detail["preserve_hostname"] = strconv.FormatBool(v.cfg.PreserveHostname.Value)
	v.detail["preserve_hostname_source"] = or(v.cfg.PreserveHostname.Source, "cloud-init default")
	v.request, v.requested = v.requestOf()
}

// layers merges the hostname keys of the cloud-config layers, from
// cloud.cfg up to user-data, reporting the files that cannot be used.
func (v *verdict) layers() Effective {
	var layers []Layer
	var templates []string
	addLayer := func(fl cloudcfg.File, rootOnly bool) (read bool) {
		switch err := fl.ReadErr; {
		case err == nil:
		case isNotExist(err):
			return true
		case rootOnly && !v.f.IsRoot && errors.Is(err, os.ErrPermission):
			// cloud-init writes the processed user-data 0600; like
			// cloud-init itself, a non-root run goes on without it.
			return false
		default:
			v.fileProblem(fl.Path, errReason(err))
			return false
		}
		c, err := cloudConfigOf(fl)
		if errors.Is(err, ErrTemplate) {
			templates = append(templates, v.show(fl.Path))
			return true
		}
		if err != nil {
			v.fileProblem(fl.Path, err.Error())
			return false
		}
		layers = append(layers, Layer{Source: v.show(fl.Path), Config: c})
		return true
	}

	sys := v.f.System
	if base, ok := sys.Base(); ok {
		addLayer(base, false)
	}
	if sys.DirErr != nil {
		v.fileProblem(or(sys.Dir, cloudconfig.SystemPath), errReason(sys.DirErr))
	}
	for _, fl := range sys.DropIns() {
		addLayer(fl, false)
	}
	// The run-time cloud.cfg is the system's; the others are the
	// instance's vendor-data and user-data, root-only.
	v.userDataOK = true
	for i, fl := range v.f.Layers {
		if read := addLayer(fl, i > 0); !read && i > 0 {
			v.userDataOK = false
		}
	}
	if !v.userDataOK {
		v.detail["user_data"] = "not fully read (root-only files, or unreadable): its hostname settings are unknown"
	}
	if len(templates) > 0 {
		v.detail["cloud_config_templates"] = strings.Join(templates, ", ") + " not evaluated (rendered by cloud-init at boot)"
	}
	return Merge(layers...)
}

// requestOf derives the name cloud-init was asked for from the merged
// layers and the meta-data, and records it.
func (v *verdict) requestOf() (Request, bool) {
	v.localSource = v.show(pathInstanceData) + " v1.local_hostname"
	req, ok := Requested(v.cfg, v.local, v.localSource)
	// cloud-init leaves a default "localhost" to other services, so it
	// is not a request to compare against (IsLocalhost judges it anyway).
	if ok && IsLocalhost(req.Hostname) && req.FQDN == "" {
		ok = false
	}
	if ok {
		v.detail["cloud_init_hostname"] = req.Hostname
		v.detail["cloud_init_fqdn"] = or(req.FQDN, "not requested (domain from the cloud)")
		v.detail["cloud_init_source"] = req.Source
	} else {
		v.detail["cloud_init_hostname"] = "none requested"
		v.detail["cloud_init_fqdn"] = "none requested"
		v.detail["cloud_init_source"] = "none"
	}
	return req, ok
}

// validName is Validate, refusing also the root dot: DNS allows it, a host
// name never carries it, and hostnamectl refuses it.
func validName(name string) error {
	err := Validate(name)
	if err == nil && strings.HasSuffix(name, ".") {
		err = errors.New("ends with '.'")
	}
	return err
}

// judgeName checks that the judged name is set, not a placeholder and
// valid. It reports whether the name is usable for further checks.
func (v *verdict) judgeName() bool {
	if v.subject == "" {
		if v.kernelRead {
			v.add(runner.Fail, codeLocalhost, "kernel hostname is empty"+v.askedFor(), codeLocalhost.FixOn(v.f.Live))
		}
		// Otherwise the missing sources are already reported.
		return false
	}
	if v.subject == "(none)" || IsLocalhost(v.subject) {
		v.add(runner.Fail, codeLocalhost,
			fmt.Sprintf("%s is %s, a placeholder: nothing gave this VM a name%s", v.subjectSrc, show(v.subject), v.askedFor()),
			codeLocalhost.FixOn(v.f.Live))
		return false
	}
	if err := validName(v.subject); err != nil {
		v.add(runner.Fail, codeInvalid,
			fmt.Sprintf("%s %s is not a valid RFC 1123 host name: %v", v.subjectSrc, show(v.subject), err),
			codeInvalid.FixOn(v.f.Live), "invalid_reason", err.Error())
		return false
	}
	return true
}

// askedFor adds what cloud-init was asked for to a placeholder message.
func (v *verdict) askedFor() string {
	if v.requested {
		return fmt.Sprintf(" (cloud-init was asked for %s)", show(v.request.Hostname))
	}
	return ""
}

// judgeEtc compares /etc/hostname (the static name, restored at boot) with
// the kernel hostname. Off the live system /etc/hostname is the judged name
// itself, so only its absence is reported.
func (v *verdict) judgeEtc() bool {
	noFile := v.etcState == hostnamefile.Missing || v.etcState == hostnamefile.Empty
	if noFile && v.cfg.CreateHostnameFile.Set && !v.cfg.CreateHostnameFile.Value {
		// cloud-init was told not to create it: a transient name is
		// intended here.
		v.detail["etc_hostname_note"] = "not expected: create_hostname_file is false in " + v.cfg.CreateHostnameFile.Source
		return true
	}
	if noFile {
		var msg string
		kernel := v.f.KernelName
		switch {
		case v.kernelRead && kernel != "":
			msg = fmt.Sprintf("/etc/hostname is %s, so the name %s is transient and is lost at reboot", v.etcState, show(kernel))
		case v.kernelRead:
			msg = fmt.Sprintf("/etc/hostname is %s and the kernel hostname is empty", v.etcState)
		case v.f.Live:
			msg = fmt.Sprintf("/etc/hostname is %s and the kernel hostname could not be read", v.etcState)
		default:
			msg = fmt.Sprintf("/etc/hostname is %s and the kernel hostname was not consulted (%s)", v.etcState, v.f.NotLive)
		}
		var kv []string
		if v.kernelRead && kernel != "" {
			kv = []string{"name", runner.ShellWord(kernel)}
		}
		v.add(runner.Warn, codeEtcMissing, msg, codeEtcMissing.FixOn(v.f.Live, kv...))
		return false
	}
	if v.etcState != hostnamefile.Set || !v.kernelRead || v.f.KernelName == "" {
		// Unreadable files are reported on their own; off the live system
		// /etc/hostname is the judged name and has nothing to agree with.
		return true
	}
	m := Compare(v.etc, v.f.KernelName)
	v.detail["etc_hostname_match"] = m.String()
	if m == MatchNone {
		v.add(runner.Warn, codeEtcMismatch,
			fmt.Sprintf("/etc/hostname says %s but the kernel hostname is %s: the static and transient names differ", show(v.etc), show(v.f.KernelName)),
			codeEtcMismatch.Fixf("kernel_name", runner.ShellWord(v.f.KernelName), "static_name", runner.ShellWord(v.etc)))
		return false
	}
	return true
}

// judgeTemplate judges /etc/hostname in a sealed template, where no
// static name is expected: each clone takes its own from cloud-init or
// DHCP. A name left is one every clone claims until something renames
// it. The fixes edit the image: hostnamectl would name the host running
// guestcheck, or a template that is to have no name.
func (v *verdict) judgeTemplate() {
	why := v.f.Template.Why
	switch v.etcState {
	case hostnamefile.Missing, hostnamefile.Empty:
		v.add(runner.Pass, codeTemplate,
			fmt.Sprintf("no static hostname (%s is %s), as in a sealed template: each clone takes its name from cloud-init or DHCP", v.f.Static.File(), v.etcState),
			"", "template", why)
	case hostnamefile.Set:
		v.add(runner.Warn, codeTemplateNamed,
			fmt.Sprintf("%s names %s in a sealed template: every clone claims that name until cloud-init or DHCP renames it", v.f.Static.File(), show(v.etc)),
			codeTemplateNamed.Fixf("file", v.f.Static.File()), "template", why)
	}
	// An unusable /etc/hostname is already a file problem.
	for _, fb := range v.f.Fallbacks {
		if fb.State == hostnamefile.Set && fb.File() != v.f.Static.File() {
			v.add(runner.Warn, codeTemplateNamed,
				fmt.Sprintf("%s names %s in a sealed template: a system that reads it makes every clone claim that name", fb.File(), show(fb.Name)),
				codeTemplateNamed.Fixf("file", fb.File()), "template", why)
		}
	}
}

// addOK records the summary pass for the name itself.
func (v *verdict) addOK(metaNote string) {
	parts := []string{fmt.Sprintf("%s %s is a valid host name", v.subjectSrc, v.subject)}
	if v.kernelRead && v.etcState == hostnamefile.Set {
		parts = append(parts, "agrees with /etc/hostname")
	}
	if metaNote != "" {
		parts = append(parts, metaNote)
	}
	msg := parts[0]
	switch len(parts) {
	case 2:
		msg += " and " + parts[1]
	case 3:
		msg += ", " + parts[1] + " and " + parts[2]
	}
	v.add(runner.Pass, codeOK, msg, "")
}

// show quotes a name unless it is plain, so that garbage stays on one line
// and is visible.
func show(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || c == '"' {
			return strconv.Quote(s)
		}
	}
	if s == "" {
		return `""`
	}
	return s
}

func or(s, word string) string {
	if s == "" {
		return word
	}
	return s
}
