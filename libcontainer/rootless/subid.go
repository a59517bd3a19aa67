package rootless

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/configs"
)

// Range is one line of /etc/subuid or /etc/subgid: Count ids from Start.
type Range struct {
	Start, Count uint64
}

func (r Range) String() string { return fmt.Sprintf("%d-%d", r.Start, r.Start+r.Count-1) }

func (r Range) contains(start, size uint64) bool {
	return start >= r.Start && start+size <= r.Start+r.Count
}

// ParseSubIDs reads the ranges of the user name (or, as the tools also
// accept, its number id) from a subuid/subgid file's text.
func ParseSubIDs(r io.Reader, name string, id int) ([]Range, error) {
	var out []Range
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, ":")
		if len(f) != 3 {
			return nil, fmt.Errorf("line %d: %q is not name:start:count", n, line)
		}
		if f[0] != name && f[0] != strconv.Itoa(id) {
			continue
		}
		start, err1 := strconv.ParseUint(f[1], 10, 32)
		count, err2 := strconv.ParseUint(f[2], 10, 32)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("line %d: %q: start and count must be numbers", n, line)
		}
		if count > 0 {
			out = append(out, Range{start, count})
		}
	}
	return out, sc.Err()
}

// SubIDs reads the ranges of user name (id) from file (/etc/subuid or
// /etc/subgid). A missing file means no ranges.
func SubIDs(file, name string, id int) ([]Range, error) {
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rs, err := ParseSubIDs(f, name, id)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return rs, nil
}

// IDSource is what one user may map: its own id, and its subordinate
// ranges from File.
type IDSource struct {
	Own    uint32
	File   string // "/etc/subuid", for the error text
	Ranges []Range
}

// CheckMappings checks maps (config.json field, e.g. "linux.uidMappings")
// against what the caller may map: no two lines overlap (inside or
// outside), and each host range is the caller's own id or lies within one
// subordinate range. It reports whether newuidmap/newgidmap is needed:
// anything beyond one line mapping the caller's own id.
func CheckMappings(field string, maps []configs.IDMap, src IDSource) (helper bool, err error) {
	if len(maps) == 0 {
		return false, fmt.Errorf("%s: a rootless container needs a mapping of the caller's id %d", field, src.Own)
	}
	for i, m := range maps {
		f := fmt.Sprintf("%s[%d]", field, i)
		for j := range i {
			o := maps[j]
			if overlap(m.ContainerID, o.ContainerID, m.Size, o.Size) {
				return false, fmt.Errorf("%s: containerID %d size %d overlaps %s[%d] (containerID %d size %d)",
					f, m.ContainerID, m.Size, field, j, o.ContainerID, o.Size)
			}
			if overlap(m.HostID, o.HostID, m.Size, o.Size) {
				return false, fmt.Errorf("%s: hostID %d size %d overlaps %s[%d] (hostID %d size %d)",
					f, m.HostID, m.Size, field, j, o.HostID, o.Size)
			}
		}
		if m.HostID == src.Own && m.Size == 1 {
			continue
		}
		helper = true
		if !inRanges(src.Ranges, uint64(m.HostID), uint64(m.Size)) {
			return false, fmt.Errorf("%s: hostID %d size %d is outside the ids this user may map (its own %d, and %s in %s)",
				f, m.HostID, m.Size, src.Own, rangesText(src.Ranges), src.File)
		}
	}
	return helper || len(maps) > 1, nil
}

func overlap(a, b, asize, bsize uint32) bool {
	return uint64(a) < uint64(b)+uint64(bsize) && uint64(b) < uint64(a)+uint64(asize)
}

func inRanges(rs []Range, start, size uint64) bool {
	for _, r := range rs {
		if r.contains(start, size) {
			return true
		}
	}
	return false
}

func rangesText(rs []Range) string {
	if len(rs) == 0 {
		return "no subordinate ids"
	}
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = r.String()
	}
	return "subordinate ids " + strings.Join(s, ", ")
}
