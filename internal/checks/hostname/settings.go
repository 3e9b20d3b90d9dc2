package hostname

import (
	"fmt"
	"strings"

	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/hostrule"
)

// Settings are the hostname section of guestcheck.yaml.
type Settings struct {
	// Expected is the hostname (short or fully qualified) the guest must
	// have; it takes precedence over what cloud-init was asked to set.
	Expected string
}

var settings = config.Settings[Settings]{
	Name: "hostname",
	Help: "Expectations of the hostname check: the name this VM must have, which wins over what cloud-init was asked to set.",
	Keys: []config.Field[Settings]{
		config.Text("expected", "name", "",
			"The hostname (short or fully qualified) this VM must have; it wins over what cloud-init was asked to set. It must be a valid host name (RFC 1123): letters, digits and '-' in dot-separated labels.",
			func(s *Settings, v string) { s.Expected = v }).WithExample("web-1.example.org"),
	},
	Issues: func(s Settings) []config.Issue {
		if err := expectedName(s.Expected); err != nil {
			return []config.Issue{{Path: "expected", Msg: fmt.Sprintf("%q is not a valid host name: %v; write letters, digits and '-' in dot-separated labels, such as web-1.example.org", s.Expected, err)}}
		}
		return nil
	},
}

// expectedName judges a hostname.expected value with the rule the check
// applies to names (nil when valid, or when empty: not set). The loader
// refuses a bad one through Issues, and the check calls it too, so the
// two cannot disagree.
func expectedName(s string) error {
	if s = strings.TrimSpace(s); s == "" {
		return nil
	}
	return hostrule.Validate(s)
}

// ExpectedName is hostname.expected in c, trimmed; "" when unset. The dns
// check resolves it when the machine has no FQDN.
func ExpectedName(c *config.Config) string { return strings.TrimSpace(settings.Of(c).Expected) }
