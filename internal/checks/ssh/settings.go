package ssh

import "github.com/guestcheck/guestcheck/internal/shared/config"

// Settings are the ssh section of guestcheck.yaml.
type Settings struct {
	// Baseline lists, per authentication setting, the values sshd may
	// have; an unset setting keeps the default baseline.
	Baseline Accepted
}

// Accepted is the accepted values of sshd's authentication settings, as
// ssh.baseline gives them. nil keeps the default: no password or
// keyboard-interactive login, root only with keys (or not at all), no
// empty passwords, keys allowed. cloud-init's ssh_pwauth, when the
// instance sets it, decides PasswordAuthentication over this.
type Accepted struct {
	PasswordAuthentication       []string
	KbdInteractiveAuthentication []string
	PermitRootLogin              []string
	PermitEmptyPasswords         []string
	PubkeyAuthentication         []string
}

// The accepted values of sshd's yes/no settings and of PermitRootLogin.
var (
	yesNo     = []string{"yes", "no"}
	rootLogin = []string{"yes", "no", "prohibit-password", "without-password", "forced-commands-only"}
)

var settings = config.Settings[Settings]{
	Name: "ssh",
	Help: "The ssh check's authentication baseline: per sshd setting, the values it may have.",
	Keys: []config.Field[Settings]{
		config.Group[Settings]("baseline", "Per sshd authentication setting, the values sshd may have. A setting left out keeps the default baseline: no password or keyboard-interactive login, root only with keys (or not at all), no empty passwords, keys allowed. cloud-init's ssh_pwauth, when the instance sets it, decides password_authentication over this."),
		config.OneOf("baseline.password_authentication", "no", "Accepted values of PasswordAuthentication.", yesNo,
			func(s *Settings, v []string) { s.Baseline.PasswordAuthentication = v }),
		config.OneOf("baseline.kbd_interactive_authentication", "no", "Accepted values of KbdInteractiveAuthentication.", yesNo,
			func(s *Settings, v []string) { s.Baseline.KbdInteractiveAuthentication = v }),
		config.OneOf("baseline.permit_root_login", "[no, prohibit-password, without-password, forced-commands-only]", "Accepted values of PermitRootLogin.", rootLogin,
			func(s *Settings, v []string) { s.Baseline.PermitRootLogin = v }),
		config.OneOf("baseline.permit_empty_passwords", "no", "Accepted values of PermitEmptyPasswords.", yesNo,
			func(s *Settings, v []string) { s.Baseline.PermitEmptyPasswords = v }),
		config.OneOf("baseline.pubkey_authentication", "yes", "Accepted values of PubkeyAuthentication.", yesNo,
			func(s *Settings, v []string) { s.Baseline.PubkeyAuthentication = v }),
	},
}
