package configs

import (
	"path/filepath"
	"strings"
)

// UnderRoot reports whether the host path p names a place under root (a
// rootfs's host path), and which: its path inside the rootfs, "/" for
// root itself. It is lexical: both paths are cleaned, no symlink is read.
func UnderRoot(root, p string) (string, bool) {
	root, p = filepath.Clean(root), filepath.Clean(p)
	if !filepath.IsAbs(root) || !filepath.IsAbs(p) || root == "/" {
		return "", false
	}
	if p == root {
		return "/", true
	}
	if rel, ok := strings.CutPrefix(p, root+"/"); ok {
		return "/" + rel, true
	}
	return "", false
}
