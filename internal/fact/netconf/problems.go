package netconf

import (
	"fmt"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// ProblemsByFile groups problems by their file, files in the order they
// first appear, and sums each group up in one line: the first problem and
// how many more there are.
func ProblemsByFile(ps []problem.Problem) (groups [][]problem.Problem, summary []string) {
	at := map[string]int{}
	for _, p := range ps {
		i, ok := at[p.File]
		if !ok {
			i = len(groups)
			at[p.File] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], p)
	}
	for _, g := range groups {
		msg := g[0].String()
		if len(g) > 1 {
			msg += fmt.Sprintf(" (+%d more)", len(g)-1)
		}
		summary = append(summary, msg)
	}
	return groups, summary
}
