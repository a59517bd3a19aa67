package specconv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"
)

// ParseError is config.json that is not JSON, or JSON of the wrong shape.
// Line and Column (both from 1, the column in bytes) and Offset (from 0)
// point at the offending character or value.
type ParseError struct {
	Line, Column, Offset int
	Field                string // JSON path of a value of the wrong type, if known
	Msg                  string
	Err                  error // the encoding/json error
}

func (e *ParseError) Error() string {
	where := fmt.Sprintf("line %d, column %d (offset %d): ", e.Line, e.Column, e.Offset)
	if e.Field != "" {
		where += e.Field + ": "
	}
	return where + e.Msg
}

func (e *ParseError) Unwrap() error { return e.Err }

// Parse decodes config.json. Fields it does not know are ignored; errors
// say where in data the problem is.
func Parse(data []byte) (*specs.Spec, error) {
	if s, err := decodeLayered(data); err == nil {
		return s, nil
	}
	var s specs.Spec
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, parseError(data, err)
	}
	return &s, nil
}

// parseError places a json error in data.
func parseError(data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		pos := int(syn.Offset) - 1 // Offset is just past the bad byte...
		if strings.Contains(syn.Error(), "end of JSON input") {
			pos = int(syn.Offset) // ...or is the end of the input.
		}
		return newParseError(data, pos, "", syn.Error(), err)
	case errors.As(err, &typ):
		pos, field := valueAt(data, int(typ.Offset))
		if field == "" {
			field = typ.Field
		}
		msg := fmt.Sprintf("got %s, want %s", typ.Value, jsonKind(typ.Type))
		return newParseError(data, pos, field, msg, err)
	}
	return err
}

func newParseError(data []byte, pos int, field, msg string, err error) *ParseError {
	pos = min(max(pos, 0), len(data))
	before := data[:pos]
	return &ParseError{
		Line:   1 + bytes.Count(before, []byte("\n")),
		Column: 1 + pos - (bytes.LastIndexByte(before, '\n') + 1),
		Offset: pos,
		Field:  field,
		Msg:    msg,
		Err:    err,
	}
}

// jsonKind names what JSON value a Go type decodes from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "a number (" + t.Kind().String() + ")" // ints, uints, floats
}

// valueAt finds the value that encoding/json reported a type error for:
// the scalar ending at end, or the object or array whose opening bracket
// ends there. It returns where the value starts and its path with array
// indices ("mounts[1].options[0]"), or "" when data cannot be walked.
func valueAt(data []byte, end int) (start int, path string) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var stack []*frame
	for {
		before := int(dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return end, ""
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		if len(stack) > 0 {
			top := stack[len(stack)-1]
			if top.object && top.wantKey {
				top.key, top.wantKey = tok.(string), false
				continue
			}
			top.startValue()
		}
		// tok starts a value: a scalar, '{' or '['.
		if int(dec.InputOffset()) == end {
			return skipSeparators(data, before), pathOf(stack)
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, &frame{object: d == '{', wantKey: d == '{', index: -1})
		}
	}
}

// frame is one open object or array while walking tokens.
type frame struct {
	object  bool
	wantKey bool
	key     string // the current key of an object
	index   int    // the current index of an array
}

// startValue notes that a value of f begins: the one after the current key
// of an object, or the next element of an array.
func (f *frame) startValue() {
	if f.object {
		f.wantKey = true
	} else {
		f.index++
	}
}

func pathOf(stack []*frame) string {
	var b strings.Builder
	for _, f := range stack {
		if f.object {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(f.key)
		} else {
			fmt.Fprintf(&b, "[%d]", f.index)
		}
	}
	return b.String()
}

// skipSeparators moves pos past the whitespace, colon or comma before a value.
func skipSeparators(data []byte, pos int) int {
	for pos < len(data) && strings.IndexByte(" \t\r\n:,", data[pos]) >= 0 {
		pos++
	}
	return pos
}
