package cloudinit

import "sort"

// Stage names as cloud-init writes them into status.json, in boot order.
const (
	StageInitLocal     = "init-local"
	StageInit          = "init"
	StageModulesConfig = "modules-config"
	StageModulesFinal  = "modules-final"
)

// stageRank orders the known stages by boot order; unknown ones sort after
// them by name.
func stageRank(name string) (int, bool) {
	switch name {
	case StageInitLocal:
		return 0, true
	case StageInit:
		return 1, true
	case StageModulesConfig:
		return 2, true
	case StageModulesFinal:
		return 3, true
	}
	return 0, false
}

// Timestamp is a stage start or finish time exactly as status.json holds
// it. cloud-init before 24.2 wrote epoch seconds; 24.2 and later write
// seconds since boot (util.uptime), see Encoding.
type Timestamp struct {
	// Raw is the number as written; 0 when unset.
	Raw float64
	// Set is false when the field was absent or null.
	Set bool
}

// epochThreshold separates the two encodings: no machine has been up for
// 1e9 s (31 years), and no cloud-init ran before 2001.
const epochThreshold = 1e9

// TimeEncoding says how a Timestamp is to be read.
type TimeEncoding string

// The two encodings cloud-init has used.
const (
	EncodingNone   TimeEncoding = ""                            // no timestamp at all
	EncodingUptime TimeEncoding = "seconds since boot (24.2+)"  // util.uptime()
	EncodingEpoch  TimeEncoding = "epoch seconds (before 24.2)" // time.time()
)

// Encoding reports how t was written.
func (t Timestamp) Encoding() TimeEncoding {
	switch {
	case !t.Set || t.Raw <= 0:
		return EncodingNone
	case t.Raw < epochThreshold:
		return EncodingUptime
	}
	return EncodingEpoch
}

// StageStatus is one stage's record in status.json.
type StageStatus struct {
	// Name is the key in v1 ("init-local", "modules-final", ...).
	Name string
	// Errors are the stage's unrecoverable errors, as strings.
	Errors []string
	// RecoverableErrors maps a log level (WARNING, DEPRECATED, ERROR,
	// CRITICAL) to the messages logged at it; absent before cloud-init 23.4.
	RecoverableErrors map[string][]string
	// Start and Finished are when the stage started and ended.
	Start, Finished Timestamp
}

// StatusFile is /run/cloud-init/status.json: just the fields `cloud-init
// status` uses.
type StatusFile struct {
	// Datasource is v1.datasource as written, e.g.
	// "DataSourceNoCloud [seed=/dev/vdb][dsmode=net]"; "" when null.
	Datasource string
	// Stage is the stage running now; "" when none (null).
	Stage string
	// Stages holds every object-valued key of v1, sorted by name: that is
	// the order in which cloud-init aggregates errors.
	Stages []StageStatus
}

// ParseStatus parses status.json. Unknown keys are ignored; a field
// guestcheck uses with the wrong type is an error naming the field (e.g.
// "v1.init.errors[0]: want a string, got number"). A missing v1 is treated
// as empty, as cloud-init does.
func ParseStatus(b []byte) (*StatusFile, error) {
	v1, err := decodeV1(b)
	if err != nil {
		return nil, err
	}
	sf := &StatusFile{}
	if sf.Datasource, err = optString(v1, "datasource", "v1"); err != nil {
		return nil, err
	}
	if sf.Stage, err = optString(v1, "stage", "v1"); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(v1))
	for k, v := range v1 {
		// cloud-init treats every dict under v1 as a stage; mirror that.
		if _, ok := v.(map[string]any); ok {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		st, err := parseStage(v1[name].(map[string]any), name)
		if err != nil {
			return nil, err
		}
		sf.Stages = append(sf.Stages, st)
	}
	return sf, nil
}

func parseStage(m map[string]any, name string) (StageStatus, error) {
	path := "v1." + name
	st := StageStatus{Name: name}
	var err error
	if st.Errors, err = stringList(m, "errors", path); err != nil {
		return st, err
	}
	rec, err := optObject(m, "recoverable_errors", path, false)
	if err != nil {
		return st, err
	}
	if len(rec) > 0 {
		st.RecoverableErrors = make(map[string][]string, len(rec))
		for level, v := range rec {
			msgs, err := asStringList(v, path+".recoverable_errors."+level)
			if err != nil {
				return st, err
			}
			st.RecoverableErrors[level] = msgs
		}
	}
	for _, f := range []struct {
		key string
		ts  *Timestamp
	}{{"start", &st.Start}, {"finished", &st.Finished}} {
		raw, ok, err := optNumber(m, f.key, path)
		if err != nil {
			return st, err
		}
		*f.ts = Timestamp{Raw: raw, Set: ok}
	}
	return st, nil
}

// decodeV1 returns the "v1" object of a status or result file; nil when
// absent, which cloud-init treats as empty: the field readers of
// jsonfield.go find nothing in a nil object, so callers need no case of
// their own.
func decodeV1(b []byte) (map[string]any, error) {
	top, err := decodeObject(b)
	if err != nil {
		return nil, err
	}
	return optObject(top, "v1", "", false)
}

// Lookup returns the named stage record, or nil.
func (sf *StatusFile) Lookup(name string) *StageStatus {
	for i := range sf.Stages {
		if sf.Stages[i].Name == name {
			return &sf.Stages[i]
		}
	}
	return nil
}

// ResultFile is /run/cloud-init/result.json, written once at the end of
// the final stage.
type ResultFile struct {
	// Datasource is v1.datasource as written; "" when null.
	Datasource string
	// Errors are all stages' errors.
	Errors []string
}

// ParseResult parses result.json with the same rules as ParseStatus.
func ParseResult(b []byte) (*ResultFile, error) {
	v1, err := decodeV1(b)
	if err != nil {
		return nil, err
	}
	rf := &ResultFile{}
	if rf.Datasource, err = optString(v1, "datasource", "v1"); err != nil {
		return nil, err
	}
	if rf.Errors, err = stringList(v1, "errors", "v1"); err != nil {
		return nil, err
	}
	return rf, nil
}
