package main

import (
	"context"
	"slices"
	"sync"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example-inc/memcached-operator/api/v1/gen"
)

// slicesInTurn answers each List of EndpointSlices with the next of its
// ready addresses, the last one for ever after.
type slicesInTurn struct {
	client.Client
	mu    sync.Mutex
	turns [][]string
	done  chan struct{}
}

func (s *slicesInTurn) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	slice := discoveryv1.EndpointSlice{}
	for _, a := range s.turns[0] {
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
			Addresses: []string{a}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
		})
	}
	list.(*discoveryv1.EndpointSliceList).Items = []discoveryv1.EndpointSlice{slice}
	if len(s.turns) > 1 {
		s.turns = s.turns[1:]
	} else if s.done != nil {
		close(s.done)
		s.done = nil
	}
	return nil
}

// The discovery gives the load each new list, an empty one included (all
// pods unready at once), and tells of the first full list only once.
func TestDiscoveryWatchSignalsTheFirstFullListOnce(t *testing.T) {
	two := []string{"10.88.0.2", "10.88.0.3"}
	c := &slicesInTurn{turns: [][]string{two[:1], two, nil, two, two[1:]}, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(t.Context())
	first := make(chan struct{})
	d := &discovery{}
	load := newShardedLoad(shardedLoadOptions{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		d.watch(ctx, c, gen.Memcached("ns", "a"), len(two), first, load)
	}()
	<-c.done
	cancel()
	<-watched
	select {
	case <-first:
	default:
		t.Fatal("first was not closed after a full list")
	}
	var got [][]string
	for _, l := range d.lists {
		got = append(got, l.addresses)
	}
	want := [][]string{{"10.88.0.2:11211", "10.88.0.3:11211"}, nil, {"10.88.0.2:11211", "10.88.0.3:11211"}, {"10.88.0.3:11211"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("lists given to the load = %q, want %q", got, want)
	}
	if s := *load.servers.Load(); !slices.Equal(s, want[3]) {
		t.Errorf("the load's servers = %q, want %q", s, want[3])
	}
}
