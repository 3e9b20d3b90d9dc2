// Package kubevirtfake is a fake Kubernetes API server with KubeVirt's
// paths, for tests: it lists VirtualMachines and VirtualMachineInstances
// in pages and serves the guestosinfo subresource over TLS on loopback,
// with switches for the failures a real server can answer with. It is
// not KubeVirt's fake clientset, which returns empty guest info.
package kubevirtfake

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Token is the bearer token the server accepts.
const Token = "guestcheck-test-token"

// Server is the fake API server's content and behaviour.
type Server struct {
	// VMs and VMIs are the objects listed, as JSON-ready values.
	VMs, VMIs []any
	// GuestInfo is the guestosinfo answer per "namespace/name".
	GuestInfo map[string]any
	// PageSize is the objects per page (default 1, so that every list
	// is paged).
	PageSize int
	// Status, when set, is answered to every request with an error
	// Status object carrying Message.
	Status  int
	Message string
	// Raw, when set, is answered to the lists instead of the objects.
	Raw []byte
	// Hang, when set, answers nothing until the client goes away.
	Hang bool
	// Endless, when set, answers every page of a list with no items
	// and a new continue token, after PageDelay: a list that never
	// ends.
	Endless   bool
	PageDelay time.Duration

	mu sync.Mutex
	// Queries records each request's path and query, for tests.
	Queries []string
}

// Start serves s over TLS on loopback until the test ends.
func (s *Server) Start(t testing.TB) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	// A client refusing the certificate is a test's point, not noise.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.Queries = append(s.Queries, r.URL.Path+"?"+r.URL.RawQuery)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if s.Hang {
		<-r.Context().Done()
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+Token {
		status(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	if s.Status != 0 {
		status(w, s.Status, s.Message)
		return
	}
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, "/apis/subresources.kubevirt.io/v1/namespaces/") && strings.HasSuffix(p, "/guestosinfo"):
		parts := strings.Split(p, "/")
		gi, ok := s.GuestInfo[parts[5]+"/"+parts[7]]
		if !ok {
			status(w, http.StatusConflict, "VMI does not have guest agent connected")
			return
		}
		json.NewEncoder(w).Encode(gi)
	case strings.HasSuffix(p, "/virtualmachines"):
		s.list(w, r, s.VMs)
	case strings.HasSuffix(p, "/virtualmachineinstances"):
		s.list(w, r, s.VMIs)
	default:
		status(w, http.StatusNotFound, "the server could not find the requested resource")
	}
}

// list answers one page; continue is the next object's index.
func (s *Server) list(w http.ResponseWriter, r *http.Request, objs []any) {
	if s.Raw != nil {
		w.Write(s.Raw)
		return
	}
	if s.Endless {
		select {
		case <-time.After(s.PageDelay):
		case <-r.Context().Done():
			return
		}
		next, _ := strconv.Atoi(r.URL.Query().Get("continue"))
		meta := map[string]any{"resourceVersion": "1", "continue": strconv.Itoa(next + 1)}
		json.NewEncoder(w).Encode(map[string]any{"apiVersion": "kubevirt.io/v1", "kind": "List", "metadata": meta, "items": []any{}})
		return
	}
	if ns, ok := strings.CutPrefix(r.URL.Path, "/apis/kubevirt.io/v1/namespaces/"); ok {
		ns, _, _ = strings.Cut(ns, "/")
		var in []any
		for _, o := range objs {
			if o.(map[string]any)["metadata"].(map[string]any)["namespace"] == ns {
				in = append(in, o)
			}
		}
		objs = in
	}
	size := s.PageSize
	if size <= 0 {
		size = 1
	}
	if l, _ := strconv.Atoi(r.URL.Query().Get("limit")); l > 0 && l < size {
		size = l
	}
	from, _ := strconv.Atoi(r.URL.Query().Get("continue"))
	to := min(from+size, len(objs))
	meta := map[string]any{"resourceVersion": "1"}
	if to < len(objs) {
		meta["continue"] = strconv.Itoa(to)
	}
	json.NewEncoder(w).Encode(map[string]any{"apiVersion": "kubevirt.io/v1", "kind": "List", "metadata": meta, "items": objs[from:to]})
}

func status(w http.ResponseWriter, code int, msg string) {
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": msg, "code": code})
}

// Kubeconfig writes a kubeconfig for srv into dir, with its CA and the
// token, and returns its path.
func Kubeconfig(t testing.TB, srv *httptest.Server, dir string) string {
	t.Helper()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: guestcheck
  user:
    token: %s
contexts:
- name: test
  context:
    cluster: test
    user: guestcheck
current-context: test
`, srv.URL, base64.StdEncoding.EncodeToString(ca), Token)
	p := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// VM is a VirtualMachine object with a firmware UUID (none when empty),
// a cloud-init NoCloud volume and NICs with the given MACs.
func VM(ns, name, uuid string, macs ...string) any {
	spec := vmiSpec(uuid, macs)
	return map[string]any{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
		"metadata": map[string]any{"name": name, "namespace": ns, "uid": "uid-" + name},
		"spec":     map[string]any{"runStrategy": "Always", "template": map[string]any{"spec": spec}},
		"status":   map[string]any{"printableStatus": "Running"}}
}

// Stopped marks a VM object from VM as stopped.
func Stopped(vm any) any {
	vm.(map[string]any)["status"] = map[string]any{"printableStatus": "Stopped"}
	return vm
}

// VMI is a running VirtualMachineInstance on node; agent sets its
// AgentConnected condition.
func VMI(ns, name, node, uuid string, agent bool, macs ...string) any {
	var ifs []any
	for i, m := range macs {
		ifs = append(ifs, map[string]any{"name": "nic" + strconv.Itoa(i), "mac": m, "ipAddress": "10.0.0." + strconv.Itoa(i+10)})
	}
	conds := []any{map[string]any{"type": "Ready", "status": "True"}}
	if agent {
		conds = append(conds, map[string]any{"type": "AgentConnected", "status": "True"})
	}
	return map[string]any{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     vmiSpec(uuid, macs),
		"status":   map[string]any{"nodeName": node, "phase": "Running", "interfaces": ifs, "conditions": conds}}
}

func vmiSpec(uuid string, macs []string) map[string]any {
	var ifs []any
	for i, m := range macs {
		ifs = append(ifs, map[string]any{"name": "nic" + strconv.Itoa(i), "macAddress": m, "bridge": map[string]any{}})
	}
	domain := map[string]any{"devices": map[string]any{"interfaces": ifs}}
	if uuid != "" {
		domain["firmware"] = map[string]any{"uuid": uuid}
	}
	return map[string]any{"domain": domain, "volumes": []any{
		map[string]any{"name": "cloudinitdisk", "cloudInitNoCloud": map[string]any{"userData": "#cloud-config\npassword: secret\n"}}}}
}

// GuestInfo is a guestosinfo answer: a hostname and the agent's
// commands, those in disabled not enabled.
func GuestInfo(hostname string, disabled ...string) any {
	var cmds []any
	for _, c := range []string{"guest-ping", "guest-info", "guest-exec", "guest-exec-status", "guest-file-open", "guest-file-write", "guest-get-host-name"} {
		en := true
		for _, d := range disabled {
			en = en && d != c
		}
		// KubeVirt omits enabled when false (omitempty).
		cmd := map[string]any{"name": c}
		if en {
			cmd["enabled"] = true
		}
		cmds = append(cmds, cmd)
	}
	return map[string]any{"guestAgentVersion": "8.2.0", "hostname": hostname, "supportedCommands": cmds,
		"os": map[string]any{"name": "Debian GNU/Linux", "version": "12"}, "timezone": "UTC, 0"}
}
