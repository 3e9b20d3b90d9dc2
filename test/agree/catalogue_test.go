package agree

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity/catalogue"
	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
)

// catalogueCodes are guestcheck's findings about each catalogue item in
// a template (identity-template-leftover speaks of the item its `item`
// detail names).
var catalogueCodes = map[string][]string{
	catalogue.MachineID:           {"identity-machine-id-template"},
	catalogue.DBusMachineID:       {"identity-machine-id-dbus-fallback"},
	catalogue.MachineIDCmdline:    {"identity-machine-id-leak"},
	catalogue.MachineIDCredential: {"identity-machine-id-leak"},
	catalogue.SSHHostKeys:         {"ssh-hostkey-in-template"},
	catalogue.RandomSeed:          {"identity-template-leftover"},
	catalogue.CredentialSecret:    {"identity-template-leftover"},
	catalogue.DhclientLeases:      {"identity-template-dhcp-state"},
	catalogue.DhcpcdDUID:          {"identity-template-dhcp-state"},
	catalogue.DhcpcdSecret:        {"identity-template-dhcp-state"},
	catalogue.DhcpcdLeases:        {"identity-template-dhcp-state"},
	catalogue.NetworkdLeases:      {"identity-template-dhcp-state"},
	catalogue.NetworkdDUID:        {"identity-dhcp-client-id"},
	catalogue.NMLeases:            {"identity-template-dhcp-state"},
	catalogue.NMSecretKey:         {"identity-template-leftover"},
	catalogue.NMHistory:           {"identity-template-leftover"},
	catalogue.WickedDUID:          {"identity-template-dhcp-state"},
	catalogue.WickedLeases:        {"identity-template-dhcp-state"},
	catalogue.UdevPersistentNet:   {"identity-template-mac-binding"},
	catalogue.MACPins:             {"identity-template-mac-binding"},
	catalogue.Hostname:            {"hostname-template-named"},
	catalogue.CloudInitInstance:   {"identity-template-instance"},
	catalogue.LVMDevices:          {"identity-template-leftover"},
	catalogue.Enrolment:           {"identity-template-leftover"},
}

// gap is a property that does not hold on the roots whose names start
// with root, with why: each left is one the comparison should not make.
type gap struct{ root, prop, why string }

// knownGaps are the properties that do not hold, each by design. One
// that comes to hold fails the test until it is removed from here.
var knownGaps = []gap{
	{"networkd-leases", "collide", "a tmpfs covers an image's /run at boot, so no clone presents these leases: guestid reads them on the running system only (sealprep still removes them, and guestcheck flags them, since a root captured from a running guest holds them)"},
	{"wicked-duid/var/lib/wicked/iaid.xml", "collide", "an IAID identifies a client only together with its DUID (RFC 8415 section 12): clones that share the IAID but not duid.xml present different identities; guestid compares duid.xml"},
	{"cloud-init-instance/var/lib/cloud/data/previous-instance-id", "collide", "the previous instance-id is history: cloud-init decides a first boot on the current one (data/instance-id, the instance link), which guestid compares"},
}

// TestCatalogue (issue 29, part 4) holds, on a root for every form of
// every place of every catalogue item, what the catalogue promises:
//   - before apply, sealprep verify is NOT-SEALED for the item's
//     operation, guestcheck --root (judging a template) flags the item,
//     and two clones of the root collide on the item's Compare value;
//   - after `sealprep apply`, verify is SEALED (or NOT-SEALED with a
//     refusal of that file, for a form sealprep does not edit, which
//     guestcheck still fails), guestcheck fails nothing, and the clones
//     share nothing.
func TestCatalogue(t *testing.T) {
	roots := catalogueRoots()
	stacks := map[string]bool{}
	for _, r := range roots {
		stacks[r.place.Stack] = true
	}
	t.Logf("%d roots: %d items, %d stacks", len(roots), len(catalogue.Items), len(stacks))
	for _, r := range roots {
		t.Run(r.name(), func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "root")
			buildRoot(t, dir, r.nodes)
			g := gaps{t: t, root: r.name()}
			before := judge(t, dir)
			g.hold("template", r.item.Name == catalogue.MachineID || before.template(), "guestcheck did not judge the root as a template")
			g.hold("unsealed", before.verify.Status == "not-sealed" && len(r.leftovers(before.verify)) > 0,
				"before apply: verify %s with nothing of operation %s", before.verify.Status, r.item.Op)
			g.hold("flagged", len(r.findings(before.check, "")) > 0, "before apply: guestcheck --root does not flag it")
			if r.item.Compare != "" {
				cs := cloneCollisions(t, dir)
				g.hold("collide", hasCollision(cs, r.item.Compare), "before apply: two clones do not collide on %s (%s)", r.item.Compare, describe(cs))
			}

			out, err := exec.Command(bin.sealprep, "apply", "--yes", "--root", dir).CombinedOutput()
			if r.refused {
				if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
					t.Errorf("apply: %v, want a refusal (exit 3)\n%s", err, out)
				}
			} else if err != nil {
				t.Fatalf("apply: %v\n%s", err, out)
			}
			after := judge(t, dir)
			if r.refused {
				g.hold("refused", after.verify.Status == "not-sealed" && r.refusedHere(after.verify), "after apply: verify %s without a refusal of %s", after.verify.Status, r.place.Path)
				g.hold("still-failed", len(r.findings(after.check, "fail")) > 0, "after a refused apply: guestcheck --root does not fail it")
				return
			}
			g.hold("sealed", after.verify.Status == "sealed", "after apply: verify %s (%v)", after.verify.Status, after.verify)
			fails := identityFails(after.check)
			g.hold("clean", len(fails) == 0, "after apply: guestcheck --root fails %v", fails)
			cs := cloneCollisions(t, dir)
			g.hold("apart", len(cs) == 0, "after apply: two clones still share %s", describe(cs))
		})
	}
}

// gaps checks one root's properties against knownGaps.
type gaps struct {
	t    *testing.T
	root string
}

func (g gaps) hold(prop string, ok bool, format string, args ...any) {
	g.t.Helper()
	key := g.root + " " + prop
	why, known := "", false
	for _, k := range knownGaps {
		if strings.HasPrefix(g.root, k.root) && k.prop == prop {
			why, known = k.why, true
		}
	}
	switch {
	case known && ok:
		g.t.Errorf("%s holds now: remove it from knownGaps", key)
	case known:
		g.t.Logf("known gap %s: %s", key, why)
	case !ok:
		g.t.Errorf(key+": "+format, args...)
	}
}

// leftovers are verify's planned actions and refusals of the item's
// operation.
func (r placeRoot) leftovers(v verifyReport) []string {
	var out []string
	for _, a := range v.Actions {
		if a.Status == "planned" && a.Op == r.item.Op {
			out = append(out, a.Kind+" "+a.Path)
		}
	}
	for _, x := range v.Refusals {
		if x.Op == r.item.Op {
			out = append(out, "refused "+x.Path)
		}
	}
	return out
}

// refusedHere reports whether verify refuses the root's file for the
// item's operation.
func (r placeRoot) refusedHere(v verifyReport) bool {
	for _, x := range v.Refusals {
		if x.Op == r.item.Op && path.Dir(x.Path) == path.Clean(r.place.Path) {
			return true
		}
	}
	return false
}

// findings lists guestcheck's warnings and failures (only failures when
// status is "fail") about the item.
func (r placeRoot) findings(c checkReport, status string) []string {
	var out []string
	for _, ch := range c.Checks {
		for _, f := range ch.Findings {
			if f.Status != "fail" && (status != "" || f.Status != "warn") {
				continue
			}
			for _, code := range catalogueCodes[r.item.Name] {
				if f.Code == code && (code != "identity-template-leftover" || f.Detail["item"] == r.item.Name) {
					out = append(out, string(f.Status)+" "+f.Code)
				}
			}
		}
	}
	return out
}

// identityFails lists the failures about any identity item: of the
// agreement table's items or the catalogue's (sshd not installed is no
// identity).
func identityFails(c checkReport) []string {
	codes := map[string]bool{}
	for _, it := range items {
		for _, code := range it.codes {
			codes[code] = true
		}
	}
	for _, cs := range catalogueCodes {
		for _, code := range cs {
			codes[code] = true
		}
	}
	var out []string
	for _, ch := range c.Checks {
		for _, f := range ch.Findings {
			if f.Status == "fail" && codes[f.Code] {
				out = append(out, f.Code)
			}
		}
	}
	return out
}

// cloneCollisions copies the root twice, as two clones of the template,
// reads each one's identity as guestcheck does off a root and compares
// them.
func cloneCollisions(t *testing.T, dir string) []guestid.Collision {
	t.Helper()
	var ms []guestid.Member
	for _, name := range []string{"clone-a", "clone-b"} {
		c := filepath.Join(filepath.Dir(dir), name)
		os.RemoveAll(c)
		if out, err := exec.Command("cp", "-a", dir, c).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v\n%s", err, out)
		}
		r, err := fs.Open(c)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, guestid.Member{Name: name, ID: guestid.Read(r, false)})
		r.Close()
	}
	return guestid.Collisions(ms)
}

func hasCollision(cs []guestid.Collision, item string) bool {
	for _, c := range cs {
		if string(c.Item) == item {
			return true
		}
	}
	return false
}

// describe names the collisions' items, for a message.
func describe(cs []guestid.Collision) string {
	var out []string
	for _, c := range cs {
		out = append(out, string(c.Item)+"="+c.Value)
	}
	return strings.Join(out, ", ")
}
