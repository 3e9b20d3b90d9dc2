package seal

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/identity/catalogue"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// TestCatalogueOpsExist: every item of the identity catalogue is owned by
// exactly one operation sealprep has (its Items, which the catalogue's Op
// decides); a typo would leave an item no operation seals.
func TestCatalogueOpsExist(t *testing.T) {
	owner := map[string]string{}
	for _, op := range All {
		for _, it := range op.Items() {
			owner[it.Name] = op.ID
		}
	}
	for _, it := range catalogue.Items {
		if owner[it.Name] != it.Op {
			t.Errorf("catalogue item %s names the operation %q, which sealprep does not have", it.Name, it.Op)
		}
	}
	l := NewListReport(All, nil)
	for _, o := range l.Operations {
		if o.ID == "machine-id" && !slices.Equal(o.Items, []string{catalogue.MachineID, catalogue.DBusMachineID, catalogue.NetworkdDUID}) {
			t.Errorf("sealprep list: machine-id owns %q", o.Items)
		}
	}
}

// TestCatalogueTable holds docs/identity.md's table to the catalogue.
func TestCatalogueTable(t *testing.T) {
	var b strings.Builder
	b.WriteString("| item | where | template holds | operation | compared as | source |\n|---|---|---|---|---|---|\n")
	for _, it := range catalogue.Items {
		var where []string
		for _, pl := range it.Places {
			p := pl.Path
			if pl.Dir {
				p += "/" + cmpOr(pl.Match, "*")
			}
			where = append(where, fmt.Sprintf("`%s` (%s)", p, pl.Stack))
		}
		cmp := it.Compare
		if cmp == "" {
			cmp = "—"
		}
		fmt.Fprintf(&b, "| `%s`: %s | %s | %s | `%s` | %s | %s |\n", it.Name, it.What, strings.Join(where, "<br>"), it.Rule, it.Op, cmp, it.Source)
	}
	testenv.GeneratedBlock(t, "../../docs/identity.md", "identity-catalogue", b.String(), *update)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
