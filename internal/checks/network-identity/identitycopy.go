package networkidentity

import (
	"fmt"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/fact/netstate"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// sshDir holds the SSH host keys a copy may have kept.
const sshDir = "/etc/ssh"

// CopyEvidence is what tells a copy of another VM that kept its source's
// cloud-init instance from the VM the instance was set up on: the MACs
// the instance names, and what else a kept instance leaves shared.
type CopyEvidence struct {
	// InstanceMACs are the MACs cloud-init's current instance was set up
	// for (netconf.CloudInitMACs).
	InstanceMACs []MACBinding
	// HostKeysBeforeBoot names the SSH host keys written before this
	// boot: a kept instance does not regenerate them.
	HostKeysBeforeBoot []string
}

// ReadHostKeysBefore lists the SSH host keys (/etc/ssh/ssh_host_*_key)
// last written before boot; all of them when boot is unknown.
func ReadHostKeysBefore(root *fs.Root, boot time.Time, times identity.TimesFunc) []string {
	es, err := root.ReadDir(sshDir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range es {
		if !e.IsRegular() || !strings.HasPrefix(e.Name, "ssh_host_") || !strings.HasSuffix(e.Name, "_key") {
			continue
		}
		p := sshDir + "/" + e.Name
		t, err := times(root, p)
		if err != nil || !boot.IsZero() && !t.Written().Before(boot.Add(-timestampGrain)) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// JudgeCopyKeptInstance fails a running VM that is a copy of another
// (a clone, or a restore as a new VM) and kept its source's cloud-init
// instance: cloud-init saw no new instance this boot (previous-instance-id
// equals instance-id), and the instance was set up for MACs none of
// which this VM has. An in-place restore keeps its MACs, and a VM that
// lost one of several NICs keeps the others: neither is flagged, and the
// stale-binding findings name what no NIC matches. Nothing is said
// without cloud-init state, without MACs in it, or without NICs.
func JudgeCopyKeptInstance(ev identity.CloneEvidence, c CopyEvidence, t *netstate.Topology) []runner.Finding {
	if ev.InstanceID == "" || ev.PreviousID != ev.InstanceID || len(c.InstanceMACs) == 0 || len(t.NICs) == 0 {
		return nil
	}
	for _, b := range c.InstanceMACs {
		for _, l := range t.Snap.Links {
			if netstate.MACEqual(l.MAC, b.MAC) || netstate.MACEqual(l.PermMAC, b.MAC) {
				return nil // the instance was set up on this VM, or on a NIC it still has
			}
		}
	}
	var named, macs []string
	for _, b := range c.InstanceMACs {
		named = append(named, fmt.Sprintf("%s (%s)", b.MAC, b.At))
		if s := b.MAC.String(); !containsStr(macs, s) {
			macs = append(macs, s)
		}
	}
	shares := []string{"cloud-init instance"}
	if ev.MachineIDFound && ev.MachineIDKind == identity.Valid &&
		(ev.BootTime.IsZero() || ev.MachineIDTimes.Written().Before(ev.BootTime.Add(-timestampGrain))) {
		shares = append(shares, "machine-id", "DHCP client identity derived from the machine-id")
	}
	if len(c.HostKeysBeforeBoot) > 0 {
		shares = append(shares, "SSH host keys")
	}
	inst := ShowInstanceID(ev.InstanceID)
	d := map[string]string{"instance_macs": strings.Join(named, ", "), "nics": nicMACs(t), "shares": strings.Join(shares, ", ")}
	instanceIDDetail(d, "instance_id", ev.InstanceID)
	if len(c.HostKeysBeforeBoot) > 0 {
		d["host_keys"] = strings.Join(c.HostKeysBeforeBoot, ", ")
	}
	kept := strings.Join(shares[1:], ", ")
	if kept == "" {
		kept = "instance state (rendered network config, per-instance modules already run)"
	}
	return []runner.Finding{CodeIDCopyKeptInstance.New(runner.Fail,
		fmt.Sprintf("cloud-init instance %s was set up for MAC %s, which no NIC here has, and no new instance began: this VM is a copy that kept its source's instance and shares its %s (unless its own MAC changed)",
			inst, strings.Join(macs, ", "), kept), d,
		CodeIDCopyKeptInstance.Fixf())}
}
