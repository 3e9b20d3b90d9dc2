package runner

import (
	"fmt"
	"time"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
	"github.com/guestcheck/guestcheck/internal/shared/config"
)

// waive marks the findings of check c that a waiver in cfg accepts, and
// adds a waiver-expired warning for each of c's waivers that has expired
// at now. fs is not changed; the marked copy is returned.
func waive(c Check, fs []Finding, cfg *config.Config, now time.Time) []Finding {
	if cfg == nil {
		return fs
	}
	out := fs
	cloned := false
	for _, w := range cfg.Waivers {
		if w.Check != c.ID {
			continue
		}
		if w.Expired(now) {
			out = append(out[:len(out):len(out)], codeWaiverExpired.New(Warn,
				fmt.Sprintf("the waiver of %s (%s) expired on %s: the finding counts again", w.Code, w.Reason, w.ExpiresText()),
				map[string]string{"waiver": w.Path, "code": w.Code, "expires": w.ExpiresText(), "where": w.Where()},
				codeWaiverExpired.Fixf("code", w.Code, "where", w.Where())))
			continue
		}
		for i := range out {
			if out[i].Code != w.Code || out[i].Waived != nil {
				continue
			}
			if !cloned {
				out, cloned = append([]Finding(nil), out...), true
			}
			out[i].Waived = &Waived{Reason: problem.OneLine(w.Reason), Expires: w.ExpiresText()}
		}
	}
	return out
}
