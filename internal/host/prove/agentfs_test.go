package prove

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	iofs "io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
	"github.com/guestcheck/guestcheck/internal/host/qga"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// treeAgent answers guest-file-* from the files under root and guest-exec
// of /usr/bin/find by running the host's real find on the same path under
// root: a guest agent whose guest is a directory.
type treeAgent struct {
	root    string
	handles map[int]*os.File
	done    map[int]execDone
	writes  int
	opens   map[string]int // guest-file-open calls by path
}

func newTreeAgent(root string) *treeAgent {
	return &treeAgent{root: root, handles: map[int]*os.File{}, done: map[int]execDone{}, opens: map[string]int{}}
}

type execDone struct {
	out, errOut []byte
	code        int
}

func (a *treeAgent) Exec(ctx context.Context, cmd string, args, result any) error {
	var m map[string]any
	b, _ := json.Marshal(args)
	json.Unmarshal(b, &m)
	var reply any
	switch cmd {
	case "guest-file-open":
		if m["mode"] != "r" {
			a.writes++
			return errors.New("opened for writing")
		}
		a.opens[m["path"].(string)]++
		f, err := os.Open(filepath.Join(a.root, m["path"].(string)))
		if err != nil {
			// qemu-ga's own words (g_strerror of the errno).
			why := "Permission denied"
			if errors.Is(err, iofs.ErrNotExist) {
				why = "No such file or directory"
			}
			return &qga.Error{Class: "GenericError", Desc: "failed to open file '" + m["path"].(string) + "' (mode: 'r'): " + why}
		}
		h := len(a.handles) + 1
		a.handles[h] = f
		reply = h
	case "guest-file-read":
		f := a.handles[int(m["handle"].(float64))]
		buf := make([]byte, int(m["count"].(float64)))
		n, _ := f.Read(buf)
		reply = map[string]any{"count": n, "buf-b64": base64.StdEncoding.EncodeToString(buf[:n]), "eof": n == 0}
	case "guest-file-close":
		a.handles[int(m["handle"].(float64))].Close()
		reply = map[string]any{}
	case "guest-exec":
		if m["path"] != "/usr/bin/find" {
			return &qga.Error{Class: "GenericError", Desc: "not find"}
		}
		argv := m["arg"].([]any)
		var sargs []string
		for i, x := range argv {
			s := x.(string)
			if (i == 0 || i == 1 && argv[0] == "-L") && strings.HasPrefix(s, "/") {
				s = filepath.Join(a.root, s)
			}
			sargs = append(sargs, s)
		}
		c := exec.CommandContext(ctx, "find", sargs...)
		var out, errOut strings.Builder
		c.Stdout, c.Stderr = &out, &errOut
		err := c.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		pid := len(a.done) + 1
		a.done[pid] = execDone{[]byte(out.String()), []byte(errOut.String()), code}
		reply = map[string]int{"pid": pid}
	case "guest-exec-status":
		d := a.done[int(m["pid"].(float64))]
		reply = map[string]any{"exited": true, "exitcode": d.code,
			"out-data": base64.StdEncoding.EncodeToString(d.out), "err-data": base64.StdEncoding.EncodeToString(d.errOut)}
	default:
		return &qga.Error{Class: "CommandNotFound", Desc: cmd}
	}
	b, _ = json.Marshal(reply)
	return json.Unmarshal(b, result)
}

// TestAgentFSAgrees holds the agent's reader to the confined root: over
// one tree, guestid.Read gives the same identity through either, so a
// clone without guestcheck is judged by the same reading as one with it.
func TestAgentFSAgrees(t *testing.T) {
	testenv.Tool(t, "find", "findutils")
	dir := testenv.WriteTree(t, map[string]string{
		"/etc/machine-id":                      "0102030405060708090a0b0c0d0e0f10\n",
		"/etc/hostname":                        "tpl\n",
		"/var/lib/cloud/data/instance-id":      "iid-tpl\n",
		"/etc/ssh/ssh_host_ed25519_key.pub":    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDeVnhMvXvFyN4Ay3mgBr1zUhvmkiFw3eAVTDXrQ0UQc root@tpl\n",
		"/etc/netplan/50-cloud-init.yaml":      "network:\n  version: 2\n  ethernets:\n    eth0:\n      match:\n        macaddress: \"52:54:00:aa:00:01\"\n      dhcp4: true\n",
		"/var/lib/dhcp/dhclient.eth0.leases":   "lease {\n  interface \"eth0\";\n  fixed-address 192.0.2.10;\n  option dhcp-client-identifier 1:52:54:0:aa:0:1;\n}\n",
		"/var/lib/dhcp/dhclient6.leases":       "default-duid \"\\000\\001\\000\\001.\\215\\222\\226RT\\000\\0224V\";\n",
		"/etc/systemd/network/10-eth1.network": "[Match]\nMACAddress=52:54:00:aa:00:02\n\n[Network]\nDHCP=yes\n",
		"/var/lib/NetworkManager/secret_key":   "x",
	})
	root, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	want := guestid.Read(root, false)
	a := newTreeAgent(dir)
	got := guestid.Read(agentFS{ctx: context.Background(), a: a}, false)
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("through the agent:\n%s\nthrough the root:\n%s", g, w)
	}
	if len(want.HostKeys) != 1 || len(want.MACBindings) != 2 || len(want.DHCPClients) < 2 || want.InstanceID != "iid-tpl" {
		t.Errorf("the tree's identity is incomplete, so the agreement proves little: %+v", want)
	}
	if a.writes != 0 {
		t.Errorf("the agent reader opened %d files for writing", a.writes)
	}
	r := agentFS{ctx: context.Background(), a: a}
	if _, err := r.Lstat("/nope"); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("Lstat of a missing path = %v, want ErrNotExist", err)
	}
	if _, err := r.ReadFile("/nope"); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("ReadFile of a missing path = %v, want ErrNotExist", err)
	}
}

// TestAgentIdentity: a clone's identity and the template record's hash
// of its machine-id come from one read of /etc/machine-id.
func TestAgentIdentity(t *testing.T) {
	testenv.Tool(t, "find", "findutils")
	const mid = "0102030405060708090a0b0c0d0e0f10"
	a := newTreeAgent(testenv.WriteTree(t, map[string]string{
		"/etc/machine-id":           mid + "\n",
		"/proc/sys/kernel/hostname": "clone-1\n",
	}))
	id, sealHash := AgentIdentity(context.Background(), a)
	if want := sealrecord.HashID(mid); sealHash != want {
		t.Errorf("record hash %q, want %q", sealHash, want)
	}
	if want, _ := guestid.MachineIDHash(mid); id.MachineIDHash != want || id.Hostname != "clone-1" {
		t.Errorf("identity %+v, want machine-id hash %s and hostname clone-1", id, want)
	}
	if n := a.opens["/etc/machine-id"]; n != 1 {
		t.Errorf("/etc/machine-id opened %d times, want once", n)
	}
	if b, _ := json.Marshal(id); strings.Contains(string(b), mid) || strings.Contains(string(b), sealHash.LegacySHA256) {
		t.Errorf("the machine-id or its record hash is in the identity: %s", b)
	}
	if _, h := AgentIdentity(context.Background(), newTreeAgent(testenv.WriteTree(t, map[string]string{"/etc/machine-id": ""}))); h != (sealrecord.IDHash{}) {
		t.Errorf("an empty machine-id has record hash %q", h)
	}
}

// downAgent is an agent that stopped answering.
type downAgent struct{}

func (downAgent) Exec(context.Context, string, any, any) error {
	return errors.New("qga: guest-file-open: EOF")
}

// TestAgentFSExists: a file is there when the agent opens and reads it,
// whatever its size; one it refuses is not; an agent that does not answer
// is an error, not a missing file.
func TestAgentFSExists(t *testing.T) {
	r := agentFS{ctx: context.Background(), a: newTreeAgent(testenv.WriteTree(t, map[string]string{
		"/usr/bin/cloud-init": "#!/usr/bin/python3\n", "/one": "x", "/empty": "",
	}))}
	for p, want := range map[string]bool{"/usr/bin/cloud-init": true, "/one": true, "/empty": true, "/nope": false} {
		if got, err := r.exists(p); got != want || err != nil {
			t.Errorf("exists(%s) = %v, %v; want %v", p, got, err, want)
		}
	}
	if ok, err := (agentFS{ctx: context.Background(), a: downAgent{}}).exists("/one"); ok || err == nil {
		t.Errorf("exists through an agent that does not answer = %v, %v; want an error", ok, err)
	}
}

func FuzzParseFind(f *testing.F) {
	f.Add([]byte("f 644 12 0 0 1 1700000000.5 1700000000.25 machine id\x00d 755 4096 0 0 2 1.0 2.0 ssh\x00"))
	f.Add([]byte("x 1 2 3 4 5 6 7 n\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		es, err := parseFind(b)
		if err == nil {
			for _, e := range es {
				if e.Kind == 0 || strings.Contains(e.Name, "\x00") {
					t.Fatalf("accepted entry %+v", e)
				}
			}
		}
	})
}
