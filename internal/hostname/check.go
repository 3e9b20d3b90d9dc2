package hostname

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"net"
	"net/netip"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/check"
	"github.com/guestcheck/guestcheck/internal/fs"
	"github.com/guestcheck/guestcheck/internal/guestfile/hosts"
)

// Finding codes of the hostname check.
const (
	codeOK               = "hostname-ok"
	codeInvalid          = "hostname-invalid"
	codeLocalhost        = "hostname-localhost"
	codeEtcMismatch      = "hostname-etc-mismatch"
	codeEtcMissing       = "hostname-etc-missing"
	codeMetadataMismatch = "hostname-metadata-mismatch"
	codeExpectedMismatch = "hostname-expected-mismatch"
	codePreserved        = "hostname-preserved"
	codeNoMetadata       = "hostname-no-metadata"
	codeResolves         = "hostname-resolves"
	codeResolvesRemote   = "hostname-resolves-remote"
	codeUnresolvable     = "hostname-unresolvable"
	codeNSSOnly          = "hostname-nss-only"
	codeFileUnreadable   = "hostname-file-unreadable"
	codeConfigInvalid    = "hostname-config-invalid"
	codeInterrupted      = "hostname-interrupted"
)

// Guest paths the check reads.
const (
	pathKernelHostname  = "/proc/sys/kernel/hostname"
	pathEtcHostname     = "/etc/hostname"
	pathEtcHosts        = "/etc/hosts"
	pathNsswitch        = "/etc/nsswitch.conf"
	pathNsswitchVendor  = "/usr/etc/nsswitch.conf" // openSUSE keeps the default here
	pathSetHostname     = "/var/lib/cloud/data/set-hostname"
	pathInstanceData    = "/run/cloud-init/instance-data.json"
	pathCloudCfg        = "/etc/cloud/cloud.cfg"
	pathCloudCfgD       = "/etc/cloud/cloud.cfg.d"
	pathRunCloudCfg     = "/run/cloud-init/cloud.cfg"
	pathVendorConfig    = "/var/lib/cloud/instance/vendor-cloud-config.txt"
	pathVendor2Config   = "/var/lib/cloud/instance/vendor2-cloud-config.txt"
	pathUserCloudConfig = "/var/lib/cloud/instance/cloud-config.txt"
)

// hostnameDNSTimeout bounds the DNS lookup inside the check's own deadline:
// a hostname that takes longer than this to resolve already stalls sudo.
const hostnameDNSTimeout = 2 * time.Second

// Codes lists every finding code the hostname check reports.
var Codes = []string{
	codeOK, codeInvalid, codeLocalhost,
	codeEtcMismatch, codeEtcMissing,
	codeMetadataMismatch, codeExpectedMismatch,
	codePreserved, codeNoMetadata,
	codeResolves, codeResolvesRemote,
	codeUnresolvable, codeNSSOnly,
	codeFileUnreadable, codeConfigInvalid,
	codeInterrupted,
}

// Run judges the VM's name: valid, not a placeholder, persisted in
// /etc/hostname, equal to what cloud-init was asked to set (or to
// hostname.expected), and resolvable to a local address. Interface
// addresses come from env.InterfaceAddrs, and only on the live system.
func Run(ctx context.Context, env *check.Env) []check.Finding {
	r := &hostnameRun{env: env, detail: map[string]string{}}
	return r.run(ctx)
}

// hostnameRun is the state of one run: what was read, then what was judged.
// Findings are built at the end so that each carries the complete evidence.
type hostnameRun struct {
	env *check.Env

	detail   map[string]string
	pending  []pendingFinding
	problems []pendingFinding // unreadable files, reported as errors

	kernel     string // kernel hostname; "" when not read
	kernelRead bool
	etc        string
	etcState   string // "ok", "missing", "empty", "error"
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

// pendingFinding is a finding whose Detail is filled in at the end.
type pendingFinding struct {
	status check.Status
	code   string
	msg    string
	fix    string
	extra  map[string]string
}

func (r *hostnameRun) add(st check.Status, code, msg, fix string, extra map[string]string) {
	r.pending = append(r.pending, pendingFinding{st, code, msg, fix, extra})
}

func (r *hostnameRun) run(ctx context.Context) []check.Finding {
	r.readNames()
	r.readCloudInit()
	r.detail["expected"] = or(r.expected(), "not set")

	validName := r.judgeName()
	etcOK := r.judgeEtc()
	metaOK, metaNote := r.judgeMetadata()
	if validName && etcOK && metaOK && r.subject != "" {
		r.addOK(metaNote)
	}
	if validName {
		r.judgeResolution(ctx)
	} else if _, ok := r.detail["resolution"]; !ok {
		r.detail["resolution"] = "not attempted: no usable hostname"
	}
	return r.findings()
}

// expected is the configured expectation, trimmed.
func (r *hostnameRun) expected() string {
	if r.env.Config == nil {
		return ""
	}
	return strings.TrimSpace(r.env.Config.Hostname.Expected)
}

// findings materialises the pendingFinding findings: problems first, then the
// overall verdict (hostname-ok) so that it heads a passing check. The
// shared evidence goes on the first finding and on every finding that needs
// attention; other passing notes carry only their own.
func (r *hostnameRun) findings() []check.Finding {
	pend := append([]pendingFinding{}, r.pending...)
	sort.SliceStable(pend, func(i, j int) bool {
		return pend[i].code == codeOK && pend[j].code != codeOK
	})
	all := append(append([]pendingFinding{}, r.problems...), pend...)
	out := make([]check.Finding, 0, len(all))
	for i, p := range all {
		d := make(map[string]string, len(r.detail)+len(p.extra))
		if i == 0 || (p.status != check.Pass && p.status != check.Skip) {
			for k, v := range r.detail {
				d[k] = v
			}
		}
		for k, v := range p.extra {
			d[k] = v
		}
		fix := p.fix
		if p.status == check.Pass || p.status == check.Skip {
			fix = ""
		}
		// Parser errors may quote file content; keep messages on one line.
		msg := strings.NewReplacer("\n", " ", "\r", " ").Replace(p.msg)
		out = append(out, check.New(p.status, p.code, msg, d, fix))
	}
	return out
}

// readFile reads guest path p. Missing files return ok=false without a
// finding (callers decide what absence means); any other failure records a
// hostname-file-unreadable error naming the file and the reason.
func (r *hostnameRun) readFile(p string) (b []byte, ok bool, missing bool) {
	b, err := r.env.Root.ReadFile(p)
	if err == nil {
		return b, true, false
	}
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, false, true
	}
	r.fileProblem(p, errReason(err))
	return nil, false, false
}

// fileProblem records that p could not be used, and why.
func (r *hostnameRun) fileProblem(p, reason string) {
	shown := r.env.Root.Display(p)
	r.problems = append(r.problems, pendingFinding{
		status: check.Error,
		code:   codeFileUnreadable,
		msg:    shown + ": " + reason,
		fix:    fmt.Sprintf("Repair or remove %s (%s) so that the hostname can be verified against it", shown, reason),
		extra:  map[string]string{"file": shown, "reason": reason},
	})
}

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

// readNames reads the kernel hostname (live only) and /etc/hostname.
func (r *hostnameRun) readNames() {
	if r.env.Live {
		if b, ok, missing := r.readFile(pathKernelHostname); ok {
			r.kernel, r.kernelRead = strings.TrimSpace(string(b)), true
			r.detail["kernel_hostname"] = or(r.kernel, "empty")
		} else {
			if missing {
				r.fileProblem(pathKernelHostname, "file does not exist")
			}
			r.detail["kernel_hostname"] = "unreadable"
		}
	} else {
		r.detail["kernel_hostname"] = "not consulted: " + r.env.NotLiveReason()
	}

	b, ok, missing := r.readFile(pathEtcHostname)
	switch {
	case missing:
		r.etcState = "missing"
	case !ok:
		r.etcState = "error"
	default:
		name, err := ParseEtcHostname(b)
		switch {
		case err != nil:
			r.etcState = "error"
			r.fileProblem(pathEtcHostname, err.Error())
		case name == "":
			r.etcState = "empty"
		default:
			r.etc, r.etcState = name, "ok"
		}
	}
	r.detail["etc_hostname"] = map[string]string{
		"ok": r.etc, "missing": "missing", "empty": "empty (no static hostname)", "error": "unreadable",
	}[r.etcState]

	switch {
	case r.kernelRead:
		r.subject, r.subjectSrc = r.kernel, "kernel hostname"
	case r.etcState == "ok":
		r.subject, r.subjectSrc = r.etc, "/etc/hostname"
	}
	if r.subjectSrc != "" {
		r.detail["judged_name"] = r.subjectSrc
	}
}

// readCloudInit reads what cloud-init applied (set-hostname), what the
// meta-data asks for (instance-data v1.local_hostname) and the cloud-config
// layers that can override it or tell cloud-init to leave the name alone.
func (r *hostnameRun) readCloudInit() {
	if b, ok, _ := r.readFile(pathSetHostname); ok {
		s, err := ParseSetHostname(b)
		if err != nil {
			r.fileProblem(pathSetHostname, err.Error())
		} else if s.Hostname != "" || s.FQDN != "" {
			r.setHost = &s
		}
	}
	if r.setHost != nil {
		r.detail["set_hostname"] = fmt.Sprintf("hostname=%s fqdn=%s", or(r.setHost.Hostname, "none"), or(r.setHost.FQDN, "none"))
	} else {
		r.detail["set_hostname"] = "absent"
	}

	if b, ok, _ := r.readFile(pathInstanceData); ok {
		local, err := ParseInstanceHostname(b)
		if err != nil {
			r.fileProblem(pathInstanceData, err.Error())
		}
		r.local = local
	}
	r.detail["metadata_local_hostname"] = or(r.local, "absent")

	var layers []Layer
	var templates []string
	addLayer := func(p string, rootOnly bool) (read bool) {
		b, err := r.env.Root.ReadFile(p)
		if err != nil {
			switch {
			case errors.Is(err, iofs.ErrNotExist):
				return true
			case rootOnly && !r.env.IsRoot && errors.Is(err, iofs.ErrPermission):
				// cloud-init writes the processed user-data 0600; like
				// cloud-init itself, a non-root run goes on without it.
				return false
			}
			r.fileProblem(p, errReason(err))
			return false
		}
		c, err := ParseCloudConfig(b)
		if errors.Is(err, ErrTemplate) {
			templates = append(templates, r.env.Root.Display(p))
			return true
		}
		if err != nil {
			r.fileProblem(p, err.Error())
			return false
		}
		layers = append(layers, Layer{Source: r.env.Root.Display(p), Config: c})
		return true
	}

	addLayer(pathCloudCfg, false)
	for _, p := range r.cloudCfgD() {
		addLayer(p, false)
	}
	addLayer(pathRunCloudCfg, false)
	vendorOK := addLayer(pathVendorConfig, true)
	vendor2OK := addLayer(pathVendor2Config, true)
	userOK := addLayer(pathUserCloudConfig, true)
	r.userDataOK = vendorOK && vendor2OK && userOK
	if !r.userDataOK {
		r.detail["user_data"] = "not fully read (root-only files, or unreadable): its hostname settings are unknown"
	}
	if len(templates) > 0 {
		r.detail["cloud_config_templates"] = strings.Join(templates, ", ") + " not evaluated (rendered by cloud-init at boot)"
	}

	r.cfg = Merge(layers...)
	r.detail["preserve_hostname"] = strconv.FormatBool(r.cfg.PreserveHostname.Value)
	r.detail["preserve_hostname_source"] = or(r.cfg.PreserveHostname.Source, "cloud-init default")

	r.localSource = r.env.Root.Display(pathInstanceData) + " v1.local_hostname"
	r.request, r.requested = Requested(r.cfg, r.local, r.localSource)
	// cloud-init leaves a default "localhost" to other services, so it
	// is not a request to compare against (IsLocalhost judges it anyway).
	if r.requested && IsLocalhost(r.request.Hostname) && r.request.FQDN == "" {
		r.requested = false
	}
	if r.requested {
		r.detail["cloud_init_hostname"] = r.request.Hostname
		r.detail["cloud_init_fqdn"] = or(r.request.FQDN, "not requested (domain from the cloud)")
		r.detail["cloud_init_source"] = r.request.Source
	} else {
		r.detail["cloud_init_hostname"] = "none requested"
		r.detail["cloud_init_fqdn"] = "none requested"
		r.detail["cloud_init_source"] = "none"
	}
}

// cloudCfgD lists /etc/cloud/cloud.cfg.d/*.cfg in name order, as cloud-init
// merges them (later files win).
func (r *hostnameRun) cloudCfgD() []string {
	ents, err := r.env.Root.ReadDir(pathCloudCfgD)
	if err != nil {
		if !errors.Is(err, iofs.ErrNotExist) {
			r.fileProblem(pathCloudCfgD, errReason(err))
		}
		return nil
	}
	var out []string
	for _, e := range ents {
		if !strings.HasSuffix(e.Name, ".cfg") {
			continue
		}
		p := path.Join(pathCloudCfgD, e.Name)
		// cloud-init takes regular files only, following symlinks.
		if st, err := r.env.Root.Stat(p); err == nil && !st.Mode().IsRegular() {
			continue
		}
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// judgeName checks that the judged name is set, not a placeholder and
// valid. It reports whether the name is usable for further checks.
func (r *hostnameRun) judgeName() bool {
	if r.subject == "" {
		if r.kernelRead {
			r.add(check.Fail, codeLocalhost, "kernel hostname is empty"+r.askedFor(),
				"Give the VM a name through meta-data local-hostname or user-data hostname, or run `hostnamectl set-hostname NAME`", nil)
		}
		// Otherwise the missing sources are already reported.
		return false
	}
	if r.subject == "(none)" || IsLocalhost(r.subject) {
		r.add(check.Fail, codeLocalhost,
			fmt.Sprintf("%s is %s, a placeholder: nothing gave this VM a name%s", r.subjectSrc, show(r.subject), r.askedFor()),
			"Give the VM a name through meta-data local-hostname or user-data hostname (check that cloud-init ran), or run `hostnamectl set-hostname NAME`", nil)
		return false
	}
	err := Validate(r.subject)
	if err == nil && strings.HasSuffix(r.subject, ".") {
		// DNS allows the root dot; a host name never carries it, and
		// hostnamectl refuses it.
		err = errors.New("ends with '.'")
	}
	if err != nil {
		r.add(check.Fail, codeInvalid,
			fmt.Sprintf("%s %s is not a valid RFC 1123 host name: %v", r.subjectSrc, show(r.subject), err),
			"Use only letters, digits and inner hyphens (labels of 1-63 characters): fix the name at its source (meta-data local-hostname or user-data hostname) and run `hostnamectl set-hostname NAME`",
			map[string]string{"invalid_reason": err.Error()})
		return false
	}
	return true
}

// askedFor adds what cloud-init was asked for to a placeholder message.
func (r *hostnameRun) askedFor() string {
	if r.requested {
		return fmt.Sprintf(" (cloud-init was asked for %s)", show(r.request.Hostname))
	}
	return ""
}

// judgeEtc compares /etc/hostname (the static name, restored at boot) with
// the kernel hostname. Off the live system /etc/hostname is the judged name
// itself, so only its absence is reported.
func (r *hostnameRun) judgeEtc() bool {
	noFile := r.etcState == "missing" || r.etcState == "empty"
	if noFile && r.cfg.CreateHostnameFile.Set && !r.cfg.CreateHostnameFile.Value {
		// cloud-init was told not to create it: a transient name is
		// intended here.
		r.detail["etc_hostname_note"] = "not expected: create_hostname_file is false in " + r.cfg.CreateHostnameFile.Source
		return true
	}
	if noFile {
		var msg string
		switch {
		case r.kernelRead && r.kernel != "":
			msg = fmt.Sprintf("/etc/hostname is %s, so the name %s is transient and is lost at reboot", r.etcState, show(r.kernel))
		case r.kernelRead:
			msg = fmt.Sprintf("/etc/hostname is %s and the kernel hostname is empty", r.etcState)
		case r.env.Live:
			msg = fmt.Sprintf("/etc/hostname is %s and the kernel hostname could not be read", r.etcState)
		default:
			msg = fmt.Sprintf("/etc/hostname is %s and the kernel hostname was not consulted (%s)", r.etcState, r.env.NotLiveReason())
		}
		r.add(check.Warn, codeEtcMissing, msg,
			"Persist the name with `hostnamectl set-hostname NAME`, which writes /etc/hostname", nil)
		return false
	}
	if r.etcState != "ok" || !r.kernelRead || r.kernel == "" {
		// Unreadable files are reported on their own; off the live system
		// /etc/hostname is the judged name and has nothing to agree with.
		return true
	}
	m := Compare(r.etc, r.kernel)
	r.detail["etc_hostname_match"] = m.String()
	if m == MatchNone {
		r.add(check.Warn, codeEtcMismatch,
			fmt.Sprintf("/etc/hostname says %s but the kernel hostname is %s: the static and transient names differ", show(r.etc), show(r.kernel)),
			"Make them agree with `hostnamectl set-hostname NAME`, which sets both the kernel hostname and /etc/hostname", nil)
		return false
	}
	return true
}

// judgeMetadata compares the judged name with hostname.expected when set,
// otherwise with what cloud-init applied and was asked for. It returns
// whether nothing is wrong and a phrase for the ok message.
func (r *hostnameRun) judgeMetadata() (ok bool, note string) {
	name := r.subject
	if name == "" || name == "(none)" || IsLocalhost(name) {
		return false, ""
	}
	if exp := r.expected(); exp != "" {
		r.detail["compared_with"] = "hostname.expected"
		if err := Validate(exp); err != nil {
			r.add(check.Error, codeConfigInvalid,
				fmt.Sprintf("hostname.expected %s is not a valid host name: %v", show(exp), err),
				"Correct hostname.expected in the guestcheck configuration file", nil)
			return false, ""
		}
		if m := Compare(name, exp); m == MatchNone {
			r.add(check.Fail, codeExpectedMismatch,
				fmt.Sprintf("%s %s differs from hostname.expected %s", r.subjectSrc, show(name), exp),
				fmt.Sprintf("Run `hostnamectl set-hostname %s` and fix the name the platform passes in meta-data, or correct hostname.expected if it is wrong", exp), nil)
			return false, ""
		}
		return true, "matches hostname.expected"
	}

	if r.cfg.PreserveHostname.Value {
		msg := fmt.Sprintf("cloud-init was told to preserve the hostname (preserve_hostname: true in %s), so %s is not compared with meta-data",
			r.cfg.PreserveHostname.Source, show(name))
		if r.local != "" && MatchRequest(name, r.local, "") == MatchNone {
			msg = fmt.Sprintf("%s differs from meta-data local-hostname %s, as intended: preserve_hostname is true in %s",
				show(name), show(r.local), r.cfg.PreserveHostname.Source)
		}
		r.detail["compared_with"] = "nothing: preserve_hostname is true"
		r.add(check.Pass, codePreserved, msg, "", nil)
		return true, ""
	}

	setWhat := "what cloud-init set (" + r.env.Root.Display(pathSetHostname) + ")"
	askWhat := "what cloud-init was asked for (" + r.request.Source + ")"
	// A request taken from meta-data alone, while root-only user-data could
	// not be read, may be overridden there; set-hostname then decides.
	metaOnly := r.requested && r.request.Source == r.localSource && !r.userDataOK
	switch {
	case r.requested && !(metaOnly && r.setHost != nil):
		if MatchRequest(name, r.request.Hostname, r.request.FQDN) == MatchNone {
			st, fix := check.Fail, metadataFix
			msg := fmt.Sprintf("%s %s differs from %s: %s", r.subjectSrc, show(name), askWhat, wantNames(r.request.Hostname, r.request.FQDN))
			if metaOnly {
				// user-data may hold a hostname or preserve_hostname that
				// explains the difference; do not fail on a guess.
				st = check.Warn
				msg += " (user-data was not readable and may override it)"
				fix = "Run guestcheck as root so that user-data can be read; otherwise " + metadataFixLower
			}
			r.add(st, codeMetadataMismatch, msg, fix, map[string]string{"compared_with": askWhat})
			return false, ""
		}
		r.detail["compared_with"] = askWhat
		if r.setHost != nil && MatchRequest(name, r.setHost.Hostname, r.setHost.FQDN) == MatchNone {
			// cc_set_hostname runs once per instance; cc_update_hostname
			// applies later meta-data renames at every boot without
			// rewriting set-hostname.
			r.detail["set_hostname_note"] = "records an earlier name; cloud-init's update_hostname applied the current request since"
		}
		return true, "matches " + askWhat
	case r.setHost != nil:
		if MatchRequest(name, r.setHost.Hostname, r.setHost.FQDN) == MatchNone {
			r.add(check.Fail, codeMetadataMismatch,
				fmt.Sprintf("%s %s differs from %s: %s", r.subjectSrc, show(name), setWhat, wantNames(r.setHost.Hostname, r.setHost.FQDN)),
				metadataFix, map[string]string{"compared_with": setWhat})
			return false, ""
		}
		r.detail["compared_with"] = setWhat
		if r.requested && MatchRequest(name, r.request.Hostname, r.request.FQDN) == MatchNone {
			r.detail["metadata_note"] = "meta-data asks for " + show(r.request.Hostname) + "; user-data was not readable and may override it"
		}
		return true, "matches " + setWhat
	}
	r.detail["compared_with"] = "nothing"
	r.add(check.Pass, codeNoMetadata,
		fmt.Sprintf("no cloud-init hostname data and no hostname.expected, so %s is not compared with an expectation", show(name)), "", nil)
	return true, ""
}

const (
	metadataFix      = "Fix meta-data local-hostname or user-data hostname/fqdn and reboot (or run `hostnamectl set-hostname NAME`); if the name is managed elsewhere, set `preserve_hostname: true` in user-data"
	metadataFixLower = "fix meta-data local-hostname or user-data hostname/fqdn and reboot (or run `hostnamectl set-hostname NAME`); if the name is managed elsewhere, set `preserve_hostname: true` in user-data"
)

// wantNames shows the short name and the FQDN cloud-init may apply.
func wantNames(short, fqdn string) string {
	switch {
	case fqdn == "" || Compare(short, fqdn) == MatchExact:
		return show(or(short, fqdn))
	case short == "":
		return show(fqdn)
	}
	return show(short) + " or " + show(fqdn)
}

// addOK records the summary pass for the name itself.
func (r *hostnameRun) addOK(metaNote string) {
	parts := []string{fmt.Sprintf("%s %s is a valid host name", r.subjectSrc, r.subject)}
	if r.kernelRead && r.etcState == "ok" {
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
	r.add(check.Pass, codeOK, msg, "", nil)
}

// judgeResolution resolves the judged name the way a static binary can:
// /etc/hosts (read through the root, so image roots work), then DNS through
// env.Resolver on the live system only. When both fail and nsswitch.conf
// lists an NSS module that synthesises the local name, it says so instead
// of failing: glibc programs will resolve the name.
func (r *hostnameRun) judgeResolution(ctx context.Context) {
	name := r.subject
	unresolvedFix := fmt.Sprintf("Add \"127.0.1.1 FQDN %s\" to /etc/hosts (or set `manage_etc_hosts: true` in user-data) so that sudo and mail do not wait on DNS", Short(name))

	var hostsProblem string
	if b, ok, _ := r.readFile(pathEtcHosts); ok {
		entries, err := hosts.Parse(b)
		var he *hosts.Error
		if errors.As(err, &he) {
			var ps []string
			for _, p := range he.Problems {
				ps = append(ps, p.Error())
				for _, f := range p.Fields {
					if Compare(f, name) == MatchExact && hostsProblem == "" {
						hostsProblem = fmt.Sprintf("%s line %d names it but is skipped: %s", pathEtcHosts, p.Line, p.Msg)
					}
				}
			}
			r.detail["etc_hosts_problems"] = strings.Join(ps, "; ")
		}
		if hits := hosts.Lookup(entries, name); len(hits) > 0 {
			var addrs []netip.Addr
			for _, h := range hits {
				addrs = append(addrs, h.Addr)
			}
			r.judgeAddrs(name, fmt.Sprintf("via /etc/hosts line %d", hits[0].Line), addrs)
			return
		}
	}

	dnsTried, dnsResult := false, ""
	switch {
	case !r.env.Live:
		dnsResult = "DNS not consulted: " + r.env.NotLiveReason()
	case r.env.Resolver == nil:
		dnsResult = "DNS not consulted: no resolver"
	default:
		if err := ctx.Err(); err != nil {
			r.interrupted(err)
			return
		}
		dnsTried = true
		dctx, cancel := context.WithTimeout(ctx, hostnameDNSTimeout)
		got, err := r.env.Resolver.LookupHost(dctx, name)
		cancel()
		if err == nil && len(got) > 0 {
			var addrs []netip.Addr
			var bad []string
			for _, s := range got {
				if a, perr := netip.ParseAddr(s); perr == nil {
					addrs = append(addrs, a)
				} else {
					bad = append(bad, s)
				}
			}
			if len(bad) > 0 {
				r.detail["dns_unparsable"] = strings.Join(bad, ", ")
			}
			if len(addrs) > 0 {
				r.judgeAddrs(name, "via DNS", addrs)
				return
			}
		}
		if ctx.Err() != nil {
			r.interrupted(ctx.Err())
			return
		}
		dnsResult = "DNS: " + dnsReason(err, got)
	}
	r.detail["resolution"] = "not resolved (" + dnsResult + ")"
	if hostsProblem != "" {
		r.detail["resolution"] += "; " + hostsProblem
	}

	if mod, lib := r.nssModule(); mod != "" && lib != "" {
		who := "glibc programs such as sudo resolve it"
		if mod == "resolve" {
			who = "glibc programs such as sudo resolve it while systemd-resolved runs"
		}
		r.add(check.Pass, codeNSSOnly,
			fmt.Sprintf("%s resolves only through the NSS module %s, which this static binary cannot use; %s", name, mod, who),
			"", map[string]string{"nss_module": lib})
		return
	} else if mod != "" {
		r.detail["nss_module"] = fmt.Sprintf("nsswitch.conf lists %s but libnss_%s.so.2 was not found, so glibc skips it", mod, mod)
	}

	var msg string
	switch {
	case hostsProblem != "":
		msg = fmt.Sprintf("%s does not resolve: %s", name, hostsProblem)
	case dnsTried:
		msg = fmt.Sprintf("%s resolves through neither /etc/hosts nor DNS (%s): sudo, mail and other programs that look up the local name stall or complain", name, dnsResult)
	default:
		msg = fmt.Sprintf("%s is not in /etc/hosts (%s): sudo, mail and other programs that look up the local name stall or complain unless DNS has it", name, dnsResult)
	}
	r.add(check.Warn, codeUnresolvable, msg, unresolvedFix, nil)
}

// dnsReason turns a lookup failure into a short phrase.
func dnsReason(err error, got []string) string {
	var de *net.DNSError
	switch {
	case err == nil && len(got) == 0:
		return "no addresses"
	case err == nil:
		return "no parsable addresses"
	case errors.As(err, &de) && de.IsNotFound:
		return "no such host"
	case errors.As(err, &de) && de.IsTimeout, errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("no answer within %s", hostnameDNSTimeout)
	}
	return err.Error()
}

// interrupted reports that the check's deadline ran out before resolution.
func (r *hostnameRun) interrupted(err error) {
	r.detail["resolution"] = "interrupted: " + err.Error()
	r.add(check.Error, codeInterrupted, "hostname check interrupted before name resolution: "+err.Error(),
		"Raise checks.hostname.timeout in the guestcheck configuration if DNS is slow here", nil)
}

// judgeAddrs classifies the addresses name resolved to: loopback (127/8,
// ::1, including Debian's 127.0.1.1) and this machine's interface addresses
// are local.
func (r *hostnameRun) judgeAddrs(name, via string, addrs []netip.Addr) {
	local := r.localAddrs()
	var shown, remote []string
	anyLocal, unknown := false, false
	for _, a := range addrs {
		a = a.Unmap().WithZone("")
		switch {
		case a.IsLoopback():
			shown = append(shown, a.String()+" (loopback)")
			anyLocal = true
		case local == nil:
			shown = append(shown, a.String())
			unknown = true
		case local[a]:
			shown = append(shown, a.String()+" (interface address)")
			anyLocal = true
		default:
			shown = append(shown, a.String()+" (not local)")
			remote = append(remote, a.String())
		}
	}
	list := strings.Join(shown, ", ")
	r.detail["resolution"] = via + ": " + list
	switch {
	case anyLocal:
		r.add(check.Pass, codeResolves, fmt.Sprintf("%s resolves %s to %s", name, via, list), "", nil)
	case unknown:
		r.add(check.Pass, codeResolves,
			fmt.Sprintf("%s resolves %s to %s (not checked against interface addresses: %s)", name, via, list, r.localAddrsNote()), "", nil)
	default:
		r.add(check.Warn, codeResolvesRemote,
			fmt.Sprintf("%s resolves %s to %s, which is not an address of this VM", name, via, strings.Join(remote, ", ")),
			"Point the name at 127.0.1.1 or this VM's own address in /etc/hosts (a stale entry often comes from the template), or fix its DNS record", nil)
	}
}

// localAddrs returns this machine's interface addresses, or nil when they
// cannot be known (not live, or listing them failed).
func (r *hostnameRun) localAddrs() map[netip.Addr]bool {
	if !r.env.Live {
		return nil
	}
	addrs := r.env.InterfaceAddrs
	if addrs == nil {
		addrs = net.InterfaceAddrs
	}
	as, err := addrs()
	if err != nil {
		r.detail["interface_addresses"] = "unknown: " + err.Error()
		return nil
	}
	m := map[netip.Addr]bool{}
	var list []string
	for _, a := range as {
		var ip net.IP
		switch v := a.(type) {
		case *net.IPNet:
			ip = v.IP
		case *net.IPAddr:
			ip = v.IP
		}
		if na, ok := netip.AddrFromSlice(ip); ok {
			m[na.Unmap()] = true
			list = append(list, na.Unmap().String())
		}
	}
	r.detail["interface_addresses"] = or(strings.Join(list, ", "), "none")
	return m
}

func (r *hostnameRun) localAddrsNote() string {
	if !r.env.Live {
		return r.env.NotLiveReason()
	}
	return r.detail["interface_addresses"]
}

// nssModule returns the first NSS module in the hosts line of nsswitch.conf
// that synthesises the local hostname (myhostname, or resolve through
// systemd-resolved) and the path of its library when one is installed.
func (r *hostnameRun) nssModule() (module, lib string) {
	b, ok, missing := r.readFile(pathNsswitch)
	if missing {
		b, ok, _ = r.readFile(pathNsswitchVendor)
	}
	if !ok {
		return "", ""
	}
	srcs, found := ParseNsswitch(b, "hosts")
	if !found {
		return "", ""
	}
	r.detail["nsswitch_hosts"] = strings.Join(srcs, " ")
	for _, s := range srcs {
		if s == "myhostname" || s == "resolve" {
			return s, r.findNSSLib(s)
		}
	}
	return "", ""
}

// findNSSLib looks for libnss_<module>.so.2 where glibc's loader finds it:
// the plain library directories and the multiarch ones (Debian).
func (r *hostnameRun) findNSSLib(module string) string {
	file := "libnss_" + module + ".so.2"
	dirs := []string{"/lib64", "/usr/lib64", "/lib", "/usr/lib"}
	for _, base := range []string{"/usr/lib", "/lib"} {
		ents, err := r.env.Root.ReadDir(base)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if strings.Contains(e.Name, "-linux-") {
				dirs = append(dirs, path.Join(base, e.Name))
			}
		}
	}
	for _, d := range dirs {
		p := path.Join(d, file)
		if st, err := r.env.Root.Stat(p); err == nil && !st.IsDir() {
			return r.env.Root.Display(p)
		}
	}
	return ""
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
