package fleet

import (
	"cmp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/shared/report"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// SchemaVersion is the version of the fleet JSON document
// (schema/fleet-v1.schema.json). Changes within a version are additive.
const SchemaVersion = 1

// Status is a VM's verdict: its guestcheck report's overall status, or
// Unknown when no report could be had.
type Status string

// The statuses. Unknown sits between error and fail: nothing is known to
// be broken, but nothing is known at all.
const (
	Pass           = Status(runner.Pass)
	Skip           = Status(runner.Skip)
	Warn           = Status(runner.Warn)
	Error          = Status(runner.Error)
	Unknown Status = "unknown"
	Fail           = Status(runner.Fail)
)

// Statuses lists every VM status, best first.
var Statuses = []Status{Pass, Skip, Warn, Error, Unknown, Fail}

func (s Status) rank() int { return slices.Index(Statuses, s) }

// Worse reports whether s is worse than o.
func (s Status) Worse(o Status) bool { return s.rank() > o.rank() }

// Result is one whole survey: what the JSON output is.
type Result struct {
	SchemaVersion int       `json:"schema_version"`
	Tool          string    `json:"tool"`
	Version       string    `json:"version"`
	Host          string    `json:"host"`
	StartedAt     time.Time `json:"started_at"`
	DurationMS    int64     `json:"duration_ms"`
	// Status is the worst VM status; fail when VMs share identity,
	// unknown when a source could not be read.
	Status  Status  `json:"status"`
	Summary Summary `json:"summary"`
	// Collisions are the identity items two or more VMs share.
	Collisions []guestid.Collision `json:"collisions"`
	// SourceErrors are sources that could not be listed at all.
	SourceErrors []SourceError `json:"source_errors,omitempty"`
	// VMs are every surveyed VM, worst first, then by name.
	VMs []VM `json:"vms"`
}

// Summary counts VMs per status, and the collisions.
type Summary struct {
	VMs        int `json:"vms"`
	Pass       int `json:"pass"`
	Skip       int `json:"skip"`
	Warn       int `json:"warn"`
	Error      int `json:"error"`
	Unknown    int `json:"unknown"`
	Fail       int `json:"fail"`
	Collisions int `json:"collisions"`
}

// SourceError is a source that could not list its VMs.
type SourceError struct {
	Source string `json:"source"`
	Error  string `json:"error"`
}

// VM is one VM's outcome.
type VM struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	Status Status `json:"status"`
	// Reason says why the VM is unknown, or names its worst check.
	Reason string `json:"reason,omitempty"`
	// Shares lists the identity items it shares with another VM.
	Shares     []guestid.Item `json:"shares,omitempty"`
	DurationMS int64          `json:"duration_ms"`
	// AgentVersion is the guest agent's version from guest-info.
	AgentVersion string `json:"agent_version,omitempty"`
	// Report is the guest's own guestcheck report; absent when unknown
	// or when the VM was judged on its source's API alone.
	Report *GuestReport `json:"report,omitempty"`
	// Host is the machine the VM runs on, for a cluster source
	// (KubeVirt's node); empty for this host's own VMs.
	Host string `json:"host,omitempty"`
	// APIIdentity is the identity the source's API gives (hostname,
	// MACs) for a VM not surveyed in the guest.
	APIIdentity *guestid.Identity `json:"api_identity,omitempty"`
	// Firmware is the VM's SMBIOS identity from its definition.
	Firmware *guestid.Firmware `json:"firmware,omitempty"`
	// AgentDisabled are guest agent commands its RPC filter disables.
	AgentDisabled []string `json:"agent_disabled_commands,omitempty"`

	networks map[string]string
}

// GuestReport is guestcheck's JSON report as the guest returned it,
// decoded and schema-checked; its Identity is nil from a guestcheck too
// old to report one.
type GuestReport = report.Report

// finish counts, compares identities, orders the VMs and sets the
// overall status.
func (r *Result) finish() {
	r.Collisions = collisions(r.VMs)
	shares, with := map[string][]guestid.Item{}, map[string][]string{}
	for _, c := range r.Collisions {
		for _, m := range c.Members {
			if !slices.Contains(shares[m], c.Item) {
				shares[m] = append(shares[m], c.Item)
			}
			for _, o := range c.Members {
				if o != m && !slices.Contains(with[m], o) {
					with[m] = append(with[m], o)
				}
			}
		}
	}
	r.Summary = Summary{VMs: len(r.VMs), Collisions: len(r.Collisions)}
	r.Status = Pass
	for i := range r.VMs {
		vm := &r.VMs[i]
		if vm.Shares = shares[vm.Name]; len(vm.Shares) > 0 {
			// A clone sharing identity is broken, whatever its own
			// guestcheck could see from inside.
			slices.Sort(with[vm.Name])
			vm.Status = Fail
			vm.Reason = joinNonEmpty("; ", "shares "+items(vm.Shares)+" with "+strings.Join(with[vm.Name], ", "), vm.Reason)
		}
		r.Summary.add(vm.Status)
		if vm.Status.Worse(r.Status) {
			r.Status = vm.Status
		}
	}
	if len(r.VMs) > 0 && r.Summary.Skip == len(r.VMs) {
		r.Status = Skip
	}
	if len(r.SourceErrors) > 0 && Unknown.Worse(r.Status) {
		r.Status = Unknown
	}
	if len(r.Collisions) > 0 {
		r.Status = Fail
	}
	slices.SortStableFunc(r.VMs, func(a, b VM) int {
		if c := cmp.Compare(b.Status.rank(), a.Status.rank()); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
}

func (s *Summary) add(st Status) {
	switch st {
	case Pass:
		s.Pass++
	case Skip:
		s.Skip++
	case Warn:
		s.Warn++
	case Error:
		s.Error++
	case Fail:
		s.Fail++
	default:
		s.Unknown++
	}
}

// collisions compares the identities of the VMs that reported one.
// Addresses are compared only between NICs on one known network: a NIC
// whose network the source cannot name (every --agent-socket and Proxmox
// VM) is put on a network of its own, because unrelated networks reuse
// addresses all the time (every QEMU user-mode NIC is 10.0.2.15) and a
// false collision would page someone. MACs, keys and the rest are
// compared across all VMs.
func collisions(vms []VM) []guestid.Collision {
	var ms []guestid.Member
	for _, vm := range vms {
		var id *guestid.Identity
		if vm.Report != nil {
			id = vm.Report.Identity
		}
		if id == nil {
			id = vm.APIIdentity
		}
		if id == nil && vm.Firmware == nil {
			continue
		}
		if id == nil {
			id = &guestid.Identity{}
		}
		var fw guestid.Firmware
		if vm.Firmware != nil {
			fw = *vm.Firmware
		}
		nets := map[string]string{}
		for _, nic := range id.Interfaces {
			mac := strings.ToLower(nic.MAC)
			if n := vm.networks[mac]; n != "" {
				nets[mac] = n
			} else {
				nets[mac] = "unknown network of " + vm.Name
			}
		}
		ms = append(ms, guestid.Member{Name: vm.Name, ID: *id, Networks: nets, Firmware: fw})
	}
	return guestid.Collisions(ms)
}

// ExitCode is guestcheck's exit code for the survey: 0 when every VM
// passed (or skipped), 2 for warnings only, 1 for any fail, error,
// unknown VM, unreadable source or collision.
func ExitCode(r Result) int {
	switch r.Status {
	case Pass, Skip:
		return report.ExitOK
	case Warn:
		return report.ExitWarn
	}
	return report.ExitProblem
}

// oneLine makes text from a guest fit one line of a table or a log: no
// control characters, valid UTF-8, at most max runes.
func oneLine(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}
