package specconv

import (
	"errors"
	"fmt"
)

// ErrNotSupported marks a config.json field husk understands but cannot
// apply yet. Such a field is refused, never silently ignored, when ignoring
// it would weaken the container.
var ErrNotSupported = errors.New("not supported yet")

// FieldError is a bad or unsupported value of one config.json field.
type FieldError struct {
	Field string // the JSON path: "linux.namespaces[2].type"
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }

func (e *FieldError) Unwrap() error { return e.Err }

// fieldErrorf makes a FieldError for field with a formatted reason.
func fieldErrorf(field, format string, args ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// notSupported refuses field: husk cannot apply it yet; hint says what to do.
func notSupported(field, hint string) error {
	return &FieldError{Field: field, Err: fmt.Errorf("%w; %s", ErrNotSupported, hint)}
}

// index names element i of the list field: index("mounts", 4) = "mounts[4]".
func index(field string, i int) string { return fmt.Sprintf("%s[%d]", field, i) }
