package identity

import (
	"path"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/parse/cloudconfig"
)

// The unit sealprep installs when a template has sshd and systemd but
// nothing that regenerates host keys (Debian or Ubuntu without
// cloud-init). ssh-keygen -A only creates missing keys, so it is a no-op
// on every later boot.
const (
	KeygenUnitName = "sealprep-ssh-keygen.service"
	KeygenUnitPath = "/etc/systemd/system/" + KeygenUnitName
	KeygenWantsDir = "/etc/systemd/system/multi-user.target.wants"
	KeygenUnit     = `# Installed by sealprep: this template's SSH host keys were removed and
# nothing else on it regenerates them. ssh-keygen -A creates only the
# missing keys, so this is a no-op once they exist.
[Unit]
Description=Generate missing SSH host keys (installed by sealprep)
Before=ssh.service sshd.service

[Service]
Type=oneshot
ExecStart=/usr/bin/ssh-keygen -A

[Install]
WantedBy=multi-user.target
`
)

// UnitDirs are where systemd unit files are looked for, in order.
var UnitDirs = []string{"/etc/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system"}

// SystemdPresent reports whether the root has systemd installed.
func SystemdPresent(r fs.Reader) bool {
	return exists(r, "/usr/lib/systemd/systemd") || exists(r, "/lib/systemd/systemd")
}

// CloudInitEnabled reports whether cloud-init is installed and not
// disabled by /etc/cloud/cloud-init.disabled. (A kernel command line
// cloud-init=disabled cannot be seen from an image.)
func CloudInitEnabled(r fs.Reader) bool {
	return exists(r, "/usr/bin/cloud-init") && !exists(r, "/etc/cloud/cloud-init.disabled")
}

func exists(r fs.Reader, p string) bool {
	_, err := r.Stat(p)
	return err == nil
}

// SSHRegenerator names what regenerates SSH host keys at first boot, ""
// when nothing does. cloudKeys says that cloud-init is enabled and its
// ssh module generates keys (the caller reads cloud.cfg); then that
// module is named. Otherwise the units are looked for: sshd-keygen
// (Red Hat), sealprep's own unit when installed and enabled, and an ssh
// unit that runs ssh-keygen -A (Debian's, SUSE's); a masked unit does not
// count.
func SSHRegenerator(r fs.Reader, cloudKeys bool) string {
	if cloudKeys {
		return "cloud-init's ssh module (cc_ssh)"
	}
	for _, d := range UnitDirs {
		ents, err := r.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if (e.Kind != fs.KindRegular && e.Kind != fs.KindSymlink) || unitMasked(r, e.Name) {
				continue
			}
			switch {
			case e.Name == "sshd-keygen@.service" || e.Name == "sshd-keygen.target" || e.Name == "sshd-keygen.service":
				return "the " + e.Name + " unit"
			case e.Name == KeygenUnitName:
				if KeygenUnitInstalled(r) {
					return "sealprep's " + KeygenUnitName
				}
			case strings.HasPrefix(e.Name, "ssh") && strings.HasSuffix(e.Name, ".service"):
				b, err := r.ReadFile(path.Join(d, e.Name))
				if err != nil {
					continue
				}
				if s := string(b); strings.Contains(s, "ssh-keygen -A") || strings.Contains(s, "sshd-gen-keys-start") {
					return e.Name + " (runs ssh-keygen -A)"
				}
			}
		}
	}
	return ""
}

// unitMasked reports whether /etc/systemd/system/name links to /dev/null.
func unitMasked(r fs.Reader, name string) bool {
	t, err := r.Readlink("/etc/systemd/system/" + name)
	return err == nil && t == "/dev/null"
}

// KeygenUnitInstalled reports whether sealprep's unit is in place, as
// sealprep writes it, and enabled.
func KeygenUnitInstalled(r fs.Reader) bool {
	b, err := r.ReadFile(KeygenUnitPath)
	if err != nil || string(b) != KeygenUnit {
		return false
	}
	t, err := r.Readlink(KeygenWantsDir + "/" + KeygenUnitName)
	return err == nil && t == KeygenUnitPath
}

// defaultKeyTypes stands for cc_ssh's GENERATE_KEY_NAMES: only whether
// the list is empty matters here.
var defaultKeyTypes = []string{"rsa", "ecdsa", "ed25519"}

// CloudSSH reads from cloud-init's merged system configuration whether
// its ssh module (cc_ssh) is in one of the module lists and whether it
// generates any key type (ssh_genkeytypes is not an explicit empty list),
// by the rules of cloud-init's module loader and cc_ssh. Both true:
// cloud-init generates host keys at a new instance's first boot.
func CloudSSH(merged map[string]any) (module, keyTypes bool) {
	for _, stage := range []string{"cloud_init_modules", "cloud_config_modules", "cloud_final_modules"} {
		list, _ := merged[stage].([]any)
		for _, item := range list {
			name := ""
			switch v := item.(type) {
			case string:
				name = v
			case []any:
				if len(v) > 0 {
					name, _ = v[0].(string)
				}
			case map[string]any:
				name, _ = v["name"].(string)
			}
			if moduleName(name) == "cc_ssh" {
				module = true
			}
		}
	}
	// get_cfg_option_list: null is an empty list, a string a list of one.
	keyTypes = len(cloudconfig.GetList(merged, "ssh_genkeytypes", defaultKeyTypes)) > 0
	return module, keyTypes
}

// moduleName is how cloud-init's module loader names a module list item
// (_read_modules strips it, then form_module_name): "-" becomes "_", a
// ".py" suffix and surrounding space go, and "cc_" is added when missing.
func moduleName(s string) string {
	s = strings.ReplaceAll(strings.TrimSpace(s), "-", "_")
	if strings.HasSuffix(strings.ToLower(s), ".py") {
		s = s[:len(s)-3]
	}
	if s = strings.TrimSpace(s); s != "" && !strings.HasPrefix(s, "cc_") {
		s = "cc_" + s
	}
	return s
}
