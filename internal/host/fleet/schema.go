package fleet

import (
	"reflect"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
)

// SurveyTypes are the rules of a fleet survey's types beyond their
// fields' tags: a merge checks every survey it reads with them
// (reportv1.CheckJSON), and schema/fleet-v1.schema.json is generated from
// them (surveyDoc in its test), so that the two say the same. It is a function,
// not a variable, so that guestcheck's start does not build it.
func SurveyTypes() reportv1.Types {
	return reportv1.ReportTypes.With(reportv1.Types{
		reflect.TypeFor[Status]():       {Def: "status", Enum: statusNames()},
		reflect.TypeFor[guestid.Item](): {Def: "item", Enum: itemNames()},
		// A VM's report and its source's identity are the report schema's.
		reflect.TypeFor[GuestReport]():      {Ref: "report-v1.schema.json"},
		reflect.TypeFor[guestid.Identity](): {Ref: "report-v1.schema.json#/$defs/identity"},
		reflect.TypeFor[VM](): {
			Cond: `{"if": {"properties": {"status": {"const": "unknown"}}},
			"then": {"required": ["reason"], "properties": {"reason": {"minLength": 1}}, "not": {"required": ["report"]}},
			"else": {"anyOf": [{"required": ["report"]}, {"required": ["api_identity"]}]}}`,
			Check: func(v any) string {
				// An unknown VM says why and has no report; any other has a
				// report or its source's identity.
				vm := v.(*VM)
				switch {
				case vm.Status == Unknown && vm.Reason == "":
					return "an unknown VM without a reason"
				case vm.Status == Unknown && vm.Report != nil:
					return "an unknown VM with a report"
				case vm.Status != Unknown && vm.Report == nil && vm.APIIdentity == nil:
					return "a " + string(vm.Status) + " VM without a report or api_identity"
				}
				return ""
			}},
	})
}

func statusNames() []string {
	out := make([]string, len(Statuses))
	for i, s := range Statuses {
		out[i] = string(s)
	}
	return out
}

func itemNames() []string {
	out := make([]string, len(guestid.Items))
	for i, it := range guestid.Items {
		out[i] = string(it)
	}
	return out
}
