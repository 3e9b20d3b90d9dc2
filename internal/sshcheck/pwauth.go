package sshcheck

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"sync"

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
		val := strings.ToLower(strings.TrimSpace(v.Value))
		if v.Style == 0 || (v.Style == yaml.TaggedStyle && v.ShortTag() == "!!int") {
			// PyYAML reads plain 01, 0x1 or +1 as the integer 1, which
			// str() turns into "1".
			if n, ok := yaml11Int(v.Value); ok {
				val = n
			}
		}
		// Later duplicates win, as with PyYAML; keep scanning.
		switch val {
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

// yaml11Int reads a plain scalar the way PyYAML's int resolver does (YAML
// 1.1: sign, 0b binary, 0 octal, 0x hex, underscores, base 60) and returns
// its decimal form.
func yaml11Int(s string) (string, bool) {
	if !int11().MatchString(s) {
		return "", false
	}
	neg := false
	switch s[0] {
	case '-':
		neg, s = true, s[1:]
	case '+':
		s = s[1:]
	}
	s = strings.ReplaceAll(s, "_", "")
	var n *big.Int
	var ok bool
	switch {
	case s == "0":
		n, ok = big.NewInt(0), true
	case strings.HasPrefix(s, "0b"):
		n, ok = new(big.Int).SetString(s[2:], 2)
	case strings.HasPrefix(s, "0x"):
		n, ok = new(big.Int).SetString(s[2:], 16)
	case strings.HasPrefix(s, "0"):
		n, ok = new(big.Int).SetString(s[1:], 8)
	case strings.Contains(s, ":"):
		n, ok = big.NewInt(0), true
		for _, p := range strings.Split(s, ":") {
			d, err := strconv.Atoi(p)
			if err != nil {
				return "", false
			}
			n.Mul(n, big.NewInt(60)).Add(n, big.NewInt(int64(d)))
		}
	default:
		n, ok = new(big.Int).SetString(s, 10)
	}
	if !ok {
		return "", false
	}
	if neg {
		n.Neg(n)
	}
	return n.String(), true
}

// int11 is PyYAML's implicit resolver for tag:yaml.org,2002:int.
var int11 = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
})
