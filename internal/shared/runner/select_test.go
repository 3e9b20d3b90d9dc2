package runner

import (
	"context"
	"reflect"
	"testing"

	"github.com/guestcheck/guestcheck/internal/shared/config"
)

func selectFixture() []Check {
	run := func(context.Context, *Env) []Finding { return nil }
	return []Check{{ID: "a", Run: run, Codes: codesOf("a-ok")}, {ID: "b", Run: run}, {ID: "cloud-init", Run: run}}
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
		{"all by default", config.Default(), "", "", []string{"a", "b", "cloud-init"}},
		{"config disables", cfgOff, "", "", []string{"a", "cloud-init"}},
		{"only keeps registry order", config.Default(), "cloud-init, a", "", []string{"a", "cloud-init"}},
		{"only overrides config", cfgOff, "b", "", []string{"b"}},
		{"skip", config.Default(), "", "b", []string{"a", "cloud-init"}},
		{"skip wins over only", config.Default(), "a,b", "a", []string{"b"}},
		{"blanks ignored", config.Default(), " , ,", ",", []string{"a", "b", "cloud-init"}},
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
	cfgBOff, err := config.Parse("guestcheck.yaml", []byte("checks:\n  b:\n    enabled: false\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg        *config.Config
		only, skip string
		want       string
	}{
		{cfgTypo, "", "", `guestcheck.yaml:2: checks.bb: unknown check ID; did you mean b? (see guestcheck --list)`},
		{config.Default(), "a,d", "", `--only: unknown check ID "d" (see --list)`},
		{config.Default(), "", " e ", `--skip: unknown check ID "e" (see --list)`},
		{config.Default(), "clod-init", "", `--only: unknown check ID "clod-init"; did you mean cloud-init? (see --list)`},
		{config.Default(), "a-ok", "", `--only: "a-ok" is a finding code of check a; this takes check IDs (--only a)`},
		{config.Default(), "", "a,b,cloud-init", `no check left to run (--skip and the configuration's enabled: false leave none)`},
		{config.Default(), "a", "a", `no check left to run (--skip removes every check --only names)`},
		{cfgBOff, "", "a,cloud-init", `no check left to run (--skip and the configuration's enabled: false leave none)`},
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
