package identity

import (
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/identity/appid"
)

// TestInstanceIDShown: a UUID instance-id (KubeVirt's NoCloud one is the
// firmware UUID, which systemd on KVM makes the machine-id) is shown and
// put in detail only as its hash, the one machine_id_hash gives the same
// digits; any other instance-id as it is.
func TestInstanceIDShown(t *testing.T) {
	const uuid = "4C4C4544-0042-3510-8056-B4C04F4D3232"
	h, _ := appid.MachineIDHash("4c4c4544004235108056b4c04f4d3232")
	if got := ShowInstanceID(uuid); got != "hash "+h[:8]+"..." {
		t.Errorf("ShowInstanceID(uuid) = %q", got)
	}
	if got := ShowInstanceID("iid-datasource-none"); got != "iid-datasource-none" {
		t.Errorf("ShowInstanceID(plain) = %q", got)
	}
	d := map[string]string{}
	InstanceIDDetail(d, "instance_id", uuid)
	InstanceIDDetail(d, "previous_instance_id", "i-0123abcd")
	InstanceIDDetail(d, "other", "")
	if len(d) != 2 || d["instance_id_hash"] != h || d["previous_instance_id"] != "i-0123abcd" {
		t.Errorf("detail %v", d)
	}
	for _, v := range []string{"4c4c4544004235108056b4c04f4d3232", "{4c4c4544-0042-3510-8056-b4c04f4d3232}", "4c4c4544-0042-3510-8056-b4c04f4d323", "4c4c4544+0042-3510-8056-b4c04f4d3232"} {
		want := v == "4c4c4544004235108056b4c04f4d3232"
		if got := appid.UUIDShaped(v); got != want {
			t.Errorf("UUIDShaped(%q) = %v, want %v", v, got, want)
		}
	}
}
