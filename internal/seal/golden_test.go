package seal

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden plans in testdata/plans")

// goldenCase is one operation's plan for one fixture, as stored.
type goldenCase struct {
	Actions  []Action  `json:"actions"`
	Notes    []Note    `json:"notes"`
	Refusals []Refusal `json:"refusals"`
}

// variant is a fixture planned with some options.
type variant struct {
	name  string
	nodes func() []node
	opts  Options
}

// goldenVariants are the fixtures and options the golden plans cover.
func goldenVariants() []variant {
	var v []variant
	for _, fx := range fixtures {
		v = append(v, variant{fx.name, fx.nodes, Options{}})
	}
	return append(v,
		variant{"debian-live", debianNodes, Options{Live: true, Booted: true}},
		variant{"debian-uninitialized", debianNodes, Options{MachineIDMode: MachineIDUninitialized}},
		variant{"bare", func() []node { return []node{f("/etc/os-release", "ID=debian\n")} }, Options{}},
	)
}

// TestGoldenPlans compares every operation's plan, as data, with
// testdata/plans/<op>.json for each fixture. Run with -update to rewrite
// them after an intended change, and review the diff.
func TestGoldenPlans(t *testing.T) {
	type built struct {
		name string
		root View
		opts Options
	}
	var roots []built
	for _, v := range goldenVariants() {
		_, r := newRoot(t, v.nodes())
		// The template record carries the seal time and version: fixed,
		// so that the plan is data to compare.
		o := v.opts
		o.Now, o.Version = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), "golden"
		roots = append(roots, built{v.name, r, o})
	}
	for _, op := range All {
		t.Run(op.ID, func(t *testing.T) {
			got := map[string]goldenCase{}
			planned := false
			for _, b := range roots {
				p := MakePlan(context.Background(), b.root, []Operation{op}, b.opts)
				if len(p.Errors) > 0 {
					t.Fatalf("%s: planning failed: %v", b.name, p.Errors)
				}
				got[b.name] = goldenCase{Actions: p.Actions, Notes: p.Notes, Refusals: p.Refusals}
				planned = planned || len(p.Actions) > 0
				if b.name == "bare" && len(p.Actions) > 0 {
					t.Errorf("bare root: planned %d actions, want none", len(p.Actions))
				}
			}
			if !planned {
				t.Errorf("no fixture exercises %s: every variant plans nothing", op.ID)
			}
			file := filepath.Join("testdata", "plans", op.ID+".json")
			if *update {
				b, err := json.MarshalIndent(got, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGoldenPlans -update)", err)
			}
			var want map[string]goldenCase
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			// Round-trip got through JSON so nil and empty compare alike.
			gb, _ := json.Marshal(got)
			var gotRT map[string]goldenCase
			if err := json.Unmarshal(gb, &gotRT); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, gotRT); diff != "" {
				t.Errorf("plan of %s differs from %s (-want +got):\n%s", op.ID, file, diff)
			}
		})
	}
}
