package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/controllers"
	"github.com/example-inc/memcached-operator/webhooks"
)

// floor is the floor scenario (doc.go). built waits for the operator's build, which must not share the CPU with
// the measurement.
func (b *bench) floor(ctx context.Context, built func() error) (err error) {
	dir := filepath.Join(b.dir, scenarioFloor)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	e, err := startEnv(ctx, b.o, dir)
	defer func() { err = errors.Join(err, e.stop()) }()
	if err != nil {
		return fmt.Errorf("starting the floor's cluster: %w", err)
	}
	objects, err := floorObjects(ctx, e, b.o.n, b.o.size)
	if err != nil {
		return err
	}
	track, err := startTracker(ctx, e, setNamespace, deployments())
	if err != nil {
		return err
	}
	if err := built(); err != nil {
		return err
	}
	w, err := b.wave(ctx, e, track, b.o.size, func(ctx context.Context, name string) error {
		for _, u := range objects[name] {
			// The operator's own kind of request: a forced apply.
			err := e.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
				client.FieldOwner(controllers.FieldOwner), client.ForceOwnership)
			if err != nil {
				return fmt.Errorf("applying %s: %w", u.GetKind(), err)
			}
		}
		return nil
	}, func(requestSeconds float64) {
		progress("floor: applied the objects of %d Memcached in %.1fs; waiting for every Deployment", b.o.n, requestSeconds)
	})
	if err != nil {
		return err
	}
	r := &floorResult{
		Objects:             b.o.n,
		ObjectsPerMemcached: len(objects[setName(0)]),
		Size:                b.o.size,
		RequestSeconds:      w.requestSeconds,
		ConvergeSeconds:     w.convergeSeconds(),
		PerObject:           w.perObject(),
		APIServerCPUSeconds: w.apiServerCPU(),
		ConvergedAt:         curve(w.t0, w.times),
	}
	b.res.Scenarios.Floor = r
	b.table.row(scenarioFloor, r.Objects, r.ConvergeSeconds, 0, 0, 0,
		fmt.Sprintf("no operator: %d objects per Memcached applied in %.1fs; kube-apiserver %.1f CPU s; per Deployment p50 %.1fs p99 %.1fs",
			r.ObjectsPerMemcached, r.RequestSeconds, r.APIServerCPUSeconds, r.PerObject.P50, r.PerObject.P99))
	return nil
}

// floorObjects are the objects the operator makes for each Memcached of the
// set, by name, without the owner reference: with no Memcached to own them,
// the garbage collector would delete them.
func floorObjects(ctx context.Context, e *env, n int, size int32) (map[string][]*unstructured.Unstructured, error) {
	// Every Memcached of the set has this spec.
	proto := gen.Memcached(setNamespace, setName(0), gen.WithSize(size))
	if err := asStored(ctx, e.client, proto); err != nil {
		return nil, err
	}
	out := make(map[string][]*unstructured.Unstructured, n)
	for i := range n {
		mc := proto.DeepCopy()
		mc.Name, mc.UID = setName(i), types.UID(fmt.Sprintf("floor-%05d", i))
		for _, ac := range controllers.DesiredObjects(mc, controllers.Options{}) {
			u, err := unowned(ac)
			if err != nil {
				return nil, err
			}
			out[mc.Name] = append(out[mc.Name], u)
		}
	}
	return out, nil
}

// asStored gives mc the spec the API server and the defaulting webhook
// would store: a dry-run create returns the CRD's defaults, and the
// webhook's are added as it would.
func asStored(ctx context.Context, c client.Client, mc *cachev1.Memcached) error {
	if err := c.Create(ctx, mc, client.DryRunAll); err != nil {
		return fmt.Errorf("a dry-run create of Memcached %s: %w", mc.Name, err)
	}
	webhooks.DefaultSpec(&mc.Spec, nil)
	return nil
}

// unowned is ac as an unstructured object without owner references.
func unowned(ac runtime.ApplyConfiguration) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(ac)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	u.SetOwnerReferences(nil)
	return u, nil
}
