package specconv

import (
	"encoding/json"

	"github.com/opencontainers/runtime-spec/specs-go"
)

// Why config.json is decoded in layers: encoding/json, the first time it
// meets a struct type, builds the encoders of every type reachable from
// it (even to decode). From specs.Spec that is the whole runtime-spec,
// Windows, VM, z/OS and all of linux.resources and seccomp included:
// about 0.7 ms of every create and run on this machine, for a config.json
// that uses a tenth of it. So decodeLayered decodes the spec's shell with
// the large optional parts kept as raw JSON, and decodes each of those
// only when the config has it. The result is what json.Unmarshal into a
// specs.Spec gives (keys matched the same way, a repeated key merged into
// the same value, null clearing a pointer): TestDecodeLayeredMatches and
// FuzzDecodeLayered check it against the plain decode. On any error Parse
// decodes again the plain way, so errors are exactly the plain decode's.

// rawParts keeps every occurrence of one key's value, in order: a key
// repeated in the input is merged into one value, as encoding/json does.
type rawParts []json.RawMessage

func (p *rawParts) UnmarshalJSON(b []byte) error {
	*p = append(*p, append(json.RawMessage(nil), b...))
	return nil
}

// into decodes each part into v, in order.
func (p rawParts) into(v any) error {
	for _, b := range p {
		if err := json.Unmarshal(b, v); err != nil {
			return err
		}
	}
	return nil
}

// intoShell decodes each part into *dst through decode (a shell of T), as
// encoding/json would decode it into a *T field: null clears it, anything
// else is decoded into the existing value or a new one.
func intoShell[T any](p rawParts, dst **T, decode func([]byte, *T) error) error {
	for _, b := range p {
		if string(b) == "null" {
			*dst = nil
			continue
		}
		if *dst == nil {
			*dst = new(T)
		}
		if err := decode(b, *dst); err != nil {
			return err
		}
	}
	return nil
}

type specShell struct {
	*specs.Spec
	Process rawParts `json:"process,omitempty"`
	Linux   rawParts `json:"linux,omitempty"`
	Solaris rawParts `json:"solaris,omitempty"`
	Windows rawParts `json:"windows,omitempty"`
	VM      rawParts `json:"vm,omitempty"`
	ZOS     rawParts `json:"zos,omitempty"`
	FreeBSD rawParts `json:"freebsd,omitempty"`
}

func decodeLayered(data []byte) (*specs.Spec, error) {
	s := specShell{Spec: &specs.Spec{}}
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	for _, err := range []error{
		intoShell(s.Process, &s.Spec.Process, decodeProcess),
		intoShell(s.Linux, &s.Spec.Linux, decodeLinux),
		s.Solaris.into(&s.Spec.Solaris),
		s.Windows.into(&s.Spec.Windows),
		s.VM.into(&s.Spec.VM),
		s.ZOS.into(&s.Spec.ZOS),
		s.FreeBSD.into(&s.Spec.FreeBSD),
	} {
		if err != nil {
			return nil, err
		}
	}
	return s.Spec, nil
}

type processShell struct {
	*specs.Process
	ConsoleSize     rawParts `json:"consoleSize,omitempty"`
	Scheduler       rawParts `json:"scheduler,omitempty"`
	IOPriority      rawParts `json:"ioPriority,omitempty"`
	ExecCPUAffinity rawParts `json:"execCPUAffinity,omitempty"`
}

func decodeProcess(b []byte, p *specs.Process) error {
	s := processShell{Process: p}
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	return firstError(
		s.ConsoleSize.into(&p.ConsoleSize),
		s.Scheduler.into(&p.Scheduler),
		s.IOPriority.into(&p.IOPriority),
		s.ExecCPUAffinity.into(&p.ExecCPUAffinity),
	)
}

type linuxShell struct {
	*specs.Linux
	Resources    rawParts `json:"resources,omitempty"`
	NetDevices   rawParts `json:"netDevices,omitempty"`
	Seccomp      rawParts `json:"seccomp,omitempty"`
	IntelRdt     rawParts `json:"intelRdt,omitempty"`
	MemoryPolicy rawParts `json:"memoryPolicy,omitempty"`
	Personality  rawParts `json:"personality,omitempty"`
	TimeOffsets  rawParts `json:"timeOffsets,omitempty"`
}

func decodeLinux(b []byte, l *specs.Linux) error {
	s := linuxShell{Linux: l}
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	return firstError(
		intoShell(s.Resources, &l.Resources, decodeResources),
		s.NetDevices.into(&l.NetDevices),
		s.Seccomp.into(&l.Seccomp),
		s.IntelRdt.into(&l.IntelRdt),
		s.MemoryPolicy.into(&l.MemoryPolicy),
		s.Personality.into(&l.Personality),
		s.TimeOffsets.into(&l.TimeOffsets),
	)
}

type resourcesShell struct {
	*specs.LinuxResources
	Memory         rawParts `json:"memory,omitempty"`
	CPU            rawParts `json:"cpu,omitempty"`
	Pids           rawParts `json:"pids,omitempty"`
	BlockIO        rawParts `json:"blockIO,omitempty"`
	HugepageLimits rawParts `json:"hugepageLimits,omitempty"`
	Network        rawParts `json:"network,omitempty"`
	Rdma           rawParts `json:"rdma,omitempty"`
	Unified        rawParts `json:"unified,omitempty"`
}

func decodeResources(b []byte, r *specs.LinuxResources) error {
	s := resourcesShell{LinuxResources: r}
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	return firstError(
		s.Memory.into(&r.Memory),
		s.CPU.into(&r.CPU),
		s.Pids.into(&r.Pids),
		s.BlockIO.into(&r.BlockIO),
		s.HugepageLimits.into(&r.HugepageLimits),
		s.Network.into(&r.Network),
		s.Rdma.into(&r.Rdma),
		s.Unified.into(&r.Unified),
	)
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
