package authkeys

import (
	"strings"
	"testing"
)

const ops = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHG1XIjDsdEDptAMfK4JtCseWBzhFeg1Yz4tNWbbkkUD ops@example"

func TestParseLine(t *testing.T) {
	k, err := ParseLine(ops)
	if err != nil {
		t.Fatal(err)
	}
	// ssh-keygen -lf on this key prints this fingerprint.
	if got := k.Fingerprint(); got != "SHA256:O7tpMTrmjHqJ5qH4LP47BKQuoW/FpVk1uCH97iH6Btk" {
		t.Errorf("fingerprint = %s", got)
	}
	withOpts := `no-port-forwarding,command="echo 'Please login as the user \"NONE\" rather than root';echo;sleep 10;exit 142" ` + ops
	k2, err := ParseLine(withOpts)
	if err != nil || !k.Same(k2) || !strings.HasPrefix(k2.Options, "no-port-forwarding,command=") || k2.Comment != "ops@example" {
		t.Errorf("with options: %+v %v", k2, err)
	}
	if strings.Contains(k.Describe(), "AAAA") {
		t.Errorf("Describe shows the key body: %s", k.Describe())
	}
	for _, bad := range []string{"", "# c", "garbage", "ssh-ed25519 !!!"} {
		if _, err := ParseLine(bad); err == nil {
			t.Errorf("ParseLine(%q) succeeded", bad)
		}
	}
}

func TestParse(t *testing.T) {
	ks, probs := Parse([]byte("# keys\n" + ops + "\n\nssh-rsa notbase64!\n"))
	if len(ks) != 1 || ks[0].Line != 2 || len(probs) != 1 || probs[0].Line != 4 {
		t.Errorf("keys %+v problems %+v", ks, probs)
	}
}

func FuzzParseLine(f *testing.F) {
	f.Add(ops)
	f.Add(`a="b c" ` + ops)
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseLine(s)
		if err == nil && (k.Type == "" || len(k.Blob) == 0) {
			t.Fatalf("empty key from %q", s)
		}
	})
}
