package fleet

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/digitalocean/go-libvirt"
	"github.com/google/go-cmp/cmp"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/host/fleet/fleettest"
	"github.com/guestcheck/guestcheck/internal/host/qga"
	"github.com/guestcheck/guestcheck/internal/host/qga/qgafake"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// domXML is a running domain's XML as libvirt 9 writes it, with the
// agent channel in state (none: no channel) and NICs.
func domXML(name, state string, nics ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<domain type='qemu' id='1'>\n  <name>%s</name>\n  <devices>\n", name)
	b.WriteString("    <channel type='unix'><source mode='bind' path='/run/x'/><target type='virtio' name='org.qemu.guest_agent.1'/></channel>\n")
	if state != "none" {
		st := ""
		if state != "" {
			st = fmt.Sprintf(" state='%s'", state)
		}
		fmt.Fprintf(&b, "    <channel type='unix'>\n      <source mode='bind' path='/var/lib/libvirt/qemu/channel/target/domain-1-%s/org.qemu.guest_agent.0'/>\n      <target type='virtio' name='org.qemu.guest_agent.0'%s/>\n      <alias name='channel0'/>\n    </channel>\n", name, st)
	}
	for _, n := range nics {
		b.WriteString("    " + n + "\n")
	}
	b.WriteString("  </devices>\n</domain>\n")
	return b.String()
}

func TestParseDomainXML(t *testing.T) {
	for _, tc := range []struct {
		name, xml string
		want      domainInfo
		err       string
	}{
		{
			name: "connected, every kind of NIC",
			xml: domXML("a", "connected",
				`<interface type='network'><mac address='52:54:00:AA:00:01'/><source network='default' portid='x' bridge='virbr0'/></interface>`,
				`<interface type='network'><mac address='52:54:00:aa:00:02'/><source network='isolated'/></interface>`,
				`<interface type='bridge'><mac address='52:54:00:aa:00:03'/><source bridge='virbr0'/></interface>`,
				`<interface type='direct'><mac address='52:54:00:aa:00:04'/><source dev='eth0' mode='bridge'/></interface>`,
				`<interface type='user'><mac address='52:54:00:aa:00:05'/></interface>`,
				`<interface type='user'><mac address='not-a-mac'/></interface>`,
				`<interface type='ethernet'><target dev='tap0'/></interface>`),
			want: domainInfo{Name: "a", Networks: map[string]string{
				"52:54:00:aa:00:01": "bridge virbr0",
				"52:54:00:aa:00:02": "network isolated",
				"52:54:00:aa:00:03": "bridge virbr0",
				"52:54:00:aa:00:04": "direct eth0",
				"52:54:00:aa:00:05": "user interface of domain a",
			}},
		},
		{name: "disconnected", xml: domXML("b", "disconnected"), want: domainInfo{Name: "b", Unreachable: reasonNotConnected}},
		{name: "state not tracked", xml: domXML("c", ""), want: domainInfo{Name: "c"}},
		{name: "no channel, another port", xml: domXML("d", "none"), want: domainInfo{Name: "d", Unreachable: reasonNoChannel}},
		{name: "not XML", xml: "{", err: "domain XML"},
		{name: "another root", xml: "<network><name>x</name></network>", err: "domain XML"},
		{name: "no name", xml: "<domain><devices/></domain>", err: "no name"},
		{name: "too large", xml: "<domain>" + strings.Repeat(" ", maxDomainXML) + "</domain>", err: "more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseDomainXML(tc.want.Name, []byte(tc.xml))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func FuzzParseDomainXML(f *testing.F) {
	f.Add([]byte(domXML("a", "connected", `<interface type='network'><mac address='52:54:00:aa:00:01'/><source network='default'/></interface>`)))
	f.Add([]byte(domXML("b", "disconnected")))
	f.Add([]byte("<domain><name>x</name><devices><interface type='user'><mac address='52:54:00:00:00:01'/></interface></devices></domain>"))
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := parseDomainXML("fuzz", b)
		if err != nil {
			return
		}
		if info.Name == "" {
			t.Fatal("a parsed domain has no name")
		}
		switch info.Unreachable {
		case "", reasonNoChannel, reasonNotConnected:
		default:
			t.Fatalf("Unreachable = %q", info.Unreachable)
		}
		for mac, label := range info.Networks {
			hw, err := net.ParseMAC(mac)
			if err != nil || hw.String() != mac || label == "" {
				t.Fatalf("Networks[%q] = %q", mac, label)
			}
		}
	})
}

func TestParseLibvirtURI(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ uri, socket, err string }{
		{uri: "qemu:///system", socket: filepath.Join(dir, "libvirt-sock")},
		{uri: "qemu+unix:///system", socket: filepath.Join(dir, "libvirt-sock")},
		{uri: "qemu+unix:///system?socket=/tmp/x/sock", socket: "/tmp/x/sock"},
		{uri: "qemu:///session", err: "only the local system driver"},
		{uri: "qemu+ssh://host/system", err: "only the local system driver"},
		{uri: "qemu+tcp://host/system", err: "only the local system driver"},
		{uri: "xen:///system", err: "only the local system driver"},
		{uri: "qemu:///system?mode=legacy", err: `unsupported parameter "mode"`},
		{uri: "qemu:///system?socket=", err: `unsupported parameter "socket"`},
		{uri: "%zz", err: "--libvirt"},
	} {
		ep, err := parseLibvirtURI(tc.uri, dir)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err = %v, want one with %q", tc.uri, err, tc.err)
			}
			continue
		}
		if err != nil || ep.Socket != tc.socket || ep.Name != "qemu:///system" {
			t.Errorf("%s: %+v, %v; want socket %s", tc.uri, ep, err, tc.socket)
		}
	}
	// virtqemud's socket wins when it exists, as with libvirt's client.
	ln, err := net.Listen("unix", filepath.Join(dir, "virtqemud-sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if ep, _ := parseLibvirtURI("qemu:///system", dir); ep.Socket != filepath.Join(dir, "virtqemud-sock") {
		t.Errorf("with virtqemud-sock present, socket = %s", ep.Socket)
	}
	// A regular file of that name is not a socket.
	os.WriteFile(filepath.Join(dir, "x"), nil, 0o644)
	if got := systemSocket(filepath.Join(dir, "none")); got != filepath.Join(dir, "none", "libvirt-sock") {
		t.Errorf("systemSocket of an empty dir = %s", got)
	}
}

func TestAgentError(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		class string // a *qga.Error of this class
		is    error
		text  string
	}{
		{name: "filtered, libvirt 9", err: libvirt.Error{Code: 1, Message: "internal error: unable to execute QEMU agent command 'guest-exec': Command guest-exec has been disabled: the command is not allowed"},
			class: "CommandNotFound", text: "Command guest-exec has been disabled"},
		{name: "filtered, newer libvirt", err: libvirt.Error{Code: 113, Message: "guest agent command failed: unable to execute QEMU agent command 'guest-exec': The command guest-exec has been disabled for this instance"},
			class: "CommandNotFound"},
		{name: "unknown command", err: libvirt.Error{Code: 1, Message: "internal error: unable to execute QEMU agent command 'guest-nope': The command guest-nope has not been found"},
			class: "CommandNotFound"},
		{name: "not installed", err: libvirt.Error{Code: 1, Message: "internal error: unable to execute QEMU agent command 'guest-exec': Failed to execute child process \u201c/usr/bin/guestcheck\u201d (No such file or directory)"},
			class: "GenericError", text: "No such file or directory"},
		{name: "no reply object", err: libvirt.Error{Code: 1, Message: "internal error: unable to execute QEMU agent command 'guest-info'"}, text: "guest-info"},
		{name: "not connected", err: libvirt.Error{Code: 86, Message: "Guest agent is not responding: QEMU guest agent is not connected"}, is: ErrAgentNotConnected},
		{name: "agent timeout", err: libvirt.Error{Code: 112, Message: "guest agent command timed out: Guest agent not available for now"}, is: context.DeadlineExceeded},
		{name: "agent timeout, libvirt 9", err: libvirt.Error{Code: 86, Message: "Guest agent is not responding: Guest agent not available for now"}, is: context.DeadlineExceeded},
		{name: "no sync", err: libvirt.Error{Code: 86, Message: "Guest agent is not responding: guest agent didn't respond to synchronization within '5' seconds"}, is: context.DeadlineExceeded},
		{name: "agent gone", err: libvirt.Error{Code: 86, Message: "Guest agent is not responding: Guest agent disappeared while executing command"}, is: io.ErrUnexpectedEOF},
		{name: "domain gone", err: libvirt.Error{Code: 55, Message: "Requested operation is not valid: domain is not running"}, text: "domain is not running"},
		{name: "libvirtd gone", err: libvirt.ErrInterrupted, is: io.ErrUnexpectedEOF, text: "libvirt closed the connection"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := agentError("guest-exec", tc.err)
			var qe *qga.Error
			isQGA := errors.As(got, &qe)
			if isQGA != (tc.class != "") || (isQGA && qe.Class != tc.class) {
				t.Errorf("agentError = %#v, want a *qga.Error of class %q", got, tc.class)
			}
			if tc.is != nil && !errors.Is(got, tc.is) {
				t.Errorf("agentError = %v, want it to wrap %v", got, tc.is)
			}
			if !strings.Contains(got.Error(), tc.text) || strings.Contains(got.Error(), "\n") {
				t.Errorf("agentError = %q, want one line with %q", got, tc.text)
			}
		})
	}
}

// fakeFleet is four running domains: two agents that answer, one
// channel not connected, one without a channel.
func fakeFleet(t *testing.T) *fleettest.Libvirtd {
	nic := func(mac string) string {
		return fmt.Sprintf(`<interface type='network'><mac address='%s'/><source network='default' bridge='virbr0'/></interface>`, mac)
	}
	return fleettest.StartLibvirtd(t, &fleettest.Libvirtd{
		Domains: []fleettest.Domain{
			{Name: "web-1", XML: domXML("web-1", "connected", nic("52:54:00:00:00:01"))},
			{Name: "web-2", XML: domXML("web-2", "connected", nic("52:54:00:00:00:02"))},
			{Name: "booting", XML: domXML("booting", "disconnected")},
			{Name: "appliance", XML: domXML("appliance", "none")},
			{Name: "stopped-since", XML: ""}, // listed, gone before its XML is read
			{Name: "odd", XML: "<domain><devices/></domain>"},
		},
		Agent: func(dom, cmd string) fleettest.AgentReply {
			switch {
			case strings.Contains(cmd, `"guest-get-host-name"`):
				return fleettest.AgentReply{Reply: `{"return":{"host-name":"` + dom + `"}}`}
			case strings.Contains(cmd, `"guest-exec"`):
				return fleettest.AgentReply{ErrCode: 1, ErrMsg: "internal error: unable to execute QEMU agent command 'guest-exec': Command guest-exec has been disabled: the command is not allowed"}
			case strings.Contains(cmd, `"guest-ping"`):
				return fleettest.AgentReply{Reply: `{"return":{}}`, Delay: time.Hour}
			case strings.Contains(cmd, `"guest-info"`):
				return fleettest.AgentReply{Reply: `{"return":{"version":"7.2.0","supported_commands":[{"name":"guest-exec","enabled":false,"success-response":true}]}}`}
			}
			return fleettest.AgentReply{Reply: `{"return"`}
		},
	})
}

func TestLibvirtSource(t *testing.T) {
	f := fakeFleet(t)
	src := NewLibvirtSource(f.URI())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	targets, err := src.Targets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tg := range targets {
		got = append(got, fmt.Sprintf("%s %s %q dial=%v %v", tg.Name, tg.Source, tg.Unreachable, tg.Dial != nil, tg.Networks))
	}
	want := []string{
		`web-1 libvirt "" dial=true map[52:54:00:00:00:01:bridge virbr0]`,
		`web-2 libvirt "" dial=true map[52:54:00:00:00:02:bridge virbr0]`,
		fmt.Sprintf(`booting libvirt %q dial=false map[]`, reasonNotConnected),
		fmt.Sprintf(`appliance libvirt %q dial=false map[]`, reasonNoChannel),
		`odd libvirt "libvirt: domain XML has no name" dial=false map[]`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("targets (-want +got):\n%s", d)
	}

	a, err := targets[1].Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// The operations written for qga.Client work through libvirt.
	if h, err := qga.HostName(ctx, a); err != nil || h != "web-2" {
		t.Errorf("HostName = %q, %v", h, err)
	}
	var info qga.Info
	if err := a.Exec(ctx, "guest-info", nil, &info); err != nil || len(info.SupportedCommands) != 1 || info.SupportedCommands[0].Enabled {
		t.Errorf("guest-info = %+v, %v", info, err)
	}
	_, err = qga.Run(ctx, a, "/usr/bin/guestcheck", []string{"--format", "json"}, 1<<20)
	var qe *qga.Error
	if !errors.As(err, &qe) || qe.Class != "CommandNotFound" {
		t.Errorf("guest-exec filtered: %v, want a CommandNotFound *qga.Error", err)
	}
	if err := a.Exec(ctx, "guest-whatever", nil, nil); err == nil || !strings.Contains(err.Error(), "bad reply") {
		t.Errorf("truncated reply: %v", err)
	}
	if err := a.Exec(ctx, "guest-shutdown", nil, nil); !errors.Is(err, qga.ErrNoReply) {
		t.Errorf("guest-shutdown: %v, want ErrNoReply", err)
	}

	// A hung agent: the deadline holds, and the next call dials again.
	before := f.Conns()
	hctx, hcancel := context.WithTimeout(ctx, 300*time.Millisecond)
	start := time.Now()
	err = a.Exec(hctx, "guest-ping", nil, nil)
	hcancel()
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 3*time.Second {
		t.Errorf("hung guest-ping: %v after %s, want the deadline", err, time.Since(start))
	}
	if h, err := qga.HostName(ctx, a); err != nil || h != "web-2" {
		t.Errorf("HostName after a timeout = %q, %v", h, err)
	}
	after := f.Conns()
	if after != before+1 {
		t.Errorf("%d connections after the timeout, want one more than %d", after, before)
	}
}

func TestLibvirtSourceErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := NewLibvirtSource("qemu+ssh://h/system").Targets(ctx); err == nil || !strings.Contains(err.Error(), "--libvirt") {
		t.Errorf("remote URI: %v", err)
	}
	// No daemon: said in plain words, with the socket, without Go's
	// "dial unix ...: connect:" wrapping.
	dir := t.TempDir()
	missing := filepath.Join(dir, "libvirt-sock")
	want := "qemu:///system?socket=" + missing + ": libvirt is not running here: no socket " + missing + " (start libvirtd or virtqemud, or name its socket: --libvirt qemu+unix:///system?socket=PATH)"
	if _, err := NewLibvirtSource("qemu:///system?socket=" + missing).Targets(ctx); err == nil || err.Error() != want {
		t.Errorf("no daemon:\n got %v\nwant %s", err, want)
	}
	stale := filepath.Join(dir, "stale-sock")
	l, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	if _, err := NewLibvirtSource("qemu:///system?socket=" + stale).Targets(ctx); err == nil || !strings.HasSuffix(err.Error(), ": libvirt is not running here: nothing listens on "+stale+" (start libvirtd or virtqemud)") {
		t.Errorf("a socket nobody listens on: %v", err)
	}
	// The same words when a domain's own connection fails mid-survey.
	src := &libvirtSource{ep: libvirtEndpoint{Socket: missing, Name: LibvirtSystemURI}}
	tg := Target{Name: "d", Source: "libvirt", Dial: func(ctx context.Context) (Agent, error) { return src.dialAgent(ctx, libvirt.Domain{Name: "d"}) }}
	if r := Survey(ctx, []Target{tg}, nil, Options{VMTimeout: 5 * time.Second}); !strings.HasPrefix(r.VMs[0].Reason, "libvirt is not running here: no socket ") {
		t.Errorf("a domain's dial: %q", r.VMs[0].Reason)
	}
	// Hostile peers: a 4 GiB packet, one shorter than its header. Both
	// must fail the connection, neither allocate nor panic.
	for _, n := range []uint32{0xffffffff, libvirtPacketMax + 1, 5, 0} {
		raw := binary.BigEndian.AppendUint32(nil, n)
		raw = append(raw, make([]byte, 40)...)
		f := fleettest.StartLibvirtd(t, &fleettest.Libvirtd{Raw: raw})
		sctx, scancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := NewLibvirtSource("qemu:///system?socket=" + f.Socket()).Targets(sctx)
		scancel()
		if err == nil {
			t.Errorf("packet length %d: no error", n)
		}
	}
	// A daemon that never answers: the deadline holds.
	f := fleettest.StartLibvirtd(t, &fleettest.Libvirtd{Raw: []byte{}})
	sctx, scancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer scancel()
	start := time.Now()
	if _, err := NewLibvirtSource("qemu:///system?socket=" + f.Socket()).Targets(sctx); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 3*time.Second {
		t.Errorf("silent daemon: %v after %s", err, time.Since(start))
	}
}

func TestBoundedConnScan(t *testing.T) {
	// Two packets, split at every byte: the boundaries are followed.
	pkt := func(n int) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(n))
		return append(b, make([]byte, n-4)...)
	}
	stream := append(pkt(28), pkt(100)...)
	for split := 1; split < len(stream); split++ {
		var c boundedConn
		if err := c.scan(stream[:split]); err != nil {
			t.Fatalf("split %d: %v", split, err)
		}
		if err := c.scan(stream[split:]); err != nil {
			t.Fatalf("split %d: %v", split, err)
		}
		if c.left != 0 || c.nhdr != 0 {
			t.Fatalf("split %d: mid-packet after the stream (left %d, nhdr %d)", split, c.left, c.nhdr)
		}
	}
	var c boundedConn
	if err := c.scan(append(pkt(28), binary.BigEndian.AppendUint32(nil, 27)...)); err == nil {
		t.Error("a 27-byte packet passed")
	}
}

func TestAgentTimeout(t *testing.T) {
	if got := agentTimeout(context.Background()); got != 10 {
		t.Errorf("no deadline: %d", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	if got := agentTimeout(ctx); got != 2 {
		t.Errorf("1.5 s: %d", got)
	}
	ctx, cancel = context.WithTimeout(context.Background(), -time.Second)
	defer cancel()
	if got := agentTimeout(ctx); got != 1 {
		t.Errorf("past: %d", got)
	}
}

// viaAgents answers agent commands as libvirtd does: it passes each
// request to the domain's agent (a qgafake agent, one connection per
// domain, as libvirtd holds one) and turns the agent's error replies,
// its silence and its going away into libvirt's errors and words.
func viaAgents(agents map[string]*qgafake.Agent) func(dom, cmd string) fleettest.AgentReply {
	var mu sync.Mutex
	clients := map[string]*qga.Client{}
	return func(dom, cmd string) fleettest.AgentReply {
		mu.Lock()
		c := clients[dom]
		if c == nil {
			p1, p2 := net.Pipe()
			go agents[dom].Serve(p2)
			c = qga.New(p1)
			clients[dom] = c
		}
		mu.Unlock()
		var req struct {
			Execute   string          `json:"execute"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal([]byte(cmd), &req); err != nil {
			return fleettest.AgentReply{ErrCode: 1, ErrMsg: "internal error: cannot parse json " + cmd}
		}
		var args any
		if len(req.Arguments) > 0 {
			args = req.Arguments
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		var ret json.RawMessage
		err := c.Exec(ctx, req.Execute, args, &ret)
		var qe *qga.Error
		switch {
		case err == nil:
			return fleettest.AgentReply{Reply: `{"return":` + string(ret) + `}`}
		case errors.As(err, &qe):
			return fleettest.AgentReply{ErrCode: 1, ErrMsg: fmt.Sprintf("internal error: unable to execute QEMU agent command '%s': %s", req.Execute, qe.Desc)}
		case errors.Is(err, context.DeadlineExceeded):
			return fleettest.AgentReply{ErrCode: 86, ErrMsg: "Guest agent is not responding: Guest agent not available for now"}
		}
		return fleettest.AgentReply{ErrCode: 86, ErrMsg: "Guest agent is not responding: Guest agent disappeared while executing command"}
	}
}

// TestLibvirtSurvey: the survey through libvirt's passthrough classifies
// every agent the way it does on a chardev socket (TestFailureModes):
// the same reasons, whatever the transport, and the identity compared.
func TestLibvirtSurvey(t *testing.T) {
	t.Parallel()
	clone := &guestid.Identity{MachineIDHash: "0123456789abcdef0123456789abcdef"}
	pass, shared := guestReport(t, runner.Pass, nil), guestReport(t, runner.Warn, clone)
	v2 := []byte(strings.Replace(string(pass), `"schema_version":1`, `"schema_version":2`, 1))
	cases := []struct {
		name  string
		agent *qgafake.Agent
		want  string // in the reason; "" for a surveyed VM
	}{
		{"healthy", &qgafake.Agent{Run: runs(pass, 0)}, ""},
		{"clone-a", &qgafake.Agent{Run: runs(shared, 0)}, ""},
		{"clone-b", &qgafake.Agent{Run: runs(shared, 0)}, ""},
		{"ping hangs", &qgafake.Agent{HangOn: "guest-ping"}, "guest agent not responding"},
		{"exec disabled in guest-info", &qgafake.Agent{Disabled: []string{"guest-exec"}, Run: runs(pass, 0)}, "guest-exec is disabled in the guest agent"},
		{"exec error CommandDisabled", &qgafake.Agent{Errors: map[string]*qga.Error{"guest-exec": {Class: "CommandDisabled", Desc: "The command guest-exec has been disabled for this instance"}}}, "guest-exec is disabled"},
		{"not installed", &qgafake.Agent{}, "guestcheck is not installed in the guest (/usr/bin/guestcheck: no such file)"},
		{"selinux exec denied", &qgafake.Agent{Run: func(p string, _ []string) qgafake.Program {
			return qgafake.Program{StartError: qgafake.PermissionDenied(p)}
		}}, "SELinux"},
		{"exec hangs", &qgafake.Agent{Run: runs(pass, time.Hour)}, "timed out after 1.5s (--vm-timeout) waiting for guestcheck"},
		{"disconnect mid-exec", &qgafake.Agent{CloseOn: "guest-exec-status", Run: runs(pass, 0)}, "connection dropped during guest-exec"},
		{"unknown schema version", &qgafake.Agent{Run: runs(v2, 0)}, "schema_version 2 and this one reads 1"},
		{"agent error", &qgafake.Agent{Errors: map[string]*qga.Error{"guest-info": {Class: "GenericError", Desc: "boom\nline"}}}, "guest-info: the guest agent says: boom line"},
	}
	agents := map[string]*qgafake.Agent{}
	var doms []fleettest.Domain
	for i, tc := range cases {
		agents[tc.name] = tc.agent
		doms = append(doms, fleettest.Domain{Name: tc.name, XML: domXML(tc.name, "connected", fmt.Sprintf(`<interface type='network'><mac address='52:54:00:00:01:%02x'/><source network='default'/></interface>`, i))})
	}
	f := fleettest.StartLibvirtd(t, &fleettest.Libvirtd{Domains: doms, Agent: viaAgents(agents)})
	targets, errs := Targets(context.Background(), []Source{NewLibvirtSource("qemu:///system?socket=" + f.Socket())}, nil)
	if len(errs) > 0 || len(targets) != len(cases) {
		t.Fatalf("targets %d, errors %v", len(targets), errs)
	}
	start := time.Now()
	r := Survey(context.Background(), targets, nil, Options{VMTimeout: 1500 * time.Millisecond, MaxOutput: 64 << 10, Concurrency: len(targets)})
	if el := time.Since(start); el > 1500*time.Millisecond+grace {
		t.Errorf("survey took %s, past the VM timeout", el)
	}
	for _, tc := range cases {
		vm := vmByName(t, r, tc.name)
		switch {
		case tc.want == "" && (vm.Report == nil || vm.Status == Unknown):
			t.Errorf("%s: %s %q, want its report", tc.name, vm.Status, vm.Reason)
		case tc.want != "" && (vm.Status != Unknown || !strings.Contains(vm.Reason, tc.want)):
			t.Errorf("%s: %s %q, want unknown with %q", tc.name, vm.Status, vm.Reason, tc.want)
		}
		if vm.Source != "libvirt" {
			t.Errorf("%s: source %q", tc.name, vm.Source)
		}
	}
	if len(r.Collisions) != 1 || r.Collisions[0].Item != guestid.ItemMachineID || strings.Join(r.Collisions[0].Members, ",") != "clone-a,clone-b" {
		t.Errorf("collisions = %+v, want the machine-id of clone-a and clone-b", r.Collisions)
	}
}
