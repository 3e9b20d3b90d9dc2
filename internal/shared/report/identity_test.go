package report

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestIdentityOnEveryLine: each jsonl line carries the run's identity,
// and the text report leaves it out.
func TestIdentityOnEveryLine(t *testing.T) {
	t.Parallel()
	r := New(cases[2].results, meta)
	for i, l := range strings.Split(strings.TrimSpace(string(render(t, r, FormatJSONL, Options{}))), "\n") {
		var line FindingLine
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatal(err)
		}
		if line.Identity == nil || !reflect.DeepEqual(*line.Identity, testIdentity) {
			t.Errorf("line %d: identity %+v", i+1, line.Identity)
		}
	}
	txt := string(render(t, r, FormatText, Options{Text: TextOptions{Verbose: true}}))
	if strings.Contains(txt, testIdentity.MachineIDHash) || strings.Contains(txt, testIdentity.InstanceID) {
		t.Errorf("the text report shows the identity:\n%s", txt)
	}
}
