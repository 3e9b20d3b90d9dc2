package kubevirt

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/host/fleet"
	"github.com/guestcheck/guestcheck/internal/host/fleet/kubevirt/kubevirtfake"
)

// load starts s and resolves a kubeconfig for it.
func load(t *testing.T, s *kubevirtfake.Server) Config {
	t.Helper()
	srv := s.Start(t)
	c, err := LoadKubeconfig(kubevirtfake.Kubeconfig(t, srv, t.TempDir()), "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestLegacyUUID: the UUID KubeVirt derives from a VM's name
// (CalculateLegacyUUID), as Python's uuid.uuid5 computes it.
func TestLegacyUUID(t *testing.T) {
	if got := LegacyUUID("web-1"); got != "c6d9770f-afd4-5f89-9d1a-28d1dc62c4b9" {
		t.Errorf("LegacyUUID(web-1) = %s", got)
	}
}

// TestList reads VMs and VMIs in pages of one, merges them, and reads
// guestosinfo only for VMIs whose agent is connected.
func TestList(t *testing.T) {
	const shared = "0D5A9F3E-1C2B-4A6D-8E7F-9A0B1C2D3E4F"
	s := &kubevirtfake.Server{
		VMs: []any{
			kubevirtfake.VM("prod", "web-1", shared, "52:54:00:00:00:01"),
			kubevirtfake.VM("prod", "web-1-clone", shared, "52:54:00:00:00:02"),
			kubevirtfake.Stopped(kubevirtfake.VM("dev", "stopped", "")),
		},
		VMIs: []any{
			kubevirtfake.VMI("prod", "web-1", "node-a", shared, true, "52:54:00:00:00:01"),
			kubevirtfake.VMI("prod", "web-1-clone", "node-b", shared, false, "52:54:00:00:00:02"),
			kubevirtfake.VMI("lone", "vmi-only", "node-a", "", true),
		},
		GuestInfo: map[string]any{"prod/web-1": kubevirtfake.GuestInfo("web-1.example", "guest-exec", "guest-file-write")},
	}
	ms, err := List(context.Background(), load(t, s))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, fmt.Sprintf("%s/%s node=%s uuid=%s host=%s macs=%d agent=%s", m.Namespace, m.Name, m.Node, m.Firmware.UUID, m.Hostname, len(m.Interfaces), state(m)))
	}
	want := []string{
		"dev/stopped node= uuid=" + LegacyUUID("stopped") + " host=stopped macs=0 agent=stopped",
		"lone/vmi-only node=node-a uuid= host=vmi-only macs=0 agent=running, guest agent connected, guestosinfo unreadable: GET /apis/subresources.kubevirt.io/v1/namespaces/lone/virtualmachineinstances/vmi-only/guestosinfo: 409 Conflict: VMI does not have guest agent connected",
		"prod/web-1 node=node-a uuid=0d5a9f3e-1c2b-4a6d-8e7f-9a0b1c2d3e4f host=web-1.example macs=1 agent=running, guest agent connected (guest-exec, guest-file-write disabled)",
		"prod/web-1-clone node=node-b uuid=0d5a9f3e-1c2b-4a6d-8e7f-9a0b1c2d3e4f host=web-1-clone macs=1 agent=running, guest agent not connected",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("machines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if ms[2].Agent.Version != "8.2.0" || !reflect.DeepEqual(ms[2].Agent.Disabled, []string{"guest-exec", "guest-file-write"}) {
		t.Errorf("agent %+v", ms[2].Agent)
	}
	if ms[0].Firmware.UUIDFrom == "" || ms[2].Firmware.UUIDFrom != "" {
		t.Errorf("uuid_from: %q, %q", ms[0].Firmware.UUIDFrom, ms[2].Firmware.UUIDFrom)
	}
	pages, info := 0, 0
	for _, q := range s.Queries {
		if strings.Contains(q, "limit=250") {
			pages++
		}
		if strings.HasSuffix(q, "/guestosinfo?") {
			info++
		}
	}
	// 3 VMs and 3 VMIs, one a page; guestosinfo for the two connected.
	if pages != 6 || info != 2 {
		t.Errorf("%d pages, %d guestosinfo: %q", pages, info, s.Queries)
	}
}

// TestListOneNamespace: --namespace asks the namespaced paths.
func TestListOneNamespace(t *testing.T) {
	s := &kubevirtfake.Server{VMs: []any{kubevirtfake.VM("a", "x", ""), kubevirtfake.VM("b", "y", "")}}
	c := load(t, s)
	c.Namespace = "b"
	ms, err := List(context.Background(), c)
	if err != nil || len(ms) != 1 || ms[0].Name != "y" {
		t.Fatalf("%v %+v", err, ms)
	}
	if !strings.HasPrefix(s.Queries[0], "/apis/kubevirt.io/v1/namespaces/b/virtualmachines?") {
		t.Errorf("asked %s", s.Queries[0])
	}
}

// TestListErrors: every failure is one line that says what to do, and
// names the object and field for a wrong type.
func TestListErrors(t *testing.T) {
	vmWith := func(path []string, v any) any {
		o := kubevirtfake.VM("prod", "bad", "").(map[string]any)
		m := o
		for _, k := range path[:len(path)-1] {
			if m[k] == nil {
				m[k] = map[string]any{}
			}
			m = m[k].(map[string]any)
		}
		m[path[len(path)-1]] = v
		return o
	}
	raw := func(v any) []byte { b, _ := json.Marshal(v); return b }
	for name, tc := range map[string]struct {
		s    *kubevirtfake.Server
		want string
	}{
		"forbidden": {&kubevirtfake.Server{Status: http.StatusForbidden, Message: `virtualmachines.kubevirt.io is forbidden: User "system:serviceaccount:ops:guestcheck" cannot list resource "virtualmachines" in API group "kubevirt.io" at the cluster scope`},
			`GET /apis/kubevirt.io/v1/virtualmachines: forbidden (403): virtualmachines.kubevirt.io is forbidden: User "system:serviceaccount:ops:guestcheck" cannot list resource "virtualmachines" in API group "kubevirt.io" at the cluster scope; bind the ClusterRole kubevirt.io:view to the account guestcheck uses (kubectl create clusterrolebinding guestcheck-fleet --clusterrole=kubevirt.io:view --serviceaccount=NAMESPACE:NAME)`},
		"not installed": {&kubevirtfake.Server{Status: http.StatusNotFound, Message: "the server could not find the requested resource"},
			"GET /apis/kubevirt.io/v1/virtualmachines: not found (404): the server could not find the requested resource (is KubeVirt installed? its kubevirt.io/v1 API is not served)"},
		"server error": {&kubevirtfake.Server{Status: http.StatusInternalServerError, Message: "etcdserver:\nleader changed"},
			"GET /apis/kubevirt.io/v1/virtualmachines: 500 Internal Server Error: etcdserver: leader changed"},
		"oversized": {&kubevirtfake.Server{Raw: []byte(`{"items":["` + strings.Repeat("x", maxPage) + `"]}`)},
			"GET /apis/kubevirt.io/v1/virtualmachines: the API server's answer is larger than 32 MiB"},
		"not json": {&kubevirtfake.Server{Raw: []byte("<html>")},
			"GET /apis/kubevirt.io/v1/virtualmachines: the answer is not the JSON expected: not JSON at byte 1"},
		"items not a list": {&kubevirtfake.Server{Raw: []byte(`{"items":{}}`)},
			"GET /apis/kubevirt.io/v1/virtualmachines: the answer is not the JSON expected: items is an object, not an array"},
		"uuid a number": {&kubevirtfake.Server{VMs: []any{vmWith([]string{"spec", "template", "spec", "domain", "firmware", "uuid"}, 42)}},
			"VirtualMachine prod/bad: spec.template.spec.domain.firmware.uuid is a number, not a string"},
		"uuid not a UUID": {&kubevirtfake.Server{VMs: []any{vmWith([]string{"spec", "template", "spec", "domain", "firmware", "uuid"}, "web-1\x1b[2J")}},
			"VirtualMachine prod/bad: spec.template.spec.domain.firmware.uuid is not a UUID"},
		"interfaces an object": {&kubevirtfake.Server{VMs: []any{vmWith([]string{"spec", "template", "spec", "domain", "devices", "interfaces"}, map[string]any{})}},
			"VirtualMachine prod/bad: spec.template.spec.domain.devices.interfaces is an object, not an array"},
		"bad MAC": {&kubevirtfake.Server{VMs: []any{vmWith([]string{"spec", "template", "spec", "domain", "devices", "interfaces"}, []any{map[string]any{"name": "a", "macAddress": "zz"}})}},
			"VirtualMachine prod/bad: spec.template.spec.domain.devices.interfaces[0].macAddress is not a MAC address"},
		"cloud-init a string": {&kubevirtfake.Server{VMs: []any{vmWith([]string{"spec", "template", "spec", "volumes"}, []any{map[string]any{"name": "c", "cloudInitNoCloud": "x"}})}},
			"VirtualMachine prod/bad: spec.template.spec.volumes.cloudInitNoCloud is a string, not an object"},
		"name hostile": {&kubevirtfake.Server{VMs: []any{vmWith([]string{"metadata", "name"}, "a\nb")}},
			`VirtualMachine "prod"/"a?b": not a valid namespace and name`},
		"unnamed and wrong": {&kubevirtfake.Server{Raw: raw(map[string]any{"items": []any{map[string]any{"metadata": 1}}})},
			"VirtualMachine number 1 of the list: metadata is a number, not an object"},
		"more than asked": {&kubevirtfake.Server{Raw: raw(map[string]any{"items": make([]any, pageLimit+1)})},
			"GET /apis/kubevirt.io/v1/virtualmachines: the API server sent more virtualmachines than asked for"},
		"continue repeats": {&kubevirtfake.Server{Raw: raw(map[string]any{"metadata": map[string]any{"continue": "x"}, "items": []any{}})},
			"GET /apis/kubevirt.io/v1/virtualmachines: the API server's continue token repeats or is too long"},
		"expired continue": {&kubevirtfake.Server{Status: http.StatusGone, Message: "too old"},
			"GET /apis/kubevirt.io/v1/virtualmachines: the list changed too much while it was read in pages (410 Gone): survey again"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := List(context.Background(), load(t, tc.s))
			if err == nil || err.Error() != tc.want {
				t.Errorf("error:\n %v\nwant\n %s", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("not one line: %q", err)
			}
		})
	}
}

// TestListHangs: a server that never answers is given up on at the
// caller's deadline.
func TestListHangs(t *testing.T) {
	c := load(t, &kubevirtfake.Server{Hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := List(ctx, c)
	want := "API server " + c.Server + " (kubeconfig " + c.File + ", context test): GET /apis/kubevirt.io/v1/virtualmachines: no answer in time"
	if err == nil || err.Error() != want || time.Since(start) > 5*time.Second {
		t.Errorf("error %v after %s", err, time.Since(start))
	}
}

// TestListWrongToken: a token the server refuses says so.
func TestListWrongToken(t *testing.T) {
	c := load(t, &kubevirtfake.Server{})
	c.Token = "wrong"
	_, err := List(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "401 Unauthorized") {
		t.Errorf("error %v", err)
	}
}

// TestListWrongCA: a server the kubeconfig's CA did not sign is refused.
func TestListWrongCA(t *testing.T) {
	c := load(t, &kubevirtfake.Server{})
	c.CAData = otherCA(t)
	_, err := List(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "not signed by the kubeconfig's certificate-authority") {
		t.Errorf("error %v", err)
	}
}

// otherCA is a self-signed CA certificate that signed nothing.
func otherCA(t *testing.T) []byte {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "other"}, IsCA: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// TestSourceSharedUUID: two VMs on different nodes that share a firmware
// UUID are one collision, found from the API alone.
func TestSourceSharedUUID(t *testing.T) {
	const shared = "0d5a9f3e-1c2b-4a6d-8e7f-9a0b1c2d3e4f"
	s := &kubevirtfake.Server{
		VMs:  []any{kubevirtfake.VM("prod", "web-1", shared, "52:54:00:00:00:01"), kubevirtfake.VM("prod", "web-2", shared, "52:54:00:00:00:02")},
		VMIs: []any{kubevirtfake.VMI("prod", "web-1", "node-a", shared, false), kubevirtfake.VMI("prod", "web-2", "node-b", shared, false)},
	}
	srv := s.Start(t)
	src := Source{Kubeconfig: kubevirtfake.Kubeconfig(t, srv, t.TempDir())}
	ts, errs := fleet.Targets(context.Background(), []fleet.Source{src}, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	r := fleet.Survey(context.Background(), ts, nil, fleet.Options{})
	if len(r.Collisions) != 1 || r.Collisions[0].Item != guestid.ItemFirmwareUUID || r.Collisions[0].Value != shared {
		t.Fatalf("collisions %+v", r.Collisions)
	}
	for _, vm := range r.VMs {
		if vm.Status != fleet.Fail || vm.Host == "" || vm.Report != nil {
			t.Errorf("%s: %s host %q", vm.Name, vm.Status, vm.Host)
		}
	}
}

// TestListEndless: a server that answers every page with no items and a
// new continue token is given up on after maxPages pages.
func TestListEndless(t *testing.T) {
	s := &kubevirtfake.Server{Endless: true}
	_, err := List(context.Background(), load(t, s))
	want := fmt.Sprintf("GET /apis/kubevirt.io/v1/virtualmachines: the API server has not ended the list after %d pages (0 virtualmachines in them): given up", maxPages)
	if err == nil || err.Error() != want {
		t.Errorf("error:\n %v\nwant\n %s", err, want)
	}
	if n := len(s.Queries); n != maxPages {
		t.Errorf("%d requests, want %d", n, maxPages)
	}
}

// TestSourceEndlessSlow: a list that never ends, a page at a time, ends
// at the survey's deadline: the source is unreadable with that reason,
// and the survey's duration counts the time the listing took.
func TestSourceEndlessSlow(t *testing.T) {
	s := &kubevirtfake.Server{Endless: true, PageDelay: 20 * time.Millisecond}
	srv := s.Start(t)
	src := Source{Kubeconfig: kubevirtfake.Kubeconfig(t, srv, t.TempDir())}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	ts, errs := fleet.Targets(ctx, []fleet.Source{src}, nil)
	r := fleet.Survey(ctx, ts, errs, fleet.Options{Start: start})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %s, past the deadline of 600ms", took)
	}
	wantPrefix := "the survey's deadline (--timeout) came while its VMs were listed: API server " + srv.URL + " (kubeconfig " + src.Kubeconfig + ", context test): GET /apis/kubevirt.io/v1/virtualmachines: no answer in time, on page "
	if len(ts) != 0 || len(r.SourceErrors) != 1 || r.SourceErrors[0].Source != "kubevirt" || !strings.HasPrefix(r.SourceErrors[0].Error, wantPrefix) {
		t.Fatalf("targets %d, source errors %+v, want one starting %q", len(ts), r.SourceErrors, wantPrefix)
	}
	// The listing took the whole 600 ms; a few ms of clock rounding aside.
	if r.Status != fleet.Unknown || r.DurationMS < 590 {
		t.Errorf("status %s in %d ms, want unknown in about the 600 ms the listing took", r.Status, r.DurationMS)
	}
	if line := fleet.SummaryLine(r); !strings.Contains(line, "1 source unreadable in ") || strings.HasSuffix(line, " in 0 ms") {
		t.Errorf("summary %q", line)
	}
}

// TestListRefused: a server that refuses the connection is named, with
// the kubeconfig and context that named it.
func TestListRefused(t *testing.T) {
	srv := (&kubevirtfake.Server{}).Start(t)
	kc := kubevirtfake.Kubeconfig(t, srv, t.TempDir())
	srv.Close()
	c, err := LoadKubeconfig(kc, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = List(context.Background(), c)
	want := "API server " + srv.URL + " (kubeconfig " + kc + ", context test): GET /apis/kubevirt.io/v1/virtualmachines: connection refused"
	if err == nil || err.Error() != want {
		t.Errorf("error:\n %v\nwant\n %s", err, want)
	}
}

// TestNoKubeconfig: with no --kubeconfig, no $KUBECONFIG and no
// ~/.kube/config, the error says where it looked and how to name one.
func TestNoKubeconfig(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("KUBECONFIG", "")
	_, err := Source{}.Targets(context.Background())
	want := "no kubeconfig: $KUBECONFIG is not set, nor " + home + "/.kube/config; name the cluster's with --kubeconfig PATH or $KUBECONFIG"
	if err == nil || err.Error() != want {
		t.Errorf("error:\n %v\nwant\n %s", err, want)
	}
	t.Setenv("KUBECONFIG", home+"/a:"+home+"/b")
	_, err = Source{}.Targets(context.Background())
	want = "no kubeconfig: no file of $KUBECONFIG (" + home + "/a:" + home + "/b) exists, nor " + home + "/.kube/config; name the cluster's with --kubeconfig PATH or $KUBECONFIG"
	if err == nil || err.Error() != want {
		t.Errorf("error:\n %v\nwant\n %s", err, want)
	}
	// Named, the file is the one it names.
	_, err = Source{Kubeconfig: home + "/x"}.Targets(context.Background())
	if want := "kubeconfig " + home + "/x: no such file"; err == nil || err.Error() != want {
		t.Errorf("error:\n %v\nwant\n %s", err, want)
	}
}
