package netconf

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// genENI writes a random ifupdown tree: /etc/network/interfaces with
// stanzas, continued lines, allow-hotplug and no-auto-down, pulling in
// more files through relative source-directory and source lines (some
// names run-parts skips), up to two levels deep.
func genENI(r *rand.Rand) map[string]string {
	files := map[string]string{}
	n := 0
	stanzas := func(b *strings.Builder) {
		for range 1 + r.IntN(3) {
			name := fmt.Sprintf("eth%d", n)
			n++
			if r.IntN(2) == 0 {
				fmt.Fprintf(b, "auto %s\n", name)
			} else if r.IntN(2) == 0 {
				fmt.Fprintf(b, "allow-hotplug %s\n", name)
			}
			if r.IntN(2) == 0 {
				fmt.Fprintf(b, "iface %s inet dhcp\n", name)
			} else {
				fmt.Fprintf(b, "iface %s inet static\n    address 192.0.2.%d\n    netmask 255.255.255.0\n", name, n)
				if r.IntN(2) == 0 {
					fmt.Fprintf(b, "    dns-nameservers 192.0.2.53 \\\n        192.0.2.%d\n", 100+n)
				}
			}
			if r.IntN(3) == 0 {
				fmt.Fprintf(b, "    mtu %d\n# a comment\n", 1280+r.IntN(8000))
			}
			if r.IntN(4) == 0 {
				fmt.Fprintf(b, "no-auto-down %s\n", name)
			}
		}
	}
	var main strings.Builder
	main.WriteString("auto lo\niface lo inet loopback\n")
	stanzas(&main)
	if r.IntN(3) > 0 {
		main.WriteString("source-directory interfaces.d\n")
		for i := range 1 + r.IntN(3) {
			var b strings.Builder
			stanzas(&b)
			if r.IntN(2) == 0 {
				b.WriteString("source ../extra/*.cfg\n")
				var e strings.Builder
				stanzas(&e)
				files[fmt.Sprintf("etc/network/extra/e%d.cfg", i)] = e.String()
			}
			name := fmt.Sprintf("etc/network/interfaces.d/%d-lan", i)
			if r.IntN(4) == 0 {
				name += ".cfg" // not a run-parts name: source-directory skips it
			}
			files[name] = b.String()
		}
	}
	if r.IntN(2) == 0 {
		var b strings.Builder
		stanzas(&b)
		files["etc/network/more/m"] = b.String()
		main.WriteString("source more/m\n")
	}
	files["etc/network/interfaces"] = main.String()
	return files
}

// TestENIIfquery holds the ifupdown reader to ifupdown itself: for
// generated trees, the interfaces ReadFacts's ifupdown reading finds
// marked auto are the ones `ifquery --list` lists, and each stanza's
// options are among the ones `ifquery IFACE` prints.
func TestENIIfquery(t *testing.T) {
	bin := testenv.Tool(t, "ifquery", "ifupdown")
	r := rand.New(rand.NewPCG(7, 8))
	for i := range 25 {
		files := genENI(r)
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			dir := t.TempDir()
			for p, c := range files {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			root, err := fs.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			main := filepath.Join(dir, "etc/network/interfaces")
			query := func(args ...string) []string {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				out, err := exec.CommandContext(ctx, bin, append([]string{"-i", main, "--state-dir", t.TempDir()}, args...)...).CombinedOutput()
				if err != nil {
					t.Fatalf("ifquery %v: %v: %s", args, err, out)
				}
				return strings.Split(strings.TrimSpace(string(out)), "\n")
			}
			var auto []string
			stanzas := map[string][]string{}
			for _, f := range ReadFacts(root).ENI {
				if !f.OK {
					continue
				}
				if len(f.Problems) > 0 {
					t.Fatalf("problems: %v", f.Problems)
				}
				auto = append(auto, f.File.Auto...)
				for _, s := range f.File.Stanzas {
					for _, o := range s.Options {
						stanzas[s.Name] = append(stanzas[s.Name], o.Key+": "+strings.Join(strings.Fields(o.Value), " "))
					}
					if _, ok := stanzas[s.Name]; !ok {
						stanzas[s.Name] = []string{}
					}
				}
			}
			slices.Sort(auto)
			list := query("--list")
			slices.Sort(list)
			if !slices.Equal(auto, list) {
				t.Errorf("auto interfaces: we read %v, ifquery lists %v\n%v", auto, list, files)
			}
			for name, opts := range stanzas {
				if name == "lo" {
					continue
				}
				var theirs []string
				for _, l := range query(name) {
					k, v, _ := strings.Cut(l, ":")
					theirs = append(theirs, k+": "+strings.Join(strings.Fields(v), " "))
				}
				for _, o := range opts {
					if !slices.Contains(theirs, o) {
						t.Errorf("%s: we read %q, ifquery prints %q\n%v", name, o, theirs, files)
					}
				}
			}
		})
	}
}
