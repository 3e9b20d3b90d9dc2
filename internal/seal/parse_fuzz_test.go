package seal

import (
	"path"
	"reflect"
	"strings"
	"testing"

	accounts "github.com/guestcheck/guestcheck/internal/parse/passwd"
)

func FuzzPasswdHomes(f *testing.F) {
	f.Add(passwd + "weird:x:5:5::relative:/bin/sh\nroot2:x:0:0::/root/:/bin/sh\nslash:x:6:6::/:/bin/sh\n")
	f.Add("a:x:1:1::/home//a/../a:/bin/sh\n+nis\n#c:x:2:2::/c:/bin/sh\n")
	f.Fuzz(func(t *testing.T, s string) {
		homes := passwdHomes([]byte(s))
		if len(homes) == 0 || homes[0] != "/root" {
			t.Fatalf("homes = %q, want /root first", homes)
		}
		seen := map[string]bool{}
		for _, h := range homes {
			if h == "/" || !strings.HasPrefix(h, "/") || path.Clean(h) != h || seen[h] {
				t.Fatalf("bad or repeated home %q in %q", h, homes)
			}
			seen[h] = true
		}
		// Exactly the absolute homes of the entries getpwent would see.
		users, _ := accounts.ParsePasswd("p", []byte(s))
		want := map[string]bool{"/root": true}
		for _, u := range users {
			if h := path.Clean(u.Home); strings.HasPrefix(u.Home, "/") && h != "/" {
				want[h] = true
			}
		}
		if !reflect.DeepEqual(seen, want) {
			t.Fatalf("homes %q, want the set %v", homes, want)
		}
	})
}

// FuzzParseCloudConfig holds seal's reading of cloud.cfg to cloud-init's
// layering: cloud.cfg below its drop-ins, later drop-ins on top, and a
// file cloud-init cannot load counting as empty.
func FuzzParseCloudConfig(f *testing.F) {
	f.Add(cloudCfg, "network: {config: disabled}\n")
	f.Add("network: {config: disabled}\n", "network: {version: 2}\nssh_genkeytypes: ~\n")
	f.Add("cloud_init_modules: [[ssh, always]]\n", "a: [\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		base, drop := cloudFile{"cloud.cfg", []byte(a)}, cloudFile{"cloud.cfg.d/b.cfg", []byte(b)}
		got, errs := parseCloudConfig(base, []cloudFile{drop})
		for _, e := range errs {
			if (e.File != base.name && e.File != drop.name) || strings.Contains(e.Error(), "\n") || e.Line < 0 || e.Line > strings.Count(a+b, "\n")+2 {
				t.Fatalf("bad error %q (line %d)", e, e.Line)
			}
		}
		// cloud.cfg under one drop-in reads as the same file as the
		// lowest of two drop-ins.
		if two, _ := parseCloudConfig(cloudFile{"cloud.cfg", nil}, []cloudFile{{"cloud.cfg.d/a.cfg", []byte(a)}, drop}); two != got {
			t.Fatalf("base %+v, as a drop-in %+v", got, two)
		}
		// A file that does not load changes nothing.
		if len(errs) > 0 && errs[len(errs)-1].File == drop.name {
			if alone, _ := parseCloudConfig(base, nil); alone != got {
				t.Fatalf("a broken drop-in changed %+v to %+v", alone, got)
			}
		}
		// The highest drop-in wins for what it sets.
		top, _ := parseCloudConfig(base, []cloudFile{drop, {"cloud.cfg.d/z.cfg", []byte("network: {config: disabled}\nssh_genkeytypes: []\n")}})
		if !top.NetworkDisabled || top.KeyTypes || top.SSHModule != got.SSHModule {
			t.Fatalf("a last drop-in did not win: %+v (was %+v)", top, got)
		}
	})
}
