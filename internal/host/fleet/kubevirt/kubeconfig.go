// Package kubevirt is guestcheck fleet's KubeVirt source: it reads every
// VirtualMachine and VirtualMachineInstance of a cluster through the
// Kubernetes API, read-only, and gives fleet what the API alone says of
// each VM's identity (firmware UUID and serial, MACs, hostname) and guest
// agent, so that copies sharing identity are found before they boot and
// without guest access. It speaks REST over net/http rather than linking
// client-go, which would more than double the guest's binary.
package kubevirt

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// maxKubeconfig bounds the kubeconfig file: a real one is a few KiB,
// with embedded certificates tens of KiB.
const maxKubeconfig = 4 << 20

// Config is how to reach one API server: the kubeconfig's current (or
// named) context, resolved.
type Config struct {
	// File is the kubeconfig it came from, for messages.
	File string
	// Context is the context's name.
	Context string
	// Server is the API server's https URL.
	Server string
	// CAData is the PEM bundle that verifies the server; empty means
	// the system's roots.
	CAData []byte
	// Insecure skips verifying the server's certificate
	// (insecure-skip-tls-verify).
	Insecure bool
	// CertData and KeyData are a PEM client certificate and its key.
	CertData, KeyData []byte
	// Token is a bearer token; TokenFile is read for one when Token is
	// empty.
	Token     string
	TokenFile string
	// Namespace limits the listing to one namespace; empty is all.
	// LoadKubeconfig leaves it empty whatever the context says: a
	// survey is of the whole cluster unless asked otherwise.
	Namespace string
}

// DefaultKubeconfig is the kubeconfig kubectl would read: the first
// existing file of $KUBECONFIG's list, else ~/.kube/config. guestcheck
// reads that one file and does not merge the others.
func DefaultKubeconfig() string {
	for _, p := range filepath.SplitList(os.Getenv("KUBECONFIG")) {
		if _, err := os.Stat(p); p != "" && err == nil {
			return p
		}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".kube", "config")
}

// LoadKubeconfig reads the kubeconfig at path and resolves context (the
// current-context when empty): its cluster's server and CA, and its
// user's credentials. Exec and auth-provider plugins are refused: a
// survey runs unattended, and running a program a file names is not
// what a read-only survey should do.
func LoadKubeconfig(path, context string) (Config, error) {
	b, err := readBounded(path, maxKubeconfig)
	if err != nil {
		return Config{}, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	c, err := parseKubeconfig(b, path, context)
	if err != nil {
		return Config{}, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	return c, nil
}

// parseKubeconfig resolves a context of the kubeconfig b; paths in it
// are relative to file's directory, as kubectl takes them.
func parseKubeconfig(b []byte, file, context string) (Config, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return Config{}, errors.New(OneLine(strings.TrimPrefix(err.Error(), "yaml: ")))
	}
	if len(root.Content) == 0 {
		return Config{}, errors.New("empty file")
	}
	doc := root.Content[0]
	if doc.Kind != yaml.MappingNode {
		return Config{}, fmt.Errorf("line %d: not a kubeconfig (want a mapping with clusters, users and contexts)", doc.Line)
	}
	if context == "" {
		cur, err := str(doc, "current-context", "")
		if err != nil {
			return Config{}, err
		}
		if cur == "" {
			return Config{}, errors.New("no current-context: name one with --context")
		}
		context = cur
	}
	ctx, err := named(doc, "contexts", "context", context)
	if err != nil {
		return Config{}, err
	}
	c := Config{File: file, Context: context}
	var clusterName, userName string
	for _, f := range []struct {
		key string
		dst *string
	}{{"cluster", &clusterName}, {"user", &userName}} {
		if *f.dst, err = str(ctx, f.key, "context "+context); err != nil {
			return Config{}, err
		}
	}
	if clusterName == "" {
		return Config{}, fmt.Errorf("line %d: context %s names no cluster", ctx.Line, context)
	}
	cl, err := named(doc, "clusters", "cluster", clusterName)
	if err != nil {
		return Config{}, err
	}
	dir := filepath.Dir(file)
	if err := c.cluster(cl, clusterName, dir); err != nil {
		return Config{}, err
	}
	if userName == "" {
		return c, nil // anonymous: the server decides
	}
	u, err := named(doc, "users", "user", userName)
	if err != nil {
		return Config{}, err
	}
	return c, c.user(u, userName, dir)
}

// cluster reads a cluster entry: server, its CA and TLS verification.
func (c *Config) cluster(cl *yaml.Node, name, dir string) error {
	where := "cluster " + name
	var err error
	if c.Server, err = str(cl, "server", where); err != nil {
		return err
	}
	if !strings.HasPrefix(c.Server, "https://") {
		return fmt.Errorf("line %d: %s: server %q: guestcheck talks to the API server over https only", cl.Line, where, c.Server)
	}
	if c.Insecure, err = boolean(cl, "insecure-skip-tls-verify", where); err != nil {
		return err
	}
	if v, ok := field(cl, "proxy-url"); ok {
		return fmt.Errorf("line %d: %s: proxy-url is not supported: run guestcheck fleet where it reaches the API server directly", v.Line, where)
	}
	c.CAData, err = pemField(cl, "certificate-authority", where, dir)
	return err
}

// user reads a user entry's credentials.
func (c *Config) user(u *yaml.Node, name, dir string) error {
	where := "user " + name
	for _, k := range []string{"exec", "auth-provider"} {
		if _, ok := field(u, k); ok {
			return fmt.Errorf("line %d: %s uses a credential plugin (%s), which guestcheck fleet does not run: give it a ServiceAccount token (token or tokenFile) or a client certificate", keyLine(u, k), where, k)
		}
	}
	for _, k := range []string{"username", "password"} {
		if v, ok := field(u, k); ok {
			return fmt.Errorf("line %d: %s: basic authentication (%s) is not supported: use a ServiceAccount token or a client certificate", v.Line, where, k)
		}
	}
	var err error
	if c.Token, err = str(u, "token", where); err != nil {
		return err
	}
	if c.TokenFile, err = str(u, "tokenFile", where); err != nil {
		return err
	}
	if c.TokenFile != "" && !filepath.IsAbs(c.TokenFile) {
		c.TokenFile = filepath.Join(dir, c.TokenFile)
	}
	if c.CertData, err = pemField(u, "client-certificate", where, dir); err != nil {
		return err
	}
	if c.KeyData, err = pemField(u, "client-key", where, dir); err != nil {
		return err
	}
	if (c.CertData == nil) != (c.KeyData == nil) {
		return fmt.Errorf("line %d: %s has a client certificate or a key without the other", u.Line, where)
	}
	return nil
}

// named finds the entry called name in the list key ("clusters") and
// returns its inner mapping (the entry's "cluster").
func named(doc *yaml.Node, key, inner, name string) (*yaml.Node, error) {
	list, ok := field(doc, key)
	if !ok {
		return nil, fmt.Errorf("no %s, so no %s %s", key, inner, name)
	}
	if list.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("line %d: %s is %s, not a list", list.Line, key, kindName(list))
	}
	for _, e := range list.Content {
		if e.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("line %d: an entry of %s is %s, not a mapping", e.Line, key, kindName(e))
		}
		n, err := str(e, "name", "an entry of "+key)
		if err != nil {
			return nil, err
		}
		if n != name {
			continue
		}
		v, ok := field(e, inner)
		if !ok || v.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("line %d: %s %s has no %s mapping", e.Line, inner, name, inner)
		}
		return v, nil
	}
	return nil, fmt.Errorf("no %s named %q in %s", inner, name, key)
}

// field is the value of key in mapping m.
func field(m *yaml.Node, key string) (*yaml.Node, bool) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, false
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v := m.Content[i+1]
			if v.Kind == yaml.AliasNode {
				v = v.Alias
			}
			return v, v != nil
		}
	}
	return nil, false
}

// keyLine is the line of key in mapping m.
func keyLine(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i].Line
		}
	}
	return m.Line
}

// str is key's string value, "" when absent or null.
func str(m *yaml.Node, key, where string) (string, error) {
	v, ok := field(m, key)
	if !ok || v.Tag == "!!null" {
		return "", nil
	}
	if v.Kind != yaml.ScalarNode || (v.Tag != "!!str" && v.Tag != "!!int" && v.Tag != "!!float") {
		return "", fmt.Errorf("line %d: %s: %s is %s, not a string", v.Line, prefix(where), key, kindName(v))
	}
	return v.Value, nil
}

// boolean is key's true or false, false when absent.
func boolean(m *yaml.Node, key, where string) (bool, error) {
	v, ok := field(m, key)
	if !ok || v.Tag == "!!null" {
		return false, nil
	}
	var b bool
	if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" || v.Decode(&b) != nil {
		return false, fmt.Errorf("line %d: %s: %s is %s, not true or false", v.Line, prefix(where), key, kindName(v))
	}
	return b, nil
}

// pemField reads key-data (base64 PEM, in the file) or key (a file).
func pemField(m *yaml.Node, key, where, dir string) ([]byte, error) {
	if v, ok := field(m, key+"-data"); ok {
		b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(v.Value), ""))
		if v.Kind != yaml.ScalarNode || err != nil || len(b) == 0 {
			return nil, fmt.Errorf("line %d: %s: %s-data is not base64", v.Line, prefix(where), key)
		}
		return b, nil
	}
	p, err := str(m, key, where)
	if err != nil || p == "" {
		return nil, err
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	b, err := readBounded(p, maxKubeconfig)
	if err != nil {
		return nil, fmt.Errorf("%s: %s %s: %w", prefix(where), key, p, err)
	}
	return b, nil
}

func prefix(where string) string {
	if where == "" {
		return "the file"
	}
	return where
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	switch n.Tag {
	case "!!bool":
		return "true or false"
	case "!!int", "!!float":
		return "a number"
	case "!!null":
		return "empty"
	}
	return "a string"
}

// errNoFile is a file that does not exist.
var errNoFile = errors.New("no such file")

// readBounded reads a file of at most max bytes.
func readBounded(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, errNoFile
		}
		if errors.Is(err, os.ErrPermission) {
			return nil, errors.New("permission denied")
		}
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("larger than %d MiB", max>>20)
	}
	return b, nil
}

// oneLine folds a message to one line.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// bounded is s on one line, at most max bytes (cut at a rune).
func bounded(s string, max int) string {
	s = OneLine(strings.ToValidUTF8(s, "?"))
	for len(s) > max {
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
	}
	return s
}
