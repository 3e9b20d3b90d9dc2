// Package cpulist reads the kernel's CPU list format, the one of
// /sys/devices/system/cpu/{present,possible,online,offline} and of
// cpuset files: comma-separated numbers and ranges ("0-3,8,10-11"), an
// empty list as a blank line. Parsing is pure.
package cpulist

import (
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// MaxCPUs bounds a list: no kernel supports more CPUs (NR_CPUS is at most
// 8192 on x86-64), and a damaged file must not make a huge slice.
const MaxCPUs = 8192

// Parse reads a CPU list into its CPU numbers, ascending and without
// duplicates. name is the file the problem names.
func Parse(name string, b []byte) ([]int, *problem.Problem) {
	bad := func(msg string) ([]int, *problem.Problem) {
		return nil, &problem.Problem{File: name, Line: 1, Msg: msg}
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return nil, nil
	}
	seen := make([]bool, MaxCPUs)
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return bad(strconv.Quote(part) + " is not a CPU number or range")
		}
		z := a
		if isRange {
			if z, err = strconv.Atoi(hi); err != nil || z < a {
				return bad(strconv.Quote(part) + " is not a CPU range")
			}
		}
		if z >= MaxCPUs {
			return bad("CPU " + strconv.Itoa(z) + " is beyond the " + strconv.Itoa(MaxCPUs) + " a kernel supports")
		}
		for i := a; i <= z; i++ {
			seen[i] = true
		}
	}
	var out []int
	for i, ok := range seen {
		if ok {
			out = append(out, i)
		}
	}
	return out, nil
}

// Format writes CPU numbers (ascending) back as a list with ranges, the
// way the kernel prints them.
func Format(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}
