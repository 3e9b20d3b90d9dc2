package sshcheck

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// ParsePwAuth reads ssh_pwauth from a cloud-config document with
// cloud-init's rules (cc_set_passwords.handle_ssh_pwauth): util.is_true
// values ("true", "yes", "on", "1" in any case, YAML true) set
// PasswordAuthentication yes, util.is_false values ("false", "no", "off",
// "0", YAML false) set no, and anything else, "unchanged" or an absent
// key, leaves sshd's configuration alone (value nil). raw is the value as
// written.
func ParsePwAuth(b []byte) (value *bool, raw string, err error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, "", nil
		}
		return nil, "", fmt.Errorf("%s", strings.ReplaceAll(strings.TrimPrefix(err.Error(), "yaml: "), "\n", " "))
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, "", nil
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != "ssh_pwauth" {
			continue
		}
		for n := 0; n < 32 && v.Kind == yaml.AliasNode && v.Alias != nil; n++ {
			v = v.Alias
		}
		if v.Kind != yaml.ScalarNode {
			return nil, "", fmt.Errorf("line %d: ssh_pwauth is not a scalar", v.Line)
		}
		raw = v.Value
		// Later duplicates win, as with PyYAML; keep scanning.
		switch strings.ToLower(strings.TrimSpace(v.Value)) {
		case "true", "yes", "on", "1":
			t := true
			value = &t
		case "false", "no", "off", "0":
			f := false
			value = &f
		default:
			value = nil
		}
	}
	return value, raw, nil
}
