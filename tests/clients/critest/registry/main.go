// Command registry serves critest's images from memory, on their original
// repository names, so that a containerd whose hosts.toml mirrors
// registry.k8s.io, k8s.gcr.io and gcr.io to it pulls them by their
// original references (no registry on the internet is reached).
//
// Every image is built here from a busybox root filesystem (a tar given with
// -rootfs) and small layers with the content critest checks: the users and
// groups of cri-tools' image-user and image-predefined-group images, an
// nginx stand-in (-nginx) for the web server images (httpd's too), a set-user-ID program
// (-nnp) for nonewprivs, a pause program (-pause, the sandbox image),
// one file naming each test image, and stand-ins
// for two programs Debian's busybox lacks. When the images
// are pushed, the address ("127.0.0.1:PORT") is written to -addr-file and
// the registry serves until it is killed.
//
// Not reproducible: test-image-digest's reference pins the digest of
// upstream's image, which only upstream's bytes have.
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// file is one entry of a layer made here.
type file struct {
	name string
	mode int64
	body []byte
}

// image is one image and the references (repository:tag, without the
// registry host) it is pushed under.
type image struct {
	refs   []string
	files  []file
	config v1.Config
}

const (
	e2e   = "e2e-test-images/"
	tools = "k8s-staging-cri-tools/"
)

// busybox's /etc/passwd and /etc/group, as the busybox image has them.
var (
	passwd = "root:x:0:0:root:/root:/bin/sh\ndaemon:x:1:1:daemon:/usr/sbin:/bin/false\n" +
		"bin:x:2:2:bin:/bin:/bin/false\nsys:x:3:3:sys:/dev:/bin/false\nsync:x:4:100:sync:/bin:/bin/sync\n" +
		"mail:x:8:8:mail:/var/spool/mail:/bin/false\nwww-data:x:33:33:www-data:/var/www:/bin/false\n" +
		"operator:x:37:37:Operator:/var:/bin/false\nnobody:x:65534:65534:nobody:/home:/bin/false\n"
	group = "root:x:0:\ndaemon:x:1:\nbin:x:2:\nsys:x:3:\nadm:x:4:\ntty:x:5:\ndisk:x:6:\nlp:x:7:\n" +
		"mail:x:8:\nkmem:x:9:\nwheel:x:10:root\ncdrom:x:11:\ndialout:x:18:\nfloppy:x:19:\nvideo:x:28:\n" +
		"audio:x:29:\ntape:x:32:\nwww-data:x:33:\noperator:x:37:\nutmp:x:43:\nusers:x:100:\nstaff:x:50:\n" +
		"nogroup:x:65534:\n"
)

// Debian's busybox has no ipcs and no pgrep applets, which critest runs in
// busybox images; these stand-ins print what critest reads of them.
const (
	ipcs = `#!/bin/sh
# ipcs -m: the shared memory segments of this IPC namespace.
echo "------ Shared Memory Segments --------"
echo "key        shmid      owner      perms      bytes      nattch"
tail -n +2 /proc/sysvipc/shm | while read -r key id perms size cpid lpid nattch uid rest; do
	echo "$key $id $uid $perms $size $nattch"
done
`
	pgrep = `#!/bin/sh
# pgrep NAME: the pids of the processes whose name is NAME.
found=1
for d in /proc/[0-9]*; do
	read -r comm <"$d/comm" 2>/dev/null || continue
	[ "$comm" = "$1" ] && echo "${d#/proc/}" && found=0
done
exit $found
`
)

// etc is the top layer every image has: busybox's users and groups (with
// extra lines) and the stand-ins.
func etc(extraPasswd, extraGroup string) []file {
	return []file{
		{name: "etc/passwd", mode: 0o644, body: []byte(passwd + extraPasswd)},
		{name: "etc/group", mode: 0o644, body: []byte(group + extraGroup)},
		{name: "usr/bin/ipcs", mode: 0o755, body: []byte(ipcs)},
		{name: "usr/bin/pgrep", mode: 0o755, body: []byte(pgrep)},
	}
}

func sh() v1.Config { return v1.Config{Cmd: []string{"sh"}} }

// images lists every image critest pulls on Linux (pkg/validate of
// cri-tools v1.37: consts.go, consts_linux.go, security_context_linux.go,
// and the framework's default image).
func images(nginx, nnp, pause []byte) []image {
	bin := func(path string, mode int64, body []byte) file { return file{name: path, mode: mode, body: body} }
	marker := func(n string) file { return file{name: n, mode: 0o644} }
	plain := etc("", "")
	user := func(u string) image {
		return image{refs: []string{tools + "test-image-user-" + map[string]string{
			"1002": "uid", "www-data": "username", "1003:1004": "uid-group", "www-data:1004": "username-group",
		}[u] + ":latest"}, files: plain, config: v1.Config{Cmd: []string{"sh"}, User: u}}
	}
	list := []image{
		{refs: []string{e2e + "busybox:1.29-2"}, files: plain, config: sh()},
		{refs: []string{e2e + "nginx:1.14-2"}, files: append(etc("", ""), bin("usr/sbin/nginx", 0o755, nginx)),
			config: v1.Config{Cmd: []string{"nginx", "-g", "daemon off;"}}},
		{refs: []string{e2e + "httpd:2.4.39-4"}, files: append(etc("", ""), bin("usr/sbin/httpd", 0o755, nginx)),
			config: v1.Config{Cmd: []string{"httpd"}}},
		{refs: []string{tools + "hostnet-nginx-amd64:latest"}, files: append(etc("", ""), bin("usr/sbin/nginx", 0o755, nginx)),
			config: v1.Config{Cmd: []string{"nginx", "-p", "12003"}}},
		{refs: []string{e2e + "nonewprivs:1.3"}, files: append(etc("", ""), bin("usr/local/bin/nnp", 0o4755, nnp)),
			config: v1.Config{Cmd: []string{"/usr/local/bin/nnp"}}},
		{refs: []string{"pause:3.9"}, files: []file{bin("pause", 0o755, pause)}, config: v1.Config{Entrypoint: []string{"/pause"}}},
		{refs: []string{tools + "test-image-tags:1", tools + "test-image-tags:2", tools + "test-image-tags:3"},
			files: append(etc("", ""), marker("test-image-tags")), config: sh()},
		{refs: []string{tools + "test-image-tag:test", tools + "test-image-tag:all"},
			files: append(etc("", ""), marker("test-image-tag")), config: sh()},
		{refs: []string{tools + "test-image-predefined-group:latest"},
			files: etc("default-user:x:1000:1000:Linux User,,,:/home/default-user:/bin/sh\n",
				"default-user:x:1000:\ngroup-defined-in-image:x:50000:default-user\n"),
			config: v1.Config{Cmd: []string{"sh"}, User: "1000"}},
		user("1002"), user("www-data"), user("1003:1004"), user("www-data:1004"),
	}
	for _, n := range []string{"test-image-1", "test-image-2", "test-image-3", "test-image-latest", "test-image-digest"} {
		list = append(list, image{refs: []string{tools + n + ":latest"}, files: append(etc("", ""), marker(n)), config: sh()})
	}
	return list
}

// layer is an uncompressed tar layer of files (root-owned, time 0).
func layer(files []file) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	for _, f := range files {
		for d := parentDirs(f.name); len(d) > 0; d = d[1:] {
			if dirs[d[0]] {
				continue
			}
			dirs[d[0]] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d[0] + "/", Mode: 0o755}); err != nil {
				return nil, err
			}
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.body))}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
}

// parentDirs lists the directories above p, outermost first.
func parentDirs(p string) []string {
	var out []string
	for i := range len(p) {
		if p[i] == '/' {
			out = append(out, p[:i])
		}
	}
	return out
}

// build makes img on top of base.
func build(base v1.Layer, img image) (v1.Image, error) {
	top, err := layer(img.files)
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	out, err := mutate.AppendLayers(empty.Image, base, top)
	if err != nil {
		return nil, err
	}
	cfg, err := out.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Architecture, cfg.OS = "amd64", "linux"
	cfg.Config = img.config
	cfg.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	return mutate.ConfigFile(out, cfg)
}

func run() error {
	rootfs := flag.String("rootfs", "", "tar of the busybox root filesystem (the base layer of every image)")
	nginxBin := flag.String("nginx", "", "the nginx stand-in (static)")
	nnpBin := flag.String("nnp", "", "the set-user-ID program of nonewprivs (static)")
	pauseBin := flag.String("pause", "", "the pause program (static)")
	addrFile := flag.String("addr-file", "", "where to write the address, once every image is pushed")
	listen := flag.String("listen", "127.0.0.1:0", "address to serve on")
	flag.Parse()
	if *rootfs == "" || *nginxBin == "" || *nnpBin == "" || *pauseBin == "" || *addrFile == "" {
		return errors.New("-rootfs, -nginx, -nnp, -pause and -addr-file are required")
	}
	nginx, err := os.ReadFile(*nginxBin)
	if err != nil {
		return err
	}
	nnp, err := os.ReadFile(*nnpBin)
	if err != nil {
		return err
	}
	pause, err := os.ReadFile(*pauseBin)
	if err != nil {
		return err
	}
	base, err := tarball.LayerFromFile(*rootfs)
	if err != nil {
		return fmt.Errorf("-rootfs %s: %w", *rootfs, err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: registry.New(registry.Logger(log.New(io.Discard, "", 0)))}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	addr := ln.Addr().String()
	for _, img := range images(nginx, nnp, pause) {
		v1img, err := build(base, img)
		if err != nil {
			return fmt.Errorf("image %s: %w", img.refs[0], err)
		}
		for _, r := range img.refs {
			ref, err := name.ParseReference(addr+"/"+r, name.Insecure)
			if err != nil {
				return fmt.Errorf("reference %s: %w", r, err)
			}
			if err := remote.Write(ref, v1img); err != nil {
				return fmt.Errorf("push %s: %w", ref, err)
			}
		}
	}
	if err := os.WriteFile(*addrFile+".tmp", []byte(addr+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.Rename(*addrFile+".tmp", *addrFile); err != nil {
		return err
	}
	return <-served
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "registry:", err)
		os.Exit(1)
	}
}
