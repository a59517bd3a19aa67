//go:build tools

// Package deps records, for go mod tidy, the packages critest's test binary
// needs: build.sh builds it with `go test -c sigs.k8s.io/cri-tools/cmd/critest`
// (a package of only a _test.go file, which this module cannot import).
package deps

import (
	_ "github.com/onsi/ginkgo/v2"
	_ "github.com/onsi/gomega"
	_ "sigs.k8s.io/cri-tools/pkg/benchmark"
	_ "sigs.k8s.io/cri-tools/pkg/common"
	_ "sigs.k8s.io/cri-tools/pkg/framework"
	_ "sigs.k8s.io/cri-tools/pkg/validate"
	_ "sigs.k8s.io/cri-tools/pkg/version"
)
