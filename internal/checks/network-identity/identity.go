package networkidentity

import (
	"context"
	"fmt"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/fact/netconf"
	"github.com/guestcheck/guestcheck/internal/fact/netstate"
	"github.com/guestcheck/guestcheck/internal/parse/netplan"
	"github.com/guestcheck/guestcheck/internal/parse/networkd"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Check is the network-identity check: a cloned or restored VM must not
// share the original's network identity (machine-id, DHCP client
// identifier, network configuration bound to the original's MAC
// addresses), and a sealed template must hold none of it.
var Check = runner.Check{
	ID:    "network-identity",
	Title: "Network identity (clone and restore safety)",
	Description: "the machine-id is set (sealed the way systemd expects in an image) and was made for the cloud-init instance; DHCP clients identify by MAC; " +
		"no network config is bound to a MAC address no NIC has",
	Codes: Codes,
	Run:   RunIdentity,
}

// MachineIDPath is the machine ID's guest path, as findings name it.
var MachineIDPath = identity.MachineIDPath

// noPreviousInstance is cloud-init's previous-instance-id on an
// instance's first boot ever.
const noPreviousInstance = "NO_PREVIOUS_INSTANCE_ID"

// RunIdentity is the network-identity check. Files are judged under any
// root; MAC bindings are compared with the kernel's links only on the
// running system.
func RunIdentity(ctx context.Context, env *runner.Env) []runner.Finding {
	ev := identity.ReadCloneEvidence(env.Root, env.Live)
	ev.IsRoot = env.IsRoot
	fs := JudgeMachineID(ev, env.Live)
	fs = append(fs, JudgeClone(ev)...)
	fs = append(fs, JudgeFirmwareMachineID(ev.MachineID, ReadProductUUID(env.Root, env.Live))...)
	fs = append(fs, JudgeTemplateMachineID(ev)...)
	fs = append(fs, JudgeTemplateLeaks(ev)...)
	fs = append(fs, JudgeTemplateInstance(ev)...)
	facts := netconf.ReadFacts(env.Root)
	cfg := NetworkConfigOf(facts)
	cfg.Live, cfg.IsRoot = env.Live, env.IsRoot
	fs = append(fs, JudgeConfigFiles(cfg)...)
	fs = append(fs, JudgeDHCPIdentityIn(cfg, ev)...)
	fs = append(fs, JudgeTemplateDHCPState(ev)...)
	fs = append(fs, JudgeTemplateLeftovers(ev)...)
	if ctx.Err() != nil {
		return fs
	}
	if !env.Live {
		if len(cfg.Bindings) == 0 {
			return append(fs, runner.Passf(CodeIDMACBindingsOK.ID, "no network configuration is bound to a MAC address", nil))
		}
		if ev.State.Is {
			return append(fs, JudgeTemplateMACBindings(cfg.Bindings, ev.State)...)
		}
		return append(fs, runner.Skipf(CodeIDMACBindingSkipped.ID,
			"MAC-bound network configuration not compared with the NICs: "+env.NotLiveReason(), bindingDetail(cfg.Bindings)))
	}
	k, done, err := netstate.OpenKernel(env.Netlink)
	if err != nil {
		return append(fs, identityKernelError(err))
	}
	defer done()
	snap := netstate.Snapshot{}
	if snap.Links, err = k.Links(); err == nil {
		snap.Addrs, err = k.Addrs()
	}
	if err != nil {
		return append(fs, identityKernelError(err))
	}
	netstate.MarkDevices(env.Root, snap.Links)
	topo := netstate.NewTopology(snap)
	fs = append(fs, JudgeCopyKeptInstance(ev, CopyEvidence{InstanceMACs: netconf.CloudInitMACs(facts),
		HostKeysBeforeBoot: ReadHostKeysBefore(env.Root, ev.BootTime, identity.LstatTimes)}, topo)...)
	return append(fs, JudgeMACBindings(cfg.Bindings, topo)...)
}

func identityKernelError(err error) runner.Finding {
	return CodeIDKernelError.New(runner.Error, "cannot read the network interfaces to compare MAC bindings",
		map[string]string{"error": err.Error()}, CodeIDKernelError.Fixf())
}

// unreadableFix is the fix for network configuration files that could
// not be read: NetworkManager's root-only keyfiles ask for root only when
// guestcheck is not root already.
func unreadableFix(isRoot bool, files []string) string {
	if isRoot {
		return CodeIDConfigUnreadable.CaseFix(runner.WhenRootDenied, "files", strings.Join(files, ", "))
	}
	return CodeIDConfigUnreadable.Fixf()
}

// JudgeConfigFiles reports configuration files that could not be read or
// parsed, one finding per file.
func JudgeConfigFiles(c NetworkConfig) []runner.Finding {
	var fs []runner.Finding
	if len(c.Unreadable) > 0 {
		fs = append(fs, CodeIDConfigUnreadable.New(runner.Error,
			fmt.Sprintf("cannot read %d network configuration file(s)", len(c.Unreadable)),
			map[string]string{"files": strings.Join(c.Unreadable, "\n")},
			unreadableFix(c.IsRoot, c.Unreadable)))
	}
	groups, summary := netconf.ProblemsByFile(c.Problems)
	for i, ps := range groups {
		f, msg := ps[0].File, summary[i]
		fs = append(fs, CodeIDConfigInvalid.New(runner.Warn, msg,
			map[string]string{"file": f, "problems": problem.Join(ps)},
			CodeIDConfigInvalid.Fixf("file", f)))
	}
	return fs
}

// JudgeDHCPIdentity flags DHCP clients whose identity a clone shares with
// its original: systemd-networkd (directly or rendered from netplan)
// without a MAC-based client identifier, and NetworkManager profiles with
// a DUID- or machine-derived one.
func JudgeDHCPIdentity(c NetworkConfig) []runner.Finding {
	var fs []runner.Finding
	conf := c.NetworkdConf
	// checked counts the DHCP clients judged; duidClients those of
	// networkd that present a DUID (DHCPv6, DHCPv4 without a MAC client
	// identifier), which a DUIDRawData= pins.
	checked, duidClients := 0, 0
	merged := netplan.Merge(c.Netplan)
	for _, d := range merged.Devices {
		r := merged.Renderer
		if d.Renderer != nil {
			r = *d.Renderer
		}
		v4 := d.DHCP4 != nil && *d.DHCP4
		v6 := d.DHCP6 != nil && *d.DHCP6
		if r != "networkd" || !v4 && !v6 {
			continue
		}
		checked++
		if v6 || v4 && (d.DHCPIdentifier == nil || *d.DHCPIdentifier != "mac") {
			duidClients++
		}
		det := map[string]string{"device": d.Kind + "/" + d.ID, "defined_at": d.At, "dhcp_at": d.DHCPAt, "renderer": r}
		if d.DHCPIdentifier != nil {
			det["dhcp_identifier"] = *d.DHCPIdentifier + " (" + d.DHCPIDAt + ")"
		}
		if conf.At != "" {
			det["networkd_conf"] = fmt.Sprintf("DUIDType v4=%q v6=%q (%s)", conf.DUIDType4, conf.DUIDType6, conf.At)
		}
		if v4 && (d.DHCPIdentifier == nil || *d.DHCPIdentifier != "mac") && !networkd.MACDUID(conf.DUIDType4) {
			fs = append(fs, CodeIDDHCPClientID.New(runner.Warn,
				fmt.Sprintf("netplan %s %s (%s) uses DHCP without `dhcp-identifier: mac`", d.Kind, d.ID, d.DHCPAt), det,
				CodeIDDHCPClientID.Fixf("device", d.ID, "at", d.DHCPAt)))
		}
		if v6 && !networkd.MACDUID(conf.DUIDType6) {
			fs = append(fs, CodeIDDHCPClientID.New(runner.Warn,
				fmt.Sprintf("netplan %s %s (%s) uses DHCPv6 with a DUID derived from /etc/machine-id", d.Kind, d.ID, d.DHCPAt), det,
				CodeIDDHCPClientID.CaseFix("for DHCPv6 of netplan")))
		}
	}
	for _, u := range c.Networkd {
		if !u.DHCPv4() && !u.DHCPv6() {
			continue
		}
		checked++
		if u.DHCPv6() || u.DHCPv4() && u.ClientID != "mac" {
			duidClients++
		}
		duid4, duid6 := firstNonEmpty(u.DUIDType4, conf.DUIDType4), firstNonEmpty(u.DUIDType6, conf.DUIDType6)
		det := map[string]string{"file": u.File, "dhcp_at": u.DHCPAt, "client_identifier": firstNonEmpty(u.ClientID, "duid (default)"),
			"duid_type_v4": firstNonEmpty(duid4, "vendor (default)"), "duid_type_v6": firstNonEmpty(duid6, "vendor (default)")}
		if u.DHCPv4() && u.ClientID != "mac" && !networkd.MACDUID(duid4) {
			fs = append(fs, CodeIDDHCPClientID.New(runner.Warn,
				fmt.Sprintf("%s runs DHCPv4 with a client identifier derived from /etc/machine-id", u.DHCPAt), det,
				CodeIDDHCPClientID.CaseFix("for DHCPv4 of systemd-networkd", "file", u.File)))
		}
		if u.DHCPv6() && !networkd.MACDUID(duid6) {
			fs = append(fs, CodeIDDHCPClientID.New(runner.Warn,
				fmt.Sprintf("%s runs DHCPv6 with a DUID derived from /etc/machine-id", u.DHCPAt), det,
				CodeIDDHCPClientID.CaseFix("for DHCPv6 of systemd-networkd", "file", u.File)))
		}
	}
	if duidClients > 0 && rawDUID(conf) {
		fs = append(fs, rawDUIDFinding(conf))
	}
	for _, nm := range c.NM {
		if !nm.DHCPv4() {
			continue
		}
		checked++
		if nm.MachineClientID() {
			fix := CodeIDDHCPClientID.CaseFix("for a NetworkManager profile", "profile", runner.ShellWord(nm.ID))
			if !c.Live {
				fix = CodeIDDHCPClientID.CaseFix("for a NetworkManager profile in an image", "file", nm.File)
			}
			fs = append(fs, CodeIDDHCPClientID.New(runner.Warn,
				fmt.Sprintf("NetworkManager profile %q uses dhcp-client-id=%s, which a clone shares (%s)", nm.ID, nm.IPv4.DHCPClientID, nm.IPv4.DHCPClientAt),
				map[string]string{"file": nm.File, "dhcp_client_id": nm.IPv4.DHCPClientID}, fix))
		}
	}
	if len(fs) > 0 {
		return fs
	}
	if checked == 0 {
		return []runner.Finding{runner.Passf(CodeIDDHCPOK.ID, "no DHCP client configuration found", nil)}
	}
	return []runner.Finding{runner.Passf(CodeIDDHCPOK.ID, fmt.Sprintf("%d DHCP configuration(s) identify the client by MAC address", checked), nil)}
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// JudgeMACBindings compares MAC-bound configuration with the kernel's
// links. A binding to a MAC that no interface has (current or permanent
// address) is stale; it fails when a NIC is left without an address,
// because that NIC is most likely the one the configuration was for.
func JudgeMACBindings(bs []MACBinding, t *netstate.Topology) []runner.Finding {
	if len(bs) == 0 {
		return []runner.Finding{runner.Passf(CodeIDMACBindingsOK.ID, "no network configuration is bound to a MAC address", nil)}
	}
	var bare []string
	for _, n := range t.NICs {
		if len(t.NICAddrs(n)) == 0 {
			bare = append(bare, n.Name)
		}
	}
	var fs []runner.Finding
	for _, b := range bs {
		found := ""
		for _, l := range t.Snap.Links {
			if netstate.MACEqual(l.MAC, b.MAC) || netstate.MACEqual(l.PermMAC, b.MAC) {
				found = l.Name
				break
			}
		}
		if found != "" {
			continue
		}
		d := map[string]string{"mac": b.MAC.String(), "binding": b.Kind, "at": b.At, "nics": nicMACs(t)}
		what := "configuration"
		if b.Name != "" {
			what = "configuration for " + b.Name
			d["interface"] = b.Name
		}
		if len(bare) > 0 {
			d["nics_without_address"] = strings.Join(bare, ", ")
			fs = append(fs, CodeIDMACBindingOrphaned.New(runner.Fail,
				fmt.Sprintf("%s: %s is bound to MAC %s, which no interface has, and %s has no address", b.At, what, b.MAC, strings.Join(bare, ", ")), d,
				CodeIDMACBindingOrphaned.Fixf("mac", b.MAC.String(), "at", b.At)))
			continue
		}
		fs = append(fs, CodeIDMACBindingStale.New(runner.Warn,
			fmt.Sprintf("%s: %s is bound to MAC %s, which no interface has", b.At, what, b.MAC), d,
			CodeIDMACBindingStale.Fixf("mac", b.MAC.String(), "at", b.At)))
	}
	if len(fs) == 0 {
		return []runner.Finding{runner.Passf(CodeIDMACBindingsOK.ID,
			fmt.Sprintf("all %d MAC-bound configuration(s) match an interface", len(bs)), bindingDetail(bs))}
	}
	return fs
}

func nicMACs(t *netstate.Topology) string {
	var s []string
	for _, n := range t.NICs {
		s = append(s, n.Name+" "+n.MAC.String())
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func bindingDetail(bs []MACBinding) map[string]string {
	d := map[string]string{}
	for i, b := range bs {
		d[fmt.Sprintf("binding_%d", i+1)] = fmt.Sprintf("%s %s at %s", b.Kind, b.MAC, b.At)
	}
	return d
}

// rawDUID reports whether networkd.conf pins a DUID.
func rawDUID(conf networkd.Conf) bool { return conf.DUIDRaw4 != "" || conf.DUIDRaw6 != "" }

// rawDUIDFinding warns of a DUIDRawData= in networkd.conf: whatever
// DUIDType= says, the data is fixed, so every machine with this
// networkd.conf presents the one DUID (networkd.conf(5)).
func rawDUIDFinding(conf networkd.Conf) runner.Finding {
	return CodeIDDHCPClientID.New(runner.Warn,
		fmt.Sprintf("%s pins DUIDRawData=: every clone presents the same DHCP DUID, and a DHCP server gives them one lease", conf.RawAt),
		map[string]string{detailRawDUID: conf.RawAt, "duid_type_v4": firstNonEmpty(conf.DUIDType4, "vendor (default)"), "duid_type_v6": firstNonEmpty(conf.DUIDType6, "vendor (default)")},
		CodeIDDHCPClientID.CaseFix("for a pinned DUID", "file", netvalFile(conf.RawAt)))
}

// detailRawDUID is the detail key of a DUID pinned by DUIDRawData=.
const detailRawDUID = "duid_raw_data_at"

// netvalFile is the file of a "path:line" location.
func netvalFile(at string) string {
	if i := strings.LastIndexByte(at, ':'); i > 0 {
		return at[:i]
	}
	return at
}
