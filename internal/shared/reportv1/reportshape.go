package reportv1

// ReportShape is schema/report-v1.schema.json as a Shape: what
// guestcheck fleet --merge asks of every report a survey holds.
var ReportShape = &Shape{Type: Object, Props: []Prop{
	{Name: "schema_version", Shape: &Shape{Type: One}, Required: true},
	{Name: "tool", Shape: &Shape{Type: String, Enum: []string{Tool}}, Required: true},
	{Name: "version", Shape: nonEmpty, Required: true},
	{Name: "host", Shape: &Shape{Type: Object, Props: []Prop{
		{Name: "hostname", Shape: anyString, Required: true},
		{Name: "boot_id", Shape: anyString, Required: true},
	}}, Required: true},
	{Name: "root", Shape: anyString, Required: true},
	{Name: "started_at", Shape: anyString, Required: true},
	{Name: "duration_ms", Shape: count, Required: true},
	{Name: "status", Shape: statusShape, Required: true},
	{Name: "summary", Shape: &Shape{Type: Object, Props: []Prop{
		{Name: "pass", Shape: count, Required: true},
		{Name: "warn", Shape: count, Required: true},
		{Name: "fail", Shape: count, Required: true},
		{Name: "skip", Shape: count, Required: true},
		{Name: "error", Shape: count, Required: true},
		{Name: "waived", Shape: &Shape{Type: Integer, Minimum: 1}},
	}}, Required: true},
	{Name: "checks", Shape: &Shape{Type: Array, Items: checkShape}, Required: true},
	{Name: "identity", Shape: IdentityShape},
}}

var (
	anyString   = &Shape{Type: String}
	nonEmpty    = &Shape{Type: String, NonEmpty: true}
	count       = &Shape{Type: Integer, Minimum: 0}
	statusShape = &Shape{Type: String, Enum: []string{"pass", "warn", "fail", "skip", "error"}}
	kebabShape  = &Shape{Type: String, Pattern: kebab}
	hexShape    = &Shape{Type: String, Pattern: hexBytes}
)

var checkShape = &Shape{Type: Object, Props: []Prop{
	{Name: "id", Shape: kebabShape, Required: true},
	{Name: "title", Shape: nonEmpty, Required: true},
	{Name: "status", Shape: statusShape, Required: true},
	{Name: "summary", Shape: anyString, Required: true},
	{Name: "duration_ms", Shape: count, Required: true},
	{Name: "findings", Shape: &Shape{Type: Array, MinItems: 1, Items: findingShape}, Required: true},
}}

var findingShape = &Shape{Type: Object, Props: []Prop{
	{Name: "status", Shape: statusShape, Required: true},
	{Name: "code", Shape: kebabShape, Required: true},
	{Name: "message", Shape: nonEmpty, Required: true},
	{Name: "detail", Shape: &Shape{Type: Object, Values: anyString}},
	{Name: "remediation", Shape: anyString},
	{Name: "waived", Shape: &Shape{Type: Object, Closed: true, Props: []Prop{
		{Name: "reason", Shape: nonEmpty, Required: true},
		{Name: "expires", Shape: &Shape{Type: String, Pattern: date}},
	}}},
	{Name: "reference", Shape: anyString},
}, Cond: func(f *Fields) string {
	// A finding that is not a pass or a skip says how to fix it.
	switch f.Str("status") {
	case "warn", "fail", "error":
		if !f.Has("remediation") {
			return "missing property 'remediation'"
		}
		if f.Str("remediation") == "" {
			return "an empty remediation, and the finding is not a pass or a skip"
		}
	}
	return ""
}}

// IdentityShape is the report schema's identity ($defs/identity), which
// a fleet survey's api_identity is too.
var IdentityShape = &Shape{Type: Object, Props: []Prop{
	{Name: "machine_id_hash", Shape: &Shape{Type: String, Pattern: hex32}},
	{Name: "machine_id_state", Shape: &Shape{Type: String, Enum: []string{"valid", "all zero", "empty", "uninitialized", "not a machine ID", "missing", "unreadable"}}},
	{Name: "other_machine_ids", Shape: &Shape{Type: Array, Items: &Shape{Type: Object, Props: []Prop{
		{Name: "hash", Shape: &Shape{Type: String, Pattern: hex32}, Required: true},
		{Name: "source", Shape: nonEmpty, Required: true},
	}}}},
	{Name: "ssh_host_keys", Shape: &Shape{Type: Array, Items: &Shape{Type: Object, Props: []Prop{
		{Name: "type", Shape: nonEmpty, Required: true},
		{Name: "fingerprint", Shape: &Shape{Type: String, Pattern: fingerprint}, Required: true},
		{Name: "path", Shape: anyString},
	}}}},
	{Name: "dhcp_client_ids", Shape: &Shape{Type: Array, Items: &Shape{Type: Object, Props: []Prop{
		{Name: "kind", Shape: &Shape{Type: String, Enum: []string{"duid", "client-id"}}, Required: true},
		{Name: "value", Shape: hexShape, Required: true},
		{Name: "source", Shape: nonEmpty, Required: true},
		{Name: "interface", Shape: anyString},
	}}}},
	{Name: "mac_bindings", Shape: &Shape{Type: Array, Items: &Shape{Type: Object, Props: []Prop{
		{Name: "mac", Shape: hexShape, Required: true},
		{Name: "at", Shape: nonEmpty, Required: true},
		{Name: "kind", Shape: nonEmpty, Required: true},
	}}}},
	{Name: "hostname", Shape: anyString},
	{Name: "instance_id", Shape: anyString},
	{Name: "interfaces", Shape: &Shape{Type: Array, Items: &Shape{Type: Object, Props: []Prop{
		{Name: "name", Shape: nonEmpty, Required: true},
		{Name: "mac", Shape: hexShape},
		{Name: "addresses", Shape: &Shape{Type: Array, Items: &Shape{Type: String, Pattern: cidr}}},
	}}}},
	{Name: "unread", Shape: &Shape{Type: Array, Items: nonEmpty}},
}}

// The schemas' patterns. Each matcher is its regular expression over
// ASCII, which tests hold to the text.
var (
	hex32 = &Pattern{Text: "^[0-9a-f]{32}$", Match: func(b []byte) bool {
		return len(b) == 32 && all(b, isLowerHex)
	}}
	fingerprint = &Pattern{Text: "^SHA256:[A-Za-z0-9+/]{43}$", Match: func(b []byte) bool {
		return len(b) == 50 && string(b[:7]) == "SHA256:" && all(b[7:], isBase64)
	}}
	hexBytes = &Pattern{Text: "^[0-9a-f]{2}(:[0-9a-f]{2})*$", Match: func(b []byte) bool {
		if len(b)%3 != 2 {
			return false
		}
		for i, c := range b {
			if i%3 == 2 && c != ':' || i%3 != 2 && !isLowerHex(c) {
				return false
			}
		}
		return true
	}}
	kebab = &Pattern{Text: "^[a-z0-9]+(-[a-z0-9]+)*$", Match: func(b []byte) bool {
		for i, c := range b {
			if c == '-' && (i == 0 || i == len(b)-1 || b[i-1] == '-') {
				return false
			}
			if c != '-' && (c < 'a' || c > 'z') && (c < '0' || c > '9') {
				return false
			}
		}
		return len(b) > 0
	}}
	cidr = &Pattern{Text: "^[0-9a-fA-F.:]+/[0-9]{1,3}$", Match: func(b []byte) bool {
		i := len(b) - 1
		for i >= 0 && isDigit(b[i]) {
			i--
		}
		if n := len(b) - 1 - i; n < 1 || n > 3 || i < 1 || b[i] != '/' {
			return false
		}
		return all(b[:i], func(c byte) bool { return hexVal(c) >= 0 || c == '.' || c == ':' })
	}}
	date = &Pattern{Text: "^[0-9]{4}-[0-9]{2}-[0-9]{2}$", Match: func(b []byte) bool {
		return len(b) == 10 && b[4] == '-' && b[7] == '-' &&
			all(b[:4], isDigit) && all(b[5:7], isDigit) && all(b[8:], isDigit)
	}}
)

func all(b []byte, ok func(byte) bool) bool {
	for _, c := range b {
		if !ok(c) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool    { return c >= '0' && c <= '9' }
func isLowerHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' }
func isBase64(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '+' || c == '/'
}
