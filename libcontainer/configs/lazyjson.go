package configs

import "encoding/json"

// Why the optional parts of a Config encode and decode themselves.
//
// encoding/json, the first time a process meets a struct type, builds the
// encoders of every type reachable from its fields, to decode as well as
// to encode, and whether the fields are set or nil. From Config that is 32
// struct types and 185 fields, about 0.4 ms of CPU in every process that
// reads or writes a config: husk create and run (state.json, the config
// sent to init) and husk init (which decodes it). Most of those types are
// parts few configs have: the cgroup limits (the cgroup library's
// Resources alone is 51 fields), seccomp, scheduler, personality...
//
// A type with its own MarshalJSON and UnmarshalJSON ends that walk: its
// encoders are built when a config has one, not before. Each method below
// encodes or decodes the same type without methods (plainX), so the JSON
// is what it was, field for field. A JSON null still leaves the pointer
// nil (encoding/json does not call UnmarshalJSON for it).
//
// The receivers are pointers, and only pointer fields (*Cgroup, ...) are
// of these types, so encoding/json never needs the plain type's encoders
// up front. A struct that embeds one of these types gets its methods: embed
// the plain type instead (see libcontainer's partial state load).

type (
	plainCgroup       Cgroup
	plainSeccomp      Seccomp
	plainPersonality  Personality
	plainMemoryPolicy MemoryPolicy
	plainIntelRdt     IntelRdt
	plainMountIDMap   MountIDMap
	plainScheduler    Scheduler
	plainIOPriority   IOPriority
	plainCPUAffinity  CPUAffinity
	plainConsoleSize  ConsoleSize
)

func (c *Cgroup) MarshalJSON() ([]byte, error) { return json.Marshal((*plainCgroup)(c)) }
func (c *Cgroup) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, (*plainCgroup)(c)) }

func (s *Seccomp) MarshalJSON() ([]byte, error) { return json.Marshal((*plainSeccomp)(s)) }
func (s *Seccomp) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, (*plainSeccomp)(s)) }

func (p *Personality) MarshalJSON() ([]byte, error) { return json.Marshal((*plainPersonality)(p)) }
func (p *Personality) UnmarshalJSON(b []byte) error {
	return json.Unmarshal(b, (*plainPersonality)(p))
}

func (m *MemoryPolicy) MarshalJSON() ([]byte, error) { return json.Marshal((*plainMemoryPolicy)(m)) }
func (m *MemoryPolicy) UnmarshalJSON(b []byte) error {
	return json.Unmarshal(b, (*plainMemoryPolicy)(m))
}

func (r *IntelRdt) MarshalJSON() ([]byte, error) { return json.Marshal((*plainIntelRdt)(r)) }
func (r *IntelRdt) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, (*plainIntelRdt)(r)) }

func (m *MountIDMap) MarshalJSON() ([]byte, error) { return json.Marshal((*plainMountIDMap)(m)) }
func (m *MountIDMap) UnmarshalJSON(b []byte) error {
	return json.Unmarshal(b, (*plainMountIDMap)(m))
}

func (s *Scheduler) MarshalJSON() ([]byte, error) { return json.Marshal((*plainScheduler)(s)) }
func (s *Scheduler) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, (*plainScheduler)(s)) }

func (p *IOPriority) MarshalJSON() ([]byte, error) { return json.Marshal((*plainIOPriority)(p)) }
func (p *IOPriority) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, (*plainIOPriority)(p)) }

func (a *CPUAffinity) MarshalJSON() ([]byte, error) { return json.Marshal((*plainCPUAffinity)(a)) }
func (a *CPUAffinity) UnmarshalJSON(b []byte) error {
	return json.Unmarshal(b, (*plainCPUAffinity)(a))
}

func (s *ConsoleSize) MarshalJSON() ([]byte, error) { return json.Marshal((*plainConsoleSize)(s)) }
func (s *ConsoleSize) UnmarshalJSON(b []byte) error {
	return json.Unmarshal(b, (*plainConsoleSize)(s))
}
