package hostname

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/guestcheck/guestcheck/internal/fact/cloudcfg"
	"github.com/guestcheck/guestcheck/internal/parse/cloudconfig"
	"github.com/guestcheck/guestcheck/internal/parse/jsonfield"
)

// SetHostname is /var/lib/cloud/data/set-hostname: the names cc_set_hostname
// last applied. The file persists across instances; cloud-init rewrites it
// whenever a new instance asks for a different name.
type SetHostname struct {
	Hostname string `json:"hostname"` // short name
	FQDN     string `json:"fqdn"`     // fully qualified name
}

// ParseSetHostname parses set-hostname. An empty (or blank) file yields the
// zero value and no error, because cloud-init itself treats an empty file
// as "never set". A field that is present but not a string is an error
// naming the field; null counts as absent.
func ParseSetHostname(b []byte) (SetHostname, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return SetHostname{}, nil
	}
	obj, err := jsonfield.Object(b, "top level")
	if err != nil {
		return SetHostname{}, err
	}
	var s SetHostname
	if s.Hostname, err = jsonfield.String(obj, "hostname", "hostname"); err != nil {
		return SetHostname{}, err
	}
	if s.FQDN, err = jsonfield.String(obj, "fqdn", "fqdn"); err != nil {
		return SetHostname{}, err
	}
	return s, nil
}

// CloudConfig holds the cloud-config keys that decide the hostname
// (cc_set_hostname and cc_update_hostname). A nil field is not set in that
// file, so that layers can be merged.
type CloudConfig struct {
	Hostname               *string // hostname: the short name, or an FQDN cloud-init splits
	FQDN                   *string // fqdn: wins over hostname
	PreserveHostname       *bool   // preserve_hostname: leave the name alone
	PreferFQDNOverHostname *bool   // prefer_fqdn_over_hostname: apply the FQDN, not the short name
	CreateHostnameFile     *bool   // create_hostname_file: false keeps the name transient
}

// ErrTemplate is wrapped by ParseCloudConfig when a file is a Jinja
// template ("## template: jinja") whose hostname keys only get values when
// cloud-init renders it at boot; callers note that rather than fail.
var ErrTemplate = errors.New("jinja template rendered by cloud-init at boot")

// ParseCloudConfig reads the hostname keys from a cloud-config document
// (user-data's processed cloud-config.txt, /etc/cloud/cloud.cfg,
// cloud.cfg.d/*.cfg) with the shared cloud-config parser, so YAML 1.1
// scalars, aliases and merge keys read as cloud-init reads them. Booleans
// follow cloud-init's translate_bool: YAML booleans, and the strings or
// numbers "true", "yes", "on", "1" (any case) are true, every other
// scalar, null included, is false. Strings are Python's str() of the
// value; a null string is unset (cloud-init cannot use it). A mapping or
// sequence where a scalar belongs is an error naming the key and line. An
// empty document is an empty config.
func ParseCloudConfig(b []byte) (CloudConfig, error) {
	d, err := cloudconfig.Parse("", b)
	return hostnameKeys(d, err, cloudcfg.IsTemplate(b))
}

// cloudConfigOf is ParseCloudConfig of a file cloudcfg already loaded.
func cloudConfigOf(f cloudcfg.File) (CloudConfig, error) {
	return hostnameKeys(f.Doc, f.ParseErr, f.Template())
}

// hostnameKeys reads the hostname keys from a loaded document (or its
// loading error); templated says the file is a Jinja template.
func hostnameKeys(d *cloudconfig.Doc, err error, templated bool) (CloudConfig, error) {
	if err != nil {
		err = lineError(err)
		if templated {
			return CloudConfig{}, fmt.Errorf("%w: %s", ErrTemplate, err)
		}
		return CloudConfig{}, err
	}
	var c CloudConfig
	for _, k := range []struct {
		key string
		s   **string
		b   **bool
	}{
		{key: "hostname", s: &c.Hostname},
		{key: "fqdn", s: &c.FQDN},
		{key: "preserve_hostname", b: &c.PreserveHostname},
		{key: "prefer_fqdn_over_hostname", b: &c.PreferFQDNOverHostname},
		{key: "create_hostname_file", b: &c.CreateHostnameFile},
	} {
		v, ok := d.Value[k.key]
		if !ok {
			continue
		}
		want := "a string"
		if k.b != nil {
			want = "a boolean"
		}
		switch v.(type) {
		case []any:
			return CloudConfig{}, fmt.Errorf("line %d: %s is a sequence, want %s", d.Line(k.key), k.key, want)
		case map[string]any:
			return CloudConfig{}, fmt.Errorf("line %d: %s is a mapping, want %s", d.Line(k.key), k.key, want)
		}
		if k.b != nil {
			t := cloudconfig.TranslateBool(v)
			*k.b = &t
		} else if v != nil {
			s := cloudconfig.PyStr(v)
			*k.s = &s
		}
	}
	if templated && c.hasTemplateSyntax() {
		return CloudConfig{}, fmt.Errorf("%w: hostname or fqdn holds a template expression", ErrTemplate)
	}
	return c, nil
}

func (c CloudConfig) hasTemplateSyntax() bool {
	for _, p := range []*string{c.Hostname, c.FQDN} {
		if p != nil && (strings.Contains(*p, "{{") || strings.Contains(*p, "{%")) {
			return true
		}
	}
	return false
}

// lineError turns the parser's error into "line N: reason": callers put
// the file's name in front.
func lineError(err error) error {
	var ce *cloudconfig.Error
	if !errors.As(err, &ce) {
		return err
	}
	msg := strings.TrimPrefix(ce.Msg, "not valid YAML: ")
	if m := yamlLine().FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("line %s: %s", m[1], m[2])
	}
	if ce.Line > 0 {
		return fmt.Errorf("line %d: %s", ce.Line, msg)
	}
	return errors.New(msg)
}

var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^line (\d+): (.*)$`) })

// Layer is one cloud-config source, named by Source (usually a path).
type Layer struct {
	Source string      // shown in reports as where a setting came from
	Config CloudConfig // the keys this source sets
}

// Setting is an effective value and the source that set it. Set is false
// when no layer set it and Value is cloud-init's default.
type Setting[T any] struct {
	Value  T
	Set    bool
	Source string
}

// Effective is the merged view of the hostname keys across layers.
type Effective struct {
	Hostname               Setting[string]
	FQDN                   Setting[string]
	PreserveHostname       Setting[bool]
	PreferFQDNOverHostname Setting[bool]
	CreateHostnameFile     Setting[bool]
}

// Merge combines layers given from lowest to highest precedence: later
// layers override earlier ones key by key, which is how cloud-init ranks
// /etc/cloud/cloud.cfg, cloud.cfg.d/*.cfg (in name order),
// /run/cloud-init/cloud.cfg, vendor-data and finally user-data. Defaults
// are cloud-init's: preserve_hostname false, create_hostname_file true.
func Merge(layers ...Layer) Effective {
	e := Effective{CreateHostnameFile: Setting[bool]{Value: true}}
	for _, l := range layers {
		c := l.Config
		if c.Hostname != nil {
			e.Hostname = Setting[string]{*c.Hostname, true, l.Source}
		}
		if c.FQDN != nil {
			e.FQDN = Setting[string]{*c.FQDN, true, l.Source}
		}
		if c.PreserveHostname != nil {
			e.PreserveHostname = Setting[bool]{*c.PreserveHostname, true, l.Source}
		}
		if c.PreferFQDNOverHostname != nil {
			e.PreferFQDNOverHostname = Setting[bool]{*c.PreferFQDNOverHostname, true, l.Source}
		}
		if c.CreateHostnameFile != nil {
			e.CreateHostnameFile = Setting[bool]{*c.CreateHostnameFile, true, l.Source}
		}
	}
	return e
}

// Request is the hostname cloud-init was asked to set.
type Request struct {
	// Hostname is the short name.
	Hostname string
	// FQDN is the fully qualified name when the request says it; empty
	// when cloud-init would take the domain from the cloud.
	FQDN string
	// Source names where the request came from.
	Source string
}

// Requested derives the name cloud-init sets from the merged config and
// the meta-data name (v1.local_hostname, named by localSource), following
// cloud-init's util.get_hostname_fqdn: an fqdn key wins, then a hostname
// key (split when it holds a dot), then meta-data. It reports false when
// nothing asks for a name.
func Requested(e Effective, local, localSource string) (Request, bool) {
	switch {
	case e.FQDN.Set && e.FQDN.Value != "":
		r := Request{Hostname: Short(e.FQDN.Value), FQDN: e.FQDN.Value, Source: e.FQDN.Source}
		if e.Hostname.Set && e.Hostname.Value != "" {
			r.Hostname = e.Hostname.Value
			if e.Hostname.Source != e.FQDN.Source {
				r.Source = e.FQDN.Source + " (fqdn), " + e.Hostname.Source + " (hostname)"
			}
		}
		return r, true
	case e.Hostname.Set && strings.Index(e.Hostname.Value, ".") > 0:
		return Request{Hostname: Short(e.Hostname.Value), FQDN: e.Hostname.Value, Source: e.Hostname.Source}, true
	case e.Hostname.Set && e.Hostname.Value != "":
		return Request{Hostname: e.Hostname.Value, Source: e.Hostname.Source}, true
	case local != "":
		return Request{Hostname: local, Source: localSource}, true
	}
	return Request{}, false
}
