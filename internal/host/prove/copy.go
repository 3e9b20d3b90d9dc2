package prove

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/host/qga"
)

// CopyPlatform is a --copy word: one of Platforms' names.
type CopyPlatform string

// CopyResult is one copy of the source clone (clone-1) as a platform
// makes it (--copy): booted from the source's disk after the source
// powered off, and compared with the source.
type CopyResult struct {
	Platform CopyPlatform `json:"platform" schema:"req" doc:"the platform's copy, a --copy word"`
	// Of is the clone the copy was made from.
	Of string `json:"of" schema:"req,pattern=clone" doc:"the clone the copy was made from, after its boots"`
	// Kept is what the platform kept of the source.
	Kept []string `json:"kept" schema:"req" doc:"what the platform kept of the source: firmware-uuid, mac, seed (its cloud-init instance-id, hostname and network-config)"`
	// Copy is the copy's own boot, verdict and identity.
	Copy CloneResult `json:"copy" schema:"req"`
	// Shared are the identity items the copy shares with its source.
	Shared []SharedItem `json:"shared" schema:"req" doc:"identity items the copy shares with its source; empty when it came up distinct"`
	// Network says whether the copy's network came up on its own NIC.
	Network CopyNetwork `json:"network" schema:"req"`
}

// SharedItem is one identity item a copy has as its source has it.
type SharedItem struct {
	Item guestid.Item `json:"item" schema:"req"`
	// Value is the shared value as the report may show it: a hash for
	// a machine-id or a UUID-shaped instance-id, fingerprints for keys.
	Value string `json:"value" schema:"req,nonempty"`
}

// CopyNetwork is the copy's network on its own MAC.
type CopyNetwork struct {
	// Read is false when the copy's NICs were not read (no identity).
	Read bool   `json:"read" schema:"req"`
	Up   bool   `json:"up" schema:"req" doc:"the NIC with the copy's MAC has a global address"`
	MAC  string `json:"mac" schema:"req,pattern=mac"`
	// Addresses are that NIC's global addresses.
	Addresses []string `json:"addresses,omitempty"`
	// Reason says why the network is not up, when prove can tell.
	Reason string `json:"reason,omitempty"`
}

// StepCopy is Failure.Step for a copy's failures.
const StepCopy = "copy"

// networkDown begins the message of a copy whose network did not come
// up on its own MAC (JUnit's network case finds it by it).
const networkDown = "its network did not come up on its MAC"

// runCopies boots cfg.Copies, copies of src as each platform makes them,
// in parallel, from src's disk as src left it (it powered off). src is
// clone-1's result; dir the run's directory.
func runCopies(ctx context.Context, cfg Config, boot Boot, dir string, j Jail, src CloneResult, tag string) []CopyResult {
	out := make([]CopyResult, len(cfg.Copies))
	sc, err := sourceClone(src, dir)
	var wg sync.WaitGroup
	for i, name := range cfg.Copies {
		p, _ := PlatformByName(name)
		c, cerr := newCopy(i, dir, sc, p)
		out[i] = CopyResult{Platform: CopyPlatform(p.Name), Of: src.Name, Kept: p.kept(), Shared: []SharedItem{},
			Copy:    CloneResult{Name: c.Name, MAC: c.MAC, Network: sc.Net.String(), FirmwareUUID: c.UUID, Boot: BootFailed},
			Network: CopyNetwork{MAC: c.MAC}}
		why := sourceUnusable(src)
		switch {
		case err != nil:
			why = err.Error()
		case cerr != nil:
			why = cerr.Error()
		}
		if why != "" {
			out[i].Copy.Problem = "not booted: " + why
			continue
		}
		r := &cloneRun{cfg: cfg, clone: c, boot: boot, jail: j, copyOf: src.Name}
		r.cfg.Reboot = false
		if p.KeepsSeed {
			r.keptSeed = sc.Seed()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := r.run(ctx, tag).safe()
			out[i].Copy = res
			out[i].Shared = sharedItems(src.Identity, res.Identity)
			out[i].Network = copyNetwork(c, res.Identity, pinnedTo(cfg, sc, p))
		}()
	}
	wg.Wait()
	return out
}

// sourceUnusable says why no copy can be made of src, "" when its disk
// is whole: it came up and powered off.
func sourceUnusable(src CloneResult) string {
	switch {
	case src.Boot != BootUp:
		return src.Name + ", the copies' source, did not come up"
	case src.Identity == nil:
		return src.Name + "'s identity was not read (no guest agent), so there is nothing to compare a copy with"
	case src.poweredOff == "":
		return src.Name + " did not power off, so its disk is not whole"
	}
	return ""
}

// sourceClone is the clone src was, from its result.
func sourceClone(src CloneResult, dir string) (Clone, error) {
	n, err := netip.ParsePrefix(src.Network)
	if err != nil {
		return Clone{}, fmt.Errorf("%s's network %q: %v", src.Name, src.Network, err)
	}
	return Clone{Name: src.Name, MAC: src.MAC, Net: n, Dir: filepath.Join(dir, src.Name), UUID: src.FirmwareUUID}, nil
}

// newCopy is copy i of source s as platform p makes it: on s's network
// with an address of its own (.9 and on), on s's disk, with s's MAC and
// firmware UUID where p keeps them.
func newCopy(i int, dir string, s Clone, p Platform) (Clone, error) {
	name := fmt.Sprintf("copy-%d", i+1)
	c, err := NewClone(i, filepath.Join(dir, name))
	if err != nil {
		return Clone{Name: name}, err
	}
	c.Name, c.Net, c.Host, c.Base = name, s.Net, 9+i, s.Overlay()
	if p.KeepsMAC {
		c.MAC = s.MAC
	}
	if p.KeepsUUID {
		c.UUID = s.UUID
	}
	return c, nil
}

// pinnedTo is the source's MAC when the copy's seed names it and the
// copy has another: the network-config then matches no NIC of the copy.
// "" otherwise.
func pinnedTo(cfg Config, s Clone, p Platform) string {
	if !p.KeepsSeed || p.KeepsMAC {
		return ""
	}
	if len(cfg.NetworkConfig) == 0 || bytes.Contains(bytes.ToLower(cfg.NetworkConfig), []byte(s.MAC)) {
		return s.MAC
	}
	return ""
}

// copyNetwork is whether the copy's NIC came up with an address, and
// why not when the seed tells.
func copyNetwork(c Clone, id *guestid.Identity, pinned string) CopyNetwork {
	n := CopyNetwork{MAC: c.MAC}
	if id == nil {
		return n
	}
	n.Read = true
	found := false
	for _, i := range id.Interfaces {
		if !strings.EqualFold(i.MAC, c.MAC) {
			continue
		}
		found = true
		n.Addresses = append(n.Addresses, i.Addresses...)
	}
	n.Up = len(n.Addresses) > 0
	switch {
	case n.Up:
	case pinned != "":
		n.Reason = fmt.Sprintf("its network-config matches the NIC by the source's MAC %s, which this copy does not have, and cloud-init saw no new instance, so it wrote no network for %s", pinned, c.MAC)
	case !found:
		n.Reason = "no NIC with its MAC " + c.MAC + " showed in the guest"
	default:
		n.Reason = "its NIC " + c.MAC + " has no global address"
	}
	return n
}

// sharedItems are the items a copy has as its source has them: machine-id
// (hashed), SSH host keys, hostname, DHCP client identity (per source),
// instance-id and addresses.
func sharedItems(src, cp *guestid.Identity) []SharedItem {
	out := []SharedItem{}
	if src == nil || cp == nil {
		return out
	}
	put := func(it guestid.Item, v string) {
		if v != "" {
			out = append(out, SharedItem{Item: it, Value: v})
		}
	}
	same := func(a, b string) string {
		if a == b {
			return a
		}
		return ""
	}
	put(guestid.ItemMachineID, same(src.MachineIDHash, cp.MachineIDHash))
	put(guestid.ItemHostKey, same(keySet(src.HostKeys), keySet(cp.HostKeys)))
	put(guestid.ItemHostname, same(src.Hostname, cp.Hostname))
	sd, cd := dhcpBySource(src.DHCPClients), dhcpBySource(cp.DHCPClients)
	var dhcp []string
	for _, k := range sortedKeys(sd) {
		if v, ok := cd[k]; ok && v == sd[k] {
			dhcp = append(dhcp, k+" "+v)
		}
	}
	put(guestid.ItemDHCPClient, strings.Join(dhcp, "; "))
	put(guestid.ItemInstanceID, same(guestid.InstanceKey(*src), guestid.InstanceKey(*cp)))
	var addrs []string
	cpAddrs := allAddrs(cp.Interfaces)
	for _, a := range allAddrs(src.Interfaces) {
		if slices.Contains(cpAddrs, a) {
			addrs = append(addrs, a)
		}
	}
	put(guestid.ItemAddress, strings.Join(addrs, ", "))
	return out
}

func allAddrs(ifs []guestid.Interface) []string {
	var out []string
	for _, i := range ifs {
		out = append(out, i.Addresses...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// shutdown powers the guest off, through its agent or else ACPI, and
// waits for QEMU to end, so that its disk is whole for copies. It says
// how in r.res.poweredOff, or why not in a note.
func (r *cloneRun) shutdown(ctx context.Context) {
	if r.vm == nil || !r.vm.Alive() || r.res.Boot != BootUp {
		return
	}
	r.cfg.Progress.Phase(r.clone.Name, "powering off for the copies")
	how := "the guest agent's guest-shutdown mode=powerdown"
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	a, err := qga.Dial(dctx, "unix", r.clone.QGA())
	cancel()
	if err == nil {
		err = a.Send(ctx, "guest-shutdown", map[string]string{"mode": "powerdown"})
		a.Close()
	}
	if err != nil {
		how = "ACPI (QMP system_powerdown), the guest agent refused (" + cleanLine(err.Error()) + ")"
		if _, err := r.vm.qmp(`{"execute":"system_powerdown"}`, 10*time.Second); err != nil {
			r.res.Notes = append(r.res.Notes, "could not power off for the copies: "+cleanLine(err.Error()))
			return
		}
	}
	select {
	case <-r.vm.exited:
		r.res.poweredOff = how
		r.res.Notes = append(r.res.Notes, "powered off for the copies through "+how)
	case <-ctx.Done():
		r.res.Notes = append(r.res.Notes, ended(ctx)+" before the guest powered off for the copies")
	case <-time.After(resetWait):
		r.res.Notes = append(r.res.Notes, fmt.Sprintf("the guest did not power off within %s (asked through %s), so no copy was made of its disk", resetWait, how))
	}
}

// copyFailures are the reasons a copy fails: it did not come up or
// guestcheck failed it, each item it shares with its source, and a
// network that did not come up on its MAC. Each names the platform's
// fix.
func copyFailures(cs []CopyResult) []Failure {
	var out []Failure
	for _, c := range cs {
		p, _ := PlatformByName(string(c.Platform))
		if why := cloneFailed(c.Copy); why != "" {
			out = append(out, Failure{Clone: c.Copy.Name, Step: StepCopy, Message: why, Fix: cloneFix(c.Copy)})
		}
		for _, s := range c.Shared {
			out = append(out, Failure{Clone: c.Copy.Name, Step: StepCopy, Item: s.Item,
				Message: fmt.Sprintf("shares %s with its source %s (%s)", sharedName(s.Item), c.Of, s.Value),
				Fix:     copyFix(p, s.Item)})
		}
		if c.Network.Read && !c.Network.Up {
			out = append(out, Failure{Clone: c.Copy.Name, Step: StepCopy,
				Message: networkDown + " " + c.Network.MAC + ": " + orNone(c.Network.Reason),
				Fix:     networkFix(p)})
		}
	}
	return out
}

// sharedName is how a message names an item.
func sharedName(it guestid.Item) string {
	switch it {
	case guestid.ItemMachineID:
		return "the machine-id (hashed)"
	case guestid.ItemHostKey:
		return "the SSH host keys"
	case guestid.ItemDHCPClient:
		return "the DHCP client identity"
	case guestid.ItemAddress:
		return "the address"
	}
	return "the " + string(it)
}

// sealFirst is the fix for what stays on a disk whatever a copy renews.
const sealFirst = "seal the source with sealprep before the copy, or copy a sealed template instead of a VM that has booted"

// copyFix is the fix for an item a platform's copy shares with its
// source.
func copyFix(p Platform, it guestid.Item) string {
	switch {
	case it == guestid.ItemMachineID && p.KeepsUUID:
		return "no platform's copy changes /etc/machine-id: " + sealFirst + "; and " + p.Fix + ", since systemd fills an emptied machine-id from the firmware UUID"
	case it == guestid.ItemMachineID:
		return "no platform's copy changes /etc/machine-id: " + sealFirst
	case it == guestid.ItemDHCPClient && p.KeepsSeed:
		return "set `dhcp-identifier: mac` in the source's netplan before the copy or backup (Harvester's documented workaround), so that the copy's lease follows its own MAC, or " + sealFirst + "; and " + p.Fix
	case it == guestid.ItemDHCPClient:
		return "the DHCP client identity comes from the machine-id (systemd-networkd's DUID) or a lease left on the disk: " + sealFirst + ", or set `dhcp-identifier: mac` in its netplan"
	case p.KeepsSeed:
		return "the copy kept its source's cloud-init instance, so cloud-init renewed nothing: " + p.Fix + "; or " + sealFirst + "; inside a copy that already booted, `cloud-init clean --logs` and a reboot make it a new instance"
	}
	return "cloud-init made a new instance, but this stayed as the source left it on the disk: " + sealFirst
}

// networkFix is the fix for a copy without a network on its own MAC.
func networkFix(p Platform) string {
	fix := "match the NIC in the network-config by name or driver, not by MAC, so that a copy with a new MAC still gets it"
	if p.KeepsSeed {
		fix += "; or " + p.Fix + ", and cloud-init writes the network for the new MAC"
	}
	return fix
}
