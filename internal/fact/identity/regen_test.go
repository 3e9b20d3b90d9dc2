package identity

import (
	"testing"

	"github.com/guestcheck/guestcheck/internal/parse/cloudconfig"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// TestSSHRegenerator names what regenerates host keys, the same through
// both readers (sealprep's and guestcheck's).
func TestSSHRegenerator(t *testing.T) {
	tests := []struct {
		name      string
		files     map[string]string
		cloudKeys bool
		want      string
	}{
		{"nothing", map[string]string{"/usr/sbin/sshd": ""}, false, ""},
		{"cloud-init", nil, true, "cloud-init's ssh module (cc_ssh)"},
		{"sshd-keygen", map[string]string{"/usr/lib/systemd/system/sshd-keygen@.service": "[Unit]\n"}, false, "the sshd-keygen@.service unit"},
		{"sshd-keygen masked", map[string]string{"/usr/lib/systemd/system/sshd-keygen@.service": "[Unit]\n",
			"/etc/systemd/system/sshd-keygen@.service": "->/dev/null"}, false, ""},
		{"ssh.service runs ssh-keygen -A", map[string]string{"/lib/systemd/system/ssh.service": "[Service]\nExecStartPre=/usr/bin/ssh-keygen -A\n"}, false,
			"ssh.service (runs ssh-keygen -A)"},
		{"ssh.service without it", map[string]string{"/lib/systemd/system/ssh.service": "[Service]\nExecStart=/usr/sbin/sshd -D\n"}, false, ""},
		{"sealprep's unit", map[string]string{KeygenUnitPath: KeygenUnit, KeygenWantsDir + "/" + KeygenUnitName: "->" + KeygenUnitPath}, false,
			"sealprep's " + KeygenUnitName},
		{"sealprep's unit, not enabled", map[string]string{KeygenUnitPath: KeygenUnit}, false, ""},
		{"sealprep's unit, edited", map[string]string{KeygenUnitPath: KeygenUnit + "#\n", KeygenWantsDir + "/" + KeygenUnitName: "->" + KeygenUnitPath}, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.files == nil {
				tc.files = map[string]string{}
			}
			for name, r := range readers(t, testenv.WriteTree(t, tc.files)) {
				if got := SSHRegenerator(r, tc.cloudKeys); got != tc.want {
					t.Errorf("%s: got %q, want %q", name, got, tc.want)
				}
			}
		})
	}
}

func TestSystemdAndCloudInit(t *testing.T) {
	for name, r := range readers(t, testenv.WriteTree(t, map[string]string{"/lib/systemd/systemd": "", "/usr/bin/cloud-init": ""})) {
		if !SystemdPresent(r) || !CloudInitEnabled(r) {
			t.Errorf("%s: systemd %v, cloud-init %v", name, SystemdPresent(r), CloudInitEnabled(r))
		}
	}
	for name, r := range readers(t, testenv.WriteTree(t, map[string]string{"/usr/bin/cloud-init": "", "/etc/cloud/cloud-init.disabled": ""})) {
		if SystemdPresent(r) || CloudInitEnabled(r) {
			t.Errorf("%s: systemd %v, cloud-init %v", name, SystemdPresent(r), CloudInitEnabled(r))
		}
	}
}

func TestCloudSSH(t *testing.T) {
	tests := []struct {
		yaml             string
		module, keyTypes bool
	}{
		{"cloud_init_modules: [migrator, ssh]\n", true, true},
		{"cloud_config_modules: [' ssh.py ']\n", true, true},
		{"cloud_final_modules:\n - [cc_ssh, always]\n", true, true},
		{"cloud_init_modules:\n - {name: ssh}\n", true, true},
		{"cloud_init_modules: [ssh]\nssh_genkeytypes: []\n", true, false},
		{"cloud_init_modules: [ssh-authkey-fingerprints]\n", false, true},
		{"", false, true},
	}
	for _, tc := range tests {
		d, err := cloudconfig.Parse("cloud.cfg", []byte(tc.yaml))
		if err != nil {
			t.Fatal(err)
		}
		if mod, kt := CloudSSH(d.Value); mod != tc.module || kt != tc.keyTypes {
			t.Errorf("%q: module %v keyTypes %v, want %v %v", tc.yaml, mod, kt, tc.module, tc.keyTypes)
		}
	}
}
