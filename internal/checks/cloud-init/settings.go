package cloudinit

import "github.com/guestcheck/guestcheck/internal/shared/config"

// Settings are the cloud_init section of guestcheck.yaml.
type Settings struct {
	// Required turns "cloud-init is not installed" or "disabled" into a
	// failure instead of a skip, for images that must be provisioned by it.
	Required bool
}

var settings = config.Settings[Settings]{
	Name: "cloud_init",
	Help: "Expectations of the cloud-init check: whether this image must be provisioned by cloud-init.",
	Keys: []config.Field[Settings]{
		config.Bool("required", "false",
			"true turns \"cloud-init is not installed\" or \"disabled\" into a failure instead of a skip, for images that must be provisioned by it.",
			func(s *Settings, v bool) { s.Required = v }),
	},
}
