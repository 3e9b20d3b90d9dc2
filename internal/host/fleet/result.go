package fleet

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/shared/clean"
	"github.com/guestcheck/guestcheck/internal/shared/report"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
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
	SchemaVersion int       `json:"schema_version" schema:"req,const=1"`
	Tool          string    `json:"tool" schema:"req,const=guestcheck fleet"`
	Version       string    `json:"version" schema:"req,nonempty"`
	Host          string    `json:"host" schema:"req" doc:"the hypervisor host's name (its hostname, or --host-name); for a merge, the host that merged"`
	StartedAt     time.Time `json:"started_at" schema:"req"`
	DurationMS    int64     `json:"duration_ms" schema:"req,min=0"`
	// Status is the worst VM status; fail when VMs share identity,
	// unknown when a source could not be read.
	Status  Status  `json:"status" schema:"req" doc:"the worst VM status; fail when VMs share identity; at least unknown when a source could not be read"`
	Summary Summary `json:"summary" schema:"req" doc:"number of VMs per status, and of collisions"`
	// Collisions are the identity items two or more VMs share.
	Collisions []guestid.Collision `json:"collisions" schema:"req" doc:"identity values two or more VMs share, by item (guestid.Items order), then value"`
	// SourceErrors are sources that could not be listed at all.
	SourceErrors []SourceError `json:"source_errors,omitempty" doc:"sources (libvirt, proxmox) that could not list their VMs"`
	// Hosts are the host surveys a merge (Merge) compared, in the order
	// given; absent from one host's survey.
	Hosts []HostSurvey `json:"hosts,omitempty" doc:"in a merge (guestcheck fleet --merge), each host's survey, in the order given"`
	// VMs are every surveyed VM, worst first, then by name.
	VMs []VM `json:"vms" schema:"req" doc:"every VM, worst status first, then by name"`

	// merged marks a merge: a VM without an identity cannot be compared
	// with the other hosts' VMs, so it is not a pass.
	merged bool
}

// HostSurvey is one host's survey in a merge.
type HostSurvey struct {
	Host      string    `json:"host" schema:"req,nonempty" doc:"the survey's host, or its file's name when the survey has none"`
	File      string    `json:"file" schema:"req"`
	Version   string    `json:"version" schema:"req"`
	StartedAt time.Time `json:"started_at" schema:"req"`
	Status    Status    `json:"status" schema:"req" doc:"the status the host's own survey gave"`
	VMs       int       `json:"vms" schema:"req,min=0"`
}

// Summary counts VMs per status, and the collisions.
type Summary struct {
	VMs        int `json:"vms" schema:"req,min=0"`
	Pass       int `json:"pass" schema:"req,min=0"`
	Skip       int `json:"skip" schema:"req,min=0"`
	Warn       int `json:"warn" schema:"req,min=0"`
	Error      int `json:"error" schema:"req,min=0"`
	Unknown    int `json:"unknown" schema:"req,min=0"`
	Fail       int `json:"fail" schema:"req,min=0"`
	Collisions int `json:"collisions" schema:"req,min=0"`
}

// SourceError is a source that could not list its VMs.
type SourceError struct {
	Source string `json:"source" schema:"req"`
	Error  string `json:"error" schema:"req"`
}

// VM is one VM's outcome.
type VM struct {
	Name   string `json:"name" schema:"req,nonempty" doc:"libvirt domain, --agent-socket NAME, Proxmox VMID"`
	Source string `json:"source" schema:"req" doc:"libvirt, socket or proxmox"`
	Status Status `json:"status" schema:"req"`
	// Reason says why the VM is unknown, or names its worst check.
	Reason string `json:"reason,omitempty" doc:"one line: why the VM is unknown, or its worst check and that check's summary"`
	// Shares lists the identity items it shares with another VM.
	Shares     []guestid.Item `json:"shares,omitempty" doc:"identity items it shares with another VM"`
	DurationMS int64          `json:"duration_ms" schema:"req,min=0"`
	// AgentVersion is the guest agent's version from guest-info.
	AgentVersion string `json:"agent_version,omitempty" doc:"the guest agent's version from guest-info"`
	// Report is the guest's own guestcheck report; absent when unknown
	// or when the VM was judged on its source's API alone.
	Report *GuestReport `json:"report,omitempty" doc:"the VM's own guestcheck report, as guestcheck --format json wrote it in the guest"`
	// Networks maps each MAC the source knows to its NIC's network (a
	// libvirt network or bridge), as Target.Networks; a merge qualifies
	// each with its host (see Merge).
	Networks map[string]string `json:"networks,omitempty" doc:"the network of each NIC the source knows, by MAC (a libvirt network or bridge); in a merge named network@host unless --shared-network names it"`
	// Host is the machine the VM runs on, for a cluster source
	// (KubeVirt's node) and in a merge of many hosts' surveys (Merge);
	// empty for this host's own VMs.
	Host string `json:"host,omitempty" doc:"the machine the VM runs on: for a cluster source (kubevirt) its node, absent when it is not running; in a merge of many hosts' surveys (guestcheck fleet --merge) its host, and the VM is name@host in collisions' members"`
	// APIIdentity is the identity the source's API gives (hostname,
	// MACs) for a VM not surveyed in the guest.
	APIIdentity *guestid.Identity `json:"api_identity,omitempty" doc:"for a VM not surveyed in the guest (kubevirt): the identity its source's API gives (hostname, MACs)"`
	// Firmware is the VM's SMBIOS identity from its definition.
	Firmware *guestid.Firmware `json:"firmware,omitempty" doc:"the VM's SMBIOS identity from its definition (kubevirt: spec.domain.firmware)"`
	// AgentDisabled are guest agent commands its RPC filter disables.
	AgentDisabled []string `json:"agent_disabled_commands,omitempty" doc:"guest agent commands the agent's RPC filter disables (kubevirt: from guestosinfo)"`

	// at is where a merged VM's full report is on disk: a merge keeps
	// only what it compares and counts, and the JSON and JUnit outputs
	// read each report again, one at a time.
	at *segment
	// merged marks a VM of a merge, named name@host.
	merged bool
}

// ID names the VM in findings and outputs: its name, and in a merge
// name@host, since two hosts may each have a VM of one name (a cluster
// source's names are the cluster's already).
func (vm VM) ID() string {
	if !vm.merged || vm.Host == "" {
		return vm.Name
	}
	return vm.Name + "@" + vm.Host
}

// GuestReport is guestcheck's JSON report as the guest returned it,
// decoded and schema-checked; its Identity is nil from a guestcheck too
// old to report one.
type GuestReport = reportv1.Report

// finish counts, compares identities, orders the VMs and sets the
// overall status.
func (r *Result) finish() {
	r.Collisions = collisions(r.VMs)
	// Each VM's collisions, by index: a value all VMs share (hostname
	// localhost) is one collision of thousands of members, which must
	// not cost thousands squared.
	in := map[string][]int{}
	for i, c := range r.Collisions {
		for _, m := range c.Members {
			in[m] = append(in[m], i)
		}
	}
	r.Summary = Summary{VMs: len(r.VMs), Collisions: len(r.Collisions)}
	r.Status = Pass
	for i := range r.VMs {
		vm := &r.VMs[i]
		if r.merged && vm.Report != nil && vm.Report.Identity == nil && Warn.Worse(vm.Status) {
			vm.Status = Warn
			vm.Reason = joinNonEmpty("; ", "its report carries no identity (guestcheck in the guest too old): not compared with other VMs", vm.Reason)
		}
		if cs := in[vm.ID()]; len(cs) > 0 {
			// A clone sharing identity is broken, whatever its own
			// guestcheck could see from inside.
			vm.Shares = nil
			for _, i := range cs {
				if it := r.Collisions[i].Item; !slices.Contains(vm.Shares, it) {
					vm.Shares = append(vm.Shares, it)
				}
			}
			vm.Status = Fail
			vm.Reason = joinNonEmpty("; ", "shares "+items(vm.Shares)+" with "+sharedWith(r.Collisions, cs, vm.ID()), vm.Reason)
		} else {
			vm.Shares = nil
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
		if c := cmp.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return cmp.Compare(a.Host, b.Host)
	})
}

// sharedWith names the other VMs of collisions cs, sorted: all of them
// up to five, else five and how many more. It stops counting at 100, so
// that a VM among thousands sharing one value costs little.
func sharedWith(cols []guestid.Collision, cs []int, me string) string {
	const show, limit = 5, 100
	seen := map[string]bool{}
	var names []string
	more := false
	for _, i := range cs {
		for _, o := range cols[i].Members {
			if o == me || seen[o] {
				continue
			}
			if len(names) == limit {
				more = true
				break
			}
			seen[o] = true
			names = append(names, o)
		}
	}
	slices.Sort(names)
	switch {
	case more:
		return fmt.Sprintf("%s and over %d others", strings.Join(names[:show], ", "), limit-show)
	case len(names) > show:
		return fmt.Sprintf("%s and %d others", strings.Join(names[:show], ", "), len(names)-show)
	}
	return strings.Join(names, ", ")
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
// compared across all VMs. In a merge each known network is named with
// its host already (Merge), and an unknown one is the VM's own.
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
			if n := vm.Networks[mac]; n != "" {
				nets[mac] = n
			} else {
				nets[mac] = "unknown network of " + vm.ID()
			}
		}
		ms = append(ms, guestid.Member{Name: vm.ID(), ID: *id, Networks: nets, Firmware: fw})
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

// OneLine makes text from a guest fit one line of a table or a log:
// clean.Text's, its runs of spaces one, at most max runes.
func OneLine(s string, max int) string {
	s = strings.Join(strings.Fields(clean.Text(s)), " ")
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}
