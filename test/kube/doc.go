// Package kube tests guestcheck's Kubernetes side against a real API
// server: k8s.io/apiextensions-apiserver on an embedded etcd, both on
// loopback only, serving KubeVirt's and the Prometheus operator's
// published CRD schemas (testdata/README.md names their sources). The
// KubeVirt examples of packaging/examples/kubevirt are created in it with
// unknown fields refused, and guestcheck fleet reads VirtualMachines
// through it.
//
// It is a module of its own so that the Kubernetes dependencies stay out
// of guestcheck's go.mod; make test runs it.
package kube
