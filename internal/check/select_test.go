package check

import (
	"context"
	"reflect"
	"testing"

	"github.com/guestcheck/guestcheck/internal/config"
)

func selectFixture() []Check {
	run := func(context.Context, *Env) []Finding { return nil }
	return []Check{{ID: "a", Run: run}, {ID: "b", Run: run}, {ID: "c", Run: run}}
}

func ids(cs []Check) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

// TestSelect holds the rules of check selection: the config's switches,
// then --only (order of the registry, not of the flag) and --skip, which
// wins over both; blanks in the lists are ignored.
func TestSelect(t *testing.T) {
	t.Parallel()
	cfgOff, err := config.Parse("guestcheck.yaml", []byte("checks:\n  b:\n    enabled: false\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		cfg        *config.Config
		only, skip string
		want       []string
	}{
		{"all by default", config.Default(), "", "", []string{"a", "b", "c"}},
		{"config disables", cfgOff, "", "", []string{"a", "c"}},
		{"only keeps registry order", config.Default(), "c, a", "", []string{"a", "c"}},
		{"only overrides config", cfgOff, "b", "", []string{"b"}},
		{"skip", config.Default(), "", "b", []string{"a", "c"}},
		{"skip wins over only", config.Default(), "a,b", "a", []string{"b"}},
		{"blanks ignored", config.Default(), " , ,", ",", []string{"a", "b", "c"}},
		{"nothing left", config.Default(), "", "a,b,c", []string{}},
	} {
		got, err := Select(selectFixture(), tc.cfg, tc.only, tc.skip)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !reflect.DeepEqual(ids(got), tc.want) {
			t.Errorf("%s: Select = %v, want %v", tc.name, ids(got), tc.want)
		}
	}
}

// TestSelectUnknownID: a typo in the config or a flag is an error naming
// where it stands, never a silently dropped check.
func TestSelectUnknownID(t *testing.T) {
	t.Parallel()
	cfgTypo, err := config.Parse("guestcheck.yaml", []byte("checks:\n  bb:\n    enabled: false\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg        *config.Config
		only, skip string
		want       string
	}{
		{cfgTypo, "", "", "config: checks.bb: unknown check ID"},
		{config.Default(), "a,d", "", `--only: unknown check ID "d"`},
		{config.Default(), "", " e ", `--skip: unknown check ID "e"`},
	} {
		got, err := Select(selectFixture(), tc.cfg, tc.only, tc.skip)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Select(%q, %q) = %v, %v; want error %q", tc.only, tc.skip, ids(got), err, tc.want)
		}
	}
}

func TestHas(t *testing.T) {
	t.Parallel()
	if !Has(selectFixture(), "b") || Has(selectFixture(), "d") || Has(nil, "a") {
		t.Error("Has")
	}
}
