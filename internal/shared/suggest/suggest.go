// Package suggest finds the name a user probably meant when a check ID,
// finding code, flag or configuration key is misspelt. It is a leaf: the
// configuration, the runner, the command lines and sealprep all use it.
package suggest

import "strings"

// Suggest returns the candidate closest to s, or "" when none is close
// enough to be what the user meant: an edit distance (transpositions
// count one) of at most one for short names and two for longer ones, or
// s being a prefix of exactly one candidate.
func Suggest(s string, candidates []string) string {
	if s == "" {
		return ""
	}
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if d := distance(strings.ToLower(s), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	limit := 1
	if len(s) > 4 {
		limit = 2
	}
	if bestD <= limit && bestD < len(s) {
		return best
	}
	var pre []string
	for _, c := range candidates {
		if strings.HasPrefix(c, s) {
			pre = append(pre, c)
		}
	}
	if len(pre) == 1 {
		return pre[0]
	}
	return ""
}

// distance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and adjacent transpositions.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// Abbrev returns the candidate that s abbreviates: one with the same
// first hyphen-separated word whose letters, hyphens left out, hold
// those of s in order (fstab-kernel-devname for
// fstab-kernel-device-name). Of several, the shortest, when only one is
// that short; "" otherwise.
func Abbrev(s string, candidates []string) string {
	first, _, _ := strings.Cut(s, "-")
	letters := strings.ReplaceAll(strings.ToLower(s), "-", "")
	best, n := "", 0
	for _, c := range candidates {
		cf, _, _ := strings.Cut(c, "-")
		if cf != first || !subsequence(letters, strings.ReplaceAll(strings.ToLower(c), "-", "")) {
			continue
		}
		switch {
		case best == "" || len(c) < len(best):
			best, n = c, 1
		case len(c) == len(best):
			n++
		}
	}
	if n != 1 {
		return ""
	}
	return best
}

// subsequence reports whether a's bytes appear in b in order.
func subsequence(a, b string) bool {
	i := 0
	for j := 0; i < len(a) && j < len(b); j++ {
		if a[i] == b[j] {
			i++
		}
	}
	return i == len(a)
}
