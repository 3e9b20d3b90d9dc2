package seal

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestTextReportGroupsAlternatingKinds: a log walk alternates truncate
// and remove; the text report must still show two groups of at most
// maxGroup lines, not a line and a "why" per action (10,278 lines for
// 10,000 logs before).
func TestTextReportGroupsAlternatingKinds(t *testing.T) {
	var rs []Result
	for i := 0; i < 4000; i++ {
		a := Action{Op: "logfiles", Kind: Truncate, Path: fmt.Sprintf("/var/log/s%05d.log", i), Reason: "log of the template"}
		if i%4 == 3 {
			a.Kind, a.Path, a.Reason = Remove, a.Path+".1.gz", "rotated log"
		}
		rs = append(rs, Result{Action: a, Status: Done})
	}
	rs[1001].Status, rs[1001].Error = Failed, "permission denied"
	rs = append(rs, Result{Action: Action{Op: "machine-id", Kind: Truncate, Path: "/etc/machine-id", Reason: "id"}, Status: Done})
	var b bytes.Buffer
	r := Report{Command: "apply", Actions: rs}
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if n := strings.Count(out, "\n"); n > 40 {
		t.Errorf("%d lines for 2 operations:\n%s", n, out)
	}
	if strings.Count(out, "why: log of the template") != 1 || strings.Count(out, "why: rotated log") != 1 {
		t.Errorf("want one group per kind and reason:\n%s", out)
	}
	if !strings.Contains(out, "failed    truncate /var/log/s01001.log\n            error: permission denied") {
		t.Errorf("the failure is not listed:\n%s", out)
	}
	if !strings.Contains(out, "... and 2991 more like these") || !strings.Contains(out, "... and 992 more like these") {
		t.Errorf("hidden counts wrong:\n%s", out)
	}
	if i, j := strings.Index(out, "\nlogfiles\n"), strings.Index(out, "\nmachine-id\n"); i < 0 || j < i {
		t.Errorf("operations out of order:\n%s", out)
	}
}
