//go:build vmtest

package vm

import (
	"fmt"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"
)

// v1SubnetKeys and v1RouteKeys are the properties cloud-init 25.1's
// network-config v1 schema allows on a subnet and on a route
// (schema-network-config-v1.json, config_type_subnet and
// anyOf_type_route; both have additionalProperties: false).
var (
	v1SubnetKeys = []string{"type", "control", "address", "netmask", "broadcast", "gateway",
		"dns_nameservers", "dns_search", "routes", "ipv4", "ipv6"}
	v1RouteKeys = []string{"type", "network", "destination", "netmask", "gateway", "metric"}
)

// TestNetworkConfigSchema keeps the seeds' network-config within
// cloud-init 25.1's v1 schema: an unknown key makes cloud-init 25.1 report
// "network-config-v1 failed schema validation!" and end degraded. It needs
// no VM.
func TestNetworkConfigSchema(t *testing.T) {
	var doc struct {
		Version int `yaml:"version"`
		Config  []struct {
			Subnets []map[string]any `yaml:"subnets"`
		} `yaml:"config"`
	}
	src := networkConfig([]nic{mgmtNIC, secondNIC})
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	if doc.Version != 1 || len(doc.Config) != 2 {
		t.Fatalf("want a v1 config with 2 NICs:\n%s", src)
	}
	metrics := map[int]bool{}
	for i, c := range doc.Config {
		for j, sn := range c.Subnets {
			for k := range sn {
				if !slices.Contains(v1SubnetKeys, k) {
					t.Errorf("config.%d.subnets.%d: %q is not a v1 subnet property", i, j, k)
				}
			}
			routes, _ := sn["routes"].([]any)
			for r, rt := range routes {
				m, _ := rt.(map[string]any)
				for k := range m {
					if !slices.Contains(v1RouteKeys, k) {
						t.Errorf("config.%d.subnets.%d.routes.%d: %q is not a v1 route property", i, j, r, k)
					}
				}
				if m["network"] == "0.0.0.0/0" && m["gateway"] != nil {
					metrics[m["metric"].(int)] = true
				}
			}
		}
	}
	// The dual-NIC takeover scenario needs both default routes with their
	// own metric.
	if want := map[int]bool{mgmtNIC.Metric: true, secondNIC.Metric: true}; fmt.Sprint(metrics) != fmt.Sprint(want) {
		t.Errorf("default-route metrics %v, want %v:\n%s", metrics, want, src)
	}
}
