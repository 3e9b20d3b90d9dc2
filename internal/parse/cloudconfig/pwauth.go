package cloudconfig

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// SSHPwAuth reads ssh_pwauth from a cloud-config document with
// cloud-init's rules (cc_set_passwords.handle_ssh_pwauth), so YAML 1.1
// scalars read as cloud-init reads them: util.is_true values ("true",
// "yes", "on", "1" in any case, YAML true) set PasswordAuthentication
// yes, util.is_false values ("false", "no", "off", "0", YAML false) set
// no, and anything else, "unchanged" or an absent key, leaves sshd's
// configuration alone (value nil). A document whose top level is not a
// mapping is ignored, as cloud-init ignores it. raw is the value as
// written. An error is an *Error without a file, on one line.
func SSHPwAuth(b []byte) (value *bool, raw string, err error) {
	d, err := Parse("", b)
	if err != nil {
		var ce *Error
		if !errors.As(err, &ce) {
			return nil, "", err
		}
		if strings.HasPrefix(ce.Msg, "top level is ") {
			return nil, "", nil
		}
		// The YAML library puts the line into its message too; the
		// problem's own line says it once.
		msg := ce.Msg
		if ce.Line > 0 {
			msg = strings.Replace(msg, fmt.Sprintf("line %d: ", ce.Line), "", 1)
		}
		return nil, "", &Error{Line: ce.Line, Msg: msg}
	}
	v, ok := d.Value["ssh_pwauth"]
	if !ok {
		return nil, "", nil
	}
	switch v.(type) {
	case []any, map[string]any:
		return nil, "", &Error{Line: d.Line("ssh_pwauth"), Msg: "ssh_pwauth is not a scalar"}
	}
	raw = rawScalar(b, "ssh_pwauth")
	switch {
	case IsTrue(v):
		t := true
		value = &t
	case IsFalse(v):
		f := false
		value = &f
	}
	return value, raw, nil
}

// rawScalar is the text of top-level key's scalar value as written (an
// alias followed), for showing the setting in the user's own words; the
// last of repeated keys, which is the one that counts.
func rawScalar(b []byte, key string) string {
	var doc yaml.Node
	if yaml.NewDecoder(bytes.NewReader(b)).Decode(&doc) != nil || len(doc.Content) == 0 {
		return ""
	}
	root, raw := doc.Content[0], ""
	for i := 0; root.Kind == yaml.MappingNode && i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != key {
			continue
		}
		v := root.Content[i+1]
		for n := 0; n < 32 && v.Kind == yaml.AliasNode && v.Alias != nil; n++ {
			v = v.Alias
		}
		raw = v.Value
	}
	return raw
}
