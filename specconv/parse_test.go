package specconv

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func TestParseRoundTrip(t *testing.T) {
	data, err := json.Marshal(Example())
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, Example()) {
		t.Errorf("Parse(Marshal(Example())) differs from Example():\n%+v", s)
	}
}

func TestParseIgnoresUnknownFields(t *testing.T) {
	s, err := Parse([]byte(`{"ociVersion": "1.2.0", "futureField": {"x": [1]}, "hostname": "h"}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != "1.2.0" || s.Hostname != "h" {
		t.Errorf("Parse = %+v", s)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in     string
		want         string
		line, column int
		field        string
	}{
		{
			name: "trailing comma",
			in:   "{\n  \"ociVersion\": \"1.0.0\",\n  }",
			want: `line 3, column 3 (offset 29): invalid character '}' looking for beginning of object key string`,
			line: 3, column: 3,
		},
		{
			name: "missing value",
			in:   "{\n\t\"hostname\": ,\n}",
			want: `line 2, column 14 (offset 15): invalid character ',' looking for beginning of value`,
			line: 2, column: 14,
		},
		{
			name: "empty",
			in:   "",
			want: "line 1, column 1 (offset 0): unexpected end of JSON input",
			line: 1, column: 1,
		},
		{
			name: "truncated",
			in:   "{\"process\": {\n",
			want: "line 2, column 1 (offset 14): unexpected end of JSON input",
			line: 2, column: 1,
		},
		{
			name: "garbage after the object",
			in:   "{}\n x",
			want: "line 2, column 2 (offset 4): invalid character 'x' after top-level value",
			line: 2, column: 2,
		},
		{
			name: "string for a number",
			in:   "{\"process\": {\n  \"user\": {\"uid\": \"root\"}}}",
			want: `line 2, column 19 (offset 32): process.user.uid: got string, want a number (uint32)`,
			line: 2, column: 19, field: "process.user.uid",
		},
		{
			name: "negative uid",
			in:   `{"process": {"user": {"uid": -1}}}`,
			want: `line 1, column 30 (offset 29): process.user.uid: got number -1, want a number (uint32)`,
			line: 1, column: 30, field: "process.user.uid",
		},
		{
			name: "array indices in the path",
			in:   `{"mounts": [{"destination": "/a"}, {"options": ["ro", 1]}]}`,
			want: `line 1, column 55 (offset 54): mounts[1].options[1]: got number, want a string`,
			line: 1, column: 55, field: "mounts[1].options[1]",
		},
		{
			name: "object for an array",
			in:   `{"process": {"args": {"0": "sh"}}}`,
			want: `line 1, column 22 (offset 21): process.args: got object, want an array`,
			line: 1, column: 22, field: "process.args",
		},
		{
			name: "array for a struct",
			in:   `{"linux": {"namespaces": [{"type": "pid"}, ["net"]]}}`,
			want: `line 1, column 44 (offset 43): linux.namespaces[1]: got array, want an object`,
			line: 1, column: 44, field: "linux.namespaces[1]",
		},
		{
			name: "bool",
			in:   `{"root": {"readonly": "yes"}}`,
			want: `root.readonly: got string, want true or false`,
			line: 1, column: 23, field: "root.readonly",
		},
		{
			name: "not an object",
			in:   `[]`,
			want: `line 1, column 1 (offset 0): got array, want an object`,
			line: 1, column: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse([]byte(tc.in))
			if err == nil {
				t.Fatalf("Parse(%q) = %+v, want an error", tc.in, s)
			}
			if !contains(err, tc.want) {
				t.Errorf("Parse(%q) error\n got: %v\nwant: %s", tc.in, err, tc.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ParseError", err)
			}
			if pe.Line != tc.line || pe.Column != tc.column || pe.Field != tc.field {
				t.Errorf("at line %d column %d field %q, want line %d column %d field %q",
					pe.Line, pe.Column, pe.Field, tc.line, tc.column, tc.field)
			}
			var syn *json.SyntaxError
			var typ *json.UnmarshalTypeError
			if !errors.As(err, &syn) && !errors.As(err, &typ) {
				t.Errorf("error does not wrap the encoding/json error")
			}
		})
	}
}
