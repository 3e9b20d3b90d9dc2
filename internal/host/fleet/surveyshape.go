package fleet

import (
	"sync"

	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
)

// surveyShape is schema/fleet-v1.schema.json as a reportv1.Shape, each
// VM's report reportv1.ReportShape: a merge checks every survey against
// it in one pass over the file's bytes. The schema's validator decodes
// each document into a tree first and took three quarters of a merge's
// CPU time; TestSurveyShapeIsTheSchema holds the two to the same
// verdicts.
var surveyShape = &reportv1.Shape{Type: reportv1.Object, Props: []reportv1.Prop{
	{Name: "schema_version", Shape: &reportv1.Shape{Type: reportv1.One}, Required: true},
	{Name: "tool", Shape: &reportv1.Shape{Type: reportv1.String, Enum: []string{"guestcheck fleet"}}, Required: true},
	{Name: "version", Shape: nonEmptyString, Required: true},
	{Name: "host", Shape: anyString, Required: true},
	{Name: "started_at", Shape: anyString, Required: true},
	{Name: "duration_ms", Shape: count, Required: true},
	{Name: "status", Shape: statusShape, Required: true},
	{Name: "summary", Shape: &reportv1.Shape{Type: reportv1.Object, Props: []reportv1.Prop{
		{Name: "vms", Shape: count, Required: true},
		{Name: "pass", Shape: count, Required: true},
		{Name: "skip", Shape: count, Required: true},
		{Name: "warn", Shape: count, Required: true},
		{Name: "error", Shape: count, Required: true},
		{Name: "unknown", Shape: count, Required: true},
		{Name: "fail", Shape: count, Required: true},
		{Name: "collisions", Shape: count, Required: true},
	}}, Required: true},
	{Name: "collisions", Shape: &reportv1.Shape{Type: reportv1.Array, Items: &reportv1.Shape{Type: reportv1.Object, Props: []reportv1.Prop{
		{Name: "item", Shape: itemShape, Required: true},
		{Name: "value", Shape: nonEmptyString, Required: true},
		{Name: "members", Shape: &reportv1.Shape{Type: reportv1.Array, Items: anyString, MinItems: 2}, Required: true},
		{Name: "fix", Shape: nonEmptyString, Required: true},
	}}}, Required: true},
	{Name: "source_errors", Shape: &reportv1.Shape{Type: reportv1.Array, Items: &reportv1.Shape{Type: reportv1.Object, Props: []reportv1.Prop{
		{Name: "source", Shape: anyString, Required: true},
		{Name: "error", Shape: anyString, Required: true},
	}}}},
	{Name: "hosts", Shape: &reportv1.Shape{Type: reportv1.Array, Items: &reportv1.Shape{Type: reportv1.Object, Props: []reportv1.Prop{
		{Name: "host", Shape: nonEmptyString, Required: true},
		{Name: "file", Shape: anyString, Required: true},
		{Name: "version", Shape: anyString, Required: true},
		{Name: "started_at", Shape: anyString, Required: true},
		{Name: "status", Shape: statusShape, Required: true},
		{Name: "vms", Shape: count, Required: true},
	}}}},
	{Name: "vms", Shape: &reportv1.Shape{Type: reportv1.Array, Items: vmShape}, Required: true},
}}

var (
	anyString      = &reportv1.Shape{Type: reportv1.String}
	nonEmptyString = &reportv1.Shape{Type: reportv1.String, NonEmpty: true}
	count          = &reportv1.Shape{Type: reportv1.Integer, Minimum: 0}
	statusShape    = &reportv1.Shape{Type: reportv1.String, Enum: []string{"pass", "skip", "warn", "error", "unknown", "fail"}}
	itemShape      = &reportv1.Shape{Type: reportv1.String, Enum: []string{"machine-id", "ssh-host-key", "dhcp-client-id",
		"mac-binding", "hostname", "instance-id", "mac", "address", "firmware-uuid", "firmware-serial"}}
)

// vmShape is one VM. The schema names "host" twice among its
// properties; a JSON object's last key wins, so a VM's host is any
// string.
var vmShape = &reportv1.Shape{Type: reportv1.Object, Props: []reportv1.Prop{
	{Name: "name", Shape: nonEmptyString, Required: true},
	{Name: "host", Shape: anyString},
	{Name: "networks", Shape: &reportv1.Shape{Type: reportv1.Object, Values: anyString}},
	{Name: "source", Shape: anyString, Required: true},
	{Name: "status", Shape: statusShape, Required: true},
	{Name: "reason", Shape: anyString},
	{Name: "shares", Shape: &reportv1.Shape{Type: reportv1.Array, Items: itemShape}},
	{Name: "duration_ms", Shape: count, Required: true},
	{Name: "agent_version", Shape: anyString},
	{Name: "report", Shape: reportv1.ReportShape},
	{Name: "api_identity", Shape: reportv1.IdentityShape},
	{Name: "firmware", Shape: &reportv1.Shape{Type: reportv1.Object, Props: []reportv1.Prop{
		{Name: "uuid", Shape: anyString},
		{Name: "uuid_from", Shape: anyString},
		{Name: "serial", Shape: anyString},
	}}},
	{Name: "agent_disabled_commands", Shape: &reportv1.Shape{Type: reportv1.Array, Items: anyString}},
}, Cond: func(f *reportv1.Fields) string {
	// An unknown VM says why and has no report; any other has a report
	// or its source's identity.
	switch {
	case f.Str("status") == string(Unknown) && !f.Has("reason"):
		return "missing property 'reason'"
	case f.Str("status") == string(Unknown) && f.Has("report"):
		return "an unknown VM with a report"
	case f.Str("status") != string(Unknown) && !f.Has("report") && !f.Has("api_identity"):
		return "missing property 'report' (or 'api_identity')"
	}
	return ""
}}

// checkSurvey says what is wrong with survey b under the fleet schema,
// "" when nothing: the shape's verdict when it takes b, else the
// schema's own. The shape refuses a few forms the schema allows (a key
// given twice, an integer such as 1.0), so its refusal is the schema's
// to confirm, which also words it as the schema does.
func checkSurvey(b []byte) string {
	if reportv1.Check(b, surveyShape) == nil {
		return ""
	}
	sch, err := fallbackSchema()
	if err != nil {
		return err.Error()
	}
	return sch.check(b)
}

// fallback is the schema, compiled once, the first time a survey needs
// it: never at guestcheck's start, nor in a merge of good surveys.
var fallback struct {
	once sync.Once
	sch  surveySchema
	err  error
}

func fallbackSchema() (surveySchema, error) {
	fallback.once.Do(func() { fallback.sch, fallback.err = compileSurveySchema() })
	return fallback.sch, fallback.err
}
