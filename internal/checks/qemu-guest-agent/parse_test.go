package qemuguestagent

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/parse/auditlog"
)

func TestParseArgs(t *testing.T) {
	v72, _ := ParseVersion("7.2.22")
	v82, _ := ParseVersion("8.2.0")
	v91, _ := ParseVersion("9.1.0")
	cases := []struct {
		v    Version
		argv string
		want string // Block|Allow|Hook(set)|StateDir|Config or "error"
	}{
		{v72, "-b guest-exec,guest-file-open", "[guest-exec guest-file-open]|[]|false:|"},
		{v72, "--block-rpcs=a --blacklist b -bc", "[a b c]|[]|false:|"},
		{v72, "--bl=x", "[x]|[]|false:|"}, // abbreviation matching both aliases is not ambiguous
		{v72, "-F", "[]|[]|true:|"},
		{v72, "-F/x/hook -t /var/lib/qga", "[]|[]|true:/x/hook|/var/lib/qga"},
		{v72, "-vdF/h", "[]|[]|true:/h|"},
		{v72, "-a guest-ping", "error"},
		{v72, "-c /etc/q.conf", "error"},
		{v82, "-a guest-ping,guest-info --allow-rpcs=x", "[]|[guest-ping guest-info x]|false:|"},
		{v91, "--blacklist=x", "error"},
		{v91, "-c /etc/q.conf -- -b x", "[]|[]|false:||/etc/q.conf"},
		{v72, "--method", "error"},
	}
	for _, c := range cases {
		a, err := ParseArgs(c.v, strings.Fields(c.argv))
		got := fmt.Sprintf("%v|%v|%v:%s|%s", a.Block, a.Allow, a.HookSet, a.Hook, a.StateDir)
		if a.Config != "" {
			got += "|" + a.Config
		}
		if err != nil {
			got = "error"
		}
		if got != c.want {
			t.Errorf("ParseArgs(%s, %q) = %s (err %v), want %s", c.v, c.argv, got, err, c.want)
		}
	}
}

func TestSplitExec(t *testing.T) {
	env := map[string]string{"FILTER_RPC_ARGS": "--allow-rpcs=a,b  -v", "HOOK": "/h", "EMPTY": ""}
	words, used, err := SplitExec(`-/usr/bin/qemu-ga $FILTER_RPC_ARGS -F${HOOK} "--path=/a b" ${EMPTY}x $UNSET`, env)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/usr/bin/qemu-ga", "--allow-rpcs=a,b", "-v", "-F/h", "--path=/a b", "x"}
	if !slices.Equal(words, want) {
		t.Errorf("words = %q, want %q", words, want)
	}
	if !slices.Equal(used, []string{"FILTER_RPC_ARGS", "HOOK", "EMPTY", "UNSET"}) {
		t.Errorf("used = %v", used)
	}
}

func TestLoadKeyFile(t *testing.T) {
	kf, err := LoadKeyFile("f", []byte("# c\n[general]\nblock-rpcs = guest-exec , guest-ping \nstatedir=/a\n[general]\nstatedir=/b\nhook=\\sx\\\\y\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := kf.String("general", "block-rpcs"); s != "guest-exec , guest-ping " {
		t.Errorf("value = %q (GKeyFile strips leading whitespace only)", s)
	}
	if s, _ := kf.String("general", "statedir"); s != "/b" {
		t.Errorf("statedir = %q, want the last value", s)
	}
	if s, _ := kf.String("general", "hook"); s != " x\\y" {
		t.Errorf("escapes: %q", s)
	}
	for _, bad := range []string{"garbage\n", "key=v\n[general]\n", "[general\n", "[general]\n=x\n"} {
		if _, err := LoadKeyFile("f", []byte(bad)); err == nil {
			t.Errorf("LoadKeyFile(%q) accepted", bad)
		}
	}
}

// TestIsAgent: a denial is the agent's by its command or its domain.
func TestIsAgent(t *testing.T) {
	for _, c := range []struct {
		a    auditlog.AVC
		want bool
	}{
		{auditlog.AVC{Comm: "qemu-ga"}, true},
		{auditlog.AVC{Comm: "fsfreeze-hook", SContext: "system_u:system_r:virt_qemu_ga_unconfined_t:s0"}, true},
		{auditlog.AVC{Comm: "httpd", SContext: "system_u:system_r:httpd_t:s0"}, false},
	} {
		if got := isAgent(c.a); got != c.want {
			t.Errorf("isAgent(%+v) = %v", c.a, got)
		}
	}
}

func TestMergeVersions(t *testing.T) {
	kf, _ := LoadKeyFile("f", []byte("[general]\nblock-rpcs=guest-exec\nblacklist=guest-info\nallow-rpcs=guest-ping\n"))
	v72, _ := ParseVersion("7.2.22")
	v90, _ := ParseVersion("9.0.0")
	v91, _ := ParseVersion("9.1.0")
	s := Merge(v72, "/etc/qemu", kf, "q.conf", Args{})
	if !slices.Equal(s.Block, []string{"guest-info"}) || s.AllowSet || len(s.Fatal) != 0 {
		t.Errorf("7.2: blacklist key wins and allow-rpcs is ignored: %+v", s)
	}
	if s := Merge(v90, "/etc/qemu", kf, "q.conf", Args{}); len(s.Fatal) == 0 {
		t.Errorf("9.0 must refuse both keys: %+v", s)
	}
	s = Merge(v91, "/etc/qemu", kf, "q.conf", Args{BlockGiven: true, Block: []string{"guest-ping"}})
	if len(s.Fatal) != 0 || !slices.Equal(s.Block, []string{"guest-exec", "guest-ping"}) || !s.AllowSet {
		t.Errorf("9.1: %+v", s)
	}
	f := s.Filter()
	if en := f.EnabledNames(); len(en) != 0 {
		t.Errorf("allow guest-ping, then block it: enabled = %v", en)
	}
	s = Merge(v72, "/etc/qemu", nil, "", Args{HookSet: true})
	if s.Hook != "/etc/qemu/fsfreeze-hook" || s.Path != DefaultVirtioPath {
		t.Errorf("defaults: %+v", s)
	}
}

func TestComputeFilter(t *testing.T) {
	v, _ := ParseVersion("8.2.0")
	f := ComputeFilter(v, []string{"guest-exec", "guest-file-*", " guest-info"}, nil, false)
	if f.Enabled["guest-exec"] || !f.Enabled["guest-file-open"] || !f.Enabled["guest-info"] || f.Enabled["guest-get-devices"] {
		t.Errorf("block-list: %v", f.Enabled)
	}
	if !slices.Equal(f.Unknown, []string{"guest-file-*", " guest-info"}) {
		t.Errorf("unknown = %v", f.Unknown)
	}
	f = ComputeFilter(v, nil, []string{"guest-ping"}, true)
	if !slices.Equal(f.EnabledNames(), []string{"guest-ping"}) {
		t.Errorf("allow-list: %v", f.EnabledNames())
	}
	old, _ := ParseVersion("2.5.0")
	if got := ComputeFilter(old, nil, nil, false).Disabled(KubeVirtRequiredRPCs); !slices.Equal(got, []string{"guest-get-host-name", "guest-get-users", "guest-get-timezone", "guest-get-osinfo"}) {
		t.Errorf("2.5 lacks = %v", got)
	}
}

func FuzzLoadKeyFile(f *testing.F) {
	f.Add([]byte("[general]\nblock-rpcs=a,b\n"))
	f.Add([]byte("# x\n[g]\nk=\\s\\n\\q\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		kf, err := LoadKeyFile("f", b)
		if err == nil {
			for _, k := range []string{"block-rpcs", "allow-rpcs", "statedir"} {
				kf.String("general", k)
			}
			v, _ := ParseVersion("8.2.0")
			Merge(v, "/etc/qemu", kf, "f", Args{}).Filter()
		}
	})
}

func FuzzParseArgs(f *testing.F) {
	f.Add("/usr/bin/qemu-ga --allow-rpcs=a,b -F${H} $ARGS \"x y\"")
	f.Add("-vdF/h -b a --bl=c -- -x")
	f.Fuzz(func(t *testing.T, line string) {
		words, _, err := SplitExec(line, map[string]string{"ARGS": "-b x", "H": "/h"})
		if err != nil || len(words) == 0 {
			return
		}
		for _, v := range []string{"7.2.0", "8.2.0", "9.1.0", ""} {
			ver, _ := ParseVersion(v)
			ParseArgs(ver, words[1:])
		}
	})
}
