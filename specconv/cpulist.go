package specconv

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// maxListID bounds the numbers of a CPU or NUMA node list: the kernel
// masks husk passes (unix.CPUSet) hold 1024 bits.
const maxListID = 1023

// parseIDList parses a list such as "0-3,7" (CPUs, NUMA nodes) into sorted
// unique numbers. An empty string is an empty list.
func parseIDList(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var ids []int
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		first, err := parseID(lo)
		if err != nil {
			return nil, fmt.Errorf("bad list %q: %w", s, err)
		}
		last := first
		if isRange {
			if last, err = parseID(hi); err != nil {
				return nil, fmt.Errorf("bad list %q: %w", s, err)
			}
			if last < first {
				return nil, fmt.Errorf("bad list %q: range %q ends before it starts", s, part)
			}
		}
		for id := first; id <= last; id++ {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

func parseID(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	if n > maxListID {
		return 0, fmt.Errorf("%d is above %d", n, maxListID)
	}
	return n, nil
}
