package kubevirt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const goodConfig = `apiVersion: v1
kind: Config
current-context: harvester
preferences: {}
clusters:
- name: other
  cluster: {server: "https://other:6443"}
- name: harvester
  cluster:
    server: https://192.0.2.5:6443
    certificate-authority: ca.pem
    extensions: [{name: x, extension: {}}]
users:
- name: sa
  user:
    tokenFile: token
- name: cert
  user:
    client-certificate-data: Y2VydA==
    client-key-data: a2V5
contexts:
- name: harvester
  context: {cluster: harvester, user: sa, namespace: prod}
- name: admin
  context: {cluster: other, user: cert}
`

// TestLoadKubeconfig resolves the current context and a named one, with
// paths relative to the file.
func TestLoadKubeconfig(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config")
	os.WriteFile(p, []byte(goodConfig), 0o600)
	os.WriteFile(filepath.Join(dir, "ca.pem"), []byte("PEM"), 0o600)
	c, err := LoadKubeconfig(p, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Server != "https://192.0.2.5:6443" || string(c.CAData) != "PEM" || c.TokenFile != filepath.Join(dir, "token") || c.Namespace != "" || c.Context != "harvester" {
		t.Errorf("current context: %+v", c)
	}
	c, err = LoadKubeconfig(p, "admin")
	if err != nil {
		t.Fatal(err)
	}
	if c.Server != "https://other:6443" || string(c.CertData) != "cert" || string(c.KeyData) != "key" || c.Namespace != "" {
		t.Errorf("admin context: %+v", c)
	}
}

// TestKubeconfigErrors: a malformed or unsupported kubeconfig is one
// line naming the file and, where there is one, the line.
func TestKubeconfigErrors(t *testing.T) {
	ctx := "contexts:\n- name: c\n  context: {cluster: k, user: u}\ncurrent-context: c\n"
	cluster := "clusters:\n- name: k\n  cluster: {server: \"https://k:6443\"}\n"
	for name, tc := range map[string]struct{ cfg, context, want string }{
		"not yaml":          {"clusters: [\n", "", "line 1: did not find expected node content"},
		"tabs":              {"clusters:\n\t- x\n", "", "line 2: found character that cannot start any token"},
		"empty":             {"", "", "empty file"},
		"a list":            {"- a\n", "", "line 1: not a kubeconfig (want a mapping with clusters, users and contexts)"},
		"no current":        {cluster, "", "no current-context: name one with --context"},
		"unknown context":   {cluster + ctx, "other", `no context named "other" in contexts`},
		"clusters a map":    {"clusters: {}\n" + ctx, "", "line 1: clusters is a mapping, not a list"},
		"server a list":     {"clusters:\n- name: k\n  cluster:\n    server: [a]\n" + ctx, "", "line 4: cluster k: server is a list, not a string"},
		"plain http":        {"clusters:\n- name: k\n  cluster: {server: \"http://k:8080\"}\n" + ctx, "", `line 3: cluster k: server "http://k:8080": guestcheck talks to the API server over https only`},
		"insecure a string": {"clusters:\n- name: k\n  cluster: {server: \"https://k\", insecure-skip-tls-verify: \"yes\"}\n" + ctx, "", "line 3: cluster k: insecure-skip-tls-verify is a string, not true or false"},
		"bad base64":        {"clusters:\n- name: k\n  cluster: {server: \"https://k\", certificate-authority-data: \"%%%\"}\n" + ctx, "", "line 3: cluster k: certificate-authority-data is not base64"},
		"missing CA file":   {"clusters:\n- name: k\n  cluster: {server: \"https://k\", certificate-authority: /nonexistent/ca.pem}\n" + ctx, "", "cluster k: certificate-authority /nonexistent/ca.pem: no such file"},
		"exec plugin": {cluster + ctx + "users:\n- name: u\n  user:\n    exec:\n      command: kubelogin\n", "",
			"line 11: user u uses a credential plugin (exec), which guestcheck fleet does not run: give it a ServiceAccount token (token or tokenFile) or a client certificate"},
		"basic auth":     {cluster + ctx + "users:\n- name: u\n  user: {username: admin}\n", "", "line 10: user u: basic authentication (username) is not supported: use a ServiceAccount token or a client certificate"},
		"cert alone":     {cluster + ctx + "users:\n- name: u\n  user: {client-certificate-data: Y2VydA==}\n", "", "line 10: user u has a client certificate or a key without the other"},
		"no such user":   {cluster + ctx, "", `no users, so no user u`},
		"token a number": {cluster + ctx + "users:\n- name: u\n  user: {token: {a: 1}}\n", "", "line 10: user u: token is a mapping, not a string"},
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "config")
			os.WriteFile(p, []byte(tc.cfg), 0o600)
			_, err := LoadKubeconfig(p, tc.context)
			want := "kubeconfig " + p + ": " + tc.want
			if err == nil || err.Error() != want {
				t.Errorf("error:\n %v\nwant\n %s", err, want)
			}
		})
	}
	if _, err := LoadKubeconfig("/nonexistent/config", ""); err == nil || err.Error() != "kubeconfig /nonexistent/config: no such file" {
		t.Errorf("missing file: %v", err)
	}
}

// TestDefaultKubeconfig: the first existing file of $KUBECONFIG, else
// ~/.kube/config.
func TestDefaultKubeconfig(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "b")
	os.WriteFile(p, nil, 0o600)
	t.Setenv("KUBECONFIG", filepath.Join(dir, "a")+string(filepath.ListSeparator)+p)
	if got := DefaultKubeconfig(); got != p {
		t.Errorf("DefaultKubeconfig = %s, want %s", got, p)
	}
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", dir)
	if got := DefaultKubeconfig(); !strings.HasSuffix(got, "/.kube/config") {
		t.Errorf("DefaultKubeconfig = %s", got)
	}
}
