package configs

import "fmt"

// MaxID is the largest uid or gid husk accepts, as runc: above it an id
// is -1, or wraps around as a signed number, in too many places (an id
// of 4294967295 once ran the process as root).
const MaxID = 2147483647

// CheckID refuses an id outside 0-2147483647 with runc's words:
// "4294967295: uids and gids must be in range 0-2147483647".
func CheckID(id uint64) error {
	if id > MaxID {
		return fmt.Errorf("%d: uids and gids must be in range 0-%d", id, MaxID)
	}
	return nil
}

// ValidID is CheckID naming where the id came from.
func ValidID(field string, id uint64) error {
	if err := CheckID(id); err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	return nil
}

// UserIDs are the fields of a process's ids and their values, in order.
func UserIDs(uid, gid uint32, gids []uint32) (fields []string, ids []uint64) {
	fields, ids = []string{"process.user.uid", "process.user.gid"}, []uint64{uint64(uid), uint64(gid)}
	for i, g := range gids {
		fields = append(fields, fmt.Sprintf("process.user.additionalGids[%d]", i))
		ids = append(ids, uint64(g))
	}
	return fields, ids
}

// ValidIDs checks a process's uid, gid and additional gids.
func ValidIDs(u User) error {
	fields, ids := UserIDs(u.UID, u.GID, u.AdditionalGids)
	for i, id := range ids {
		if err := ValidID(fields[i], id); err != nil {
			return err
		}
	}
	return nil
}
