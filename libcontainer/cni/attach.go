package cni

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/containernetworking/cni/pkg/utils"
	"github.com/husk-runtime/husk/libcontainer/atomicfile"
	"github.com/sirupsen/logrus"
)

// RecordFile is the record of a container's attachment, in its state dir.
const RecordFile = "cni.json"

// Record is what husk's built-in path remembers of an attachment: enough
// to run DEL and CHECK later, and the ADD's result, which `husk state`
// shows. It is written before the netns is made, so a create killed at
// any point leaves `delete --force` what it needs to clean up.
type Record struct {
	Request
	ContainerID string          `json:"container_id"`
	Netns       string          `json:"netns"`
	Options     Options         `json:"options"`
	Result      json.RawMessage `json:"result,omitempty"` // CNI result JSON; empty until ADD succeeds
}

// Attach makes the named netns for container id, runs the CNI ADD of r in
// it and records both in dir. It returns the netns path for the container
// to join. On failure everything is undone: DEL, netns, record.
func Attach(dir, id string, r *Request, o Options) (string, error) {
	if e := utils.ValidateContainerID(id); e != nil {
		return "", fmt.Errorf("container id %q: CNI: %s", id, e.Msg)
	}
	rec := &Record{Request: *r, ContainerID: id, Netns: NetnsPath(id), Options: o}
	if err := saveRecord(dir, rec); err != nil {
		return "", err
	}
	if err := newNetns(rec.Netns); err != nil {
		removeRecord(dir)
		return "", err
	}
	result, err := Add(context.Background(), o, r, id, rec.Netns)
	if err != nil {
		// Add has run the DEL already.
		if rerr := errors.Join(removeNetns(rec.Netns), removeRecord(dir)); rerr != nil {
			logrus.Warnf("undo CNI attach: %v", rerr)
		}
		return "", err
	}
	rec.Result = result
	if err := saveRecord(dir, rec); err != nil {
		if derr := Detach(dir, true); derr != nil {
			logrus.Warnf("undo CNI attach: %v", derr)
		}
		return "", err
	}
	return rec.Netns, nil
}

// Detach undoes Attach for the record in dir, if there is one: CNI DEL,
// then the netns and the record. A failed DEL keeps both (so a retry can
// DEL again) unless force, which logs it and removes them anyway.
func Detach(dir string, force bool) error {
	rec, err := LoadRecord(dir)
	if err != nil || rec == nil {
		return err
	}
	netns := rec.Netns
	if !exists(netns) {
		netns = "" // the CNI spec allows DEL without a netns
	}
	if err := Del(context.Background(), rec.Options, &rec.Request, rec.ContainerID, netns); err != nil {
		if !force {
			return err
		}
		logrus.Warnf("container %s: %v (removing its netns anyway)", rec.ContainerID, err)
	}
	if err := removeNetns(rec.Netns); err != nil {
		return err
	}
	return removeRecord(dir)
}

// CheckAttached runs the CNI CHECK of the record in dir.
func CheckAttached(dir string) error {
	rec, err := LoadRecord(dir)
	if err != nil {
		return err
	}
	if rec == nil {
		return fmt.Errorf("no CNI network: the container has no %s annotation", AnnotationNetwork)
	}
	return Check(context.Background(), rec.Options, &rec.Request, rec.ContainerID, rec.Netns)
}

// LoadRecord reads the record in dir; nil if there is none.
func LoadRecord(dir string) (*Record, error) {
	path := filepath.Join(dir, RecordFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read CNI record: %w", err)
	}
	var rec Record
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &rec, nil
}

// saveRecord writes the record atomically.
func saveRecord(dir string, rec *Record) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode CNI record: %w", err)
	}
	return atomicfile.Write(filepath.Join(dir, RecordFile), data, 0o600)
}

func removeRecord(dir string) error {
	path := filepath.Join(dir, RecordFile)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}
