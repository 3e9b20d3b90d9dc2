package kube

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/guestcheck/guestcheck/test/examples"
)

// served are the kinds this API server serves, by apiVersion and kind.
var served = map[string]schema.GroupVersionResource{
	"kubevirt.io/v1 VirtualMachine":           {Group: "kubevirt.io", Version: "v1", Resource: "virtualmachines"},
	"kubevirt.io/v1 VirtualMachineInstance":   {Group: "kubevirt.io", Version: "v1", Resource: "virtualmachineinstances"},
	"monitoring.coreos.com/v1 ServiceMonitor": {Group: "monitoring.coreos.com", Version: "v1", Resource: "servicemonitors"},
}

// kubeExamples are the Kubernetes objects among the repository's
// examples, decoded, by file.
func kubeExamples(t *testing.T) map[string]*unstructured.Unstructured {
	t.Helper()
	ex, err := examples.Walk(repo)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*unstructured.Unstructured{}
	for _, e := range ex {
		if e.Kind != examples.Kubernetes {
			continue
		}
		var m map[string]any
		if err := yaml.UnmarshalStrict([]byte(e.Text), &m); err != nil {
			t.Fatalf("%s: %v", e.Where, err)
		}
		out[e.Where] = &unstructured.Unstructured{Object: m}
	}
	if len(out) == 0 {
		t.Fatal("no Kubernetes object among the examples: the walk is broken")
	}
	return out
}

// create creates u in namespace ns as kubectl create --validate=strict
// does: server-side, an unknown or duplicate field an error.
func create(ns string, u *unstructured.Unstructured) error {
	gvr, ok := served[u.GetAPIVersion()+" "+u.GetKind()]
	if !ok {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Message: u.GetAPIVersion() + " " + u.GetKind() + " is not served here"}}
	}
	_, err := server.dynamic.Resource(gvr).Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{FieldValidation: "Strict"})
	return err
}

// TestExamples creates every Kubernetes example in the API server, which
// validates it against the published CRD schema (KubeVirt's, the
// Prometheus operator's) and refuses unknown fields. A core object (the
// Service) is not served by an apiextensions-apiserver: it is decoded
// strictly into k8s.io/api's type instead, which catches an unknown or
// misspelt field but not what only kube-apiserver's validation knows.
func TestExamples(t *testing.T) {
	for where, u := range kubeExamples(t) {
		switch key := u.GetAPIVersion() + " " + u.GetKind(); {
		case key == "v1 Config":
			// A kubeconfig (docs/fleet.md's for --kubevirt): a file, not
			// an API object, with placeholder credentials; its fields are
			// fleet's to read, tested there.
			t.Logf("%s: a kubeconfig, not created", where)
		case key == "v1 Service":
			var svc corev1.Service
			if err := strictDecode(u, &svc); err != nil {
				t.Errorf("%s: %v", where, err)
			}
		default:
			if err := create("examples", u); err != nil {
				t.Errorf("%s: the API server refused it: %v", where, err)
			} else {
				t.Logf("%s: %s created", where, key)
			}
		}
	}
}

// strictDecode decodes u into v, refusing fields v does not have.
func strictDecode(u *unstructured.Unstructured, v any) error {
	b, err := yaml.Marshal(u.Object)
	if err != nil {
		return err
	}
	return yaml.UnmarshalStrict(b, v)
}

// TestExamplesRejectWrongField: the server refuses each example with one
// field misspelt or of the wrong type, so that TestExamples can fail.
func TestExamplesRejectWrongField(t *testing.T) {
	objs := kubeExamples(t)
	for i, tc := range []struct {
		file  string
		field []string
		value any
		want  string
	}{
		{"virtualmachine.yaml", []string{"spec", "template", "spec", "readinessProbe", "exec", "comand"}, []any{"/usr/bin/guestcheck"}, `unknown field "spec.template.spec.readinessProbe.exec.comand"`},
		{"virtualmachine.yaml", []string{"spec", "template", "spec", "readinessProbe", "periodSeconds"}, "10s", "spec.template.spec.readinessProbe.periodSeconds in body must be of type integer"},
		{"virtualmachine.yaml", []string{"spec", "runStrategy"}, int64(1), "spec.runStrategy in body must be of type string"},
		{"servicemonitor.yaml", []string{"spec", "endpoints"}, []any{map[string]any{"prot": "metrics"}}, `unknown field "spec.endpoints[0].prot"`},
		{"servicemonitor.yaml", []string{"spec", "endpoints"}, []any{map[string]any{"port": "metrics", "interval": "1 minute"}}, "spec.endpoints[0].interval in body should match"},
	} {
		u := objs["packaging/examples/kubevirt/"+tc.file]
		if u == nil {
			t.Fatalf("no example %s", tc.file)
		}
		u = u.DeepCopy()
		u.SetName(fmt.Sprintf("wrong-%d", i))
		if err := unstructured.SetNestedField(u.Object, tc.value, tc.field...); err != nil {
			t.Fatal(err)
		}
		err := create("wrong", u)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s with %s = %v: got %v, want an error naming %s", tc.file, strings.Join(tc.field, "."), tc.value, err, tc.want)
		} else {
			t.Logf("%s with %s = %v: refused: %v", tc.file, strings.Join(tc.field, "."), tc.value, err)
		}
	}
	var svc corev1.Service
	if err := strictDecode(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service", "spec": map[string]any{"selectr": map[string]any{}}}}, &svc); err == nil {
		t.Error("a Service with spec.selectr decodes: the Service's check proves nothing")
	}
}

// TestExamplesAgree holds the path from the guest to Prometheus
// together: the Service selects the VM template's pod on node_exporter's
// port, the ServiceMonitor selects the Service and scrapes that port by
// name, the guest installs node_exporter and enables the textfile timer
// the package ships, and the probe is docs/probe.md's.
func TestExamplesAgree(t *testing.T) {
	objs := kubeExamples(t)
	dir := "packaging/examples/kubevirt/"
	vm, svcU, sm := objs[dir+"virtualmachine.yaml"], objs[dir+"service.yaml"], objs[dir+"servicemonitor.yaml"]
	if vm == nil || svcU == nil || sm == nil {
		t.Fatalf("missing one of %s{virtualmachine,service,servicemonitor}.yaml", dir)
	}
	var svc corev1.Service
	if err := strictDecode(svcU, &svc); err != nil {
		t.Fatal(err)
	}
	podLabels, _, _ := unstructured.NestedStringMap(vm.Object, "spec", "template", "metadata", "labels")
	if len(svc.Spec.Selector) == 0 || !subset(svc.Spec.Selector, podLabels) {
		t.Errorf("the Service's selector %v does not select the VM template's labels %v", svc.Spec.Selector, podLabels)
	}
	// The pod's readiness is guestcheck's verdict: a failing guest must
	// stay a scrape target.
	if !svc.Spec.PublishNotReadyAddresses {
		t.Error("the Service does not publish not-ready addresses: a VM whose guestcheck fails would drop out of Prometheus's targets")
	}
	smLabels, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	if len(smLabels) == 0 || !subset(smLabels, svc.Labels) {
		t.Errorf("the ServiceMonitor's selector %v does not select the Service's labels %v", smLabels, svc.Labels)
	}
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(endpoints) == 0 {
		t.Fatal("the ServiceMonitor has no endpoints")
	}
	for _, e := range endpoints {
		name, _ := e.(map[string]any)["port"].(string)
		i := slices.IndexFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == name })
		if i < 0 {
			t.Errorf("the ServiceMonitor scrapes port %q, which the Service does not name", name)
		} else if p := svc.Spec.Ports[i]; p.TargetPort.IntValue() != 9100 {
			t.Errorf("the Service's port %q goes to %s, not node_exporter's 9100", name, p.TargetPort.String())
		}
	}

	ex, err := examples.Walk(repo)
	if err != nil {
		t.Fatal(err)
	}
	var userData string
	for _, e := range ex {
		if strings.HasPrefix(e.Where, dir+"virtualmachine.yaml:") && e.Kind == examples.CloudConfig {
			userData = e.Text
		}
	}
	var cc struct {
		Packages   []string `json:"packages"`
		WriteFiles []struct {
			Path, Content string
		} `json:"write_files"`
		Runcmd [][]string `json:"runcmd"`
	}
	if err := yaml.Unmarshal([]byte(userData), &cc); err != nil {
		t.Fatalf("the VM's user-data: %v", err)
	}
	if !slices.Contains(cc.Packages, "prometheus-node-exporter") {
		t.Errorf("the VM's user-data does not install prometheus-node-exporter: %v", cc.Packages)
	}
	if !slices.ContainsFunc(cc.Runcmd, func(c []string) bool {
		return slices.Equal(c, []string{"systemctl", "enable", "--now", "guestcheck-textfile.timer"})
	}) {
		t.Errorf("the VM's user-data does not enable guestcheck-textfile.timer: %v", cc.Runcmd)
	}
	if _, err := os.Stat(filepath.Join(repo, "packaging/usr/lib/systemd/system/guestcheck-textfile.timer")); err != nil {
		t.Error(err)
	}
	// The guestcheck.yaml the user-data writes passes the real
	// check-config.
	n := 0
	for _, f := range cc.WriteFiles {
		if f.Path != "/etc/guestcheck/guestcheck.yaml" {
			continue
		}
		n++
		p := filepath.Join(t.TempDir(), "guestcheck.yaml")
		if err := os.WriteFile(p, []byte(f.Content), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(guestcheckBin, "check-config", p).CombinedOutput(); err != nil {
			t.Errorf("guestcheck check-config on the VM's guestcheck.yaml: %v\n%s", err, out)
		}
	}
	if n == 0 {
		t.Error("the VM's user-data writes no /etc/guestcheck/guestcheck.yaml: without probe: the boot run does not check that exec probes can run")
	}

	// docs/probe.md's readiness probe, word for word.
	b, err := os.ReadFile(filepath.Join(repo, "docs/probe.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := examples.Blocks("docs/probe.md", string(b))
	got := probeCommand(t, vm)
	found := false
	for _, e := range doc {
		var v struct {
			Spec struct {
				Template struct {
					Spec struct {
						ReadinessProbe struct {
							Exec struct{ Command []string } `json:"exec"`
						} `json:"readinessProbe"`
					} `json:"spec"`
				} `json:"template"`
			} `json:"spec"`
		}
		if yaml.Unmarshal([]byte(e.Text), &v) == nil && slices.Equal(v.Spec.Template.Spec.ReadinessProbe.Exec.Command, got) {
			found = true
		}
	}
	if !found {
		t.Errorf("the VM's readiness probe %q is not docs/probe.md's VirtualMachine's", got)
	}
}

func subset(sub, of map[string]string) bool {
	for k, v := range sub {
		if w, ok := of[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// probeCommand is the example VM's readiness probe command.
func probeCommand(t *testing.T, vm *unstructured.Unstructured) []string {
	t.Helper()
	cmd, _, err := unstructured.NestedStringSlice(vm.Object, "spec", "template", "spec", "readinessProbe", "exec", "command")
	if err != nil || len(cmd) == 0 {
		t.Fatalf("the example VM has no readiness exec probe (%v)", err)
	}
	return cmd
}

// TestProbeCommand runs the example VM's readiness probe command with the
// guestcheck built here, on this machine (the probe only reads): whatever
// this machine's verdict, guestcheck must take the command line, which it
// answers with "usage error" when it does not. The packaged path is the
// one the command names.
func TestProbeCommand(t *testing.T) {
	cmd := probeCommand(t, kubeExamples(t)["packaging/examples/kubevirt/virtualmachine.yaml"])
	if cmd[0] != "/usr/bin/guestcheck" {
		t.Errorf("the probe runs %s; the packages install /usr/bin/guestcheck", cmd[0])
	}
	verdict := func(args []string) (string, bool) {
		out, _ := exec.Command(guestcheckBin, args...).Output()
		line := strings.TrimSuffix(string(out), "\n")
		ok := !strings.Contains(line, "\n") &&
			(strings.HasPrefix(line, "guestcheck probe: READY ") || strings.HasPrefix(line, "guestcheck probe: NOT READY ")) &&
			!strings.Contains(line, "usage error") && !strings.Contains(line, "config error")
		return line, ok
	}
	if line, ok := verdict(cmd[1:]); !ok {
		t.Errorf("%s %q: %q is not a verdict", guestcheckBin, cmd[1:], line)
	} else {
		t.Logf("%q: %s", cmd, line)
	}
	if line, ok := verdict(append(slices.Clone(cmd[1:]), "--bogus")); ok {
		t.Errorf("an unknown option gave a verdict, %q: the check proves nothing", line)
	}
}
