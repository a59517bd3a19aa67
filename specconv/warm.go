package specconv

import _ "embed"

// warmSpec is `husk spec`'s config.json: what nearly every bundle has.
//
//go:embed warmspec.json
var warmSpec []byte

// Warm builds encoding/json's decoders for the parts of config.json that
// nearly every bundle has (most of Parse's CPU the first time: see
// parse_lazy.go) by parsing a sample of them. create and run start it on
// the other CPU as soon as the command is known, while the command line
// is parsed; Parse then finds the decoders built. It decodes a sample,
// never the bundle's config.json: nothing it does is seen.
func Warm() { _, _ = Parse(warmSpec) }
