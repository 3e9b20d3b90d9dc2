package prove

import (
	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
)

// ReportTypes are the rules of prove's report types beyond their
// fields' tags: schema/prove-v1.schema.json is generated from them
// (TestSchemaIsTheTypes), and a reader checks a report with them
// (reportv1.CheckJSON), so that the two say the same. It is a
// function, not a variable, so that sealprep's start does not build it.
func ReportTypes() reportv1.Types {
	items := make([]string, len(guestid.GuestItems))
	for i, it := range guestid.GuestItems {
		items[i] = string(it)
	}
	return reportv1.ReportTypes.With(reportv1.Types{
		// Prove compares the guest's items; the firmware's are a host
		// definition's, which a clone has none of.
		reportv1.Type[guestid.Item]():     {Def: "item", Enum: items},
		reportv1.Type[guestid.Identity](): {Ref: "report-v1.schema.json#/$defs/identity"},
		reportv1.Type[CloneResult]():      {Def: "clone"},
		reportv1.Type[CopyPlatform]():     {Enum: PlatformNames()},
		reportv1.Type[SharedItem]():       {Closed: true},
		reportv1.Type[CopyNetwork]():      {Closed: true},
		reportv1.Type[BackingFile]():      {Closed: true},
		reportv1.Type[sealrecord.Item]():  {Closed: true},
		reportv1.Type[Counts]():           {Closed: true},
	})
}
