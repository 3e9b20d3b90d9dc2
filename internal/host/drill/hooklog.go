package drill

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
)

// maxScripts bounds the hook scripts kept from one drill's log.
const maxScripts = 64

// parseHookLog reads the lines qemu's fsfreeze-hook writes
// (scripts/qemu-guest-agent/fsfreeze-hook). Before QEMU 8.1 (Debian 12):
// "DATE: execute PATH ACTION", then "DATE: PATH finished with status=N",
// and the hook itself always exits 0. Since: "DATE: Executing PATH
// ACTION", then "DATE: PATH finished successfully" or "DATE: Error: PATH
// finished with status=N", and the hook exits with the failure. A
// script's own output lines are skipped.
func parseHookLog(b []byte) []HookScript {
	var out []HookScript
	for _, raw := range bytes.Split(b, []byte("\n")) {
		line := oneLine(string(raw))
		if rest, ok := after(line, ": Executing ", ": execute "); ok {
			if len(out) < maxScripts {
				path, action, _ := strings.Cut(rest, " ")
				out = append(out, HookScript{Path: bounded(path, 256), Action: bounded(action, 16), Result: "no result"})
			}
			continue
		}
		// The result line names a script that started and has none yet.
		for i := len(out) - 1; i >= 0; i-- {
			if out[i].Result != "no result" {
				continue
			}
			if strings.Contains(line, " "+out[i].Path+" finished successfully") {
				out[i].Result = "ok"
				break
			}
			if _, st, ok := strings.Cut(line, " "+out[i].Path+" finished with status="); ok {
				if n, err := strconv.Atoi(strings.TrimSpace(st)); err == nil {
					out[i].Result = "exit " + strconv.Itoa(n)
					if n == 0 {
						out[i].Result = "ok"
					}
				}
				break
			}
		}
	}
	return out
}

// after is what follows the first of seps found in s.
func after(s string, seps ...string) (string, bool) {
	for _, sep := range seps {
		if _, rest, ok := strings.Cut(s, sep); ok {
			return rest, true
		}
	}
	return "", false
}

// hookScripts names the scripts run for action, with their results.
func hookScripts(h Hook, action string) string {
	var s []string
	for _, sc := range h.Scripts {
		if sc.Action == action {
			s = append(s, sc.Path+" ("+sc.Result+")")
		}
	}
	return strings.Join(s, ", ")
}

// failedScripts is "; PATH exited N, ..." for the scripts that failed.
func failedScripts(h Hook) string {
	var s []string
	for _, sc := range h.Scripts {
		if strings.HasPrefix(sc.Result, "exit ") {
			s = append(s, sc.Path+" "+sc.Action+" "+sc.Result)
		}
	}
	if len(s) == 0 {
		return ""
	}
	return ": " + strings.Join(s, ", ")
}

// freezeOrder reads the freeze list from guestcheck's report: the
// fs-freeze check's detail.freeze_order. why says why there is none.
func freezeOrder(b []byte) ([]string, string) {
	if !json.Valid(b) {
		return nil, "guestcheck in the guest did not write JSON"
	}
	r, err := reportv1.Decode(b)
	if err != nil {
		return nil, "guestcheck's report in the guest: " + err.Error()
	}
	c := r.Check("fs-freeze")
	if c == nil {
		return nil, "guestcheck's report in the guest has no fs-freeze check"
	}
	for _, f := range c.Findings {
		order, ok := f.Detail["freeze_order"]
		if !ok {
			continue
		}
		if order == "" {
			return []string{}, ""
		}
		list := strings.Split(order, ",")
		if len(list) > maxFS {
			return nil, "guestcheck's freeze list in the guest is longer than the bound"
		}
		for i := range list {
			list[i] = printable(bounded(list[i], maxField))
		}
		return list, ""
	}
	return nil, "the guest's fs-freeze check gives no freeze list: " + bounded(c.Summary, 200)
}
