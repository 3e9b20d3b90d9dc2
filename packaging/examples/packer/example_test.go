// Package packer holds the Packer example's tests: the template is valid
// for Debian's Packer 1.6.6, finds the package `make package` writes,
// ships the seed it boots with, and docs/reference.md and docs/packaging.md quote
// it as it is. test/vm/packer_test.go runs it for real.
package packer

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

// validate runs `packer validate` on this directory from dir, as a user
// runs `packer build packaging/examples/packer` from the repository.
func validate(t *testing.T, packer, dir string, vars ...string) (string, error) {
	t.Helper()
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"validate"}
	for _, v := range vars {
		args = append(args, "-var", v)
	}
	cmd := exec.Command(packer, append(args, here)...)
	cmd.Dir = dir
	// Packer writes its state and plugin cache under the home directory.
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "CHECKPOINT_DISABLE=1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestPackerValidate: Debian's packer (1.6.6) accepts the template, and
// its default package is the one dist/guestcheck_*_amd64.deb of the
// directory it runs in, whatever version make package gave it.
func TestPackerValidate(t *testing.T) {
	packer := testenv.Tool(t, "packer", "packer")
	for _, c := range []struct {
		name string
		debs []string
		vars []string
		want string // "" for valid, else a line of the error
	}{
		{name: "release", debs: []string{"guestcheck_1.0.0-1_amd64.deb"}},
		{name: "git-build", debs: []string{"guestcheck_0.0.0~git.f3f7364-1_amd64.deb"}},
		{name: "none", want: "no single dist/guestcheck_*_amd64.deb (found 0)"},
		{name: "two", debs: []string{"guestcheck_1.0.0-1_amd64.deb", "guestcheck_1.1.0-1_amd64.deb"}, want: "(found 2)"},
		{name: "explicit", debs: []string{"a.deb", "b.deb"}, vars: []string{"deb=dist/a.deb"}},
		{name: "direct-kernel", debs: []string{"guestcheck_1.0.0-1_amd64.deb"},
			vars: []string{"kernel=/boot/vmlinuz", "initrd=/boot/initrd.img", "accelerator=tcg", "seed_files=[\"example_test.go\"]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "dist"), 0o755); err != nil {
				t.Fatal(err)
			}
			for _, d := range c.debs {
				if err := os.WriteFile(filepath.Join(dir, "dist", d), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			vars := c.vars
			for i, v := range vars {
				if strings.HasPrefix(v, "seed_files=") {
					abs, _ := filepath.Abs("example_test.go")
					vars[i] = `seed_files=["` + abs + `"]`
				}
			}
			out, err := validate(t, packer, dir, vars...)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("packer validate: %v\n%s", err, out)
			case c.want != "" && err == nil:
				t.Fatalf("packer validate passed; want an error with %q\n%s", c.want, out)
			case c.want != "" && !strings.Contains(strings.Join(strings.Fields(out), " "), c.want):
				t.Fatalf("packer validate: want %q in\n%s", c.want, out)
			}
		})
	}
}

// TestNoRequiredPlugins: Packer 1.6.6 rejects a required_plugins block;
// the template names it only in a comment.
func TestNoRequiredPlugins(t *testing.T) {
	for _, line := range strings.Split(readFile(t, "debian.pkr.hcl"), "\n") {
		if strings.Contains(line, "required_plugins") && !strings.HasPrefix(strings.TrimSpace(line), "#") {
			t.Errorf("required_plugins outside a comment: %s", line)
		}
	}
}

// TestSeedMatchesTemplate: the seed creates the user the template logs in
// as, with a password hash, and seal.sh removes every file the seed writes
// for that user, so that no build credential outlives the build.
func TestSeedMatchesTemplate(t *testing.T) {
	ud := readFile(t, "seed/user-data")
	if !strings.HasPrefix(ud, "#cloud-config\n") {
		t.Fatal("seed/user-data does not start with #cloud-config")
	}
	var cfg struct {
		Users []struct {
			Name       string `yaml:"name"`
			Passwd     string `yaml:"passwd"`
			LockPasswd *bool  `yaml:"lock_passwd"`
		} `yaml:"users"`
		SSHPwauth  *bool `yaml:"ssh_pwauth"`
		WriteFiles []struct {
			Path string `yaml:"path"`
		} `yaml:"write_files"`
	}
	if err := yaml.Unmarshal([]byte(ud), &cfg); err != nil {
		t.Fatalf("seed/user-data: %v", err)
	}
	if _, err := os.Stat("seed/meta-data"); err != nil {
		t.Fatal(err)
	}
	tpl := readFile(t, "debian.pkr.hcl")
	user := regexp.MustCompile(`(?m)^\s*ssh_username\s*=\s*"([^"]+)"`).FindStringSubmatch(tpl)
	if user == nil || len(cfg.Users) != 1 || cfg.Users[0].Name != user[1] {
		t.Fatalf("the seed's users %+v are not the template's ssh_username %v", cfg.Users, user)
	}
	if !strings.HasPrefix(cfg.Users[0].Passwd, "$6$") {
		t.Errorf("the build user's passwd is not a SHA-512 crypt hash: %q", cfg.Users[0].Passwd)
	}
	if cfg.SSHPwauth == nil || *cfg.SSHPwauth {
		t.Error("ssh_pwauth must be false: password login is for the build user alone (its Match block)")
	}
	if !strings.Contains(tpl, `"sudo sh /tmp/packer-seal.sh `+user[1]+` `) {
		t.Errorf("shutdown_command does not pass %s to seal.sh", user[1])
	}
	seal := readFile(t, "seal.sh")
	for _, f := range cfg.WriteFiles {
		if !strings.Contains(seal, f.Path) {
			t.Errorf("seal.sh does not remove %s, which seed/user-data writes", f.Path)
		}
	}
	sh := testenv.Tool(t, "sh", "dash")
	if out, err := exec.Command(sh, "-n", "seal.sh").CombinedOutput(); err != nil {
		t.Errorf("sh -n seal.sh: %v\n%s", err, out)
	}
}

// TestDocsQuoteTheExample: the Packer snippets of docs/reference.md and
// docs/packaging.md are the example's own lines.
func TestDocsQuoteTheExample(t *testing.T) {
	tpl := readFile(t, "debian.pkr.hcl")
	for _, doc := range []string{"../../../docs/reference.md", "../../../docs/packaging.md"} {
		blocks := regexp.MustCompile("(?s)```hcl\n(.*?)```").FindAllStringSubmatch(readFile(t, doc), -1)
		if len(blocks) == 0 {
			t.Errorf("%s has no hcl block", doc)
		}
		for _, b := range blocks {
			if !strings.Contains(tpl, b[1]) {
				t.Errorf("%s quotes lines that are not in debian.pkr.hcl as they are:\n%s", doc, b[1])
			}
		}
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
