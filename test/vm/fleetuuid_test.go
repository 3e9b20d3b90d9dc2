//go:build vmtest

package vm

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/host/qga"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
)

// firmwareTwins are two clones of the sealed template that share one
// firmware UUID, as Harvester's Clone and Restore New and a KubeVirt
// restore make them (issue 40, item 6): libvirt domains whose SMBIOS
// system UUID is the same and whose NoCloud instance-id is that UUID, as
// KubeVirt makes it. Their machine-id is empty in the template, so
// systemd fills it from the UUID at first boot, and both get one ID.
type firmwareTwins struct {
	UUID  string // lower case, with dashes, as KubeVirt writes it
	Names []string
	doms  []*fleetDomain
	// machineIDs are the IDs the guests hold, read through the agent to
	// compare and to search the outputs for; never logged.
	machineIDs []string
	// outputs are every report and survey the scenario got, by name,
	// for the last step's search for raw IDs.
	outputs map[string][]byte
}

// newFirmwareTwins draws the twins' UUID: a random version 4 UUID per
// run, so that no fixed value in the product or its tests can pass for
// it.
func newFirmwareTwins(t *testing.T) *firmwareTwins {
	t.Helper()
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return &firmwareTwins{UUID: dashed(hex.EncodeToString(b[:])), Names: []string{"gc-fleet-uuid-a", "gc-fleet-uuid-b"},
		outputs: map[string][]byte{}}
}

// domains makes the twins' domains with mk (the scenario's constructor,
// slots 4 and 5) on base, the sealed root.
func (tw *firmwareTwins) domains(mk func(name, base string, slot int) *fleetDomain, base string) []*fleetDomain {
	for i, n := range tw.Names {
		f := mk(n, base, 4+i)
		f.UserData = baseUserData // the sealed template's: cloud-init makes the host keys
		f.FirmwareUUID, f.InstanceID = tw.UUID, tw.UUID
		// What they prove does not depend on a second vCPU, which costs
		// the whole scenario's boots CPU time (fleetDomain.OneCPU).
		f.OneCPU = true
		tw.doms = append(tw.doms, f)
	}
	return tw.doms
}

// dashed writes 32 hex digits as a UUID.
func dashed(h string) string {
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// swapped is the UUID with its first three fields byte-swapped: how
// SMBIOS stores it, and what a firmware or kernel that reads it the
// other way round shows.
func swapped(h string) string {
	rev := func(s string) string {
		var b strings.Builder
		for i := len(s) - 2; i >= 0; i -= 2 {
			b.WriteString(s[i : i+2])
		}
		return b.String()
	}
	return rev(h[:8]) + rev(h[8:12]) + rev(h[12:16]) + h[16:]
}

// rawForms are the spellings of the firmware UUID and of the machine-ids
// read that no report or survey may hold, in lower case (the search
// lowers what it searches): with and without dashes, as given and with
// SMBIOS's byte order.
func (tw *firmwareTwins) rawForms() []string {
	var out []string
	for _, id := range append([]string{tw.UUID}, tw.machineIDs...) {
		h := strings.ToLower(strings.ReplaceAll(id, "-", ""))
		if _, err := hex.DecodeString(h); err != nil || len(h) != 32 {
			continue // not an ID: expectGuests said so
		}
		for _, v := range []string{h, swapped(h)} {
			out = append(out, v, dashed(v))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// keep records an output for the search for raw IDs.
func (tw *firmwareTwins) keep(name string, b []byte) { tw.outputs[name] = b }

// machineIDHash is the hash the reports and the survey must carry for
// the twins' machine-id and instance-id: the UUID's, as systemd makes
// the machine-id from it.
func (tw *firmwareTwins) machineIDHash(t *testing.T) string {
	t.Helper()
	h, ok := guestid.MachineIDHash(strings.ReplaceAll(tw.UUID, "-", ""))
	if !ok {
		t.Fatalf("the twins' UUID is not a machine-id")
	}
	return h
}

// initFromUUID is what systemd logs when it fills an empty machine-id
// from the SMBIOS product UUID (machine-id-setup.c, on KVM and QEMU).
var initFromUUID = regexp.MustCompile(`Initializing machine ID from VM UUID`)

// expectGuests asserts, on each twin once libvirtd has let go of the
// agent sockets: systemd's console line, one machine-id for both that is
// the firmware UUID (compared, never printed), and a boot report that
// warns identity-machine-id-from-firmware with both IDs as the one hash.
func (tw *firmwareTwins) expectGuests(ctx context.Context, t *testing.T) {
	want := tw.machineIDHash(t)
	for _, f := range tw.doms {
		if b, _ := os.ReadFile(f.console()); !initFromUUID.Match(b) {
			t.Errorf("%s: no %q on the console: systemd did not take the machine-id from the firmware UUID", f.Name, initFromUUID)
		}
		files := readAgentFiles(ctx, t, f, "/etc/machine-id", "/run/guestcheck/report.json", "/run/guestcheck/report.txt")
		mid := strings.TrimSpace(string(files[0]))
		tw.machineIDs = append(tw.machineIDs, mid)
		h := strings.ReplaceAll(tw.UUID, "-", "")
		switch mid {
		case h:
			t.Logf("%s: /etc/machine-id is the firmware UUID as given", f.Name)
		case swapped(h):
			// Then the instance-id (the UUID as given) and the machine-id
			// no longer hash alike, and the hashes asserted here and in
			// the surveys are the wrong ones: say so first.
			t.Errorf("%s: /etc/machine-id is the firmware UUID with its first three fields byte-swapped (SMBIOS's order): this guest's kernel or systemd reads the UUID otherwise than Debian 12's", f.Name)
		default:
			t.Errorf("%s: /etc/machine-id (%d bytes) is not the firmware UUID in either byte order", f.Name, len(mid))
		}
		tw.keep(f.Name+" report.json", files[1])
		tw.keep(f.Name+" report.txt", files[2])
		r, err := reportv1.Decode(files[1])
		if err != nil {
			t.Errorf("%s: %v", f.Name, err)
			continue
		}
		expect(t, &r, "network-identity", "identity-machine-id-from-firmware", "warn")
		for _, c := range r.Checks {
			if c.Status == "fail" || c.Status == "error" {
				t.Errorf("%s: %s", f.Name, &c)
			}
		}
		if id := r.Identity; id == nil || id.MachineIDHash != want || id.InstanceIDHash != want || id.MachineIDFrom != "firmware" || id.InstanceID != "" {
			t.Errorf("%s: report identity %+v, want machine_id_hash and instance_id_hash %s, machine_id_from firmware, no instance_id", f.Name, id, want)
		}
		if !bytes.Contains(files[2], []byte("identity-machine-id-from-firmware")) {
			t.Errorf("%s: report.txt does not name identity-machine-id-from-firmware:\n%s", f.Name, tail(string(files[2]), 30))
		}
	}
	if len(tw.machineIDs) == 2 && tw.machineIDs[0] != tw.machineIDs[1] {
		t.Errorf("the twins have different machine-ids: systemd did not make both from their one UUID")
	}
}

// readAgentFiles reads guest files through the domain's agent socket
// (libvirtd stopped: QEMU's chardev takes a new client), one connection,
// closed before the next survey connects.
func readAgentFiles(ctx context.Context, t *testing.T, f *fleetDomain, paths ...string) [][]byte {
	t.Helper()
	sctx, cancel := step(ctx, stepTimeout)
	defer cancel()
	c, err := qga.Dial(sctx, "unix", f.agentSock)
	if err != nil {
		t.Fatalf("%s: guest agent: %v", f.Name, err)
	}
	defer c.Close()
	c.SetTimeout(60 * time.Second)
	var out [][]byte
	for _, p := range paths {
		b, err := qga.ReadFile(sctx, c, p, qga.MaxReplySize)
		if err != nil {
			t.Fatalf("%s: read %s: %v", f.Name, p, err)
		}
		out = append(out, b)
	}
	return out
}

// expectSurvey asserts what one survey (its JSON, text and JUnit) says
// about the twins: each shares the machine-id and the instance-id, by
// the UUID's hash, with a fix that names the firmware UUID and not
// sealing. The JSON's VMs and collisions are expectFleet's.
func (tw *firmwareTwins) expectSurvey(t *testing.T, tag string, out fleetOutputs) {
	t.Helper()
	tw.keep(tag+" json", out.JSON)
	tw.keep(tag+" text", out.Text)
	tw.keep(tag+" junit", out.JUnit)
	fix := guestid.FixFromFirmware
	for _, w := range []string{"firmware.uuid", "smbios1"} {
		if !strings.Contains(fix, w) || strings.Contains(fix, "seal the template so") {
			t.Errorf("guestid.FixFromFirmware does not name %s, or says to seal the template: %s", w, fix)
		}
	}
	members := strings.Join(tw.Names, ", ")
	short := "hash " + tw.machineIDHash(t)[:8] + "..."
	for _, it := range []guestid.Item{guestid.ItemMachineID, guestid.ItemInstanceID} {
		entry := fmt.Sprintf("\n  %s %s: %s\n    fix: %s\n", it, short, members, fix)
		if !bytes.Contains(out.Text, []byte(entry)) {
			t.Errorf("%s: the text survey has no entry %q:\n%s", tag, entry, tail(string(out.Text), 30))
		}
	}
	var doc struct {
		Suites []struct {
			Name  string      `xml:"name,attr"`
			Cases []junitCase `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(out.JUnit, &doc); err != nil {
		t.Fatalf("%s: fleet JUnit: %v", tag, err)
	}
	found := 0
	for _, s := range doc.Suites {
		i := slices.Index(tw.Names, s.Name)
		if i < 0 {
			continue
		}
		found++
		other := tw.Names[1-i]
		for _, it := range []guestid.Item{guestid.ItemMachineID, guestid.ItemInstanceID} {
			msg := fmt.Sprintf("%s %s shared with %s", it, tw.machineIDHash(t), other)
			ok := slices.ContainsFunc(s.Cases, func(c junitCase) bool {
				return c.Failure != nil && c.Failure.Message == msg && strings.Contains(c.Failure.Body, "fix: "+fix)
			})
			if !ok {
				t.Errorf("%s: JUnit suite %s has no failing case %q with the firmware fix", tag, s.Name, msg)
			}
		}
	}
	if found != len(tw.Names) {
		t.Errorf("%s: the JUnit survey has %d of the twins' %d suites", tag, found, len(tw.Names))
	}
}

// leaks returns the spellings of rawForms that b holds, in any case.
func (tw *firmwareTwins) leaks(b []byte) []string {
	low := bytes.ToLower(b)
	var out []string
	for _, f := range tw.rawForms() {
		if bytes.Contains(low, []byte(f)) {
			out = append(out, f)
		}
	}
	return out
}

// expectNoRawIDs searches every report and survey kept for the raw
// firmware UUID and machine-ids, in every spelling (rawForms): machine-id(5)
// says the ID must not be exposed, and the instance-id KubeVirt gives is
// the same UUID. Found, it names the output and the spelling's kind,
// never the value. The twins' NoCloud seeds, which hold the UUID as
// their instance-id, must be found: else the search could find nothing.
func (tw *firmwareTwins) expectNoRawIDs(t *testing.T) {
	if len(tw.machineIDs) == 0 {
		t.Errorf("no machine-id was read from the twins: only the UUID's spellings are searched")
	}
	for _, f := range tw.doms {
		if b, err := os.ReadFile(filepath.Join(f.dir, "seed.iso")); err != nil || len(tw.leaks(b)) == 0 {
			t.Errorf("%s: the search does not find the UUID in the seed that holds it (%v): it proves nothing", f.Name, err)
		}
	}
	names := slices.Sorted(maps.Keys(tw.outputs))
	for _, n := range names {
		if len(tw.outputs[n]) == 0 {
			t.Errorf("%s is empty: nothing was searched", n)
		}
		for _, f := range tw.leaks(tw.outputs[n]) {
			t.Errorf("%s carries the raw firmware UUID or machine-id (%d characters%s)", n, len(f),
				map[bool]string{true: ", dashed"}[strings.Contains(f, "-")])
		}
	}
	t.Logf("searched %d outputs for %d spellings of the firmware UUID and the machine-ids", len(names), len(tw.rawForms()))
}

// junitCase is the part of a JUnit test case the scenario reads.
type junitCase struct {
	Name    string `xml:"name,attr"`
	Failure *struct {
		Message string `xml:"message,attr"`
		Body    string `xml:",chardata"`
	} `xml:"failure"`
}

// fleetOutputs are one survey in its three file formats.
type fleetOutputs struct{ JSON, Text, JUnit []byte }

// withOutputs adds --output text: and junit: files under dir to a
// survey's arguments.
func withOutputs(dir, tag string, args ...string) []string {
	return append(args, "--output", "text:"+filepath.Join(dir, tag+".txt"), "--output", "junit:"+filepath.Join(dir, tag+".xml"))
}

// readOutputs reads back the files withOutputs named.
func readOutputs(t *testing.T, dir, tag string, js []byte) fleetOutputs {
	t.Helper()
	o := fleetOutputs{JSON: js}
	var err error
	if o.Text, err = os.ReadFile(filepath.Join(dir, tag+".txt")); err != nil {
		t.Errorf("%s: the text survey: %v", tag, err)
	}
	if o.JUnit, err = os.ReadFile(filepath.Join(dir, tag+".xml")); err != nil {
		t.Errorf("%s: the JUnit survey: %v", tag, err)
	}
	return o
}

// expectTwinVM asserts a firmware twin's line in a JSON survey: it fails
// on what it shares, exactly the machine-id and the instance-id, and its
// own report (run by the survey) warns that the machine-id is the
// firmware UUID's and fails nothing.
func expectTwinVM(t *testing.T, name, status, reason string, shares []string, r *Report) {
	t.Helper()
	if status != "fail" || r == nil {
		t.Errorf("%s: %s (%s), want fail with its report", name, status, reason)
		return
	}
	if want := []string{"machine-id", "instance-id"}; !slices.Equal(shares, want) {
		t.Errorf("%s shares %v, want exactly %v", name, shares, want)
	}
	expect(t, r, "network-identity", "identity-machine-id-from-firmware", "warn")
	for _, c := range r.Checks {
		if c.Status == "fail" || c.Status == "error" {
			t.Errorf("%s: %s", name, &c)
		}
	}
	if id := r.Identity; id == nil || id.MachineIDFrom != "firmware" || id.InstanceID != "" || id.InstanceIDHash == "" || id.InstanceIDHash != id.MachineIDHash {
		t.Errorf("%s: survey identity %+v, want machine_id_from firmware and the instance-id as the machine-id's hash only", name, id)
	}
}
