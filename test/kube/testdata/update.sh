#!/bin/sh
# Re-extract the published CRD schemas this test serves (README.md names the
# sources). Run from this directory with a KubeVirt and a
# prometheus-operator checkout: ./update.sh KUBEVIRT_DIR PROMOP_DIR
set -eu
kv=$1 po=$2
# validations_generated.go maps each CRD's singular name to its
# openAPIV3Schema YAML in a Go raw string; take the two that guestcheck
# fleet reads, byte for byte.
for name in virtualmachine virtualmachineinstance; do
	awk -v key="	\"$name\": \`" '
		index($0, key) == 1 { on = 1; sub(/^[^`]*`/, ""); }
		on && /^`,$/ { exit }
		on { print }
	' "$kv/pkg/virt-operator/resource/generate/components/validations_generated.go" | gzip -9n > "kubevirt-$name.schema.yaml.gz"
done
gzip -9nc "$po/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml" > monitoring.coreos.com_servicemonitors.yaml.gz
