package kubevirt

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
)

// Machine is one KubeVirt VM (or a VMI without a VM) as the API alone
// describes it.
type Machine struct {
	Namespace, Name string
	// Node is the running VMI's node; empty when the VM is stopped.
	Node string
	// Phase is the VMI's phase, or the VM's printable status when it
	// has no VMI ("Stopped").
	Phase string
	// Firmware is the VMI's firmware, else the VM template's, else the
	// UUID KubeVirt will derive from the VM's name.
	Firmware guestid.Firmware
	// Interfaces are the MACs of the spec and of the VMI's status.
	Interfaces []guestid.Interface
	// Hostname is the guest agent's, else the one KubeVirt gives a VM
	// with a cloud-init volume (spec.hostname, or the name up to its
	// first dot).
	Hostname string
	// NoCloud is whether the VM has a cloudInitNoCloud volume, whose
	// instance-id KubeVirt makes the firmware UUID.
	NoCloud bool
	// Agent is the guest agent's state; nil when the VM is not running.
	Agent *Agent
}

// Agent is a running VMI's guest agent as KubeVirt reports it.
type Agent struct {
	// Connected is the VMI's AgentConnected condition.
	Connected bool
	// Version and Hostname are from the guestosinfo subresource.
	Version, Hostname string
	// Disabled are the commands the agent's RPC filter disables.
	Disabled []string
	// Error says why guestosinfo could not be read.
	Error string
}

// legacyNS is the namespace of KubeVirt's name-derived firmware UUID
// (pkg/virt-controller/watch/vm/firmware.go, CalculateLegacyUUID).
var legacyNS = [16]byte{0x6a, 0x1a, 0x24, 0xa1, 0x40, 0x61, 0x46, 0x07, 0x8b, 0xf4, 0xa3, 0x96, 0x3d, 0x0c, 0x58, 0x95}

// LegacyUUID is the firmware UUID KubeVirt gives a VM that has none in
// its spec: a version 5 UUID of the VM's name alone, so VMs of one name
// in different namespaces get the same one.
func LegacyUUID(name string) string {
	h := sha1.New()
	h.Write(legacyNS[:])
	h.Write([]byte(name))
	u := h.Sum(nil)[:16]
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	x := hex.EncodeToString(u)
	return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

// guestInfoConcurrency bounds the guestosinfo requests in flight.
const guestInfoConcurrency = 8

// List reads every VirtualMachine and VirtualMachineInstance of c's
// namespace (all when empty), and the guestosinfo of each VMI whose
// agent is connected. It only reads; ClusterRole kubevirt.io:view is
// enough. The result is sorted by namespace and name.
func List(ctx context.Context, c Config) ([]Machine, error) {
	cl, err := newClient(c)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s, context %s: %w", c.File, c.Context, err)
	}
	vms, err := listAll(ctx, cl, c.Namespace, "virtualmachines", "VirtualMachine", func(v *virtualMachine) objectMeta { return v.Metadata })
	if err != nil {
		return nil, explain(err)
	}
	vmis, err := listAll(ctx, cl, c.Namespace, "virtualmachineinstances", "VirtualMachineInstance", func(v *vmInstance) objectMeta { return v.Metadata })
	if err != nil {
		return nil, explain(err)
	}
	byName := map[string]*Machine{}
	var out []*Machine
	for i := range vms {
		m, err := fromVM(&vms[i])
		if err != nil {
			return nil, err
		}
		byName[m.Namespace+"/"+m.Name] = m
		out = append(out, m)
	}
	for i := range vmis {
		vmi := &vmis[i]
		m := byName[vmi.Metadata.Namespace+"/"+vmi.Metadata.Name]
		if m == nil {
			m = &Machine{Namespace: vmi.Metadata.Namespace, Name: vmi.Metadata.Name}
			out = append(out, m)
		}
		if err := m.addVMI(vmi); err != nil {
			return nil, err
		}
	}
	guestInfo(ctx, cl, out)
	res := make([]Machine, len(out))
	for i, m := range out {
		res[i] = *m
	}
	slices.SortFunc(res, func(a, b Machine) int { return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name) })
	return res, nil
}

// explain adds to a 404 on the lists what it most likely means.
func explain(err error) error {
	var ae *apiError
	if errors.As(err, &ae) && ae.Code == 404 {
		return fmt.Errorf("%w (is KubeVirt installed? its kubevirt.io/v1 API is not served)", err)
	}
	return err
}

// fromVM is a VM's identity from its template, before any boot.
func fromVM(vm *virtualMachine) (*Machine, error) {
	m := &Machine{Namespace: vm.Metadata.Namespace, Name: vm.Metadata.Name, Phase: strings.ToLower(bounded(vm.Status.PrintableStatus, 40))}
	where := "VirtualMachine " + m.Namespace + "/" + m.Name
	if vm.Spec.Template == nil {
		m.Firmware = guestid.Firmware{UUID: LegacyUUID(m.Name), UUIDFrom: "derived from the VM name by KubeVirt"}
		return m, nil
	}
	if err := m.addSpec(&vm.Spec.Template.Spec, where, "spec.template.spec"); err != nil {
		return nil, err
	}
	if m.Firmware.UUID == "" {
		m.Firmware.UUID, m.Firmware.UUIDFrom = LegacyUUID(m.Name), "derived from the VM name by KubeVirt"
	}
	return m, nil
}

// addVMI adds what a running instance says: its own firmware (which
// wins), node, phase, MACs and agent condition.
func (m *Machine) addVMI(vmi *vmInstance) error {
	where := "VirtualMachineInstance " + m.Namespace + "/" + m.Name
	if err := m.addSpec(&vmi.Spec, where, "spec"); err != nil {
		return err
	}
	m.Node, m.Phase = clean(vmi.Status.NodeName, 253), strings.ToLower(bounded(vmi.Status.Phase, 40))
	for i, s := range vmi.Status.Interfaces {
		if err := m.addMAC(s.Name, s.MAC, where, fmt.Sprintf("status.interfaces[%d].mac", i)); err != nil {
			return err
		}
	}
	m.Agent = &Agent{}
	for _, c := range vmi.Status.Conditions {
		if c.Type == "AgentConnected" && c.Status == "True" {
			m.Agent.Connected = true
		}
	}
	return nil
}

// addSpec reads firmware, MACs and cloud-init volumes from a spec.
func (m *Machine) addSpec(s *vmiSpec, where, at string) error {
	if fw := s.Domain.Firmware; fw != nil {
		if fw.UUID != "" {
			if !isUUID(fw.UUID) {
				return fmt.Errorf("%s: %s.domain.firmware.uuid is not a UUID", where, at)
			}
			m.Firmware = guestid.Firmware{UUID: strings.ToLower(fw.UUID), Serial: m.Firmware.Serial}
		}
		if fw.Serial != "" {
			if len(fw.Serial) > 256 {
				return fmt.Errorf("%s: %s.domain.firmware.serial is longer than 256 bytes", where, at)
			}
			m.Firmware.Serial = fw.Serial
		}
	}
	for i, f := range s.Domain.Devices.Interfaces {
		if err := m.addMAC(f.Name, f.MacAddress, where, fmt.Sprintf("%s.domain.devices.interfaces[%d].macAddress", at, i)); err != nil {
			return err
		}
	}
	cloudInit := false
	for _, v := range s.Volumes {
		m.NoCloud = m.NoCloud || v.CloudInitNoCloud != nil
		cloudInit = cloudInit || v.CloudInitNoCloud != nil || v.CloudInitConfigDrive != nil
	}
	if cloudInit {
		// KubeVirt's local-hostname (pkg/util/net/dns SanitizeHostname).
		h, _, _ := strings.Cut(m.Name, ".")
		if len(h) > 63 {
			h = h[:63]
		}
		if s.Hostname != "" {
			h = clean(s.Hostname, 63)
		}
		m.Hostname = h
	}
	return nil
}

// addMAC adds one NIC's MAC, once.
func (m *Machine) addMAC(name, mac, where, at string) error {
	if mac == "" {
		return nil
	}
	hw, err := net.ParseMAC(mac)
	if err != nil || len(hw) != 6 {
		return fmt.Errorf("%s: %s is not a MAC address", where, at)
	}
	s := hw.String()
	if !slices.ContainsFunc(m.Interfaces, func(i guestid.Interface) bool { return i.MAC == s }) {
		m.Interfaces = append(m.Interfaces, guestid.Interface{Name: clean(name, 63), MAC: s})
	}
	return nil
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case !strings.ContainsRune("0123456789abcdefABCDEF", c):
			return false
		}
	}
	return true
}

// guestInfo reads the guestosinfo of every VMI whose agent is
// connected, a few at a time; a failure is noted on the machine, not
// fatal: the API's identity stands without it.
func guestInfo(ctx context.Context, cl *client, ms []*Machine) {
	sem := make(chan struct{}, guestInfoConcurrency)
	var wg sync.WaitGroup
	for _, m := range ms {
		if m.Agent == nil || !m.Agent.Connected {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			path := "/apis/subresources.kubevirt.io/v1/namespaces/" + url.PathEscape(m.Namespace) +
				"/virtualmachineinstances/" + url.PathEscape(m.Name) + "/guestosinfo"
			var gi guestOSInfo
			if err := cl.get(rctx, path, nil, maxSmall, &gi); err != nil {
				m.Agent.Error = err.Error()
				return
			}
			m.Agent.Version = bounded(gi.GAVersion, 40)
			if h := OneLine(gi.Hostname); h != "" && len(h) <= 253 {
				m.Agent.Hostname = h
				m.Hostname = h // what the guest has, over what KubeVirt offered it
			}
			for _, c := range gi.SupportedCommands {
				if !c.Enabled && len(m.Agent.Disabled) < 256 {
					m.Agent.Disabled = append(m.Agent.Disabled, clean(c.Name, 64))
				}
			}
			slices.Sort(m.Agent.Disabled)
		}()
	}
	wg.Wait()
}
