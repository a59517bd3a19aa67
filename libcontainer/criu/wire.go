package criu

// CRIU's RPC messages are protocol buffers (proto2, rpc.proto). husk
// writes and reads the few it needs here, with the wire format's four
// rules, instead of through go-criu's generated types: those link the
// protobuf runtime into every husk process, and its package initialisers
// (descriptor building, a hash of the executable) and 4.6 MB of code cost
// about 0.4 ms of CPU in every start and exec, which only checkpoint and
// restore use (docs/performance.md, issue 34). wire_test.go checks both
// directions against go-criu's types.
//
// The format: a message is a sequence of fields, each a key (field
// number << 3 | wire type) as a varint, then its value: a varint (type
// 0: ints, bools, enums), 8 bytes (1), a length as a varint and that many
// bytes (2: strings, messages, packed repeated fields), or 4 bytes (5).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// encoder appends fields to a message.
type encoder struct{ b []byte }

func (e *encoder) key(field, wire int) {
	e.b = binary.AppendUvarint(e.b, uint64(field)<<3|uint64(wire))
}

// int32 is a proto int32: a negative value is sign-extended to 64 bits,
// ten bytes on the wire, as every protobuf encoder writes it.
func (e *encoder) int32(field int, v int32) {
	e.key(field, wireVarint)
	e.b = binary.AppendUvarint(e.b, uint64(int64(v)))
}

func (e *encoder) uint32(field int, v uint32) {
	e.key(field, wireVarint)
	e.b = binary.AppendUvarint(e.b, uint64(v))
}

func (e *encoder) bool(field int, v bool) {
	var n uint64
	if v {
		n = 1
	}
	e.key(field, wireVarint)
	e.b = binary.AppendUvarint(e.b, n)
}

func (e *encoder) string(field int, s string) {
	e.key(field, wireBytes)
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
}

// message writes a nested message that fill writes.
func (e *encoder) message(field int, fill func(*encoder)) {
	var inner encoder
	fill(&inner)
	e.key(field, wireBytes)
	e.b = binary.AppendUvarint(e.b, uint64(len(inner.b)))
	e.b = append(e.b, inner.b...)
}

// stringPair writes a nested message of two strings, fields 1 and 2
// (ext_mount_map, cgroup_root, join_namespace).
func (e *encoder) stringPair(field int, a, b string) {
	e.message(field, func(e *encoder) {
		e.string(1, a)
		e.string(2, b)
	})
}

// opt writes an optional field with put, only when it is set (nil is
// absent, as in go-criu's types, so an explicit false still reaches CRIU
// and overrides its configuration file, as runc's requests do).
func opt[T any](field int, v *T, put func(int, T)) {
	if v != nil {
		put(field, *v)
	}
}

// field is one field read from a message: its number, wire type, and
// value (num for varints and fixed widths, data for bytes).
type field struct {
	num  int
	wire int
	n    uint64
	data []byte
}

var errTruncated = errors.New("message ends inside a field")

// nextField reads the field at the start of b and returns the rest.
// Every length is checked against what is left before it is used, so a
// hostile length (or one that wraps) is an error, never a slice past b.
func nextField(b []byte) (field, []byte, error) {
	k, n := binary.Uvarint(b)
	if n <= 0 {
		return field{}, nil, fmt.Errorf("field key: %w", errVarint(n))
	}
	b = b[n:]
	if k>>3 == 0 || k>>3 > math.MaxInt32 {
		return field{}, nil, fmt.Errorf("field number %d out of range", k>>3)
	}
	f := field{num: int(k >> 3), wire: int(k & 7)}
	switch f.wire {
	case wireVarint:
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return field{}, nil, fmt.Errorf("field %d: %w", f.num, errVarint(n))
		}
		f.n, b = v, b[n:]
	case wireFixed64:
		if len(b) < 8 {
			return field{}, nil, fmt.Errorf("field %d: %w", f.num, errTruncated)
		}
		f.n, b = binary.LittleEndian.Uint64(b), b[8:]
	case wireFixed32:
		if len(b) < 4 {
			return field{}, nil, fmt.Errorf("field %d: %w", f.num, errTruncated)
		}
		f.n, b = uint64(binary.LittleEndian.Uint32(b)), b[4:]
	case wireBytes:
		l, n := binary.Uvarint(b)
		if n <= 0 {
			return field{}, nil, fmt.Errorf("field %d length: %w", f.num, errVarint(n))
		}
		b = b[n:]
		if l > uint64(len(b)) {
			return field{}, nil, fmt.Errorf("field %d: length %d, %d bytes left: %w", f.num, l, len(b), errTruncated)
		}
		f.data, b = b[:l], b[l:]
	default:
		// Groups (3, 4) are not in CRIU's messages; 6 and 7 do not exist.
		return field{}, nil, fmt.Errorf("field %d: wire type %d not supported", f.num, f.wire)
	}
	return f, b, nil
}

func errVarint(n int) error {
	if n == 0 {
		return errTruncated
	}
	return errors.New("varint longer than 64 bits")
}

// want checks a known field's wire type: a field of another type is a
// message husk does not understand, refused rather than misread.
func (f field) want(wire int) error {
	if f.wire != wire {
		return fmt.Errorf("field %d: wire type %d, want %d", f.num, f.wire, wire)
	}
	return nil
}

// int32 is a varint field read as a proto int32 (its low 32 bits).
func (f field) int32() (int32, error) {
	if err := f.want(wireVarint); err != nil {
		return 0, err
	}
	return int32(f.n), nil
}

func (f field) bool() (bool, error) {
	if err := f.want(wireVarint); err != nil {
		return false, err
	}
	return f.n != 0, nil
}

func (f field) bytes() ([]byte, error) {
	if err := f.want(wireBytes); err != nil {
		return nil, err
	}
	return f.data, nil
}

// fields calls fn for every field of the message f holds.
func (f field) fields(fn func(field) error) error {
	b, err := f.bytes()
	if err != nil {
		return err
	}
	return eachField(b, fn)
}

// eachField calls fn for every field of b in order; unknown fields are
// fn's to skip (a newer CRIU may send fields husk does not know).
func eachField(b []byte, fn func(field) error) error {
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			return err
		}
		b = rest
	}
	return nil
}
