package kubevirt

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// The few fields of KubeVirt's API (kubevirt.io/api/core/v1) this source
// reads; everything else in an object is ignored. encoding/json refuses
// a field of the wrong type, and decode names the object it was in.

type objectMeta struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

type firmware struct {
	UUID   string `json:"uuid"`
	Serial string `json:"serial"`
}

type iface struct {
	Name       string `json:"name"`
	MacAddress string `json:"macAddress"`
}

// vmiSpec is a VirtualMachineInstanceSpec (and a VM's template spec).
type vmiSpec struct {
	Hostname string `json:"hostname"`
	Domain   struct {
		Firmware *firmware `json:"firmware"`
		Devices  struct {
			Interfaces []iface `json:"interfaces"`
		} `json:"devices"`
	} `json:"domain"`
	// Volumes are read for which cloud-init source they are; their
	// user data, which may hold secrets, is never decoded.
	Volumes []struct {
		Name                 string    `json:"name"`
		CloudInitNoCloud     *struct{} `json:"cloudInitNoCloud"`
		CloudInitConfigDrive *struct{} `json:"cloudInitConfigDrive"`
	} `json:"volumes"`
}

type virtualMachine struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		Template *struct {
			Spec vmiSpec `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
	Status struct {
		PrintableStatus string `json:"printableStatus"`
	} `json:"status"`
}

type vmInstance struct {
	Metadata objectMeta `json:"metadata"`
	Spec     vmiSpec    `json:"spec"`
	Status   struct {
		NodeName   string `json:"nodeName"`
		Phase      string `json:"phase"`
		Interfaces []struct {
			Name string `json:"name"`
			MAC  string `json:"mac"`
		} `json:"interfaces"`
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions"`
	} `json:"status"`
}

// guestOSInfo is VirtualMachineInstanceGuestAgentInfo, the guestosinfo
// subresource.
type guestOSInfo struct {
	GAVersion         string `json:"guestAgentVersion"`
	SupportedCommands []struct {
		Name    string `json:"name"`
		Enabled bool   `json:"enabled"`
	} `json:"supportedCommands"`
	Hostname string `json:"hostname"`
}

// Bounds of a listing.
const (
	// pageLimit is the objects asked for per page.
	pageLimit = 250
	// maxObjects bounds a whole list: far above any cluster's VMs, far
	// below what would exhaust memory.
	maxObjects = 100000
	// maxPages bounds the pages of a list: a server that answers every
	// page with no items and a new continue token must not be read
	// forever. maxObjects in full pages is 400; servers may send fewer
	// objects a page than asked for.
	maxPages = 1000
)

// listAll reads every object of resource ("virtualmachines") in
// namespace (all when empty), page by page, decoding each with decode,
// which names the object when a field has the wrong type.
func listAll[T any](ctx context.Context, c *client, namespace, resource, kind string, meta func(*T) objectMeta) ([]T, error) {
	path := "/apis/kubevirt.io/v1/" + resource
	if namespace != "" {
		path = "/apis/kubevirt.io/v1/namespaces/" + url.PathEscape(namespace) + "/" + resource
	}
	var out []T
	cont := ""
	seen := map[string]bool{}
	for page := 1; ; page++ {
		if page > maxPages {
			return nil, fmt.Errorf("GET %s: the API server has not ended the list after %d pages (%d %s in them): given up", path, maxPages, len(out), resource)
		}
		q := url.Values{"limit": {strconv.Itoa(pageLimit)}}
		if cont != "" {
			q.Set("continue", cont)
		}
		var list struct {
			Metadata struct {
				Continue string `json:"continue"`
			} `json:"metadata"`
			Items []json.RawMessage `json:"items"`
		}
		if err := c.get(ctx, path, q, maxPage, &list); err != nil {
			if dl, ok := ctx.Deadline(); page > 1 && (ctx.Err() != nil || ok && !time.Now().Before(dl)) {
				return nil, fmt.Errorf("%w, on page %d of the list", err, page)
			}
			return nil, err
		}
		if len(list.Items) > pageLimit || len(out)+len(list.Items) > maxObjects {
			return nil, fmt.Errorf("GET %s: the API server sent more %s than asked for", path, resource)
		}
		for i, raw := range list.Items {
			var v T
			if err := decode(raw, &v, kind, len(out)+i); err != nil {
				return nil, err
			}
			if err := checkMeta(meta(&v), kind); err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		cont = list.Metadata.Continue
		if cont == "" {
			return out, nil
		}
		if seen[cont] || len(cont) > 4096 {
			return nil, fmt.Errorf("GET %s: the API server's continue token repeats or is too long", path)
		}
		seen[cont] = true
	}
}

// decode decodes one object, naming it in a type error.
func decode(raw json.RawMessage, into any, kind string, index int) error {
	err := json.Unmarshal(raw, into)
	if err == nil {
		return nil
	}
	var m struct {
		Metadata objectMeta `json:"metadata"`
	}
	name := fmt.Sprintf("%s number %d of the list", kind, index+1)
	if json.Unmarshal(raw, &m) == nil && m.Metadata.Name != "" {
		name = kind + " " + clean(m.Metadata.Namespace, 63) + "/" + clean(m.Metadata.Name, 253)
	}
	return fmt.Errorf("%s: %s", name, jsonError(err))
}

// checkMeta holds names to Kubernetes' own limits, so that a hostile
// one cannot pass for another or fill a table.
func checkMeta(m objectMeta, kind string) error {
	if m.Name == "" || len(m.Name) > 253 || len(m.Namespace) > 63 || clean(m.Name, 253) != m.Name || clean(m.Namespace, 63) != m.Namespace {
		return fmt.Errorf("%s %q/%q: not a valid namespace and name", kind, clean(m.Namespace, 63), clean(m.Name, 253))
	}
	return nil
}

// clean keeps the characters of a Kubernetes name, at most max.
func clean(s string, max int) string {
	b := []byte{}
	for i := 0; i < len(s) && len(b) < max; i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' {
			b = append(b, c)
		} else {
			b = append(b, '?')
		}
	}
	return string(b)
}
