package lvm2

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// VG is a volume group as its metadata describes it.
type VG struct {
	Name  string
	ID    string
	Seqno int64
	// ExtentSize is in 512-byte sectors.
	ExtentSize int64
	// PVs maps the metadata's PV names ("pv0") to their ids and where
	// their first extent starts.
	PVs map[string]PV
	LVs []LV
}

// PV is a physical volume of a VG.
type PV struct {
	// ID is the PV's UUID as the metadata writes it (with dashes).
	ID string
	// PEStart is the first extent's offset in sectors; PECount the
	// extents.
	PEStart, PECount int64
}

// LV is a logical volume.
type LV struct {
	Name     string
	ID       string
	Status   []string
	Segments []Segment
}

// Segment is one segment of an LV.
type Segment struct {
	StartExtent, ExtentCount int64
	Type                     string
	StripeCount              int64
	// Stripes are (PV name, first extent) pairs.
	Stripes []Stripe
}

// Stripe is one stripe of a segment: extents of a PV.
type Stripe struct {
	PV     string
	Extent int64
}

// Visible says whether the LV is one a user made (not a thin pool's
// metadata, a mirror log, a snapshot's COW).
func (lv LV) Visible() bool {
	for _, s := range lv.Status {
		if s == "VISIBLE" {
			return true
		}
	}
	return false
}

// ParseVG parses a VG's metadata text: the one top-level section that is
// the VG.
func ParseVG(text []byte) (VG, error) {
	root, err := ParseConfig(text)
	if err != nil {
		return VG{}, err
	}
	var vgNode *Node
	for _, c := range root.Children {
		if c.IsSection() {
			if vgNode != nil {
				return VG{}, errors.New("the metadata holds more than one volume group")
			}
			vgNode = c
		}
	}
	if vgNode == nil {
		return VG{}, errors.New("the metadata holds no volume group")
	}
	vg := VG{Name: vgNode.Name, ID: str(vgNode, "id"), Seqno: num(vgNode, "seqno"), ExtentSize: num(vgNode, "extent_size"), PVs: map[string]PV{}}
	if vg.ExtentSize <= 0 || vg.ExtentSize > 1<<32 {
		return VG{}, fmt.Errorf("volume group %s: extent size %d", vg.Name, vg.ExtentSize)
	}
	if pvs := vgNode.Child("physical_volumes"); pvs != nil {
		for _, p := range pvs.Children {
			vg.PVs[p.Name] = PV{ID: str(p, "id"), PEStart: num(p, "pe_start"), PECount: num(p, "pe_count")}
		}
	}
	if lvs := vgNode.Child("logical_volumes"); lvs != nil {
		for _, l := range lvs.Children {
			lv, err := parseLV(l)
			if err != nil {
				return VG{}, fmt.Errorf("volume group %s: %w", vg.Name, err)
			}
			vg.LVs = append(vg.LVs, lv)
		}
	}
	return vg, nil
}

func parseLV(l *Node) (LV, error) {
	lv := LV{Name: l.Name, ID: str(l, "id")}
	if st := l.Child("status"); st != nil {
		for _, v := range st.Array {
			if s, ok := v.(string); ok {
				lv.Status = append(lv.Status, s)
			}
		}
	}
	for _, c := range l.Children {
		if !c.IsSection() || !strings.HasPrefix(c.Name, "segment") {
			continue
		}
		seg := Segment{StartExtent: num(c, "start_extent"), ExtentCount: num(c, "extent_count"), Type: str(c, "type"), StripeCount: num(c, "stripe_count")}
		if st := c.Child("stripes"); st != nil {
			if len(st.Array)%2 != 0 {
				return lv, fmt.Errorf("logical volume %s: stripes is not a list of PV and extent pairs", lv.Name)
			}
			for i := 0; i+1 < len(st.Array); i += 2 {
				pv, ok1 := st.Array[i].(string)
				ext, ok2 := st.Array[i+1].(int64)
				if !ok1 || !ok2 {
					return lv, fmt.Errorf("logical volume %s: stripes is not a list of PV and extent pairs", lv.Name)
				}
				seg.Stripes = append(seg.Stripes, Stripe{PV: pv, Extent: ext})
			}
		}
		lv.Segments = append(lv.Segments, seg)
	}
	sort.Slice(lv.Segments, func(i, j int) bool { return lv.Segments[i].StartExtent < lv.Segments[j].StartExtent })
	return lv, nil
}

func str(n *Node, key string) string {
	if c := n.Child(key); c != nil && c.Str != nil {
		return *c.Str
	}
	return ""
}

func num(n *Node, key string) int64 {
	if c := n.Child(key); c != nil && c.Int != nil {
		return *c.Int
	}
	return 0
}

// Target is one line of a device-mapper table: Length sectors from
// Start, mapped linearly to Offset sectors into the PV named PV (from
// the PV's start, pe_start included).
type Target struct {
	Start, Length int64
	PV            string
	Offset        int64
}

// maxLVSectors bounds an LV (an exabyte): past it, arithmetic overflows.
const maxLVSectors = 1 << 51

// Linear maps the LV to linear device-mapper targets: every segment must
// be a plain one ("striped" with one stripe), contiguous from extent 0,
// on a PV of the VG and within it. Anything else (striped over several
// PVs, thin, RAID, mirror, cache, snapshot) is refused by name.
func (vg VG) Linear(lv LV) ([]Target, error) {
	var out []Target
	next := int64(0)
	for _, s := range lv.Segments {
		if s.Type != "striped" || s.StripeCount != 1 || len(s.Stripes) != 1 {
			kind := s.Type
			if s.Type == "striped" {
				kind = fmt.Sprintf("striped over %d PVs", s.StripeCount)
			}
			return nil, fmt.Errorf("logical volume %s/%s is %s, which sealprep does not activate (only linear volumes)", vg.Name, lv.Name, kind)
		}
		if s.StartExtent != next || s.ExtentCount <= 0 || s.ExtentCount > maxLVSectors/vg.ExtentSize {
			return nil, fmt.Errorf("logical volume %s/%s: segments are not contiguous from extent 0", vg.Name, lv.Name)
		}
		pv, ok := vg.PVs[s.Stripes[0].PV]
		if !ok {
			return nil, fmt.Errorf("logical volume %s/%s lies on %s, which the volume group does not list", vg.Name, lv.Name, s.Stripes[0].PV)
		}
		e := s.Stripes[0].Extent
		if e < 0 || pv.PEStart < 0 || e+s.ExtentCount > pv.PECount {
			return nil, fmt.Errorf("logical volume %s/%s runs past the extents of %s", vg.Name, lv.Name, s.Stripes[0].PV)
		}
		out = append(out, Target{Start: s.StartExtent * vg.ExtentSize, Length: s.ExtentCount * vg.ExtentSize,
			PV: s.Stripes[0].PV, Offset: pv.PEStart + e*vg.ExtentSize})
		next = s.StartExtent + s.ExtentCount
		if next > maxLVSectors/vg.ExtentSize {
			return nil, fmt.Errorf("logical volume %s/%s is larger than any disk", vg.Name, lv.Name)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("logical volume %s/%s has no segments", vg.Name, lv.Name)
	}
	return out, nil
}

// PVByUUID finds the metadata's name for the PV whose label UUID (32
// characters, no dashes) is uuid.
func (vg VG) PVByUUID(uuid string) (string, bool) {
	for name, pv := range vg.PVs {
		if strings.ReplaceAll(pv.ID, "-", "") == uuid {
			return name, true
		}
	}
	return "", false
}
